"""Calibrated 90% prediction intervals and trust probabilities for predicted scores.

Method (split-conformal scaling of a per-cell risk estimate, computed in a standardized
space so that intervals respect every benchmark's range):

1. **Space.** A :class:`ScaleTransform` fitted on the training matrix (logit for percent
   and other 0-100 scales, then z-scores); a residual is ``r = z(actual) - z(predicted)``.
2. **Risk features** of a cell (model i, benchmark j), from the training matrix: ensemble
   spread of the prediction, how many scores model i and benchmark j have, the in-sample
   RMS residual of row i and column j, the Pearson r of model i with its most similar
   model that has a score on j, and ``|z(predicted)|`` (see :data:`FEATURES`).
3. **Risk model.** Ridge regression of ``log(|r| + 0.01)`` on the features; the risk is
   ``s = exp(x @ coef_)``.
4. **Conformal scaling.** On held-out data the calibration never trained on, the
   half-width is ``q * s`` with ``q`` the ``ceil((n + 1)(1 - alpha)) / n`` quantile of
   ``|r / s|``; ``z(predicted) +- q s`` is mapped back through the inverse transform and
   clipped to ``[lower, upper]`` (percent intervals stay in 0-100, asymmetric near ends).
   Two regimes are calibrated separately: missing cells of known models
   (:func:`heldout_records`, per-model k-fold) and new models folded in from a few
   scores (:func:`new_model_records`). In the cells regime, a cell of a benchmark that
   no source of the model's scores reports (:func:`out_of_reach`: a model one
   leaderboard lists, on another's benchmarks) takes a quantile of its own, calibrated
   on whole sources held out of models (:func:`source_block_folds`).
5. **Trust** = P(|actual - predicted| <= 10 points), a *point* being 1% of the
   benchmark's range (1 pp on percent; 1% of the observed range when unbounded): the
   window is mapped to z units and read off the empirical distribution of ``r / s``.

:func:`calibrate` fits an :class:`IntervalCalibrator` for an unfitted predictor object
(every held-out fit is a :func:`~benchpress.predict.base.clone` of it);
:func:`complete_intervals` and :func:`fold_in_intervals` apply it. Coverage on held-out
data: :mod:`benchpress.predict.evaluation.coverage`.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import NotFittedError, TooLittleData, UsageError
from benchpress.predict.base import BasePredictor, check_scores, clone
from benchpress.predict.intervals.cells_support import SPARSE_CANDIDATES, CellsSupport, pair_corr_moments
from benchpress.predict.evaluation.heldout import fold_fits
from benchpress.predict.evaluation.folds import Folds, make_folds
from benchpress.predict.models.side_info import covariate_kwargs
from benchpress.predict.models.sparse_als import use_sparse
from benchpress.predict.transform import BenchmarkScales, ScaleTransform
from benchpress.predict.size_limits import LIMITS

__all__ = ["IntervalCalibrator", "MatrixSupport", "FEATURES", "heldout_records",
           "new_model_records", "calibrate", "complete_intervals", "fold_in_intervals",
           "fold_in_rows",
           "point_size", "score_bounds", "TRUST_POINTS", "REGIMES", "EXACT_MAX_MODELS",
           "BLOCK_ROWS", "MAX_CANDIDATES", "SPARSE_CANDIDATES",
           "CALIBRATION_MAX_MODELS", "out_of_reach", "source_block_folds"]

#: Names of the risk features, in column order.
FEATURES = ("log_spread", "log_model_count", "log_benchmark_count", "model_fit_rms",
            "benchmark_fit_rms", "nearest_similarity", "abs_z")
#: New-model intervals take one conformal quantile per bucket of known-score count:
#: (0, 1], (1, 3], (3, 5], (5, 8], (8, inf) (a bucket of fewer than MIN_BUCKET held-out
#: cells takes the pooled one).
KNOWN_BUCKETS = (1, 3, 5, 8)
MIN_BUCKET = 50
#: Trust is the probability that the prediction is within this many points.
TRUST_POINTS = 10.0
_RIDGE = 1.0  # ridge penalty of the risk regression
#: Logit rule and margin (percentage points, finer than the predictor's) of the interval space.
LOGIT_RULE, EPS = "percent_or_0_100", 0.05
_FLOOR = 0.01  # added to |residual| before the log in the risk regression
#: Size thresholds, documented in :mod:`benchpress.predict.size_limits`.
EXACT_MAX_MODELS = LIMITS.support_exact_max_models
BLOCK_ROWS = LIMITS.support_block_rows
MAX_CANDIDATES = LIMITS.support_max_candidates
CALIBRATION_MAX_MODELS = LIMITS.calibration_max_models
#: the least a matrix must hold for held-out fits to calibrate intervals on (`calibrate`)
MIN_CALIBRATION_MODELS = 3
MIN_CALIBRATION_CELLS = 20
#: What held-out data a calibrator is fitted on: missing cells of known models, or new
#: models folded in from a few scores.
REGIMES = ("cells", "new_models")


def point_size(scales: BenchmarkScales, Y=None) -> np.ndarray:
    """One "point" per benchmark in score units, shape (n_benchmarks,): 1% of
    ``upper - lower`` if both are finite, else 1% of the observed range of ``Y``, else 1."""
    span = scales.upper - scales.lower
    if Y is not None:
        Y = np.asarray(Y, dtype=float)
        seen = ~np.isnan(Y).all(axis=0)
        lo = np.nanmin(np.where(seen, Y, 0.0), axis=0) if Y.size else 0.0
        hi = np.nanmax(np.where(seen, Y, 1.0), axis=0) if Y.size else 1.0
        span = np.where(np.isfinite(span), span, np.where(seen & (hi > lo), hi - lo, 100.0))
    return np.where(np.isfinite(span) & (span > 0), span / 100.0, 1.0)


def _pair_corr(A, B, min_overlap: int = 3) -> np.ndarray:
    """Pearson r between rows of A (n_a, p) and rows of B (n_b, p) on shared entries;
    NaN marks missing. Pairs with fewer than ``min_overlap`` shared entries get 0."""
    B0 = np.nan_to_num(B)
    return pair_corr_moments(A, (~np.isnan(B)).astype(float), B0, B0 * B0,
                             min_overlap=min_overlap)

class MatrixSupport(CellsSupport):
    """Risk features (module doc, step 2) of cells of a fitted ``predictor`` (its
    ``complete_spread`` is used when it has one), in the interval space given by
    ``logit_rule`` and ``eps`` (``None``: the predictor's ``interval_logit_rule_`` and
    ``interval_eps_`` when it has them, e.g. a side fit with covariates, else
    :data:`LOGIT_RULE` and :data:`EPS`).

    Memory: the model-by-model correlations behind the nearest-model feature are never
    kept; ``near`` (n_models, n_benchmarks) holds the feature of every cell. Up to
    ``exact_max_models`` training models the correlations of a set of rows are computed in
    one product (as they always were: same figures to the bit); above it, in blocks of
    ``block_rows`` rows, so the working memory is about ``block_rows * n_models`` floats
    (the same formula, but a BLAS may then sum in another order: last-bit differences).
    Time grows as n_models * min(n_models, ``max_candidates``): above ``max_candidates``
    training models (an approximation) a model's nearest neighbour is sought among a
    fixed seeded sample of ``max_candidates`` of them; at or below it, among all.
    """

    # defaults, also for supports restored from an artifact
    block_rows, exact_max_models, max_candidates = BLOCK_ROWS, EXACT_MAX_MODELS, MAX_CANDIDATES
    sparse = False

    def predicted_at(self, rows, cols) -> np.ndarray:
        """The predictor's predictions (score units) at cells ``(rows, cols)`` (n_cells,)."""
        if self.sparse:
            return self.predictor.predict_cells(rows, cols)
        return self.P[rows, cols]

    def __init__(self, predictor: BasePredictor, *, logit_rule: str | None = None,
                 eps: float | None = None, block_rows: int = BLOCK_ROWS,
                 exact_max_models: int = EXACT_MAX_MODELS,
                 max_candidates: int = MAX_CANDIDATES):
        if not hasattr(predictor, "Y_"):
            raise NotFittedError("MatrixSupport needs a fitted predictor")
        self.predictor = predictor
        if logit_rule is None:
            logit_rule = getattr(predictor, "interval_logit_rule_", None) or LOGIT_RULE
        if eps is None:
            eps = getattr(predictor, "interval_eps_", None) or EPS
        Y, scales = predictor.Y_, predictor.scales_
        self.block_rows, self.exact_max_models = int(block_rows), int(exact_max_models)
        self.max_candidates = int(max_candidates)
        self.sparse = predictor.uses_cells()
        if self.sparse:
            self._init_cells(logit_rule, eps)
            return
        self.transform = ScaleTransform.from_scales(scales, logit_rule=logit_rule,
                                                    eps=eps).fit(Y)
        self.Z = self.transform.transform(Y)
        self.obs = ~np.isnan(Y)
        self.P = predictor.complete(keep_observed=False)
        self.Zhat = self.transform.transform(self.P)
        spread = (predictor.complete_spread() if hasattr(predictor, "complete_spread")
                  else np.zeros_like(self.P))
        self.spread_z = self._spread_z(self.P, spread)
        res2 = np.where(self.obs, (self.Z - self.Zhat) ** 2, 0.0)
        self.row_count = self.obs.sum(axis=1)
        self.col_count = self.obs.sum(axis=0)
        self.row_rms = np.sqrt(res2.sum(axis=1) / np.maximum(self.row_count, 1))
        self.col_rms = np.sqrt(res2.sum(axis=0) / np.maximum(self.col_count, 1))
        self.near = self._near_of(self.Z, exclude_self=True)

    def _spread_z(self, P, spread) -> np.ndarray:
        s = np.nan_to_num(np.asarray(spread, dtype=float))
        hi, lo = self.transform.transform(P + s), self.transform.transform(P - s)
        return np.nan_to_num(np.abs(hi - lo) / 2.0)

    def _features(self, spread_z, nm, nb, rrms, crms, near, zhat) -> np.ndarray:
        return np.column_stack([
            np.log(spread_z + 1e-3), np.log1p(nm), np.log1p(nb), rrms, crms, near,
            np.abs(np.nan_to_num(zhat))])

    def _near_of(self, Zr, *, exclude_self: bool = False, exclude_rows=None) -> np.ndarray:
        """Nearest-model feature of rows ``Zr`` (n_rows, n_benchmarks, z space, NaN =
        missing): for each row and benchmark j, the largest Pearson r (floored at 0) with a
        candidate training model that has a score on j; shape (n_rows, n_benchmarks).
        Candidates: every training model, or above ``max_candidates`` a fixed seeded
        sample of that many. With ``exclude_self``, ``Zr`` is the training matrix and a
        model is not its own neighbour."""
        if getattr(self, "sparse", False):  # (stubs of the dense path have no flag)
            return self._near_sample(Zr, exclude_rows)
        n_r, n_train = Zr.shape[0], self.Z.shape[0]
        cand = np.arange(n_train)
        if n_train > self.max_candidates:
            cand = np.sort(np.random.default_rng(0).choice(n_train, self.max_candidates,
                                                           replace=False))
        Zc = self.Z if cand.size == n_train else self.Z[cand]
        slot = np.full(n_train, -1)
        slot[cand] = np.arange(cand.size)
        step = n_r if n_train <= self.exact_max_models else max(self.block_rows, 1)
        out = np.zeros((n_r, self.obs.shape[1]))
        cols = [np.flatnonzero(self.obs[cand, j]) for j in range(self.obs.shape[1])]
        for start in range(0, n_r, max(step, 1)):
            stop = min(start + step, n_r)
            C = _pair_corr(Zr[start:stop], Zc)
            if exclude_self:
                own = slot[start:stop]
                C[np.flatnonzero(own >= 0), own[own >= 0]] = 0.0
            for j, m in enumerate(cols):
                out[start:stop, j] = np.max(C[:, m], axis=1, initial=0.0)
        return out

    def cells(self, rows, cols) -> tuple[np.ndarray, np.ndarray]:
        """z predictions (n_cells,) and features (n_cells, n_features) of cells (rows, cols)."""
        i, j = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        if self.sparse:
            return self._cells_sparse(i, j)
        zhat = self.Zhat[i, j]
        X = self._features(self.spread_z[i, j], self.row_count[i], self.col_count[j],
                           self.row_rms[i], self.col_rms[j], self.near[i, j], zhat)
        return zhat, X

    def new_rows(self, S, predicted, spread=None) -> tuple[np.ndarray, np.ndarray]:
        """Features of every cell of new models with known scores ``S``, fold-in
        predictions and spread (score units), each (n_rows, n_benchmarks). Returns
        ``zhat`` (n_rows * n_benchmarks,) and ``X`` (n_rows * n_benchmarks, n_features)."""
        S = np.atleast_2d(np.asarray(S, dtype=float))
        P = np.atleast_2d(np.asarray(predicted, dtype=float))
        sp = np.zeros_like(P) if spread is None else np.atleast_2d(spread)
        Zs, Zh = self.transform.transform(S), self.transform.transform(P)
        known = ~np.isnan(S)
        n_r, n_b = S.shape
        rrms = np.sqrt(np.where(known, (Zs - Zh) ** 2, 0.0).sum(axis=1)
                       / np.maximum(known.sum(axis=1), 1))
        i = np.repeat(np.arange(n_r), n_b)
        j = np.tile(np.arange(n_b), n_r)
        X = self._features(self._spread_z(P, sp).ravel(), known.sum(axis=1)[i],
                           self.col_count[j], rrms[i], self.col_rms[j],
                           self._near_of(Zs).ravel(), Zh.ravel())
        return Zh.ravel(), X


