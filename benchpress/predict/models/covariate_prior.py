"""The covariate prior of :class:`~benchpress.predict.models.side_info.SideInfoPredictor`
(:class:`CovariatePrior`, a part the side predictor holds as ``prior_``): how a model row is
solved against the fitted benchmarks when its covariates predict its bias and factors; and
the two regressions on covariates behind it and the per-benchmark effects (:func:`ridge`,
:func:`masked_grams`).

Per start ``s``, the prior mean of a row's ``theta = [a_i, U_i]`` (rank + 1 numbers) is the
covariate regression ``theta_mean_ + Xs @ theta_coef_``. With ``cov_scale`` set (the side
predictor's ``prior_cov_scale``, by default) the row is a Gaussian posterior: prior
covariance from the training rows' spread about that regression (times ``cov_scale``), noise
from the training cells' residual variance, so a row with few scores leans on its
covariates and one with many on its scores; otherwise an isotropic ridge towards the prior
mean (``weight``).
"""

from __future__ import annotations

import numpy as np

from benchpress.predict.models.als import fold_in_batched

__all__ = ["CovariatePrior", "ridge", "masked_grams", "STATE_ARRAYS", "NOISE_VAR_FLOOR"]

#: The fitted arrays of a prior that a stored fit keeps (:meth:`CovariatePrior.state`), by
#: their attribute names (``noise_var_`` and ``prior_precision_`` only with ``cov_scale``).
STATE_ARRAYS = ("theta_mean_", "theta_coef_", "prior_precision_", "noise_var_")

#: the least noise variance (z units squared) the Gaussian covariate prior assumes
NOISE_VAR_FLOOR = 1e-9


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


