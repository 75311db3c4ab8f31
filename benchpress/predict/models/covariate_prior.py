"""The covariate prior of :class:`~benchpress.predict.models.side_info.SideInfoPredictor`: how a model
row is solved against the fitted benchmarks when its covariates predict its bias and
factors; and the two regressions on covariates behind it and the per-benchmark effects
(:func:`ridge`, :func:`masked_grams`).

Per start ``s``, the prior mean of a row's ``theta = [a_i, U_i]`` (rank + 1 numbers) is the
covariate regression ``theta_mean_ + Xs @ theta_coef_``. With ``prior_cov_scale`` set (the
default) the row is a Gaussian posterior: prior covariance from the training rows' spread
about that regression (times ``prior_cov_scale``), noise from the training cells'
residual variance, so a row with few scores leans on its covariates and one with many on
its scores; otherwise an isotropic ridge towards the prior mean (``prior_weight``).
"""

from __future__ import annotations

import numpy as np

from benchpress.predict.models.als import fold_in_batched

#: the least noise variance (z units squared) the Gaussian covariate prior assumes
NOISE_VAR_FLOOR = 1e-9

__all__ = ["CovariatePriorMixin", "ridge", "masked_grams"]


def ridge(X, T, alpha):
    """Ridge coefficients (n_features, n_targets) of centred ``T`` on ``X`` (no intercept)."""
    return np.linalg.solve(X.T @ X + alpha * np.eye(X.shape[1]), X.T @ T)


