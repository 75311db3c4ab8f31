"""Side information for the score predictor: what is known about a model before its scores.

:class:`SideInfoPredictor` (``--method side``) is the default predictor (logit/z transform,
rank-4 bias-ALS ensemble blended with pairwise regression) plus two uses of per-model
covariates ``X`` (n_models, n_features) from the registry's model rows
(:func:`model_covariates`: release date, reasoning, open weights, provider, and from the
id a small-tier word, a named size and the family; never a field computed from scores):

1. **a model-level prior** (``prior_alpha``): per start, the fitted ``[a_i, U_i]`` are
   ridge-regressed on the standardised covariates (prior mean ``p``); a row is solved
   against the fitted benchmarks as a Gaussian posterior (prior covariance: the training
   rows' residual covariance from that regression times ``prior_cov_scale``; noise: the
   training cells' residual variance; ``(V'V / s2 + Sigma^-1) d = V'(z - base) / s2``,
   ``theta = p + d``), so a row with few scores leans on its covariates, one with many on
   its scores (``prior_cov_scale=None``: the earlier isotropic ridge). Used to fold in
   new rows with covariates and (``prior_in_fit``) to re-solve the training rows.
2. **covariate x benchmark residual effects** (``effect_alpha``): per benchmark, a ridge
   regression of the training residuals (z units) on the covariates.

Family indicators (coded :data:`FAMILY_LEVEL`) get ``family_scale`` times their
standardised values in both regressions (penalty / family_scale**2: shrunk towards the
provider's effect). No extrapolation: a new row with a covariate outside the training
range (a release after every training model's) takes it clipped to the range
(``outside_range="clip"``), or is folded in without covariates (``"default"``;
:meth:`SideInfoPredictor.covariates_apply`). The spread behind the interval risk features
adds ``spread_disagreement`` times the ALS/regression disagreement and
``spread_posterior`` times the Gaussian posterior variance; rows folded in without
covariates get the same kind of spread around the default's numbers. A fit with covariates
has its intervals in its own space (``interval_logit_rule``: z-scores of the scores
themselves, no logit; ``interval_eps`` is the logit margin when a rule with a logit is set).

The defaults (prior 3, in the fit, covariance scale 0.5; effects 5; blend weight 0.5 with
covariates; family scale 0.3; spread 0.5 and 1.0; intervals without a logit) were chosen
on our own partitions only (seeds 1001-1005, cells and whole new models from 3 and 5
scores; intervals calibrated on 1001-1002, measured on 1003-1005;
``benchmarks/side_info_study.py``), never on the published folds. Without covariates
(``fit(Y, scales)`` or a matrix with no columns) every number equals
``make_predictor("default")``'s; so do the predictions of a row folded in without them.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, UsageError
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.estimator import check_scores, prefixed, state_part
from benchpress.predict.models.als import ALSConfig
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.models.covariates import (FAMILY_LEVEL, METADATA_FIELDS,
                                                check_covariates, covariate_kwargs,
                                                metadata_covariates, model_covariates,
                                                model_family, name_tier)
from benchpress.predict.models.covariate_prior import STATE_ARRAYS as PRIOR_ARRAYS
from benchpress.predict.models.covariate_prior import CovariatePrior, masked_ridge
from benchpress.scales import LOGIT_RULES

__all__ = ["SideInfoPredictor", "model_covariates", "metadata_covariates", "check_covariates",
           "covariate_kwargs", "METADATA_FIELDS", "FAMILY_LEVEL", "model_family", "name_tier",
           "SIDE_ARRAYS"]

#: The fitted arrays of a side fit with covariates that a stored fit keeps (each one the fit
#: made), by the names its ``meta["side_arrays"]`` lists (:meth:`SideInfoPredictor.state`).
SIDE_ARRAYS = ("covariates_", "x_mean_", "x_scale_", "x_min_", "x_max_", "x_weight_",
               "theta_mean_", "theta_coef_", "prior_precision_", "noise_var_", "base_z_",
               "effects_")


_ALS = ALSConfig()  # the defaults of the bias-ALS hyperparameters


class SideInfoPredictor(ALSPredictor):
    """The default predictor plus per-model covariates (see the module docstring).

    Parameters
    ----------
    prior_alpha : float or None, default 3.0
        Ridge penalty of the regression of model bias and factors on the covariates (the
        fold-in prior); None = no prior.
    prior_in_fit : bool, default True
        Re-solve the training rows once against their prior after the fit.
    prior_weight : float, default 3.0
        Multiplies the ridge diagonal of the solves towards the prior (larger = rows stay
        closer to what their covariates predict).
    effect_alpha : float or None, default 5.0
        Ridge penalty of the per-benchmark covariate effects on the residuals; None = none.
    prior_decay : float, default 0.0
        A row with ``n`` known scores is pulled towards its prior with weight
        ``prior_weight * (prior_n / n) ** prior_decay`` (0: the same weight for every row;
        larger: rows with more scores lean less on their covariates).
    prior_n : float, default 5.0
        The score count at which the weight is exactly ``prior_weight``.
    prior_cov_scale : float or None, default 0.5
        The Gaussian prior's covariance is the residual covariance of the prior regression
        times this (smaller = rows stay closer to their covariates' prediction); None = the
        isotropic ridge of ``prior_weight`` and ``prior_decay`` (the earlier solve).
    outside_range : {"clip", "default"}, default "clip"
        A new row with a covariate outside the training range (a release date after every
        training model's: the normal case of a new release) is folded in with its
        covariates clipped to the range ("clip": its release date counts as the newest
        training model's, its provider and family covariates are kept), or as the ALS
        predictor does without covariates ("default", the rule until 2026-12, which
        dropped every new release's covariates: 6.68 / 5.41 / 5.22 against 5.34 / 4.85 /
        4.75 with "clip" at k = 1 / 3 / 5 on the temporal yardstick, whole registry).
    spread_disagreement, spread_posterior : float, default 0.5 and 1.0
        The spread that the interval risk features read (``complete_spread``, fold-in
        ``return_spread``) adds these multiples of the ALS/regression disagreement and of
        the Gaussian posterior variance to the starts' (0 and 0: the starts' alone).
    covariate_regression_weight : float or None, default 0.5
        The ALS/regression blend weight with covariates (None = ``regression_weight``).
    family_scale : float, default 0.3
        Family indicator columns (coded ``FAMILY_LEVEL``) are scaled by this after
        standardising (0: families have no effect beyond their provider's).
    extra_ranks : tuple of int, default ()
        With covariates, side fits of these ranks are made beside this one
        (``members_``) and every completion, and the fold-in of rows with covariates, is
        the average of all of them; the spread adds the fits' disagreement. Rows folded in
        without covariates (or outside the range) use this fit alone: the default's
        numbers. () = this rank alone (chosen: (2, 3) is more accurate on cells and new
        models but chooses worse probes, for 2.4 times the fit time).
    interval_logit_rule : str, default "none"
        Which benchmarks the interval space of a fit with covariates puts through a logit
        (one of :data:`~benchpress.scales.LOGIT_RULES`; ``interval_logit_rule_``, read by
        :class:`~benchpress.predict.intervals.support.MatrixSupport`). "none": intervals are made
        in z-scores of the scores themselves and clipped to each benchmark's range (the
        intervals of a fit without covariates use a logit on percent scales, margin
        :data:`~benchpress.predict.intervals.features.EPS`).
    interval_eps : float, default 0.5
        Logit margin (percentage points) of that space when the rule has a logit
        (``interval_eps_``; the predictor's own margin).
    rank, regularization, bias_regularization, n_iter, init_scale, n_starts
        The ALS half's parameters, as
        :class:`~benchpress.predict.models.als_predictor.ALSPredictor`'s (the default
        preset's values when made by ``make_predictor("side")``); ``rank`` 4 here.
    random_state, logit_rule, eps, spread_prior, z_bound, regression_weight
        The same.
    regression_power, solver, method
        The same; ``method`` "side" here.

    Attributes
    ----------
    covariates_ : ndarray (n_models, n_features) or None
        Standardised training covariates (NaN -> 0).
    prior_ : CovariatePrior or None
        The fitted covariate prior of the model rows (with covariates and ``prior_alpha``).
    interval_logit_rule_, interval_eps_ : str or None, float or None
        ``interval_logit_rule`` and ``interval_eps`` with covariates, None without (the
        default's interval space).
    """

    accepts_covariates = True
    cells_path = False  # reads dense per-start completions

    def __init__(self, rank: int = 4, *, regularization: float = _ALS.regularization,
                 bias_regularization: float | None = _ALS.bias_regularization,
                 n_iter: int = _ALS.n_iter, init_scale: float = _ALS.init_scale,
                 n_starts: int = _ALS.n_starts, random_state: int | None = _ALS.random_state,
                 logit_rule: str = "percent", eps: float = 0.5, spread_prior: float = 0.0,
                 z_bound: float = 0.0, regression_weight: float = 0.0,
                 regression_power: float = 4.0, solver: str = "auto", method: str = "side",
                 prior_alpha: float | None = 3.0,
                 prior_in_fit: bool = True, prior_weight: float = 3.0,
                 effect_alpha: float | None = 5.0, prior_decay: float = 0.0,
                 prior_n: float = 5.0, prior_cov_scale: float | None = 0.5,
                 outside_range: str = "clip", spread_disagreement: float = 0.5,
                 covariate_regression_weight: float | None = 0.5, family_scale: float = 0.3,
                 spread_posterior: float = 1.0, interval_logit_rule: str = "none",
                 interval_eps: float = 0.5, extra_ranks: tuple = ()):
        if outside_range not in ("default", "clip"):
            raise UsageError(f"outside_range must be 'default' or 'clip', got {outside_range!r}")
        if interval_logit_rule not in LOGIT_RULES:
            raise UsageError(f"interval_logit_rule must be one of {', '.join(LOGIT_RULES)}, "
                             f"got {interval_logit_rule!r}")
        super().__init__(rank, regularization=regularization,
                         bias_regularization=bias_regularization, n_iter=n_iter,
                         init_scale=init_scale, n_starts=n_starts, random_state=random_state,
                         logit_rule=logit_rule, eps=eps, spread_prior=spread_prior,
                         z_bound=z_bound, regression_weight=regression_weight,
                         regression_power=regression_power, solver=solver, method=method)
        self.prior_alpha = prior_alpha
        self.prior_in_fit = prior_in_fit
        self.prior_weight = prior_weight
        self.effect_alpha = effect_alpha
        self.prior_decay = prior_decay
        self.prior_n = prior_n
        self.prior_cov_scale = prior_cov_scale
        self.outside_range = outside_range
        self.spread_disagreement = spread_disagreement
        self.covariate_regression_weight = covariate_regression_weight
        self.family_scale = family_scale
        self.spread_posterior = spread_posterior
        self.interval_logit_rule = interval_logit_rule
        self.interval_eps = interval_eps
        self.extra_ranks = tuple(int(r) for r in extra_ranks)

    def fit(self, Y, scales, covariates=None) -> "SideInfoPredictor":
        """Fit on scores ``Y`` (n_models, n_benchmarks) and optional ``covariates``
        (n_models, n_features); without covariates this is the default predictor."""
        X = check_covariates(covariates, np.shape(Y)[0]) if np.ndim(Y) == 2 else None
        self._raw_covariates = None if X is None or X.shape[1] == 0 else X
        super().fit(Y, scales)
        self.members_ = []
        if self._raw_covariates is not None:
            params = {**self.get_params(), "extra_ranks": ()}
            self.members_ = [type(self)(**{**params, "rank": r}).fit(Y, scales, covariates=X)
                             for r in self.extra_ranks if r != self.rank]
        return self

    def state(self) -> tuple[dict, dict]:
        """:meth:`ALSPredictor.state` plus the side fit's own arrays, filed under ``side_``
        (those of :data:`SIDE_ARRAYS` the fit made, and the raw training covariates), and
        their names (``meta["side_arrays"]``; empty for a fit without covariates). A fit
        with ``extra_ranks`` (its members are not stored) cannot be stored (UsageError)."""
        if self.extra_ranks:
            raise UsageError("a side fit with extra_ranks cannot be stored")
        arrays, meta = super().state()
        names = [n for n in SIDE_ARRAYS
                 if self.covariates_ is not None and self._side_array(n) is not None]
        arrays.update(prefixed("side_", {n.rstrip("_"): np.asarray(self._side_array(n))
                                         for n in names}))
        if names:
            arrays["side_raw_covariates"] = np.asarray(self._raw_covariates)
        meta["side_arrays"] = names
        return arrays, meta

    @classmethod
    def from_state(cls, params: dict, arrays, meta: dict, Y, scales):
        """The side fit of :meth:`state`, as saved (see :meth:`ALSPredictor.from_state`);
        BadInputError (one line) for side arrays it does not know or of the wrong shape."""
        out = super().from_state(params, arrays, meta, Y, scales)
        names = meta.get("side_arrays", [])
        if not isinstance(names, list) or not set(names) <= set(SIDE_ARRAYS):
            raise BadInputError(f"artifact names unknown side arrays: {names!r}")
        saved = {n: a for n, a in zip(names, state_part(
            arrays, "side_", [n.rstrip("_") for n in names]).values())}
        for n in SIDE_ARRAYS:
            if n not in PRIOR_ARRAYS:
                setattr(out, n, saved.get(n))
        out.prior_ = None
        if any(n in saved for n in PRIOR_ARRAYS):
            out.prior_ = CovariatePrior.from_state(
                {n: saved[n] for n in PRIOR_ARRAYS if n in saved},
                out.als_config().reg_diagonal(), **out._prior_params())
        with_covariates = bool(names)
        out._raw_covariates = (state_part(arrays, "side_", ("raw_covariates",))["raw_covariates"]
                               if with_covariates else None)
        if with_covariates:
            out._check_side_shapes()
        out.members_, out.base_postvar_ = [], None  # (the posterior variance: made on demand)
        out.interval_logit_rule_ = out.interval_logit_rule if with_covariates else None
        out.interval_eps_ = float(out.interval_eps) if with_covariates else None
        return out

    def _check_side_shapes(self) -> None:
        """Every restored side array has the shape the fit would have given it."""
        S, n_m, r = self.ensemble_.U_.shape
        n_b, p = self.ensemble_.V_.shape[1], np.shape(self.covariates_)[-1]
        want = {"covariates_": (n_m, p), "_raw_covariates": (n_m, p), "x_mean_": (p,),
                "x_scale_": (p,), "x_min_": (p,), "x_max_": (p,), "x_weight_": (p,),
                "theta_mean_": (S * (r + 1),), "theta_coef_": (p, S * (r + 1)),
                "prior_precision_": (S, r + 1, r + 1), "noise_var_": (S,),
                "base_z_": (S, n_m, n_b), "effects_": (p, n_b)}
        for n, shape in want.items():
            a = self._side_array(n)
            if a is not None and (a.shape != shape or a.dtype.kind != "f"):
                raise BadInputError(f"artifact array side_{n.strip('_')} has shape {a.shape}, "
                                    f"expected {shape}")

    def _side_array(self, name: str):
        """The fitted array of a :data:`SIDE_ARRAYS` name (or ``_raw_covariates``), the
        prior's held by ``prior_``; None when the fit made none."""
        if name in PRIOR_ARRAYS:
            return None if self.prior_ is None else getattr(self.prior_, name, None)
        return getattr(self, name, None)

    def _prior_params(self) -> dict:
        """The :class:`CovariatePrior` parameters of this predictor's (besides ``alpha``)."""
        return {"alpha": self.prior_alpha, "cov_scale": self.prior_cov_scale,
                "weight": self.prior_weight, "decay": self.prior_decay, "n_ref": self.prior_n}

    def _standardise(self, X):
        """Standardised covariates, NaN -> 0; values outside the training range are clipped
        to it (they reach this only with ``outside_range="clip"``)."""
        X = np.clip(X, self.x_min_, self.x_max_)
        return np.nan_to_num((X - self.x_mean_) / self.x_scale_, nan=0.0) * self.x_weight_

    def _fit(self, Y, scales) -> None:
        super()._fit(Y, scales)
        X = self._raw_covariates
        self.covariates_ = self.interval_eps_ = self.interval_logit_rule_ = None
        self.prior_ = None
        if X is None:
            return
        self.interval_logit_rule_ = self.interval_logit_rule
        self.interval_eps_ = float(self.interval_eps)
        seen = ~np.isnan(X)
        n_seen = seen.sum(axis=0)
        self.x_mean_ = np.where(seen, X, 0.0).sum(axis=0) / np.maximum(n_seen, 1)
        dev = np.where(seen, X - self.x_mean_, 0.0)
        sd = np.sqrt((dev ** 2).sum(axis=0) / np.maximum(n_seen, 1))
        self.x_scale_ = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        self.x_min_ = np.where(n_seen > 0, np.where(seen, X, np.inf).min(axis=0), -np.inf)
        self.x_max_ = np.where(n_seen > 0, np.where(seen, X, -np.inf).max(axis=0), np.inf)
        # family indicators (coded 0 / FAMILY_LEVEL): ridge penalty / family_scale**2 in
        # both regressions, so a family's effect is shrunk towards its provider's
        coded = seen & ((X == 0) | (X == FAMILY_LEVEL))
        family = coded.all(axis=0) & (X == FAMILY_LEVEL).any(axis=0)
        self.x_weight_ = np.where(family, float(self.family_scale), 1.0)
        Xs = self.covariates_ = self._standardise(X)
        Z = self.transform_.transform(Y)
        if self.prior_alpha is not None:
            self.prior_ = CovariatePrior(**self._prior_params()).fit(
                self.ensemble_, Xs, Z, self.als_config().reg_diagonal())
        # the training rows' posterior variance: made when a spread is first asked for
        self.base_z_ = (self.prior_.row_z(self.ensemble_, Z, Xs)[0] if self._use_prior_in_fit()
                        else None)
        self.base_postvar_ = None
        self.effects_ = None
        if self.effect_alpha is not None:
            resid = Z - self._als_blend_z()
            obs = ~np.isnan(resid)
            R = np.where(obs, resid, 0.0)
            # per benchmark j: (X_j' X_j + alpha I) B_j = X_j' r_j over its observed rows
            self.effects_ = masked_ridge(obs, Xs, R, self.effect_alpha)  # (p, n_b)

    def _use_prior_in_fit(self) -> bool:
        return self.prior_alpha is not None and self.prior_in_fit

    def _side_blend(self, Z_als, Z_reg):
        """The default's blend with ``covariate_regression_weight`` (rows with covariates)."""
        w = self.covariate_regression_weight
        if self.regression_ is None or w is None:
            return self._blend(Z_als, Z_reg)
        return np.where(np.isnan(Z_reg), Z_als, (1.0 - w) * Z_als + w * Z_reg)

    def _als_blend_z(self):
        """Blended z completion of the training rows (with the prior when used)."""
        Zs = self.base_z_ if self.base_z_ is not None else self.ensemble_.predict_starts()
        reg = self.regression_z_ if self.regression_ is not None else None
        return self._side_blend(Zs.mean(axis=0), reg)

    def _fits(self) -> list:
        """This fit and its ``members_`` (other ranks; none without covariates)."""
        return [self] + list(getattr(self, "members_", None) or ())

    def _predict(self) -> np.ndarray:
        fits = self._fits()
        if len(fits) == 1:
            return self._predict_one()
        return np.mean([f._predict_one() for f in fits], axis=0)

    @staticmethod
    def _pooled(P, spreads):
        """Spread of the average of fits with predictions ``P`` and spreads ``spreads``
        (each (n_fits, n_rows, n_benchmarks)): sqrt(mean spread**2 + variance of P)."""
        return np.sqrt((np.asarray(spreads) ** 2).mean(axis=0) + np.asarray(P).var(axis=0))

    def _predict_one(self) -> np.ndarray:
        if self.covariates_ is None:
            return super()._predict()
        Zb = self._als_blend_z()
        if self.effects_ is not None:
            Zb = Zb + self.covariates_ @ self.effects_
        return self.transform_.to_scores(Zb)

    def complete_spread(self) -> np.ndarray:
        """Per-cell uncertainty spread in score units, (n_models, n_benchmarks), side
        information included: the starts' std, widened by ``spread_disagreement`` times the
        ALS/regression disagreement (see :meth:`_spread`) and, with ``members_``, pooled
        with theirs and their disagreement (:meth:`_pooled`); what the interval risk
        features read (see :meth:`ALSPredictor.complete_spread`)."""
        fits = self._fits()
        if len(fits) == 1:
            return self._complete_spread_one()
        return self._pooled([f._predict_one() for f in fits],
                            [f._complete_spread_one() for f in fits])

    def _complete_spread_one(self) -> np.ndarray:
        self._fitted()
        if self.covariates_ is None:
            return super().complete_spread()
        Zs = self.base_z_ if self.base_z_ is not None else self.ensemble_.predict_starts()
        return self._spread(Zs, self.regression_z_ if self.regression_ is not None else None,
                            None if self.effects_ is None else self.covariates_ @ self.effects_,
                            self._base_postvar() if self.base_z_ is not None else None)

    def _base_postvar(self):
        """The training rows' Gaussian posterior variance (see :class:`CovariatePrior`),
        (n_models, n_benchmarks), made on first use and kept in ``base_postvar_``; None
        without it."""
        if (self.base_postvar_ is None and self.spread_posterior
                and self.prior_cov_scale is not None):
            with single_blas_thread():
                W = (~np.isnan(self.Y_)).astype(float)
                self.base_postvar_ = self.prior_.posterior_var(
                    *self.prior_.gauss_system(self.ensemble_, W))
        return self.base_postvar_

    def _spread(self, Zs, reg, effects, postvar=None, blend=None):
        """Spread in score units (n_rows, n_benchmarks) of per-start ALS rows ``Zs`` (S,
        n_rows, n_benchmarks, z), the regression's ``reg`` (n_rows, n_benchmarks or None)
        and the covariate ``effects`` (n_rows, n_benchmarks or None): with
        ``spread_disagreement`` k > 0, the z-unit ``s = sqrt(var_starts + (k * (mean ALS -
        regression))**2 + spread_posterior * postvar)`` mapped to score units as half the
        width of ``mean +- s`` (``postvar``: the Gaussian fold-in's posterior predictive
        variance, (n_rows, n_benchmarks) or None); with k = 0, the std of the blended
        starts in score units (the earlier spread)."""
        Zb = (blend or self._side_blend)(Zs, reg)
        if effects is not None:
            Zb = Zb + effects[None]
        k = float(self.spread_disagreement or 0.0)
        if not k or reg is None:
            return self.transform_.to_scores(Zb).std(axis=0)
        m = Zb.mean(axis=0)
        var = Zb.var(axis=0) + (k * np.nan_to_num(Zs.mean(axis=0) - reg)) ** 2
        if self.spread_posterior and postvar is not None:
            var = var + float(self.spread_posterior) * postvar
        sd = np.sqrt(var)
        return np.abs(self.transform_.to_scores(m + sd) - self.transform_.to_scores(m - sd)) / 2.0

    def fold_in(self, scores, *, covariates=None, refit: bool | None = None,
                return_spread: bool = False):
        """Predict full rows of new models from known scores and optional covariates
        (n_rows, n_features, the training features); without covariates, or without
        covariates at fit time, exactly the default predictor's fold-in, and so for the
        rows outside the training range (``outside_range="default"``). Rows with
        covariates average this fit's fold-in with its ``members_``'."""
        fits = self._fits()
        if len(fits) == 1 or covariates is None or refit:
            return self._fold_in_one(scores, covariates=covariates, refit=refit,
                                     return_spread=return_spread)
        one = np.ndim(scores) == 1
        S2, X2 = np.atleast_2d(np.asarray(scores, dtype=float)), np.atleast_2d(covariates)
        res = [f._fold_in_one(S2, covariates=X2, return_spread=return_spread) for f in fits]
        P = np.stack([r[0] for r in res] if return_spread else res)
        inside = self.covariates_apply(X2)[:, None]
        out = np.where(inside, P.mean(axis=0), P[0])
        if not return_spread:
            return out[0] if one else out
        spread = np.where(inside, self._pooled(P, [r[1] for r in res]), res[0][1])
        return (out[0], spread[0]) if one else (out, spread)

    def _fold_in_one(self, scores, *, covariates=None, refit: bool | None = None,
                     return_spread: bool = False):
        """:meth:`fold_in` by this fit alone."""
        self._fitted()
        S = np.asarray(scores, dtype=float)
        one = S.ndim == 1
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        if self.covariates_ is None or (covariates is None and (refit or not return_spread)):
            return super().fold_in(scores, refit=refit, return_spread=return_spread)
        if covariates is None:  # the default's rows, with a spread read as with covariates
            out, spread = self._default_rows(S2)
            return (out[0], spread[0]) if one else (out, spread)
        X = check_covariates(np.atleast_2d(covariates), S2.shape[0], self.covariates_.shape[1])
        Xs = self._standardise(X)
        if refit:
            twin = type(self)(**self.get_params()).fit(
                np.vstack([self.Y_, S2]), self.scales_,
                covariates=np.vstack([self._raw_covariates, X]))
            out = twin.complete(keep_observed=False)[self.Y_.shape[0]:]
            return out[0] if one else out
        outside = self._outside(X)
        if outside.all() and not return_spread:
            return super().fold_in(scores, refit=refit, return_spread=return_spread)
        out, spread = self._fold_in_covariates(S2, Xs, return_spread)
        if outside.any():  # these rows as the default folds them in
            if return_spread:
                out[outside], spread[outside] = self._default_rows(S2[outside])
            else:
                out[outside] = super().fold_in(S2[outside])
        if not return_spread:
            return out[0] if one else out
        return (out[0], spread[0]) if one else (out, spread)

    def covariates_apply(self, covariates) -> np.ndarray:
        """(n_rows,) bool: which new rows ``covariates`` (n_rows, n_features) would be
        folded in with their covariates (False: as the default predictor, see
        ``outside_range``; all False when the fit had none)."""
        self._fitted()
        if self.covariates_ is None:
            return np.zeros(len(covariates), dtype=bool)
        X = check_covariates(np.atleast_2d(covariates), len(covariates), self.covariates_.shape[1])
        return ~self._outside(X)

    def _outside(self, X) -> np.ndarray:
        """(n_rows,) bool: rows with a covariate outside the training range (e.g. a model
        released after every training model) when ``outside_range="default"``."""
        if self.outside_range == "clip":
            return np.zeros(len(X), dtype=bool)
        with np.errstate(invalid="ignore"):
            return ((X < self.x_min_) | (X > self.x_max_)).any(axis=1)

    def _default_rows(self, S2):
        """Rows ``S2`` (n_rows, n_benchmarks) folded in as the default predictor does (the
        same numbers) and their spread as :meth:`_spread` reads it for rows with
        covariates (disagreement and, with the Gaussian prior, the posterior variance of a
        row at the prior's mean), so that one interval calibrator serves rows with and
        without covariates; both (n_rows, n_benchmarks)."""
        Z_new = self.transform_.transform(S2)
        with single_blas_thread():
            Zs = self.ensemble_.fold_in_starts(Z_new)
            reg = self.regression_.predict(Z_new) if self.regression_ is not None else None
            postvar = None
            if self.spread_posterior and self.prior_alpha is not None and self.prior_cov_scale:
                W = (~np.isnan(Z_new)).astype(float)
                postvar = self.prior_.posterior_var(*self.prior_.gauss_system(self.ensemble_, W))
        out = self.transform_.to_scores(self._blend(Zs, reg).mean(axis=0))
        return out, self._spread(Zs, reg, None, postvar, blend=self._blend)

    def _fold_in_covariates(self, S2, Xs, with_spread=True):
        """Fold-in of rows ``S2`` (n_rows, n_benchmarks) with standardised covariates
        ``Xs``: the ensemble-mean scores and (``with_spread``; else None) the spread, both
        (n_rows, n_benchmarks)."""
        Z_new = self.transform_.transform(S2)
        with single_blas_thread():
            with_var = with_spread and bool(self.spread_posterior)
            Zs, postvar = (self.prior_.row_z(self.ensemble_, Z_new, Xs, with_var)
                           if self.prior_ is not None
                           else (self.ensemble_.fold_in_starts(Z_new), None))
            reg = self.regression_.predict(Z_new) if self.regression_ is not None else None
            effects = None if self.effects_ is None else Xs @ self.effects_
            Zb = self._side_blend(Zs, reg)
            if effects is not None:
                Zb = Zb + effects[None]
        return (self.transform_.to_scores(Zb.mean(axis=0)),
                self._spread(Zs, reg, effects, postvar) if with_spread else None)