class CovariatePrior:
    """Prior and posterior of model rows ``theta = [a_i, U_i]`` given their standardised
    covariates, per start of one fitted ALS ensemble.

    Parameters
    ----------
    alpha : float
        Ridge penalty of the regression of the fitted ``[a_i, U_i]`` on the covariates
        (the prior mean).
    cov_scale : float or None, default 0.5
        The Gaussian prior's covariance is the residual covariance of that regression times
        this; None: the isotropic ridge of ``weight`` and ``decay`` instead.
    weight : float, default 3.0
        Isotropic ridge: multiplies the ALS ridge diagonal of the solve towards the prior.
    decay, n_ref : float, default 0.0 and 5.0
        Isotropic ridge: a row with ``n`` known scores is pulled with weight
        ``weight * (n_ref / n) ** decay``.

    The fitted ensemble whose benchmarks the rows are solved against is given to each
    method (the predictor holds it), not kept here.

    Attributes
    ----------
    theta_mean_ : ndarray of shape (n_starts * (rank + 1),)
    theta_coef_ : ndarray of shape (n_features, n_starts * (rank + 1))
    prior_precision_ : ndarray of shape (n_starts, rank + 1, rank + 1)
        With ``cov_scale``: the inverse of ``cov_scale`` times the covariance of the fitted
        ``[a_i, U_i]`` about their covariate prediction.
    noise_var_ : ndarray of shape (n_starts,)
        With ``cov_scale``: each start's mean squared residual on the observed training
        cells (z units).
    reg_diag_ : ndarray of shape (rank + 1,)
        The ALS ridge diagonal of the isotropic solve.
    """

    def __init__(self, alpha: float, *, cov_scale: float | None = 0.5, weight: float = 3.0,
                 decay: float = 0.0, n_ref: float = 5.0):
        self.alpha = alpha
        self.cov_scale = cov_scale
        self.weight = weight
        self.decay = decay
        self.n_ref = n_ref

    def fit(self, ensemble, Xs, Z, reg_diag) -> "CovariatePrior":
        """Fit on the ``ensemble`` fitted to ``Z`` (n_models, n_benchmarks, z units, NaN =
        missing), the models' standardised covariates ``Xs`` (n_models, n_features) and
        the ensemble's ALS ridge diagonal ``reg_diag`` (rank + 1,)."""
        self.reg_diag_ = np.asarray(reg_diag)
        S, n_m, r = ensemble.U_.shape
        T = np.concatenate([ensemble.model_bias_[:, :, None], ensemble.U_], axis=2)
        T = T.transpose(1, 0, 2).reshape(n_m, S * (r + 1))  # (n_m, S * (r + 1))
        self.theta_mean_ = T.mean(axis=0)
        self.theta_coef_ = ridge(Xs, T - self.theta_mean_, self.alpha)
        self.prior_precision_ = self.noise_var_ = None
        if self.cov_scale is not None:
            self._fit_covariance(ensemble, Z, Xs)
        return self

    def state(self) -> dict:
        """The fitted arrays of :data:`STATE_ARRAYS` the fit made, by attribute name."""
        return {n: np.asarray(getattr(self, n)) for n in STATE_ARRAYS
                if getattr(self, n, None) is not None}

    @classmethod
    def from_state(cls, arrays: dict, reg_diag, **params) -> "CovariatePrior":
        """The prior of :meth:`state` ``arrays`` with the ensemble's ridge diagonal
        ``reg_diag`` and the constructor's ``params``, as saved."""
        out = cls(**params)
        out.reg_diag_ = np.asarray(reg_diag)
        for n in STATE_ARRAYS:
            setattr(out, n, arrays.get(n))
        return out

    def _prior_theta(self, ensemble, Xs):
        """Prior [a, U] per start for standardised rows: (S, n_rows, rank+1)."""
        S, _, r = ensemble.U_.shape
        th = self.theta_mean_ + Xs @ self.theta_coef_
        return th.reshape(len(Xs), S, r + 1).transpose(1, 0, 2)

    def _fit_covariance(self, ens, Z, Xs) -> None:
        """Per start of the ensemble ``ens``: the prior precision ``prior_precision_`` and
        the noise variance ``noise_var_`` (see the class attributes)."""
        S, n_m, r = ens.U_.shape
        T = np.concatenate([ens.model_bias_[:, :, None], ens.U_], axis=2)
        D = T - self._prior_theta(ens, Xs)
        cov = np.einsum("smk,sml->skl", D, D) / n_m * float(self.cov_scale)
        self.prior_precision_ = np.linalg.inv(cov + 1e-9 * np.eye(r + 1))
        obs = ~np.isnan(Z)
        res = np.where(obs, Z, 0.0)[None] - np.where(obs, ens.predict_starts(), 0.0)
        # floored: a registry of one model is fitted exactly (no residual), and a zero
        # noise would divide by zero in every fold-in
        self.noise_var_ = np.maximum((res ** 2).sum(axis=(1, 2)) / max(int(obs.sum()), 1),
                                     NOISE_VAR_FLOOR)

    def _row_z_gauss(self, ens, Z_rows, Xs, with_var=False):
        """Per-start posterior-mean z rows under the Gaussian covariate prior, (S, n_rows,
        n_benchmarks), and (``with_var``; else None) the posterior predictive variance of
        each cell's mean averaged over starts, (n_rows, n_benchmarks, z units squared)."""
        W = (~np.isnan(Z_rows)).astype(float)
        Va, A = self.gauss_system(ens, W)
        base = (ens.mu_[:, None, None] + ens.benchmark_bias_[:, None, :]
                + self._prior_theta(ens, Xs) @ Va.transpose(0, 2, 1))
        R = np.where(W > 0, Z_rows, 0.0)[None] - W[None] * base
        rhs = (R @ Va)[..., None] / self.noise_var_[:, None, None, None]
        var = self.posterior_var(Va, A) if with_var else None
        return base + np.linalg.solve(A, rhs)[..., 0] @ Va.transpose(0, 2, 1), var

    def gauss_system(self, ens, W):
        """Benchmark parameters ``Va = [1, V]`` (S, n_benchmarks, rank+1) of the ensemble
        ``ens`` and the posterior precision ``A`` (S, n_rows, rank+1, rank+1) of rows with
        observed-cell mask ``W`` (n_rows, n_benchmarks, float)."""
        S, n_b, _ = ens.V_.shape
        Va = np.concatenate([np.ones((S, n_b, 1)), ens.V_], axis=2)
        k = Va.shape[2]
        VV = (Va[:, :, :, None] * Va[:, :, None, :]).reshape(S, n_b, k * k)
        A = ((W @ VV).reshape(S, -1, k, k) / self.noise_var_[:, None, None, None]
             + self.prior_precision_[:, None])
        return Va, A

    @staticmethod
    def posterior_var(Va, A):
        """Posterior predictive variance of each cell's mean, ``v_j' A^-1 v_j`` averaged
        over starts: (n_rows, n_benchmarks), z units squared."""
        # optimize: one matrix product over (start, k, l) instead of a loop over all five
        return np.einsum("sbk,srkl,sbl->rb", Va, np.linalg.inv(A), Va, optimize=True) / len(Va)

    def row_z(self, ens, Z_rows, Xs, with_var=False):
        """Per-start z rows solved against the benchmarks of the fitted ensemble ``ens``
        with the covariate prior, (S, n_rows, n_benchmarks), and (``with_var``, Gaussian
        prior only; else None) the posterior predictive variance (see :meth:`_row_z_gauss`)."""
        if self.cov_scale is not None:
            return self._row_z_gauss(ens, Z_rows, Xs, with_var)
        W = (~np.isnan(Z_rows)).astype(float)
        if self.decay:  # reg * f per row == cell weights / f per row
            f = (float(self.n_ref) / np.maximum(W.sum(axis=1), 1.0)) ** float(self.decay)
            W = W / f[:, None]
        P = self._prior_theta(ens, Xs)
        base = (ens.mu_[:, None, None] + ens.benchmark_bias_[:, None, :] + P[:, :, :1]
                + P[:, :, 1:] @ ens.V_.transpose(0, 2, 1))
        reg = self.reg_diag_ * float(self.weight)
        out = np.empty_like(base)
        zero_c = np.zeros((1, Z_rows.shape[1]))
        for s in range(base.shape[0]):  # the offset differs per start: one batch each
            out[s] = base[s] + fold_in_batched(Z_rows - base[s], W, np.zeros(1), zero_c,
                                               ens.V_[s:s + 1], reg_diag=reg)[0]
        return out, None