class IntervalCalibrator:
    """Risk model + split-conformal scale for 1 - ``alpha`` prediction intervals.

    ``alpha`` is the miscoverage (0.1: 90% intervals), ``ridge`` the penalty of the risk
    regression on standardized features, ``regime`` (one of :data:`REGIMES`) the held-out
    data it is meant for (a label; :func:`calibrate` sets it). Fitted: ``coef_`` (n_features + 1,) intercept
    first, ``x_mean_``/``x_std_`` (n_features,), ``q_`` the conformal multiplier,
    ``ratios_`` (n_cal,) the sorted signed ``r / s`` (for trust), ``n_cal_``.
    """

    def __init__(self, alpha: float = 0.1, *, ridge: float = _RIDGE, regime: str = "cells"):
        self.alpha = alpha
        self.ridge = ridge
        self.regime = regime

    def fit(self, residual_z, X, cols=None, n_benchmarks: int | None = None
            ) -> "IntervalCalibrator":
        """Fit on held-out residuals ``residual_z`` (n_cal,) and features X (n_cal,
        n_features). In the new-model regime, ``cols`` (n_cal,), the cells' benchmark
        columns out of ``n_benchmarks``, also gives each benchmark its own factor
        (:meth:`_column_factors`)."""
        if not 0.0 < self.alpha < 1.0:
            raise UsageError(f"alpha must lie in (0, 1), got {self.alpha}")
        r = np.asarray(residual_z, dtype=float)
        X = np.asarray(X, dtype=float)
        ok = np.isfinite(r) & np.isfinite(X).all(axis=1)
        if ok.sum() < MIN_CALIBRATION_CELLS:
            raise TooLittleData(f"need at least {MIN_CALIBRATION_CELLS} held-out cells to "
                                f"calibrate, got {int(ok.sum())}")
        r, X = r[ok], X[ok]
        cols = None if cols is None else np.asarray(cols, dtype=np.int64)[ok]
        self.x_mean_, self.x_std_ = X.mean(axis=0), X.std(axis=0) + 1e-9
        A = np.column_stack([np.ones(len(r)), (X - self.x_mean_) / self.x_std_])
        pen = np.full(A.shape[1], float(self.ridge))
        pen[0] = 0.0
        self.coef_ = np.linalg.solve(A.T @ A + np.diag(pen), A.T @ np.log(np.abs(r) + _FLOOR))
        ratio = r / self.risk(X)
        n = ratio.size
        self.q_ = self._quantile(ratio)
        if self.regime == "new_models":  # one quantile per known-score bucket (Mondrian)
            bucket = self._bucket(X)
            self.q_known_ = np.array([self._quantile(ratio[bucket == b])
                                      if (bucket == b).sum() >= MIN_BUCKET else self.q_
                                      for b in range(len(KNOWN_BUCKETS) + 1)])
            if cols is not None and n_benchmarks:
                self.col_factor_ = self._column_factors(ratio, X, cols, int(n_benchmarks))
        self.ratios_ = np.sort(ratio)
        self.n_cal_ = int(n)
        return self

    def _column_factors(self, ratio, X, cols, n_benchmarks: int) -> np.ndarray:
        """Mondrian by benchmark, shrunk: for each benchmark, the 1 - alpha quantile of
        its cells' ``|ratio| / q`` (1 when its cells are covered as often as the rest),
        pulled toward 1 in log space with :data:`COLUMN_PRIOR` cells of weight; 1 for a
        benchmark with fewer than :data:`MIN_BUCKET` calibration cells. Shape
        (n_benchmarks,). Without it a 90% interval covered 73% of later truths on the
        registry's science benchmarks and 96% on its multimodal ones."""
        u = np.abs(ratio) / self.half_width_scale(X)
        factor = np.ones(n_benchmarks)
        counts = np.bincount(cols, minlength=n_benchmarks)
        for j in np.flatnonzero(counts >= MIN_BUCKET):
            # the plain quantile: the finite-sample one of a 50-cell column runs high, and
            # the factors would widen every interval on average
            f = float(np.quantile(u[cols == j], 1.0 - self.alpha))
            factor[j] = np.exp(np.log(f) * counts[j] / (counts[j] + COLUMN_PRIOR))
        return factor

    def _quantile(self, ratio) -> float:
        """The conformal quantile of ``|ratio|`` at level 1 - alpha (finite-sample)."""
        n = ratio.size
        level = min(1.0, np.ceil((n + 1) * (1.0 - self.alpha)) / n)
        return float(np.quantile(np.abs(ratio), level, method="higher"))

    @staticmethod
    def _bucket(X) -> np.ndarray:
        """Each cell's bucket of its model's known-score count (:data:`KNOWN_BUCKETS`),
        read back from the ``log_model_count`` feature."""
        known = np.rint(np.expm1(np.asarray(X, dtype=float)[:, FEATURES.index("log_model_count")]))
        return np.searchsorted(np.asarray(KNOWN_BUCKETS), known, side="left")

    def half_width_scale(self, X, cols=None, out=None) -> np.ndarray:
        """The calibrated quantile for each cell (n_cells,): per known-score bucket in the
        new-model regime, times the benchmark's factor when the cells' columns ``cols``
        are given; else the one ``q_``. Cells flagged in ``out`` (n_cells,) bool, out of
        their model's source reach, take ``q_out_`` when the calibrator has one."""
        q_known = getattr(self, "q_known_", None)
        q = np.full(len(X), self.q_) if q_known is None else np.asarray(q_known)[self._bucket(X)]
        return q * self._factor(cols, out)

    def fit_out(self, residual_z, X, out, reach) -> "IntervalCalibrator":
        """The cells regime's quantile for cells out of their model's source reach
        (:func:`out_of_reach`), fitted after :meth:`fit` on held-out residuals
        ``residual_z`` (n_cal,), features ``X`` (n_cal, n_features) and flags ``out``
        (n_cal,) bool: ``q_out_``, the conformal quantile of ``|r / s|`` over the flagged
        cells (none below :data:`MIN_BUCKET` of them: they keep ``q_``). ``reach``
        (n_sources, n_benchmarks) bool, which sources report each benchmark, is kept as
        ``reach_`` to flag the cells the calibrator is applied to."""
        self._fitted()
        r, X = np.asarray(residual_z, dtype=float), np.asarray(X, dtype=float)
        ok = np.isfinite(r) & np.isfinite(X).all(axis=1) & np.asarray(out, dtype=bool)
        self.reach_ = np.asarray(reach, dtype=bool)
        self.q_out_ = (self._quantile(r[ok] / self.risk(X[ok])) if ok.sum() >= MIN_BUCKET
                       else None)
        self.n_out_ = int(ok.sum())
        return self

    def out_cells(self, observed) -> np.ndarray | None:
        """For rows of observed-score flags ``observed`` (n_rows, n_benchmarks), which
        cells are out of the model's source reach (same shape, bool); None for a
        calibrator without an out-of-reach quantile."""
        if getattr(self, "q_out_", None) is None:
            return None
        return out_of_reach(observed, self.reach_)

    def _factor(self, cols, out) -> np.ndarray | float:
        """What widens each cell beyond its quantile: the benchmark's factor when ``cols``
        are given (:meth:`_column_factor`), times ``q_out_ / q_`` for the cells flagged in
        ``out`` when the calibrator has an out-of-reach quantile."""
        factor = 1.0 if cols is None else self._column_factor(cols)
        q_out = getattr(self, "q_out_", None)
        if out is not None and q_out is not None:
            factor = factor * np.where(out, q_out / self.q_, 1.0)
        return factor

    def _column_factor(self, cols) -> np.ndarray | float:
        """The benchmark factor of each cell in columns ``cols`` (:meth:`_column_factors`;
        1 for a calibrator without them)."""
        factor = getattr(self, "col_factor_", None)
        return 1.0 if factor is None else np.asarray(factor)[np.asarray(cols, dtype=np.int64)]

    def _fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError("IntervalCalibrator is not fitted; call fit(residual_z, X)")

    def risk(self, X) -> np.ndarray:
        """Uncalibrated risk scale (z units), shape (n_cells,)."""
        self._fitted()
        X = np.asarray(X, dtype=float)
        A = np.column_stack([np.ones(len(X)), (X - self.x_mean_) / self.x_std_])
        return np.exp(A @ self.coef_)

    def predict_interval(self, zhat, X, transform: ScaleTransform, cols, out=None):
        """``lower, upper`` (n_cells,) in score units, within the benchmark range, for
        predictions ``zhat`` (n_cells,) in the z space of ``transform``, features ``X``
        (n_cells, n_features), benchmark columns ``cols`` (n_cells,) and, optionally,
        out-of-reach flags ``out`` (n_cells,; see :meth:`half_width_scale`)."""
        self._fitted()
        half = self.half_width_scale(X, cols, out) * self.risk(X)
        zhat = np.asarray(zhat, dtype=float)
        return score_bounds(transform, zhat - half, zhat + half, cols)

    def trust(self, zhat, X, transform: ScaleTransform, cols, points, out=None) -> np.ndarray:
        """P(|actual - predicted| <= ``TRUST_POINTS`` points), shape (n_cells,).

        ``points`` is the size of one point per cell in score units (n_cells,); ``out``
        as in :meth:`predict_interval` (an out-of-reach cell's ratios are read as
        ``q_out_ / q_`` times wider).
        """
        self._fitted()
        zhat = np.asarray(zhat, dtype=float)
        pred = transform.inverse_transform(zhat, cols=cols)
        lo = transform.transform(pred - TRUST_POINTS * points, cols=cols)
        hi = transform.transform(pred + TRUST_POINTS * points, cols=cols)
        s = self.risk(X) * self._factor(cols, out)
        n = self.ratios_.size
        cdf_hi = np.searchsorted(self.ratios_, (hi - zhat) / s, side="right") / n
        cdf_lo = np.searchsorted(self.ratios_, (lo - zhat) / s, side="left") / n
        return np.clip(cdf_hi - cdf_lo, 0.0, 1.0)

    def to_json(self) -> dict:
        """Fitted parameters, JSON-ready."""
        self._fitted()
        known = getattr(self, "q_known_", None)
        q_out = getattr(self, "q_out_", None)
        return {"alpha": self.alpha, "q": self.q_, "n_cal": self.n_cal_,
                **({} if known is None else {"q_known": [float(q) for q in known]}),
                **({} if q_out is None else {"q_out": float(q_out), "n_out": self.n_out_}),
                "coef": dict(zip(("intercept",) + FEATURES, self.coef_.tolist()))}


