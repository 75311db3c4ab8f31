"""A fitted model: one predictor fitted on one matrix, with everything its answers need.

`FittedModel` is exactly what an artifact stores (see :mod:`benchpress.api.artifact`): the
training matrix (n_models, n_benchmarks), the fitted predictor, its interval support, the
interval calibrators by regime and the `FitIdentity` of the fit (sources, snapshot,
method, params). It is immutable: calibrating another regime returns a new object
(`calibrated`). It is the single home of the answers built on a fit:

- `predict_rows`: a model's predicted row (fold-in of its known scores, with the
  "new_models" calibrated 90% interval and trust), the one definition behind
  `predict --scores`, `predict --model`, `compare` and the app;
- `complete` / `completed_cells`: every cell of the matrix, with the "cells" intervals;
- `compare`: rows side by side, leader, gap and `p_ahead`;
- `nearest`: the registered models closest to a new model's row.

>>> from benchpress.predict import make_predictor
>>> from benchpress.scales import BenchmarkScales
>>> rng = np.random.default_rng(0)   # 60 models of one skill each, 8 percent benchmarks
>>> Y = np.clip(50 + 15 * rng.normal(size=(60, 1)) + 5 * rng.normal(size=(60, 8)), 1, 99)
>>> scales = BenchmarkScales(np.array(["percent"] * 8), np.zeros(8), np.full(8, 100.0))
>>> matrix = ScoreMatrix.from_arrays(Y, [f"m{i}" for i in range(60)],
...                                  [f"b{j}" for j in range(8)], scales)
>>> estimator = make_predictor("als4", n_starts=2)
>>> fitted = FittedModel.fit(estimator, matrix, identity=FitIdentity.of(estimator))
>>> fitted
FittedModel(method='als4', params={'n_starts': 2}, sources=all, snapshot='current', 60 models x 8 benchmarks, calibrated=[])
>>> S = np.full((1, 8), np.nan)
>>> S[0, :3] = [70.0, 65.0, 72.0]                  # a new model's three known scores
>>> row = fitted.calibrated(["new_models"]).predict_rows(S)
>>> row["predicted"][0, :3].tolist()               # known cells keep their value
[70.0, 65.0, 72.0]
>>> bool(np.all((row["lower"][0, 3:] < row["predicted"][0, 3:])
...             & (row["predicted"][0, 3:] < row["upper"][0, 3:])))
True
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, TooLittleData
from benchpress.predict import BasePredictor, clone, param_overrides
from benchpress.predict.intervals import calibration as conformal  # (`intervals` names an argument)
from benchpress.predict.intervals.support import MatrixSupport
from benchpress.predict.size_limits import LIMITS
from benchpress.store.matrix import ScoreMatrix

__all__ = ["FitIdentity", "FittedModel", "Comparison"]


@dataclass(frozen=True)
class FitIdentity:
    """Which matrix and predictor a fit was made from, as an artifact records it.

    ``method`` and ``params`` (those that differ from the method's defaults) name the
    predictor; ``sources`` the sources the matrix was made from (None: every source, or
    not known); ``snapshot`` the snapshot id (None: the live registry, or not known) and
    ``label`` the matrix's label ("current", a tag, ...).
    """

    method: str
    params: dict = field(default_factory=dict)
    sources: tuple[str, ...] | None = None
    snapshot: str | None = None
    label: str = ""

    @classmethod
    def of(cls, estimator: BasePredictor, *, sources=None, snapshot: str | None = None,
           label: str = "") -> "FitIdentity":
        """The identity of fitting `estimator` (unfitted or fitted) on a matrix of
        `sources` from `snapshot`."""
        return cls(estimator.method, param_overrides(estimator),
                   None if sources is None else tuple(sources), snapshot, label or "")

    def to_dict(self) -> dict:
        """``{"sources": [...] | None, "snapshot": ..., "method": ..., "params": {...}}``,
        the provenance every prediction's JSON carries."""
        return {"sources": None if self.sources is None else list(self.sources),
                "snapshot": self.snapshot or self.label or "current",
                "method": self.method, "params": dict(self.params)}


@dataclass(frozen=True)
class Comparison:
    """Outcome of `BenchPress.compare`: `frame` (one row per benchmark, see
    `benchpress.predict.evaluation.ranking.compare_models`) and `uncertainty_source`, where the
    intervals and `p_ahead` came from (calibrated intervals, the ensemble spread, none),
    `provenance`, which sources, snapshot, method and params made it, and `contradicted`,
    each new model's given score that its others contradict (`BenchPress.predict`)."""

    frame: pl.DataFrame
    uncertainty_source: str
    provenance: dict = field(default_factory=dict)  # see `BenchPress.provenance`
    # new model name -> its given score the others contradict (`Prediction.contradicted`)
    contradicted: dict = field(default_factory=dict)
    # why `p_ahead` is empty on this install (the core lacks scipy), one line; else None
    p_ahead_note: str | None = None


class FittedModel:
    """A predictor fitted on one matrix, with its interval support and calibrators.

    Immutable: its attributes cannot be set, `calibrators` is a read-only mapping, and
    `calibrated` returns a new object. (The fitted predictor is shared, never refitted.)

    Parameters
    ----------
    matrix : ScoreMatrix
        The training scores (n_models, n_benchmarks); for a fit loaded lite from a
        store, no rows (its benchmarks and scales are complete).
    predictor : BasePredictor
        Fitted on ``matrix.values``.
    identity : FitIdentity
    support : MatrixSupport, optional
        The predictor's interval support (made on first use when not given).
    calibrators : mapping of str to IntervalCalibrator, optional
        By regime ("cells", "new_models"; see `benchpress.predict.intervals.calibration.REGIMES`).
    """

    def __init__(self, matrix: ScoreMatrix, predictor: BasePredictor, *, identity: FitIdentity,
                 support=None, calibrators=None):
        put = object.__setattr__  # the one place the attributes are set
        put(self, "matrix", matrix)
        put(self, "predictor", predictor)
        put(self, "identity", identity)
        put(self, "calibrators", MappingProxyType(dict(calibrators or {})))
        if support is not None:
            put(self, "support", support)  # else made on first use (`support` below)

    def __setattr__(self, name, value):
        raise AttributeError(f"FittedModel is immutable (cannot set {name!r}); "
                             "`calibrated` returns a new one")

    def __delattr__(self, name):
        raise AttributeError(f"FittedModel is immutable (cannot delete {name!r})")

    @classmethod
    def fit(cls, estimator: BasePredictor, matrix: ScoreMatrix, *, identity: FitIdentity,
            covariates: np.ndarray | None = None) -> "FittedModel":
        """Fit a clone of the unfitted `estimator` on `matrix` (with the models'
        `covariates` (n_models, n_features) when the predictor takes them). No
        calibrator yet: see `calibrated`."""
        if not np.isfinite(matrix.values).any():
            raise TooLittleData(f"the matrix ({matrix.label or 'current'}) holds no scores to "
                                "fit on; ingest a source or add a model first")
        side = {} if covariates is None else {"covariates": covariates}
        return cls(matrix, clone(estimator).fit(matrix.values, matrix.scales, **side),
                   identity=identity)

    @cached_property
    def support(self) -> MatrixSupport:
        """Risk features of the fitted predictor's cells (`MatrixSupport`), made once and
        shared by every interval; its `transform` maps scores to z units."""
        return MatrixSupport(self.predictor)

    @cached_property
    def check_space(self):
        """The z space the given-score check measures in (`consistency.check_space`),
        fitted once on this fit's matrix."""
        from benchpress.predict.checks.consistency import check_space

        return check_space(self.matrix.values, self.matrix.scales,
                           getattr(self.predictor, "transform_", None))

    def contradicted(self, row: np.ndarray, covariates=None) -> dict | None:
        """The given score of `row` (n_benchmarks,) that its other given scores contradict
        most, when they do (`benchpress.predict.checks.consistency`: each given score predicted
        from the others; more than `CONTRADICTION_Z` standardized units away):
        {"benchmark_id", "given", "expected" (its prediction from the others, score
        units), "z"}, else None. 3+ given scores; `covariates`: the row's covariate row
        or None."""
        from benchpress.blas_threads import single_blas_thread
        from benchpress.predict.checks.consistency import leave_one_out, most_contradicted

        with single_blas_thread():
            expected, z = leave_one_out(self.predictor, self.check_space, row, covariates)
        j = most_contradicted(z)
        if j is None:
            return None
        return {"benchmark_id": self.matrix.benchmark_ids[j], "given": float(row[j]),
                "expected": float(expected[j]), "z": float(z[j])}

    def calibrated(self, regimes, *, covariates: np.ndarray | None = None) -> "FittedModel":
        """This fit with interval calibrators for every regime in `regimes` (a new object
        when one was missing; self otherwise). Each calibrator is fitted on held-out data
        of the matrix with clones of the predictor (see `intervals.calibrate`): for
        "new_models", on temporal splits when the models carry release dates; for
        "cells", with whole sources held out of models too when the matrix has several. Raises
        BadInputError when the matrix holds too little held-out data."""
        missing = [r for r in regimes if r not in self.calibrators]
        if not missing:
            return self
        models, cals = self.matrix.models, dict(self.calibrators)
        reach = self.matrix.source_reach()
        for regime in missing:
            dates = (models["release_date"].to_list()
                     if regime == "new_models" and "release_date" in models.columns else None)
            side = {} if covariates is None else {"covariates": covariates}
            cals[regime] = conformal.calibrate(clone(self.predictor), self.matrix.values,
                                               self.matrix.scales, regime=regime,
                                               release_dates=dates,
                                               reach=reach, **side)
        return FittedModel(self.matrix, self.predictor, identity=self.identity,
                           support=self.support, calibrators=cals)

    def calibrator(self, regime: str):
        """The calibrator of `regime`; BadInputError when this fit has none."""
        try:
            return self.calibrators[regime]
        except KeyError:
            raise BadInputError(f"this fit has no {regime!r} interval calibrator "
                                "(too little held-out data to calibrate on)") from None

    def __repr__(self) -> str:
        m, who = self.matrix, self.identity
        return (f"FittedModel(method={who.method!r}"
                + (f", params={dict(who.params)}" if who.params else "")
                + f", sources={','.join(who.sources or []) or 'all'}, "
                f"snapshot={who.snapshot or who.label or 'current'!r}, "
                f"{len(m.model_ids)} models x {len(m.benchmark_ids)} benchmarks, "
                f"calibrated={sorted(self.calibrators)})")

    # -- answers -------------------------------------------------------------------------
    def predict_rows(self, S: np.ndarray, covariates=None, *, intervals: bool = True) -> dict:
        """The one definition of a model's predicted row: fold-in of its known scores S
        (n_rows, n_benchmarks) against this fit, with "new_models" intervals; known
        cells keep their value and get no interval. Returns a dict of
        (n_rows, n_benchmarks) arrays predicted, lower, upper, trust. (A row folded in
        alone or with others differs at most by float rounding, ~1e-12.) `covariates`:
        per row a covariate row (n_features,) or None (that row is folded in without).
        The fold-in's products are small: they run on one BLAS thread (whose threads only
        wait on each other on a busy machine). `intervals=False`: the point predictions
        alone (lower, upper and trust NaN), for a fit with no calibrator."""
        from benchpress.blas_threads import single_blas_thread

        cal = self.calibrator("new_models") if intervals else None
        support = self.support if intervals else None
        with single_blas_thread():
            out = conformal.fold_in_intervals(self.predictor, cal, S, support,
                                              covariates=covariates)
        known = ~np.isnan(S)
        return {"predicted": np.where(known, S, out["predicted"]),
                **{k: np.where(known, np.nan, out[k]) for k in ("lower", "upper", "trust")}}

    @cached_property
    def completed_cells(self) -> dict:
        """Every cell of the matrix predicted with its calibrated 90% interval ("cells"
        regime): a dict of (n_models, n_benchmarks) arrays predicted, lower, upper, trust,
        made once (what `complete(intervals=True)` returns in long form)."""
        return conformal.complete_intervals(self.predictor, self.calibrator("cells"),
                                            self.support)

    def complete(self, *, intervals: bool = False) -> pl.DataFrame:
        """The full matrix, observed cells kept: a wide frame, model_id + one column per
        benchmark. With `intervals=True`, a long frame instead, one row per (model,
        benchmark): model_id, benchmark_id, observed (null if missing), predicted, lower,
        upper (calibrated 90% interval) and trust (P(|error| <= 10 points))."""
        if intervals:
            ci, m = self.completed_cells, self.matrix
            n_m, n_b = m.values.shape
            cols = {"model_id": np.repeat(np.asarray(m.model_ids, dtype=object), n_b),
                    "benchmark_id": np.tile(np.asarray(m.benchmark_ids, dtype=object), n_m),
                    "observed": m.values.ravel(),
                    **{k: ci[k].ravel() for k in ("predicted", "lower", "upper", "trust")}}
            return pl.DataFrame({k: (v.tolist() if v.dtype == object else v)
                                 for k, v in cols.items()}).fill_nan(None)
        return pl.concat(list(self.complete_blocks()))

    def complete_blocks(self, *, cells_per_block: int = LIMITS.write_cells_per_block):
        """`complete()` (wide, observed cells kept) as a sequence of row-block frames, so a
        large completion can be written without holding it all (about `cells_per_block`
        cells per block when the predictor completes in blocks, see
        `BasePredictor.completion_blocks`; else one block)."""
        ids, bids = self.matrix.model_ids, self.matrix.benchmark_ids
        for k, block in self.predictor.completion_blocks(cells_per_block):
            yield pl.DataFrame({"model_id": ids[k:k + block.shape[0]]}).hstack(
                pl.DataFrame(block, schema=bids, orient="row"))

    def compare(self, names: list[str], S: np.ndarray, *, cols=None,
                covariates=None) -> tuple[pl.DataFrame, str]:
        """Rows side by side: the models `names` with known scores S (n_names,
        n_benchmarks), each predicted by `predict_rows` (observed cells kept), on the
        benchmark columns `cols` (default: all). Returns the frame of
        `benchpress.predict.evaluation.ranking.compare_models` (leader, gap, `p_ahead`) and where the
        uncertainty came from: the calibrated intervals, else (a fit without a
        "new_models" calibrator) the ensemble spread when the predictor has one, else none.
        An observed score's uncertainty is its benchmark's measurement noise (the matrix's
        `benchmarks["noise"]`, `benchpress.store.noise`).
        """
        from benchpress.predict.evaluation.ranking import NORMAL_Q95, compare_models

        m = self.matrix
        cols = np.arange(len(m.benchmark_ids)) if cols is None else np.asarray(cols)
        observed = ~np.isnan(S)
        intervals, sigma = None, None
        if "new_models" in self.calibrators:
            out = self.predict_rows(S, covariates)
            intervals = {k: out[k] for k in ("lower", "upper", "trust")}
            values, sure_from = out["predicted"], "calibrated 90% intervals (normal approximation)"
            sigma = (intervals["upper"] - intervals["lower"]) / (2 * NORMAL_Q95)
        else:  # too little held-out data to calibrate on (a small matrix)
            if hasattr(self.predictor, "complete_spread"):
                P, sigma = self.predictor.fold_in(S, return_spread=True)
                sure_from = "ensemble spread (not calibrated)"
            else:
                P, sure_from = self.predictor.fold_in(S), "none"
            values = np.where(observed, S, P)
        hib = m.benchmarks["higher_is_better"].fill_null(True).to_numpy()
        noise = (m.benchmarks["noise"].cast(pl.Float64).fill_null(np.nan).to_numpy()
                 if "noise" in m.benchmarks.columns else None)  # a fit stored before it: exact
        # what a gap is measured against: the scale's bounds, else the observed spread
        sc = m.scales
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column with no rows (lite)
            spread = np.nanmax(m.values, axis=0) - np.nanmin(m.values, axis=0) \
                if m.values.shape[0] else np.full(len(m.benchmark_ids), np.nan)
        ranges = np.where(np.isfinite(sc.upper - sc.lower), sc.upper - sc.lower, spread)
        frame = compare_models(
            names, values[:, cols], observed[:, cols], hib[cols],
            sigma=None if sigma is None else sigma[:, cols],
            noise=None if noise is None else noise[cols], ranges=ranges[cols],
            intervals=None if intervals is None else {k: v[:, cols] for k, v in intervals.items()},
            benchmark_ids=[m.benchmark_ids[j] for j in cols])
        return frame, sure_from

    @cached_property
    def completed(self) -> np.ndarray:
        """The matrix completed by the fit (n_models, n_benchmarks): observed cells kept,
        the rest predicted (`predictor.complete()`), made once."""
        return self.predictor.complete()

    def nearest(self, row: np.ndarray, k: int = 5) -> pl.DataFrame:
        """The one definition of the registered models nearest to a new model whose known
        scores are `row` (n_benchmarks,), NaN elsewhere: the RMS gap in z units (the
        interval support's transform) between the new model's completed row (given scores
        kept, the rest folded in) and each model's completed row (`completed`).

        Returns the `k` nearest, nearest first (ties in matrix order): model_id, distance
        and n_measured, how many of the given benchmarks the model has an observed score
        on (its other scores there are predictions).
        """
        new = np.where(np.isnan(row), self.predictor.fold_in(row), row)
        t = self.support.transform
        diff = t.transform(self.completed) - t.transform(new)[None, :]
        dist = np.sqrt(np.nanmean(diff * diff, axis=1))
        order = np.argsort(dist, kind="stable")[: max(int(k), 0)]
        given = ~np.isnan(row)
        measured = (~np.isnan(self.matrix.values[order][:, given])).sum(axis=1)
        return pl.DataFrame({"model_id": [self.matrix.model_ids[i] for i in order],
                             "distance": dist[order], "n_measured": measured.astype(np.int64)})