def masked_grams(obs, Xs, block: int = 1 << 22):
    """Per column j of the mask ``obs`` (n_rows, n_cols), the Gram matrix of the rows it
    marks, ``sum_i obs_ij x_i x_i'``: (n_cols, p, p). One matrix product per block of rows
    (``obs' @`` the rows' outer products), at most ``block`` numbers of those at a time."""
    n, p = Xs.shape
    out = np.zeros((obs.shape[1], p * p))
    step = max(1, block // (p * p))
    for a in range(0, n, step):
        outer = (Xs[a:a + step, :, None] * Xs[a:a + step, None, :]).reshape(-1, p * p)
        out += obs[a:a + step].T.astype(float) @ outer
    return out.reshape(-1, p, p)


class CovariatePriorMixin:
    """Prior and posterior of model rows given covariates; mixed into the side predictor,
    whose fit sets ``ensemble_``, ``theta_mean_`` (rank+1 per start, flattened) and
    ``theta_coef_`` (n_features, S * (rank+1)) and whose parameters ``prior_cov_scale``,
    ``spread_posterior``, ``prior_weight``, ``prior_decay`` and ``prior_n`` are read here."""

    def _prior_theta(self, Xs):
        """Prior [a, U] per start for standardised rows: (S, n_rows, rank+1)."""
        S, _, r = self.ensemble_.U_.shape
        th = self.theta_mean_ + Xs @ self.theta_coef_
        return th.reshape(len(Xs), S, r + 1).transpose(1, 0, 2)

    def _fit_prior_covariance(self, Z, Xs) -> None:
        """Per start: the prior precision ``prior_precision_`` (S, rank+1, rank+1), the
        inverse of ``prior_cov_scale`` times the covariance of the fitted ``[a_i, U_i]``
        about their covariate prediction, and the noise variance ``noise_var_`` (S,), the
        mean squared residual of the start on the observed training cells (z units)."""
        ens = self.ensemble_
        S, n_m, r = ens.U_.shape
        T = np.concatenate([ens.model_bias_[:, :, None], ens.U_], axis=2)
        D = T - self._prior_theta(Xs)
        cov = np.einsum("smk,sml->skl", D, D) / n_m * float(self.prior_cov_scale)
        self.prior_precision_ = np.linalg.inv(cov + 1e-9 * np.eye(r + 1))
        obs = ~np.isnan(Z)
        res = np.where(obs, Z, 0.0)[None] - np.where(obs, ens.predict_starts(), 0.0)
        # floored: a registry of one model is fitted exactly (no residual), and a zero
        # noise would divide by zero in every fold-in
        self.noise_var_ = np.maximum((res ** 2).sum(axis=(1, 2)) / max(int(obs.sum()), 1),
                                     NOISE_VAR_FLOOR)

    def _row_z_gauss(self, Z_rows, Xs, with_var=False):
        """Per-start posterior-mean z rows under the Gaussian covariate prior, (S, n_rows,
        n_benchmarks), and (``with_var`` and ``spread_posterior``; else None) the posterior
        predictive variance of each cell's mean averaged over starts, (n_rows,
        n_benchmarks, z units squared)."""
        ens = self.ensemble_
        W = (~np.isnan(Z_rows)).astype(float)
        Va, A = self._gauss_system(W)
        base = (ens.mu_[:, None, None] + ens.benchmark_bias_[:, None, :]
                + self._prior_theta(Xs) @ Va.transpose(0, 2, 1))
        R = np.where(W > 0, Z_rows, 0.0)[None] - W[None] * base
        rhs = (R @ Va)[..., None] / self.noise_var_[:, None, None, None]
        var = self._posterior_var(Va, A) if with_var and self.spread_posterior else None
        return base + np.linalg.solve(A, rhs)[..., 0] @ Va.transpose(0, 2, 1), var

    def _gauss_system(self, W):
        """Benchmark parameters ``Va = [1, V]`` (S, n_benchmarks, rank+1) and the posterior
        precision ``A`` (S, n_rows, rank+1, rank+1) of rows with observed-cell mask ``W``
        (n_rows, n_benchmarks, float)."""
        ens = self.ensemble_
        S, n_b, _ = ens.V_.shape
        Va = np.concatenate([np.ones((S, n_b, 1)), ens.V_], axis=2)
        k = Va.shape[2]
        VV = (Va[:, :, :, None] * Va[:, :, None, :]).reshape(S, n_b, k * k)
        A = ((W @ VV).reshape(S, -1, k, k) / self.noise_var_[:, None, None, None]
             + self.prior_precision_[:, None])
        return Va, A

    @staticmethod
    def _posterior_var(Va, A):
        """Posterior predictive variance of each cell's mean, ``v_j' A^-1 v_j`` averaged
        over starts: (n_rows, n_benchmarks), z units squared."""
        # optimize: one matrix product over (start, k, l) instead of a loop over all five
        return np.einsum("sbk,srkl,sbl->rb", Va, np.linalg.inv(A), Va, optimize=True) / len(Va)

    def _row_z(self, Z_rows, Xs, with_var=False):
        """Per-start z rows solved against the fitted benchmarks with the covariate prior,
        (S, n_rows, n_benchmarks), and the Gaussian posterior variance (see
        :meth:`_row_z_gauss`; None for the isotropic ridge)."""
        if self.prior_cov_scale is not None:
            return self._row_z_gauss(Z_rows, Xs, with_var)
        ens = self.ensemble_
        W = (~np.isnan(Z_rows)).astype(float)
        if self.prior_decay:  # reg * f per row == cell weights / f per row
            f = (float(self.prior_n) / np.maximum(W.sum(axis=1), 1.0)) ** float(self.prior_decay)
            W = W / f[:, None]
        P = self._prior_theta(Xs)
        base = (ens.mu_[:, None, None] + ens.benchmark_bias_[:, None, :] + P[:, :, :1]
                + P[:, :, 1:] @ ens.V_.transpose(0, 2, 1))
        reg = self.als_config().reg_diagonal() * float(self.prior_weight)
        out = np.empty_like(base)
        zero_c = np.zeros((1, Z_rows.shape[1]))
        for s in range(base.shape[0]):  # the offset differs per start: one batch each
            out[s] = base[s] + fold_in_batched(Z_rows - base[s], W, np.zeros(1), zero_c,
                                               ens.V_[s:s + 1], reg_diag=reg)[0]
        return out, None