def score_bounds(transform: ScaleTransform, z_lower, z_upper, cols):
    """Interval bounds ``z_lower, z_upper`` (n_cells,) in the z space of ``transform``, for
    cells in benchmark columns ``cols``, as ``lower, upper`` in score units within each
    benchmark's range."""
    lower = transform.inverse_transform(np.asarray(z_lower, dtype=float), cols=cols)
    upper = transform.inverse_transform(np.asarray(z_upper, dtype=float), cols=cols)
    # a bound at the logit margin stands for the end of the range itself
    lo, hi = transform.lower[cols], transform.upper[cols]
    margin = 1.0001 * transform.eps / 100.0 * (hi - lo)
    lg = transform.logit[cols]
    lower = np.where(lg & (lower <= lo + margin), lo, lower)
    upper = np.where(lg & (upper >= hi - margin), hi, upper)
    return lower, upper


def _intervals(support: MatrixSupport, calibrator: IntervalCalibrator, zhat, X, shape,
               out=None):
    cols = np.tile(np.arange(shape[1]), shape[0])
    out = None if out is None else np.ravel(out)
    ok = np.isfinite(zhat)
    z = np.where(ok, zhat, 0.0)
    pts = (support.points if support.sparse else
           point_size(support.predictor.scales_, support.predictor.Y_))[cols]
    lower, upper = calibrator.predict_interval(z, X, support.transform, cols, out)
    trust = calibrator.trust(z, X, support.transform, cols, pts, out)
    nan = np.full(z.shape, np.nan)
    return {k: np.where(ok, v, nan).reshape(shape)
            for k, v in (("lower", lower), ("upper", upper), ("trust", trust))}


