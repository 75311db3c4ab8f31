"""The temporal yardstick: fit on the past, reveal a few scores of each later model, score
the rest.

For each cutoff (default: the first day of each of the last 12 months of release dates),
the predictor is fitted on the models released before it; every model released in the
month from that cutoff to the next (with at least ``min_scores`` scores) is a *later
model*. Each later model reveals ``k`` of its scores (for each ``k`` in ``known``) in one
or more *reveal orders* and the rest of its scores are predicted from those alone (fold-in,
no refit) with their 90% intervals, and compared with what it scored:

* ``"random"``: k of its benchmarks at random (seeded by cutoff, model and k);
* ``"popular"``: the k of its benchmarks that most training models report, the ones a
  vendor reports first;
* ``"probes"``: the given probe benchmarks it has, then popular ones to make up k.

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
from benchpress.predict.base import BasePredictor, check_scores, clone
from benchpress.predict.intervals import calibrate, fold_in_intervals, MatrixSupport
from benchpress.predict.transform import BenchmarkScales

__all__ = ["TemporalResult", "temporal_evaluation", "monthly_cutoffs", "ORDERS"]

ORDERS = ("random", "popular", "probes")


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
        One row per predicted cell: ``method, cutoff, order, k, model_id, benchmark_id,
        scale, actual, predicted, lower, upper, abs_error, covered``.
    cutoffs : list of str
    n_train, n_test : dict cutoff -> int
    """

    cells: pl.DataFrame
    cutoffs: list
    n_train: dict = field(default_factory=dict)
    n_test: dict = field(default_factory=dict)

    def summary(self, by=("method", "k")) -> pl.DataFrame:
        """Percent-scale figures per group: ``n_cells, medae, bias, within5,
        coverage90`` (bias = mean signed error, points)."""
        pct = self.cells.filter(pl.col("scale") == "percent")
        return (pct.group_by(list(by)).agg(
            pl.len().alias("n_cells"), pl.col("abs_error").median().alias("medae"),
            (pl.col("predicted") - pl.col("actual")).mean().alias("bias"),
            ((pl.col("abs_error") <= 5).mean() * 100).alias("within5"),
            (pl.col("covered").mean() * 100).alias("coverage90")).sort(list(by)))

    def per_scale(self, by=("method", "k")) -> pl.DataFrame:
        """MedAE per scale in the scale's own units (never pooled)."""
        return (self.cells.group_by([*by, "scale"]).agg(
            pl.len().alias("n_cells"), pl.col("abs_error").median().alias("medae"),
            (pl.col("covered").mean() * 100).alias("coverage90")).sort([*by, "scale"]))

    def to_json(self, *, groups: dict | None = None, sources: dict | None = None) -> dict:
        """Flat figures per method (``<method>_k<k>_medae``, ``..._coverage90``) for
        ``dvc metrics``, plus per-scale and per-order breakdowns, and per benchmark group
        (``groups``: benchmark id -> group) and per source (``sources``: model id -> the
        source that describes it) when given."""
        doc: dict = {"cutoffs": self.cutoffs, "n_train": self.n_train, "n_test": self.n_test}
        for r in self.summary().iter_rows(named=True):
            key = f"{r['method']}_k{r['k']}"
            doc[f"{key}_medae"] = r["medae"]
            doc[f"{key}_coverage90"] = r["coverage90"]
            doc[f"{key}_bias"] = r["bias"]
            doc[f"{key}_n_cells"] = r["n_cells"]
        doc["per_order"] = self.summary(("method", "order", "k")).to_dicts()
        doc["per_scale"] = self.per_scale().to_dicts()
        for name, column, mapping in (("per_group", "benchmark_id", groups),
                                      ("per_source", "model_id", sources)):
            if mapping:
                cells = self.cells.with_columns(pl.col(column).replace_strict(
                    mapping, default="other", return_dtype=pl.String).alias("key"))
                doc[name] = TemporalResult(cells, self.cutoffs).summary(
                    ("method", "key", "k")).to_dicts()
        return doc


def _reveal_order(obs_row: np.ndarray, order: str, popularity: np.ndarray, probes, key):
    """Benchmark indices of one later model in the order they are revealed."""
    have = np.flatnonzero(obs_row)
    if order == "random":
        return have[np.random.default_rng(key).permutation(have.size)]
    by_pop = have[np.argsort(-popularity[have], kind="stable")]
    if order == "popular":
        return by_pop
    first = [j for j in probes if obs_row[j]]
    return np.array(first + [j for j in by_pop if j not in set(first)], dtype=np.int64)


