"""The forecast ledger: what the predictor said at snapshot A, scored against what B observed.

For a snapshot A, `forecasts_at(home, A)` is one row per missing cell of every model in A's
matrix (the fit's `sources`): model_id, benchmark_id, predicted, lower / upper (the
calibrated 90% interval; null when A is too small to calibrate on), trust, n_model_scores
(how many scores the model had at A), method and params (JSON text). It is stored as
Parquet beside the snapshot, in `<home>/forecasts/<snapshot id>/<key>.parquet` (`key`: a
digest of method, params and sources), never inside the snapshot (whose content id it would
change); a snapshot without stored forecasts gets them computed on demand and stored.

`score_forecasts(home, A, B)` joins A's forecasts with the values B observed in those cells
(first observed after A): median absolute error, interval coverage, within-5 rate (also
apart for the cells out of their model's source reach at A: a benchmark no source of the
model's scores at A reports, `per_reach`). The
headline figures are over percent-scale cells only; every other scale (Elo, index, dollars,
...) is scored apart in its own units (`per_scale`), never pooled. Breakdowns by benchmark,
by the source of B's value, and by how many scores the model had at A, and separately for
the models that were new at A (at most `new_max` scores: predicted from their first few
scores). What could not be scored is counted with its reason (`skipped`): forecasts B has
not observed yet, forecasts without a prediction, and B's values that A made no forecast
for (a model or benchmark new at B, including a benchmark's new method version, which
lands under a new id and so is never scored against the old method's forecast). With
`heldout=True`, the held-out error of A's own fit on its own matrix (3 folds, percent
cells) stands beside the realized error, so a reader sees how far the future is from the
random folds every published figure comes from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.digest import json_digest
from benchpress.api import BenchPress
from benchpress.errors import BadInputError
from benchpress.api.fit_store import FitStore
from benchpress.home import Home
from benchpress.precision import SIGNIFICANT
from benchpress.predict import make_predictor, param_overrides
from benchpress.predict.intervals.calibrator import out_of_reach
from benchpress.store.matrix import load_matrix, present_sources
from benchpress.store.snapshot import get_snapshot
from benchpress.store.tables import read_table, write_atomic

__all__ = ["ForecastScore", "forecast_key", "forecasts_at", "compute_forecasts",
           "score_forecasts", "score_months", "present_sources", "overall_figures", "pooled_figures",
           "NEW_MAX", "SCORE_BINS"]

NEW_MAX = 5  # a model with at most this many scores at A counts as new (a first few scores)
SCORE_BINS = ((1, 5), (6, 10), (11, 20), (21, 10**9))  # n_model_scores at A, for breakdowns


def forecast_key(method: str, params: dict, sources: list[str] | None) -> str:
    """16 hex digits naming a forecast file: the method, its parameters and the sources."""
    return json_digest({"method": method, "params": params, "sources": sources or []})


def compute_forecasts(bp: BenchPress) -> pl.DataFrame:
    """Every missing cell of `bp`'s matrix, predicted with its 90% interval and trust.

    Returns
    -------
    polars.DataFrame
        Columns model_id, benchmark_id, predicted, lower, upper, trust, n_model_scores,
        method, params; one row per missing (model, benchmark) cell. The figures are kept to
        `precision.SIGNIFICANT` significant digits: the ledger records what was said, in
        the same bytes on every CPU (the pipeline's `forecasts/` is hashed in dvc.lock).
    """
    observed = ~np.isnan(bp.matrix.values)  # (n_models, n_benchmarks)
    n_scores = observed.sum(axis=1)
    try:
        long = bp.complete(intervals=True)
    except BadInputError:  # too little held-out data to calibrate intervals on
        full = bp.predictor.complete()
        n_m, n_b = full.shape
        long = pl.DataFrame({
            "model_id": np.repeat(np.asarray(bp.matrix.model_ids, dtype=object), n_b).tolist(),
            "benchmark_id": np.tile(np.asarray(bp.matrix.benchmark_ids, dtype=object), n_m).tolist(),
            "observed": bp.matrix.values.ravel(), "predicted": full.ravel(),
        }).fill_nan(None).with_columns(pl.lit(None, dtype=pl.Float64).alias(c)
                                       for c in ("lower", "upper", "trust"))
    counts = pl.DataFrame({"model_id": bp.matrix.model_ids,
                           "n_model_scores": n_scores.astype(np.int64)})
    return (long.filter(pl.col("observed").is_null()).drop("observed")
            .join(counts, on="model_id", how="left")
            .with_columns(pl.col(c).round_sig_figs(SIGNIFICANT)
                          for c in ("predicted", "lower", "upper", "trust"))
            .with_columns(pl.lit(bp.method).alias("method"),
                          pl.lit(json.dumps(bp.params, sort_keys=True, default=str)).alias("params"))
            .select("model_id", "benchmark_id", "predicted", "lower", "upper", "trust",
                    "n_model_scores", "method", "params"))


def forecasts_at(home: Home, ref: str, *, sources: list[str] | None = None,
                 method: str = "default", params: dict | None = None,
                 store: FitStore | None = None) -> tuple[pl.DataFrame, Path]:
    """The stored forecasts of snapshot `ref` (computed and stored on first use, from the
    fit `store` holds for that matrix, method and params: a replay passes the store its
    analysis of the snapshot fitted with, so the snapshot is fitted once).

    Returns (frame, path of its Parquet file); see `compute_forecasts` for the columns.
    """
    snap = get_snapshot(home, ref)
    chosen = present_sources(snap.path, sources)
    predictor = make_predictor(method, **(params or {}))
    key = forecast_key(method, param_overrides(predictor), chosen)
    path = home.root / "forecasts" / snap.id / f"{key}.parquet"
    if path.is_file():
        return pl.read_parquet(path), path
    bp = BenchPress.from_snapshot(home, snap.id, sources=chosen, predictor=predictor,
                                  store=store)
    frame = compute_forecasts(bp)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda tmp: frame.write_parquet(tmp))
    return frame, path


@dataclass(frozen=True)
class ForecastScore:
    """Forecasts made at `a` scored on the values `b` observed first.

    `overall` and `new_models` are dicts with n_cells, medae, coverage, within5 (null when
    empty); `per_benchmark` and `per_n_scores` are frames of the same figures; `cells` is
    one row per scored cell (forecast beside the actual value).
    """

    a: str
    b: str
    overall: dict
    new_models: dict
    per_benchmark: pl.DataFrame
    per_n_scores: pl.DataFrame
    cells: pl.DataFrame
    per_scale: pl.DataFrame = None
    per_source: pl.DataFrame = None
    skipped: dict = None
    heldout: dict | None = None
    per_reach: pl.DataFrame = None

    def to_dict(self) -> dict:
        return {"from": self.a, "to": self.b, "scale": "percent", **self.overall,
                "new_models": self.new_models, "skipped": self.skipped or {},
                **({"heldout": self.heldout} if self.heldout is not None else {}),
                "per_scale": _dicts(self.per_scale), "per_source": _dicts(self.per_source),
                "per_reach": _dicts(self.per_reach),
                "per_benchmark": self.per_benchmark.to_dicts(),
                "per_n_scores": self.per_n_scores.to_dicts()}


def _dicts(frame: pl.DataFrame | None) -> list:
    return [] if frame is None else frame.to_dicts()


def _figures() -> list[pl.Expr]:
    err = (pl.col("actual") - pl.col("predicted")).abs()
    has_ci = pl.col("lower").is_not_null()
    inside = (pl.col("actual") >= pl.col("lower")) & (pl.col("actual") <= pl.col("upper"))
    return [pl.len().alias("n_cells"), err.median().alias("medae"),
            (inside.filter(has_ci).mean() * 100).alias("coverage"),
            ((err <= 5).mean() * 100).alias("within5")]


def overall_figures(cells: pl.DataFrame) -> dict:
    if cells.is_empty():
        return {"n_cells": 0, "medae": None, "coverage": None, "within5": None}
    return cells.select(_figures()).to_dicts()[0]


def per_scale_figures(cells: pl.DataFrame) -> pl.DataFrame:
    """The figures of scored ``cells`` per scale, each in its own units."""
    return cells.group_by("scale").agg(_figures()).sort("scale")


def pooled_figures(cells: pl.DataFrame, new_max: int = NEW_MAX) -> dict:
    """Scored ``cells`` of several pairs of snapshots pooled as one pair's are: the headline
    over percent cells only, the models new at A (at most ``new_max`` scores) apart, every
    scale in its own units in ``per_scale``; never an Elo beside a percent. ``cells`` have
    the columns `score_forecasts` gives them (scale, actual, predicted, lower, upper,
    n_model_scores, out_of_reach)."""
    pct = cells.filter(pl.col("scale") == "percent")
    return {"scale": "percent", **overall_figures(pct),
            "new_models": overall_figures(pct.filter(pl.col("n_model_scores") <= new_max)),
            "out_of_reach": overall_figures(pct.filter(pl.col("out_of_reach"))),
            "per_scale": per_scale_figures(cells).to_dicts()}


def score_forecasts(home: Home, from_ref: str, to_ref: str, *, sources: list[str] | None = None,
                    method: str = "default", params: dict | None = None,
                    new_max: int = NEW_MAX, heldout: bool = False) -> ForecastScore:
    """Score the forecasts made at snapshot `from_ref` against the cells `to_ref` observed
    that were missing at `from_ref` (both read with the same `sources`); see the module
    docstring for the figures."""
    forecasts, _ = forecasts_at(home, from_ref, sources=sources, method=method, params=params)
    snap_a, snap_b = get_snapshot(home, from_ref), get_snapshot(home, to_ref)
    at_a = load_matrix(snap_a.path, sources=present_sources(snap_a.path, sources))
    chosen = present_sources(snap_b.path, sources)
    later = load_matrix(snap_b.path, sources=chosen)
    seen = ~np.isnan(later.values)
    rows, cols = np.nonzero(seen)
    scale = dict(zip(later.benchmark_ids, later.scales.labels().tolist()))
    actual = pl.DataFrame({"model_id": [later.model_ids[i] for i in rows],
                           "benchmark_id": [later.benchmark_ids[j] for j in cols],
                           "actual": later.values[rows, cols]})
    winners = read_table(snap_b.path, "cells").select(
        "model_id", "benchmark_id", pl.col("source_id").alias("source_b"))
    joined = forecasts.join(actual, on=["model_id", "benchmark_id"], how="left")
    skipped = _skipped(joined, actual, at_a)
    cells = (joined.filter(pl.col("actual").is_not_null() & pl.col("predicted").is_not_null())
             .join(winners, on=["model_id", "benchmark_id"], how="left")
             .join(_out_of_reach_cells(at_a), on=["model_id", "benchmark_id"], how="left")
             .with_columns(pl.col("out_of_reach").fill_null(False))
             .with_columns(pl.col("benchmark_id").replace_strict(
                 scale, default="unknown", return_dtype=pl.String).alias("scale")))
    label = pl.lit(None, dtype=pl.String)
    for lo, hi in reversed(SCORE_BINS):
        text = f"{lo}+" if hi >= 10**9 else f"{lo}-{hi}"
        label = pl.when(pl.col("n_model_scores").is_between(lo, hi)).then(pl.lit(text)).otherwise(label)
    cells = cells.with_columns(label.alias("n_scores_bin"),
                               (pl.col("actual") - pl.col("predicted")).abs().alias("abs_error"))
    pct = cells.filter(pl.col("scale") == "percent")
    per_bench = cells.group_by("benchmark_id", "scale").agg(_figures()).sort("benchmark_id")
    per_n = (pct.group_by("n_scores_bin").agg(*_figures(), pl.col("n_model_scores").min().alias("_lo"))
             .sort("_lo").drop("_lo"))
    per_scale = per_scale_figures(cells)
    per_source = pct.group_by("source_b").agg(_figures()).sort("source_b")
    per_reach = pct.group_by("out_of_reach").agg(_figures()).sort("out_of_reach")
    held = _heldout(home, snap_a.id, sources, method, params) if heldout else None
    return ForecastScore(snap_a.id, snap_b.id, overall_figures(pct),
                         overall_figures(pct.filter(pl.col("n_model_scores") <= new_max)),
                         per_bench, per_n, cells, per_scale=per_scale, per_source=per_source,
                         skipped=skipped, heldout=held, per_reach=per_reach)


def score_months(home: Home, *, from_ref: str | None = None, to_ref: str | None = None,
                 sources: list[str] | None = None, method: str = "default",
                 params: dict | None = None, new_max: int = NEW_MAX,
                 progress=None) -> dict:
    """The ledger over the monthly snapshots (`snapshot create --monthly`; from `from_ref`
    to `to_ref`, the months holding one of `sources`): each month's forecasts scored at
    the next month, as `score_forecasts` does, and every pair's cells pooled
    (`pooled_figures`: percent cells at the top, every other scale apart).

    Returns a JSON-ready dict: the pooled figures, `n_pairs`, `months` (the months scored)
    and `per_pair` ({"A>B": figures of that pair, with its new models and skipped counts}).
    `progress(k, n, label)` after each pair.
    """
    from benchpress.api.drift_versions import select_versions

    months = select_versions(home, from_ref, to_ref, monthly=True, sources=sources)
    pairs, cells = {}, []
    for k, ((a, fa), (b, fb)) in enumerate(zip(months, months[1:])):
        got = score_forecasts(home, fa.name, fb.name, sources=sources, method=method,
                              params=params, new_max=new_max)
        cells.append(got.cells)
        pairs[f"{a}>{b}"] = {**got.overall, "new_models": got.new_models,
                             "skipped": got.skipped}
        if progress is not None:
            progress(k + 1, len(months) - 1, f"{a} -> {b}")
    pooled = (pooled_figures(pl.concat(cells, how="diagonal_relaxed"), new_max) if cells
              else {"scale": "percent", **overall_figures(pl.DataFrame())})
    return {"method": method, "sources": sources or [], "months": [m for m, _ in months],
            "n_pairs": len(pairs), **pooled, "per_pair": pairs}


def _out_of_reach_cells(matrix) -> pl.DataFrame:
    """The missing cells of ``matrix`` out of their model's source reach
    (`benchpress.predict.intervals.calibrator.out_of_reach`): model_id, benchmark_id, out_of_reach
    (True); none for a matrix of one source (each of its models reaches every benchmark)
    or one whose benchmarks do not list their sources."""
    reach, missing = matrix.source_reach(), np.isnan(matrix.values)
    flagged = (missing & out_of_reach(~missing, reach) if reach is not None
               else np.zeros_like(missing))
    rows, cols = np.nonzero(flagged)
    return pl.DataFrame({"model_id": np.asarray(matrix.model_ids, dtype=object)[rows].tolist(),
                         "benchmark_id": np.asarray(matrix.benchmark_ids, dtype=object)[cols].tolist(),
                         "out_of_reach": np.ones(rows.size, dtype=bool)},
                        schema={"model_id": pl.String, "benchmark_id": pl.String,
                                "out_of_reach": pl.Boolean})


def _skipped(joined: pl.DataFrame, actual: pl.DataFrame, at_a) -> dict:
    """What could not be scored, by reason (counts of cells); ``at_a`` is A's matrix."""
    models_a, benches_a = set(at_a.model_ids), set(at_a.benchmark_ids)
    new_model = ~actual["model_id"].is_in(list(models_a))
    new_bench = ~new_model & ~actual["benchmark_id"].is_in(list(benches_a))
    versioned = new_bench & actual["benchmark_id"].str.contains("@", literal=True)
    return {"not_observed_yet": int(joined["actual"].is_null().sum()),
            "no_prediction": int((joined["actual"].is_not_null()
                                  & joined["predicted"].is_null()).sum()),
            "model_new_at_b": int(new_model.sum()),
            "benchmark_new_at_b": int((new_bench & ~versioned).sum()),
            "method_version_new_at_b": int(versioned.sum())}


def _heldout(home: Home, ref: str, sources, method: str, params: dict | None) -> dict:
    """Held-out figures of the fit at `ref` on its own matrix: 3 per-model folds (seed 42),
    percent-scale cells."""
    snap = get_snapshot(home, ref)
    bp = BenchPress.from_snapshot(home, snap.id, sources=present_sources(snap.path, sources),
                                  predictor=make_predictor(method, **(params or {})))
    cells = bp.evaluate(bp.folds(n_folds=3, seed=42)).cells
    scale = dict(zip(bp.matrix.benchmark_ids, bp.matrix.scales.labels().tolist()))
    pct = cells.filter(pl.col("benchmark_id").replace_strict(
        scale, default="unknown", return_dtype=pl.String) == "percent")
    return {"n_cells": pct.height, "medae": pct["abs_error"].median(), "folds": 3, "seed": 42}