def complete_intervals(predictor: BasePredictor, calibrator: IntervalCalibrator,
                       support: MatrixSupport | None = None, *, rows=None) -> dict:
    """Intervals of every cell of a fitted predictor's completion: a dict of
    (n_models, n_benchmarks) arrays ``predicted`` (also for observed cells), ``lower``,
    ``upper`` and ``trust``; NaN where there is no prediction. ``support`` may reuse a
    :class:`MatrixSupport` of ``predictor``. ``rows`` (model indices) limits the work
    to those models: the arrays are then (len(rows), n_benchmarks), equal to those rows
    of the full result. The cells' risk features are made `BLOCK_ROWS` models at a time,
    so memory stays bounded on a large registry (same numbers). A cell out of its
    model's source reach takes the calibrator's quantile for those (:meth:`IntervalCalibrator.out_cells`)."""
    support = support or MatrixSupport(predictor)
    n_m, n_b = support.predictor.Y_.shape
    r = np.arange(n_m) if rows is None else np.asarray(rows, dtype=np.int64)
    if support.sparse:
        pred = {"predicted": support.predictor.complete_rows(r, keep_observed=False)}
    parts = []
    for block in np.split(r, np.arange(BLOCK_ROWS, r.size, BLOCK_ROWS)):
        i, j = np.repeat(block, n_b), np.tile(np.arange(n_b), block.size)
        zhat, X = support.cells(i, j)
        out = calibrator.out_cells(~np.isnan(support.predictor.Y_[block]))
        parts.append(_intervals(support, calibrator, zhat, X, (block.size, n_b), out))
    return {"predicted": pred["predicted"] if support.sparse else support.P[r],
            **{k: np.vstack([p[k] for p in parts]) if parts else np.full((0, n_b), np.nan)
               for k in ("lower", "upper", "trust")}}