def temporal_evaluation(estimators: dict, Y, scales: BenchmarkScales, release_dates, *,
                        benchmark_ids, model_ids, cutoffs=None, known=(1, 3, 5),
                        orders=("random", "popular"), probes=(), min_scores: int = 6,
                        seed: int = 42, intervals: bool = True, progress=None
                        ) -> TemporalResult:
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
    progress : callable(k, n, label), optional

    Returns
    -------
    TemporalResult
    """
    Y = check_scores(Y, scales)
    bad = [o for o in orders if o not in ORDERS]
    if bad:
        raise UsageError(f"unknown reveal order(s) {bad}; choose from {list(ORDERS)}")
    dates = np.array([str(d)[:10] if d else "" for d in release_dates])
    cutoffs = sorted(cutoffs) if cutoffs else monthly_cutoffs(dates, 12)
    col = {b: j for j, b in enumerate(benchmark_ids)}
    probe_cols = [col[p] for p in probes if p in col]
    scale_kind = np.asarray(scales.kind)
    obs = ~np.isnan(Y)
    frames, n_train, n_test = [], {}, {}
    ends = cutoffs[1:] + ["9999-12-31"]
    steps = len(cutoffs) * len(estimators)
    for c, (start, end) in enumerate(zip(cutoffs, ends)):
        train = (dates != "") & (dates < start)
        test = np.flatnonzero((dates >= start) & (dates < end) & (obs.sum(axis=1) >= min_scores))
        n_train[start], n_test[start] = int(train.sum()), int(test.size)
        if test.size == 0 or train.sum() < 3:
            continue
        Ytr = Y[train]
        popularity = (~np.isnan(Ytr)).sum(axis=0).astype(float)
        trained = popularity > 0
        for m, (name, est) in enumerate(estimators.items()):
            pred = clone(est).fit(Ytr, scales)
            with_iv = intervals and m == 0  # the first method's intervals only: they cost
            cal = calibrate(est, Ytr, scales, regime="new_models",
                            release_dates=dates[train]) if with_iv else None
            support = MatrixSupport(pred) if with_iv else None
            for order in orders:
                for k in known:
                    S = np.full((test.size, Y.shape[1]), np.nan)
                    hidden = np.zeros(S.shape, dtype=bool)
                    for r, i in enumerate(test):
                        row_obs = obs[i] & trained
                        seq = _reveal_order(row_obs, order, popularity, probe_cols,
                                            [seed, c, int(i), int(k)])
                        if seq.size <= k:
                            continue
                        S[r, seq[:k]] = Y[i, seq[:k]]
                        hidden[r] = row_obs
                        hidden[r, seq[:k]] = False
                    if not hidden.any():
                        continue
                    if with_iv:
                        out = fold_in_intervals(pred, cal, S, support)
                        P, lo, hi = out["predicted"], out["lower"], out["upper"]
                    else:
                        P = pred.fold_in(S)
                        lo = hi = np.full(P.shape, np.nan)
                    rr, jj = np.nonzero(hidden)
                    actual, p = Y[test[rr], jj], P[rr, jj]
                    frames.append(pl.DataFrame({
                        "method": name, "cutoff": start, "order": order, "k": int(k),
                        "model_id": [model_ids[i] for i in test[rr]],
                        "benchmark_id": [benchmark_ids[j] for j in jj],
                        "scale": scale_kind[jj].astype(str), "actual": actual, "predicted": p,
                        "lower": lo[rr, jj], "upper": hi[rr, jj],
                        "abs_error": np.abs(p - actual),
                        "covered": np.where(np.isnan(lo[rr, jj]), np.nan,
                                            (lo[rr, jj] <= actual) & (actual <= hi[rr, jj]))}))
            if progress is not None:
                progress(c * len(estimators) + m + 1, steps, f"{start} {name}")
    if not frames:
        raise BadInputError("no later model to score: no model with enough scores was "
                            f"released on or after {cutoffs[0]}")
    return TemporalResult(pl.concat(frames).fill_nan(None), list(cutoffs), n_train, n_test)
