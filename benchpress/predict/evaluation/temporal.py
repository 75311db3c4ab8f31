"""The temporal yardstick: fit on the past, reveal a few scores of each later model, score
the rest.

For each cutoff (default: the first day of each of the last 12 months of release dates),
the predictor is fitted on the models released before it (with their scores as published
before it, where a source has a history of versions); every model released in the
month from that cutoff to the next (with at least ``min_scores`` scores) is a *later
model*. Each later model reveals ``k`` of its scores (for each ``k`` in ``known``) in one
or more *reveal orders* and the rest of its scores are predicted from those alone (fold-in,
no refit) with their 90% intervals, and compared with what it scored:

* ``"random"``: k of its benchmarks at random (seeded by cutoff, model and k);
* ``"popular"``: the k of its benchmarks that most training models report, the ones a
  vendor reports first;
* ``"probes"``: the given probe benchmarks it has, then popular ones to make up k;
* ``"single"``: the popular order of single benchmarks alone (``single``: percent-scale
  benchmarks a user runs; no aggregate derived from other scores, no composite index):
  what a user who has run GPQA, HLE and IFBench types in;
* ``"reported"`` (:func:`later_snapshot_evaluation`): the first k its sources show, in
  their own order (:func:`reported_order`: a leaderboard's aggregates, then the file's
  order).

Each later model is folded in twice where the predictor takes covariates: with the
metadata the registry holds for it (provider, release date, ...: what a user passes to
``predict --metadata``) and without (``predict --scores`` alone); the cells' ``metadata``
column says which. A predictor that takes none is folded in once and its cells stand for
both.

Errors are reported per scale, never pooled across them: ``medae`` is over percent-scale
cells only (points); Elo, index, dollar and other cells each get their own MedAE in their
own units. Intervals count as covering when the truth lies within them (``coverage90``).

Nothing about a later model is seen before its fold-in: the transform, the fit and the
interval calibrator all come from the training models.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, UsageError
from benchpress.predict.estimator import BasePredictor, check_scores
from benchpress.predict.evaluation.fit_memo import FitMemo
from benchpress.predict.intervals.calibration import calibrate, fold_in_intervals, fold_in_rows
from benchpress.predict.intervals.support import MatrixSupport
from benchpress.predict.models.covariates import covariate_kwargs
from benchpress.predict.transform import BenchmarkScales

__all__ = ["TemporalResult", "temporal_evaluation", "later_snapshot_evaluation",
           "reported_order", "monthly_cutoffs", "single_benchmarks", "ORDERS", "METADATA_RUNS"]

ORDERS = ("random", "popular", "probes", "reported", "single")
#: How a later model is folded in: with the metadata the registry holds for it, and without.
METADATA_RUNS = ("given", "none")


def single_benchmarks(kind, derived=None) -> np.ndarray:
    """Which benchmarks a user runs (the ``"single"`` reveal order): percent-scale ones
    that are not ``derived`` (an aggregate computed from other scores, e.g. LiveBench's
    category averages); indices, Elo and other scales are aggregates or ratings.

    >>> single_benchmarks(["percent", "index", "percent"], [False, False, True])
    array([ True, False, False])
    """
    single = np.asarray(kind).astype(str) == "percent"
    return single if derived is None else single & ~np.asarray(derived, dtype=bool)


def monthly_cutoffs(release_dates, n_months: int = 12) -> list[str]:
    """The first day of each of the last ``n_months`` months up to the newest release date
    (ISO strings, oldest first)."""
    dated = sorted(d for d in release_dates if d)
    if not dated:
        raise BadInputError("no model has a release date: a temporal evaluation needs them")
    newest = dt.date.fromisoformat(dated[-1][:10])
    y, m, out = newest.year, newest.month, []
    for _ in range(int(n_months)):
        out.append(dt.date(y, m, 1).isoformat())
        y, m = (y, m - 1) if m > 1 else (y - 1, 12)
    return sorted(out)


@dataclass
class TemporalResult:
    """Outcome of :func:`temporal_evaluation`.

    Attributes
    ----------
    cells : polars.DataFrame
        One row per predicted cell: ``method, cutoff, order, k, metadata, model_id,
        benchmark_id, scale, actual, predicted, lower, upper, abs_error, covered``
        (``metadata``: folded in with the model's metadata, or without).
    cutoffs : list of str
    n_train, n_test : dict cutoff -> int
    """

    cells: pl.DataFrame
    cutoffs: list
    n_train: dict = field(default_factory=dict)
    n_test: dict = field(default_factory=dict)

    def summary(self, by=("method", "metadata", "k")) -> pl.DataFrame:
        """Percent-scale figures per group: ``n_cells, medae, bias, within5,
        coverage90`` (bias = mean signed error, points)."""
        pct = self.cells.filter(pl.col("scale") == "percent")
        return (pct.group_by(list(by)).agg(
            pl.len().alias("n_cells"), pl.col("abs_error").median().alias("medae"),
            (pl.col("predicted") - pl.col("actual")).mean().alias("bias"),
            ((pl.col("abs_error") <= 5).mean() * 100).alias("within5"),
            (pl.col("covered").mean() * 100).alias("coverage90")).sort(list(by)))

    def per_scale(self, by=("method", "metadata", "k")) -> pl.DataFrame:
        """MedAE per scale in the scale's own units (never pooled)."""
        return (self.cells.group_by([*by, "scale"]).agg(
            pl.len().alias("n_cells"), pl.col("abs_error").median().alias("medae"),
            (pl.col("covered").mean() * 100).alias("coverage90")).sort([*by, "scale"]))

    def ratio(self, method: str, baselines, by=("metadata", "k"), *, n_boot: int = 2000,
              seed: int = 0, level: float = 0.9) -> pl.DataFrame:
        """``method``'s percent-cell MedAE over each of ``baselines``' (method names), per
        group of ``by``, with a ``level`` interval from a paired bootstrap over the later
        models: each draw takes models with replacement (a model's cells together, the same
        draw for both methods), so the interval says how much the ratio depends on which
        models happened to be released. Cells are paired on (cutoff, order, k, metadata,
        model, benchmark); columns ``baseline, *by, n_models, n_cells, ratio, lo, hi`` (``ratio``
        from the plain medians, as :meth:`summary` gives them; 0.9 is 10% lower). Each
        baseline's draws start from ``seed``, so its figures do not depend on the others.
        """
        keys = ["cutoff", "order", "k", "metadata", "model_id", "benchmark_id"]
        pct = self.cells.filter(pl.col("scale") == "percent")
        tail = (1.0 - float(level)) / 2.0
        rows = []
        for baseline in baselines:
            paired = (pct.filter(pl.col("method") == method).select(*keys, a="abs_error")
                      .join(pct.filter(pl.col("method") == baseline)
                            .select(*keys, b="abs_error"), on=keys, how="inner"))
            rng = np.random.default_rng(seed)
            for group, g in paired.sort(keys).group_by(list(by), maintain_order=True):
                model = g.select(pl.concat_str("cutoff", "model_id", separator="\x00")
                                 .rank("dense")).to_series().to_numpy().astype(np.int64) - 1
                n_models = int(model.max()) + 1
                draws = _model_draws(rng, n_models, n_boot)
                boot = (_weighted_medians(g["a"].to_numpy(), model, draws)
                        / _weighted_medians(g["b"].to_numpy(), model, draws))
                rows.append({"baseline": baseline, **dict(zip(by, group)),
                             "n_models": n_models, "n_cells": g.height,
                             "ratio": float(g["a"].median() / g["b"].median()),
                             "lo": float(np.quantile(boot, tail)),
                             "hi": float(np.quantile(boot, 1.0 - tail))})
        return pl.DataFrame(rows)

    def coverage(self, method: str, by=("metadata", "k"), *, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.9) -> pl.DataFrame:
        """How often ``method``'s 90% intervals held the truth on percent cells (per cent),
        per group of ``by``, with a ``level`` interval from a bootstrap over the later
        models (a model's cells drawn together, as in :meth:`ratio`): how far the coverage
        depends on which models happened to be released. Columns ``*by, n_models, n_cells,
        coverage90, lo, hi``; empty when ``method`` made no intervals."""
        cells = self.cells.filter((pl.col("scale") == "percent") & (pl.col("method") == method)
                                  & pl.col("covered").is_not_null())
        tail = (1.0 - float(level)) / 2.0
        rng = np.random.default_rng(seed)
        rows = []
        for group, g in cells.sort("cutoff", "model_id").group_by(list(by), maintain_order=True):
            per_model = g.group_by("cutoff", "model_id", maintain_order=True).agg(
                pl.len().alias("n"), pl.col("covered").sum().alias("held"))
            n, held = per_model["n"].to_numpy(), per_model["held"].to_numpy()
            draws = _model_draws(rng, len(n), n_boot)
            boot = 100.0 * (draws @ held) / (draws @ n)
            rows.append({**dict(zip(by, group)), "n_models": len(n), "n_cells": int(n.sum()),
                         "coverage90": float(100.0 * held.sum() / n.sum()),
                         "lo": float(np.quantile(boot, tail)),
                         "hi": float(np.quantile(boot, 1.0 - tail))})
        return pl.DataFrame(rows).sort(list(by)) if rows else pl.DataFrame()

    def versus_best(self, method: str, by=("order", "k", "metadata"), **kwargs) -> pl.DataFrame:
        """Per group of ``by``, ``method``'s MedAE over the best other method's in that
        group (the lowest MedAE of the rest), with its paired interval (:meth:`ratio`,
        ``kwargs`` passed on); columns ``*by, baseline, medae, best_medae, ratio, lo, hi``
        (``medae``: ``method``'s). Empty when no other method was scored."""
        table = self.summary(("method", *by))
        mine = table.filter(pl.col("method") == method).select(*by, "medae")
        best = (table.filter(pl.col("method") != method).sort("medae")
                .group_by(list(by), maintain_order=True).first()
                .select(*by, pl.col("method").alias("baseline"), pl.col("medae").alias("best_medae")))
        if best.height == 0:
            return pl.DataFrame()
        wanted = mine.join(best, on=list(by))
        parts = []
        for baseline in wanted["baseline"].unique(maintain_order=True):
            r = self.ratio(method, [baseline], by, **kwargs)
            parts.append(r.join(wanted.filter(pl.col("baseline") == baseline), on=[*by, "baseline"]))
        return (pl.concat(parts).select(*by, "baseline", "medae", "best_medae", "ratio", "lo", "hi")
                .sort(list(by)))

    def to_json(self, *, groups: dict | None = None, sources: dict | None = None) -> dict:
        """Flat figures per method (``<method>_k<k>_medae``, ``..._coverage90``: folded in
        with the models' metadata; ``<method>_none_k<k>_...`` without, for the methods
        that take it) for ``dvc metrics``, plus per-scale and per-order breakdowns, and per
        benchmark group (``groups``: benchmark id -> group) and per source (``sources``:
        model id -> the source that describes it) when given."""
        doc: dict = {"cutoffs": self.cutoffs, "n_train": self.n_train, "n_test": self.n_test}
        takes = set(self.cells.filter(pl.col("takes_metadata"))["method"].unique()) \
            if "takes_metadata" in self.cells.columns else set()
        for r in self.summary().iter_rows(named=True):
            if r["metadata"] == "none" and r["method"] not in takes:
                continue  # the same cells as with it
            key = f"{r['method']}{'_none' if r['metadata'] == 'none' else ''}_k{r['k']}"
            doc[f"{key}_medae"] = r["medae"]
            if r["coverage90"] is not None:  # the methods whose intervals were made
                doc[f"{key}_coverage90"] = r["coverage90"]
            doc[f"{key}_bias"] = r["bias"]
            doc[f"{key}_n_cells"] = r["n_cells"]
        doc["per_order"] = self.summary(("method", "metadata", "order", "k")).to_dicts()
        doc["per_scale"] = self.per_scale().to_dicts()
        for name, column, mapping in (("per_group", "benchmark_id", groups),
                                      ("per_source", "model_id", sources)):
            if mapping:
                cells = self.cells.with_columns(pl.col(column).replace_strict(
                    mapping, default="other", return_dtype=pl.String).alias("key"))
                doc[name] = TemporalResult(cells, self.cutoffs).summary(
                    ("method", "metadata", "key", "k")).to_dicts()
        return doc


def _model_draws(rng, n_models: int, n_boot: int) -> np.ndarray:
    """(n_boot, n_models): how often each model is drawn in each bootstrap resample of the
    models (n_models draws with replacement)."""
    return rng.multinomial(n_models, np.full(n_models, 1.0 / n_models), size=n_boot)


def _weighted_medians(values: np.ndarray, group: np.ndarray, draws: np.ndarray,
                      chunk: int = 250) -> np.ndarray:
    """Per draw (a row of ``draws``, (n_draws, n_groups): how often each group was drawn),
    the weighted median of ``values`` whose group (``group``, one per value) counts that
    often: the smallest value at which the cumulative count reaches half the draw's total.
    ``chunk`` draws at a time, so memory stays at chunk x n_values.

    >>> _weighted_medians(np.array([3.0, 1.0, 2.0]), np.array([0, 1, 1]),
    ...                   np.array([[1, 1], [0, 2], [3, 0]]))
    array([2., 1., 3.])
    """
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_group = values[order], group[order]
    out = np.empty(draws.shape[0])
    for start in range(0, draws.shape[0], chunk):
        cum = np.cumsum(draws[start:start + chunk][:, sorted_group], axis=1)
        out[start:start + chunk] = sorted_values[(2 * cum < cum[:, -1:]).sum(axis=1)]
    return out


def _reveal_order(obs_row: np.ndarray, order: str, popularity: np.ndarray, probes, key,
                  single=None):
    """Benchmark indices of one later model in the order they are revealed."""
    have = np.flatnonzero(obs_row)
    if order == "random":
        return have[np.random.default_rng(key).permutation(have.size)]
    if order == "single" and single is not None:
        have = have[np.asarray(single, dtype=bool)[have]]
    by_pop = have[np.argsort(-popularity[have], kind="stable")]
    if order in ("popular", "single"):
        return by_pop
    first = [j for j in probes if obs_row[j]]
    return np.array(first + [j for j in by_pop if j not in set(first)], dtype=np.int64)


def temporal_evaluation(estimators: dict, Y, scales: BenchmarkScales, release_dates, *,
                        benchmark_ids, model_ids, cutoffs=None, known=(1, 3, 5),
                        orders=("random", "popular"), probes=(), min_scores: int = 6,
                        seed: int = 42, intervals: bool = True, covariates=None,
                        values_at=None, single=None, metadata=METADATA_RUNS,
                        progress=None) -> TemporalResult:
    """Fit on the past, predict the next month's models from ``k`` of their scores.

    Parameters
    ----------
    estimators : dict name -> BasePredictor
        Unfitted predictors (each fit is a clone).
    Y : ndarray (n_models, n_benchmarks)
        Scores, score units, NaN = missing.
    scales : BenchmarkScales
    release_dates : sequence of str or None, length n_models
        ISO dates; undated models are never later models and never train.
    benchmark_ids, model_ids : sequences naming the columns and rows.
    cutoffs : list of ISO dates, optional
        Default :func:`monthly_cutoffs` (the last 12 months).
    known : tuple of int
        How many scores each later model reveals.
    orders : tuple of str
        Reveal orders (:data:`ORDERS`).
    probes : sequence of str
        Benchmark ids of the probe set (order "probes").
    min_scores : int
        A later model needs at least this many scores (so that some remain hidden).
    intervals : bool
        Also the 90% intervals of the first estimator, calibrated on the training models
        alone, on their own temporal splits (the last months before the cutoff, each
        fitted on what came before it); the others are scored on their point predictions.
    covariates : ndarray (n_models, n_features), optional
        The models' covariates, for predictors that take them (``--method side``): each
        fit gets the training models' rows, each fold-in the later model's own row.
    values_at : callable(cutoff) -> ndarray (n_models, n_benchmarks), optional
        The scores as published before a cutoff (sources with a history: only their
        versions published by then, ``store.matrix.as_published``); each fit trains on
        them, and the later models are scored against ``Y``, the newest values.
    single : ndarray of bool (n_benchmarks,), optional
        The benchmarks of the ``"single"`` order (:func:`single_benchmarks`; default: the
        percent-scale ones).
    metadata : tuple of str
        Which of :data:`METADATA_RUNS` to fold the later models in by: "given" (with
        their ``covariates`` row) and "none" (without).
    progress : callable(k, n, label), optional

    Returns
    -------
    TemporalResult
    """
    Y = check_scores(Y, scales)
    _check_orders(orders)
    _check_metadata(metadata)
    single = single_benchmarks(scales.kind) if single is None else np.asarray(single, bool)
    X = None if covariates is None else np.asarray(covariates, dtype=float)
    dates = np.array([str(d)[:10] if d else "" for d in release_dates])
    cutoffs = sorted(cutoffs) if cutoffs else monthly_cutoffs(dates, 12)
    col = {b: j for j, b in enumerate(benchmark_ids)}
    probe_cols = [col[p] for p in probes if p in col]
    obs = ~np.isnan(Y)
    frames, n_train, n_test = [], {}, {}
    memo = FitMemo()  # a cutoff's fit is the next cutoff's calibration fit of that month
    ends = cutoffs[1:] + ["9999-12-31"]
    steps = len(cutoffs) * len(estimators)
    for c, (start, end) in enumerate(zip(cutoffs, ends)):
        train = (dates != "") & (dates < start)
        test = np.flatnonzero((dates >= start) & (dates < end) & (obs.sum(axis=1) >= min_scores))
        n_train[start], n_test[start] = int(train.sum()), int(test.size)
        if test.size == 0 or train.sum() < 3:
            continue
        later = _Later(Y[test], [model_ids[i] for i in test], start, [None] * test.size,
                       [[seed, c, int(i)] for i in test], None if X is None else X[test])
        known_then = Y if values_at is None else check_scores(values_at(start), scales)
        for m, (name, est) in enumerate(estimators.items()):
            frames += _score_later(name, est, known_then[train], scales, dates[train], later,
                                   intervals=intervals and m == 0, orders=orders, known=known,
                                   probe_cols=probe_cols, benchmark_ids=benchmark_ids,
                                   train_covariates=None if X is None else X[train],
                                   memo=memo, single=single, metadata=metadata)
            if progress is not None:
                progress(c * len(estimators) + m + 1, steps, f"{start} {name}")
    if not frames:
        if max(n_train.values(), default=0) < 3:
            raise BadInputError(f"nothing to fit on: fewer than 3 dated models were released "
                                f"before the last cutoff {cutoffs[-1]}")
        raise BadInputError(f"no later model to score: none released on or after {cutoffs[0]} "
                            f"has more than {max(known)} scores (--known) and {min_scores}+ "
                            "in all")
    return TemporalResult(pl.concat(frames).fill_nan(None), list(cutoffs), n_train, n_test)


def _check_orders(orders) -> None:
    bad = [o for o in orders if o not in ORDERS]
    if bad:
        raise UsageError(f"unknown reveal order(s) {bad}; choose from {list(ORDERS)}")


def _check_metadata(metadata) -> None:
    bad = [m for m in metadata if m not in METADATA_RUNS]
    if bad or not metadata:
        raise UsageError(f"metadata runs must be among {list(METADATA_RUNS)}, got "
                         f"{list(metadata)}")


@dataclass
class _Later:
    """The later models of one split: their scores ``T`` (n_test, n_benchmarks) on the
    training columns, ids, the split's label, each one's reported order (column indices
    or None), the seed key of its random order and its covariates (an (n_test,
    n_features) array, or per model a row or None: folded in without)."""

    T: np.ndarray
    ids: list
    label: str
    reported: list
    keys: list
    covariates: np.ndarray | list | None = None


def _fold_in(pred, cal, support, S, covariates):
    """Rows ``S`` folded in (``covariates``: as :func:`fold_in_rows` takes them), with 90%
    intervals when ``cal``: (predicted, lower, upper)."""
    if cal is not None:
        out = fold_in_intervals(pred, cal, S, support, covariates=covariates)
        return out["predicted"], out["lower"], out["upper"]
    P = fold_in_rows(pred, S, covariates)[0]
    return P, np.full(P.shape, np.nan), np.full(P.shape, np.nan)


def _score_later(name, est, Ytr, scales, train_dates, later: _Later, *, intervals, orders,
                 known, probe_cols, benchmark_ids, train_covariates=None, memo=None,
                 single=None, metadata=METADATA_RUNS) -> list:
    """Fit ``est`` on ``Ytr``, fold each later model in from k revealed scores (each order
    and k, with and without its metadata where ``est`` takes it), and return one frame of
    scored cells per (order, k, metadata run). ``memo`` (a
    :class:`~benchpress.predict.evaluation.fit_memo.FitMemo`) hands out fits made before on the same
    rows (the same numbers)."""
    popularity = (~np.isnan(Ytr)).sum(axis=0).astype(float)
    trained = (popularity > 0) & (scales.left_out() == "")  # what the fit can predict
    fit_extra = covariate_kwargs(est, train_covariates)
    memo = memo if memo is not None else FitMemo()
    pred = memo.fit(est, Ytr, scales, **fit_extra)
    cal = calibrate(est, Ytr, scales, regime="new_models", release_dates=train_dates,
                    memo=memo, **fit_extra) if intervals else None
    X_later = later.covariates if getattr(est, "accepts_covariates", False) else None
    takes = X_later is not None and any(x is not None for x in X_later)
    support = memo.support(pred, MatrixSupport) if intervals else None
    scale_kind = scales.labels()  # each scale's figures apart, lower-is-better too
    obs = ~np.isnan(later.T)
    frames = []
    for order in orders:
        for k in known:
            S = np.full(later.T.shape, np.nan)
            hidden = np.zeros(S.shape, dtype=bool)
            for r in range(later.T.shape[0]):
                row_obs = obs[r] & trained
                if order == "reported" and later.reported[r] is not None:
                    seq = np.array([j for j in later.reported[r] if row_obs[j]], dtype=np.int64)
                else:
                    seq = _reveal_order(row_obs, "popular" if order == "reported" else order,
                                        popularity, probe_cols, later.keys[r] + [int(k)],
                                        single)
                if seq.size <= k:
                    continue
                S[r, seq[:k]] = later.T[r, seq[:k]]
                hidden[r] = row_obs
                hidden[r, seq[:k]] = False
            if not hidden.any():
                continue
            rr, jj = np.nonzero(hidden)
            # without covariates to take, one fold-in stands for both runs
            runs = [(m, X_later if m == "given" else None) for m in metadata] if takes \
                else [(tuple(metadata), None)]
            for run, X in runs:
                P, lo, hi = _fold_in(pred, cal, support, S, X)
                actual, p, lo, hi = later.T[rr, jj], P[rr, jj], lo[rr, jj], hi[rr, jj]
                cells = pl.DataFrame({
                    "method": name, "cutoff": later.label, "order": order, "k": int(k),
                    "model_id": [later.ids[r] for r in rr],
                    "benchmark_id": [benchmark_ids[j] for j in jj],
                    "scale": scale_kind[jj].astype(str), "actual": actual, "predicted": p,
                    "lower": lo, "upper": hi, "abs_error": np.abs(p - actual),
                    "covered": np.where(np.isnan(lo), np.nan, (lo <= actual) & (actual <= hi)),
                    "takes_metadata": takes})
                frames += [cells.with_columns(pl.lit(m).alias("metadata"))
                           for m in (run if isinstance(run, tuple) else (run,))]
    return frames


def reported_order(scores: pl.DataFrame, model_ids, benchmark_ids) -> dict[str, list[int]]:
    """Per model of ``model_ids``, its columns of ``benchmark_ids`` in the order its
    source's page shows them: the aggregates the adapter derived from its other scores
    first (LiveBench's category averages and overall: the columns its leaderboard leads
    with), then the rest in the order the adapter read them from the file (Artificial
    Analysis lists its indices first, a CSV its columns left to right); sources by id, a
    benchmark reported twice where it first appears. Never the ``row`` text's sort order,
    which puts ``breakdowns.gdpval.elo`` before ``evaluations.artificial_analysis_...``.

    >>> scores = pl.DataFrame({"model_id": ["m", "m", "m", "m", "n"], "source_id": "aa",
    ...     "benchmark_id": ["index", "hle", "elo", "avg", "hle"],
    ...     "derived": [False, False, False, True, False],
    ...     "row": ["evaluations.index", "evaluations.hle", "breakdowns.elo", "avg", "x"]})
    >>> reported_order(scores, ["m"], ["elo", "hle", "index", "avg"])
    {'m': [3, 2, 1, 0]}
    """
    col = {b: j for j, b in enumerate(benchmark_ids)}
    derived = pl.col("derived").fill_null(False) if "derived" in scores.columns else pl.lit(False)
    firsts = (scores.select("model_id", "benchmark_id", "source_id", derived.alias("derived"))
              .with_row_index("at").filter(pl.col("model_id").is_in(list(model_ids)))
              .sort(["source_id", "derived", "at"], descending=[False, True, False])
              .unique(["model_id", "benchmark_id"], keep="first", maintain_order=True))
    return {mid: [col[b] for b in g["benchmark_id"] if b in col]
            for (mid,), g in firsts.group_by("model_id", maintain_order=True)}


def later_snapshot_evaluation(estimators: dict, Y, scales: BenchmarkScales, release_dates, *,
                              benchmark_ids, T, later_ids, reported=None, label: str = "later",
                              known=(1, 3, 5), orders=("reported", "random"), probes=(),
                              seed: int = 42, intervals: bool = True, covariates=None,
                              later_covariates=None, single=None, metadata=METADATA_RUNS,
                              progress=None) -> TemporalResult:
    """The snapshot-to-snapshot form: fit on an earlier version of the registry (``Y``,
    its models' ``release_dates``) and score the models first seen in a later one.

    Parameters
    ----------
    T : ndarray (n_later, n_benchmarks)
        The later models' scores on the earlier matrix's columns (NaN elsewhere).
    later_ids : list of str
    reported : list of int arrays, optional
        Per later model, its benchmark columns in the order its sources reported them
        (order ``"reported"``: the first k a leaderboard or vendor shows).
    label : str
        Names the split in the cells' ``cutoff`` column.
    covariates : ndarray (n_models, n_features), optional
        The earlier models' covariates, for predictors that take them.
    later_covariates : ndarray (n_later, n_features) or list, optional
        The later models' (the same columns), or per later model a row or None: a row is
        folded in with it, as ``predict --metadata`` folds a new model in; None without,
        as ``predict --scores`` alone (e.g. a source that gives no provider or date).

    The rest as :func:`temporal_evaluation`.
    """
    Y = check_scores(Y, scales)
    _check_orders(orders)
    _check_metadata(metadata)
    single = single_benchmarks(scales.kind) if single is None else np.asarray(single, bool)
    T = np.asarray(T, dtype=float)
    if T.ndim != 2 or T.shape[1] != Y.shape[1] or T.shape[0] == 0:
        raise BadInputError("no later model to score: the later version adds no model with "
                            "scores on the earlier version's benchmarks")
    col = {b: j for j, b in enumerate(benchmark_ids)}
    dates = np.array([str(d)[:10] if d else "" for d in release_dates])
    later = _Later(T, list(later_ids), label,
                   list(reported) if reported is not None else [None] * T.shape[0],
                   [[seed, r] for r in range(T.shape[0])], later_covariates)
    frames = []
    for m, (name, est) in enumerate(estimators.items()):
        frames += _score_later(name, est, Y, scales, dates, later, intervals=intervals and m == 0,
                               orders=orders, known=known,
                               probe_cols=[col[p] for p in probes if p in col],
                               benchmark_ids=benchmark_ids, train_covariates=covariates,
                               single=single, metadata=metadata)
        if progress is not None:
            progress(m + 1, len(estimators), name)
    if not frames:
        raise BadInputError("no later model has more scores than it reveals")
    return TemporalResult(pl.concat(frames).fill_nan(None), [label], {label: Y.shape[0]},
                          {label: T.shape[0]})