def fold_in_intervals(predictor: BasePredictor, calibrator: IntervalCalibrator, scores,
                      support: MatrixSupport | None = None, *, covariates=None) -> dict:
    """Fold-in predictions with intervals for new models.

    ``scores`` (n_benchmarks,) or (n_rows, n_benchmarks) are known scores (NaN =
    unknown); ``predictor`` is fitted and ``calibrator`` calibrated for the same method
    (:func:`calibrate`; None: no intervals, lower, upper and trust NaN); ``support`` may reuse a :class:`MatrixSupport` of ``predictor``.
    ``covariates`` reach the fold-in of predictors that accept them: (n_rows, n_features),
    or per row a covariate row or None (that row is folded in without, as a model given
    without metadata is; see :func:`fold_in_rows`).
    Returns a dict of arrays shaped like ``scores``: ``predicted, lower, upper, trust``.
    """
    S = np.asarray(scores, dtype=float)
    S2 = np.atleast_2d(S)
    P, spread = fold_in_rows(predictor, S2, covariates)
    if calibrator is None:  # point predictions alone (a matrix too small to calibrate on)
        out = {"predicted": P, **{k: np.full(S2.shape, np.nan) for k in ("lower", "upper", "trust")}}
        return {k: v[0] for k, v in out.items()} if S.ndim == 1 else out
    support = support or MatrixSupport(predictor)
    zhat, X = support.new_rows(S2, P, spread)
    out = {"predicted": P, **_intervals(support, calibrator, zhat, X, S2.shape)}
    return {k: v[0] for k, v in out.items()} if S.ndim == 1 else out


