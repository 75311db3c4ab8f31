"""The conformal calibrator of prediction intervals: a risk model on the risk features
(:mod:`~benchpress.predict.intervals.features`) and split-conformal quantiles, fitted on
held-out residuals (:mod:`~benchpress.predict.intervals.calibration` makes them).

See :mod:`benchpress.predict.intervals.calibration` for the method.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, TooLittleData, UsageError
from benchpress.predict.intervals.features import FEATURES
from benchpress.predict.transform import ScaleTransform

__all__ = ["IntervalCalibrator", "score_bounds", "at_range_ends", "out_of_reach",
           "KNOWN_BUCKETS", "MIN_BUCKET", "TRUST_POINTS", "REGIMES", "COLUMN_PRIOR",
           "STATE_ARRAYS", "MIN_CALIBRATION_CELLS"]

#: New-model intervals take one conformal quantile per bucket of known-score count:
#: (0, 1], (1, 3], (3, 5], (5, 8], (8, inf) (a bucket of fewer than MIN_BUCKET held-out
#: cells takes the pooled one).
KNOWN_BUCKETS = (1, 3, 5, 8)
MIN_BUCKET = 50
#: Trust is the probability that the prediction is within this many points.
TRUST_POINTS = 10.0
_RIDGE = 1.0  # ridge penalty of the risk regression
_FLOOR = 0.01  # added to |residual| before the log in the risk regression
#: What held-out data a calibrator is fitted on: missing cells of known models, or new
#: models folded in from a few scores.
REGIMES = ("cells", "new_models")
#: the fewest held-out cells a calibrator is fitted on
MIN_CALIBRATION_CELLS = 20
#: A benchmark's own interval factor counts as this many calibration cells at 1
#: (:meth:`IntervalCalibrator._column_factors`).
COLUMN_PRIOR = 100
#: The arrays every calibrator keeps in a stored fit (:meth:`IntervalCalibrator.state`), in
#: order: its fitted attributes without their trailing underscore.
STATE_ARRAYS = ("x_mean", "x_std", "coef", "ratios")


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
        below, above = pred - TRUST_POINTS * points, pred + TRUST_POINTS * points
        lo, hi = transform.transform(below, cols=cols), transform.transform(above, cols=cols)
        # a window that reaches an end of the range holds every score read as that end, so
        # it runs on without bound there (the lower end is -inf in z, +inf on a turned column)
        sign = transform.sign[np.asarray(cols)]
        lo = np.where(at_range_ends(transform, below, cols)[0], -np.inf * sign, lo)
        hi = np.where(at_range_ends(transform, above, cols)[1], np.inf * sign, hi)
        lo, hi = np.fmin(lo, hi), np.fmax(lo, hi)  # turned columns (lower is better)
        s = self.risk(X) * self._factor(cols, out)
        n = self.ratios_.size
        cdf_hi = np.searchsorted(self.ratios_, (hi - zhat) / s, side="right") / n
        cdf_lo = np.searchsorted(self.ratios_, (lo - zhat) / s, side="left") / n
        return np.clip(cdf_hi - cdf_lo, 0.0, 1.0)

    def state(self) -> tuple[dict, dict]:
        """``(arrays, meta)`` of the fitted calibrator: the arrays of :data:`STATE_ARRAYS`
        (named without their trailing underscore), the benchmark factors (``"col_factor_"``,
        new-model regime) and the reach of the out-of-reach quantile (``"reach"``, cells
        regime) when it has them; ``meta`` (JSON-ready) is :meth:`to_json` with the ridge
        and the regime. :meth:`from_state` restores it."""
        self._fitted()
        arrays = {n: np.asarray(getattr(self, n + "_")) for n in STATE_ARRAYS}
        if getattr(self, "col_factor_", None) is not None:  # per benchmark (new-model regime)
            arrays["col_factor_"] = np.asarray(self.col_factor_)
        if getattr(self, "q_out_", None) is not None:  # out of source reach (cells regime)
            arrays["reach"] = np.asarray(self.reach_, dtype=bool)
        return arrays, {**self.to_json(), "ridge": self.ridge, "regime": self.regime}

    @classmethod
    def from_state(cls, arrays: dict, meta: dict) -> "IntervalCalibrator":
        """The calibrator of :meth:`state` (``arrays``, ``meta``), as saved; BadInputError
        (one line) for a malformed quantile, factor or reach."""
        out = cls(meta["alpha"], ridge=meta["ridge"], regime=meta["regime"])
        for n in STATE_ARRAYS:
            if n not in arrays:
                raise BadInputError(f"artifact arrays lack the calibrator's {n!r}")
            setattr(out, n + "_", np.asarray(arrays[n]))
        out.q_, out.n_cal_ = float(meta["q"]), int(meta["n_cal"])
        if "q_known" in meta:  # per known-score bucket (new-model regime, since 2026-12)
            q_known = np.asarray(meta["q_known"], dtype=float)
            if q_known.shape != (len(KNOWN_BUCKETS) + 1,) or not np.isfinite(q_known).all():
                raise BadInputError("artifact calibrator's q_known is malformed")
            out.q_known_ = q_known
        factor = arrays.get("col_factor_")
        if factor is not None:
            factor = np.asarray(factor, dtype=float)
            if factor.ndim != 1 or not (np.isfinite(factor).all() and (factor > 0).all()):
                raise BadInputError("artifact calibrator's col_factor is malformed")
            out.col_factor_ = factor
        if "q_out" in meta:  # cells out of the model's source reach (since 2026-12-03)
            reach = arrays.get("reach")
            q_out = float(meta["q_out"])
            if reach is None or reach.dtype != bool or not (np.isfinite(q_out) and q_out > 0):
                raise BadInputError("artifact calibrator's q_out or reach is malformed")
            out.q_out_, out.n_out_, out.reach_ = q_out, int(meta.get("n_out", 0)), reach
        return out

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
    # a column turned to its direction (lower is better) maps the z bounds the other way
    lower, upper = np.fmin(lower, upper), np.fmax(lower, upper)
    # a bound at the logit margin stands for the end of the range itself
    lower = np.where(at_range_ends(transform, lower, cols)[0], transform.lower[cols], lower)
    upper = np.where(at_range_ends(transform, upper, cols)[1], transform.upper[cols], upper)
    return lower, upper


def at_range_ends(transform: ScaleTransform, values, cols):
    """Which ``values`` (score units, n_cells) in benchmark columns ``cols`` lie within
    the logit margin of their range's lower end, and which within that of its upper end:
    two (n_cells,) bool arrays (False in columns without a logit). The interval space
    reads such a score as the end itself."""
    values = np.asarray(values, dtype=float)
    lo, hi = transform.lower[cols], transform.upper[cols]
    margin = 1.0001 * transform.eps / 100.0 * (hi - lo)
    lg = transform.logit[cols]
    return lg & (values <= lo + margin), lg & (values >= hi - margin)


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