def fold_in_rows(predictor, S2, covariates=None):
    """Fold-in predictions and spread (None for predictors without one) of rows ``S2``
    (n_rows, n_benchmarks), with the rows' ``covariates`` when the predictor accepts them:
    (n_rows, n_features), or per row a covariate row or None (that row without; the rows
    with covariates are folded in again with them, which changes others' numbers by float
    rounding at most)."""
    def one(rows, extra):
        if hasattr(predictor, "complete_spread"):
            return predictor.fold_in(S2[rows], return_spread=True, **extra)
        return predictor.fold_in(S2[rows], **extra), None

    if covariates is None or not getattr(predictor, "accepts_covariates", False):
        return one(slice(None), {})
    has = np.array([c is not None for c in covariates], dtype=bool)
    if has.all():
        return one(slice(None), covariate_kwargs(predictor, np.atleast_2d(
            np.asarray(list(covariates), dtype=float))))
    P, spread = one(slice(None), {})
    if has.any():
        X = np.vstack([c for c in covariates if c is not None])
        P_has, spread_has = one(has, covariate_kwargs(predictor, X))
        P[has] = P_has
        if spread is not None:
            spread[has] = spread_has
    return P, spread


def _records(parts: list) -> dict:
    keys = ("fold", "i", "j", "actual", "predicted", "zhat", "residual_z", "X", "model_count",
            "point", "out")
    rec = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in keys}
    rec["transforms"] = [p["transform"] for p in parts]
    return rec


def _part(k, support, Y, i, j, predicted, zhat, X, counts, pts, out=None) -> dict:
    za = support.transform.transform(Y[i, j], cols=j)
    keep = np.isfinite(zhat)
    vals = {"fold": np.full(i.size, k), "i": i, "j": j, "actual": Y[i, j],
            "predicted": predicted, "zhat": zhat, "residual_z": za - zhat, "X": X, "model_count": counts,
            "point": pts[j], "out": np.zeros(i.size, dtype=bool) if out is None else out}
    return {**{n: v[keep] for n, v in vals.items()}, "transform": support.transform}


def heldout_records(predictor: BasePredictor, Y, scales: BenchmarkScales, folds: Folds, *,
                    covariates=None, reach=None) -> dict:
    """Cells regime: refit a clone of the unfitted ``predictor`` with each fold hidden;
    collect the held-out cells.

    Returns a dict of arrays of shape (n_cells,) (``X``: (n_cells, n_features)): ``fold,
    i, j, actual, predicted, zhat`` (prediction in the interval space), ``residual_z,
    X, model_count`` (the model's training score count), ``point``, ``out`` (the cell
    is out of its model's source reach in the fold's training matrix, given ``reach``
    (n_sources, n_benchmarks) bool; all False without); and ``transforms``, the
    interval space of each fold. Held-out cells must be observed in ``Y``
    (:func:`~benchpress.predict.evaluation.heldout.fold_fits`). ``covariates`` (n_models,
    n_features) reach every fit of a predictor that accepts them.
    """
    Y = check_scores(Y, scales)
    pts, parts, obs = point_size(scales, Y), [], ~np.isnan(Y)
    for k, i, j, fitted in fold_fits(predictor, Y, scales, folds,
                                     **covariate_kwargs(predictor, covariates)):
        support = MatrixSupport(fitted)
        zhat, X = support.cells(i, j)
        out = None
        if reach is not None:
            trained = obs.copy()
            trained[i, j] = False
            out = out_of_reach(trained, reach)[i, j]
        parts.append(_part(k, support, Y, i, j, support.predicted_at(i, j), zhat, X,
                           support.row_count[i], pts, out))
    return _records(parts)


def out_of_reach(observed, reach) -> np.ndarray:
    """Which cells no source of their model's scores reports: ``observed`` (n_rows,
    n_benchmarks) bool, the rows' observed scores; ``reach`` (n_sources, n_benchmarks)
    bool, which sources report each benchmark. Returns (n_rows, n_benchmarks) bool:
    True where none of the sources that report the benchmark has a score of the model
    (a model one leaderboard lists, on another leaderboard's benchmarks).

    >>> reach = np.array([[1, 1, 0], [0, 1, 1]], dtype=bool)  # source 0: a, b; source 1: b, c
    >>> out_of_reach(np.array([[True, False, False], [False, False, True]]), reach)
    array([[False, False,  True],
           [ True, False, False]])
    """
    R = np.asarray(reach, dtype=float)
    return (np.asarray(observed, dtype=float) @ R.T) @ R == 0


def source_block_folds(observed, reach, *, n_folds: int = 2, seed: int = 1001,
                       min_left: int = 3) -> Folds:
    """Held-out cells that look like a model before a second source lists it: for each
    model with scores on the benchmarks of two or more sources, one of those sources at
    random, and every score of the model on that source's benchmarks hidden (only where
    at least ``min_left`` of its scores stay). The models are split at random into
    ``n_folds`` folds. ``observed`` (n_models, n_benchmarks) bool; ``reach``
    (n_sources, n_benchmarks) bool as in :func:`out_of_reach`. No folds with fewer than
    two sources."""
    obs = np.asarray(observed, dtype=bool)
    R = np.asarray(reach, dtype=bool)
    in_source = obs.astype(np.int64) @ R.T.astype(np.int64)  # (n_models, n_sources)
    candidate = (in_source > 0) & (obs.sum(axis=1)[:, None] - in_source >= min_left)
    rows = np.flatnonzero(candidate.any(axis=1))
    rng = np.random.default_rng(seed)
    if R.shape[0] < 2 or rows.size < n_folds:
        return Folds((), (), ())
    keys = np.where(candidate[rows], rng.random((rows.size, R.shape[0])), np.inf)
    hidden = obs[rows] & R[keys.argmin(axis=1)]  # (n_rows, n_benchmarks)
    fold = rng.permutation(rows.size) % n_folds
    cells = []
    for f in range(n_folds):
        ii, jj = np.nonzero(hidden[fold == f])
        cells.append(np.column_stack([rows[fold == f][ii], jj]).astype(np.int64))
    return Folds(tuple(cells), (seed,) * n_folds, tuple(range(n_folds)))


def temporal_groups(release_dates, eligible, n_groups: int = 5, min_group: int = 5):
    """Calibration groups that look like the future: the models released in each of the
    last ``n_groups`` months that hold at least ``min_group`` eligible models, each paired
    with the models released before that month (its training rows). ``eligible`` (bool,
    n_models) marks the models with enough scores. Returns ``[(test_rows, train_mask)]``,
    empty when too few models are dated."""
    dates = np.array([str(d)[:7] if d else "" for d in release_dates])
    months = sorted({d for d in dates[eligible] if len(d) == 7}, reverse=True)
    out = []
    for month in months:
        test = np.flatnonzero(eligible & (dates == month))
        train = (dates != "") & (dates < month)
        if test.size >= min_group and train.sum() >= 3 * test.size:
            out.append((test, train))
        if len(out) == n_groups:
            break
    return out[::-1]


#: A benchmark's own interval factor counts as this many calibration cells at 1
#: (:meth:`IntervalCalibrator._column_factors`).
COLUMN_PRIOR = 100

#: With at least this share of the eligible models undated, the new-model calibration
#: adds random groups of the undated ones to its temporal groups (LiveBench gives no
#: release dates: without them its models' intervals covered 51-76% of later truths).
UNDATED_SHARE = 0.2


def _random_groups(rows, n_groups: int, rng) -> list:
    """``rows`` split at random into ``n_groups`` held-out groups, each fitted on every
    other model: ``[(test_rows, None)]``."""
    group = rng.permutation(rows.size) % n_groups
    return [(rows[group == g], None) for g in range(n_groups)]


#: Known-score counts of the temporal calibration groups (cycled over their models): the
#: counts `predict --scores` meets, from one score up.
TEMPORAL_GIVEN = (1, 3, 5, 8)


def new_model_records(predictor: BasePredictor, Y, scales: BenchmarkScales, *,
                      n_groups: int = 5, given=(3, 5, 8, 12), seed: int = 1001,
                      covariates=None, release_dates=None) -> dict:
    """New-model regime: whole models are held out (``n_groups`` groups, one fit each of a
    clone of the unfitted ``predictor``);
    each is folded in from ``given[k]`` random known scores (cycled over models) and its
    other scores are predicted. Same keys as :func:`heldout_records`. ``covariates``
    (n_models, n_features): each fit gets the kept rows', each fold-in the held-out
    models' own rows (predictors that accept them only).

    With ``release_dates`` (one per model, ISO or None), the groups are temporal
    (:func:`temporal_groups`: each of the last months' models, fitted on the models
    released before it, revealing 1, 3, 5 or 8 scores): the future the intervals are used
    for, where new models sit above the population. Without enough dated models, random."""
    Y = check_scores(Y, scales)
    obs, pts, parts = ~np.isnan(Y), point_size(scales, Y), []
    rng = np.random.default_rng(seed)
    groups = []
    if release_dates is not None:
        given = TEMPORAL_GIVEN
        eligible = obs.sum(axis=1) >= min(given) + 2
        groups = temporal_groups(release_dates, eligible, n_groups)
        if groups:  # models without a date (a leaderboard that gives none) are held out at
            # random beside the dated months, so that their benchmarks are calibrated too
            undated = eligible & np.array([not d for d in release_dates])
            if undated.sum() >= UNDATED_SHARE * eligible.sum():
                groups += _random_groups(np.flatnonzero(undated), n_groups, rng)
    if not groups:
        groups = _random_groups(np.flatnonzero(obs.sum(axis=1) >= min(given) + 2), n_groups,
                                rng)
    for g, (mine, train) in enumerate(groups):
        keep = np.ones(Y.shape[0], dtype=bool) if train is None else train.copy()
        keep[mine] = False
        support = MatrixSupport(clone(predictor).fit(
            Y[keep], scales, **covariate_kwargs(predictor, covariates, keep)))
        k = np.asarray(given)[np.arange(mine.size) % len(given)]
        keys = np.where(obs[mine], rng.random((mine.size, Y.shape[1])), np.inf)
        known = obs[mine] & (np.argsort(np.argsort(keys, axis=1), axis=1) < k[:, None])
        S = np.where(known, Y[mine], np.nan)
        X_mine = covariate_kwargs(predictor, covariates, mine).get("covariates")
        P, spread = fold_in_rows(support.predictor, S, X_mine)
        zhat, X = support.new_rows(S, P, spread)
        ii, jj = np.nonzero(obs[mine] & ~known)
        flat = ii * Y.shape[1] + jj
        parts.append(_part(g, support, Y, mine[ii], jj, P[ii, jj], zhat[flat], X[flat],
                           known.sum(axis=1)[ii], pts))
    return _records(parts)


def calibrate(predictor: BasePredictor, Y, scales: BenchmarkScales, *, regime: str = "cells",
              folds: Folds | None = None, alpha: float = 0.1, seed: int = 1001,
              n_seeds: int = 2, n_folds: int = 3, covariates=None,
              release_dates=None, reach=None) -> IntervalCalibrator:
    """Fit an :class:`IntervalCalibrator` for the unfitted ``predictor`` on held-out data
    of ``Y`` (each held-out fit is a clone of it).

    ``regime="cells"``: missing cells of known models (for completions), on this
    project's own random per-model partitions (seeds ``seed .. seed + n_seeds - 1``,
    ``n_folds`` folds each; never the published ones) unless ``folds`` is given.
    ``regime="new_models"``: new models folded in from a few scores
    (:func:`new_model_records` with ``seed``; temporal groups with ``release_dates``).
    ``covariates`` (n_models, n_features) reach every fit and fold-in of a predictor that
    accepts them. In the cells regime, ``reach`` (n_sources, n_benchmarks) bool, which
    sources report each benchmark, adds two fits with whole sources held out of models
    (:func:`source_block_folds`, ``seed``) and a quantile of their own for cells out of
    a model's source reach (:meth:`IntervalCalibrator.fit_out`).
    """
    Y = check_scores(Y, scales)
    if regime not in REGIMES:
        raise UsageError(f"unknown regime {regime!r}; choose 'cells' or 'new_models'")
    # held-out fits of one or two models are no fits (a side fit of one model has no
    # covariate to learn from): said at once, before any of them runs
    measured = int(((~np.isnan(Y)).sum(axis=1) >= 2).sum())
    if measured < MIN_CALIBRATION_MODELS or (~np.isnan(Y)).sum() < MIN_CALIBRATION_CELLS:
        raise TooLittleData(f"calibrating intervals needs at least {MIN_CALIBRATION_MODELS} "
                            f"models with 2 or more scores and {MIN_CALIBRATION_CELLS} scores; "
                            f"the matrix has {measured} and {int((~np.isnan(Y)).sum())}")
    if folds is None and use_sparse(*Y.shape) and Y.shape[0] > CALIBRATION_MAX_MODELS:
        keep = np.sort(np.random.default_rng(seed).choice(Y.shape[0], CALIBRATION_MAX_MODELS,
                                                           replace=False))
        Y = Y[keep]
        if covariates is not None:
            covariates = np.asarray(covariates)[keep]
        if release_dates is not None:
            release_dates = np.asarray(release_dates, dtype=object)[keep]
    if regime == "new_models":
        rec = new_model_records(predictor, Y, scales, seed=seed, covariates=covariates,
                                release_dates=release_dates)
    else:
        if folds is None:
            folds = make_folds(~np.isnan(Y), n_folds=n_folds, seed=seed, n_seeds=n_seeds)
        rec = heldout_records(predictor, Y, scales, folds, covariates=covariates, reach=reach)
    cal = IntervalCalibrator(alpha, regime=regime).fit(rec["residual_z"], rec["X"],
                                                       cols=rec["j"], n_benchmarks=Y.shape[1])
    if regime == "cells" and reach is not None:
        blocks = source_block_folds(~np.isnan(Y), reach, seed=seed)
        if len(blocks):
            more = heldout_records(predictor, Y, scales, blocks, covariates=covariates,
                                   reach=reach)
            cal.fit_out(*(np.concatenate([rec[k], more[k]]) for k in ("residual_z", "X", "out")),
                        reach)
    return cal
