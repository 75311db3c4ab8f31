"""Coverage and width of calibrated prediction intervals on held-out folds.

Scores an :class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator` on folds it was not
calibrated on, pooled and broken down by benchmark and by how many scores the model has
(so under-covered corners show). Widths are in *points* (1% of a benchmark's range, see
:func:`~benchpress.predict.intervals.features.point_size`); the headline row is the percent-scale
cells, with all cells beside it.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from benchpress.predict.estimator import BasePredictor, check_scores
from benchpress.predict.evaluation.folds import Folds
from benchpress.predict.intervals.calibration import calibrate, heldout_records, new_model_records
from benchpress.predict.intervals.calibrator import TRUST_POINTS, IntervalCalibrator
from benchpress.predict.transform import BenchmarkScales

__all__ = ["interval_coverage", "summarize", "evaluate_intervals", "coverage_json"]


_BINS = ("1-4", "5-9", "10-19", "20-39", "40+")


def _count_bin(n) -> np.ndarray:
    return np.array(_BINS)[np.searchsorted([5, 10, 20, 40], np.asarray(n), side="right")]


def interval_coverage(predictor: BasePredictor, Y, scales: BenchmarkScales, folds: Folds | None,
                      calibrator: IntervalCalibrator, *, benchmark_ids=None,
                      regime: str = "cells", seed: int = 2001, covariates=None,
                      reach=None) -> dict:
    """Coverage and width of ``calibrator``'s intervals on held-out data, each held-out
    fit a clone of the unfitted ``predictor``.

    ``regime="cells"`` holds out ``folds``; ``regime="new_models"`` holds out whole
    models folded in from a few scores (``seed``; see
    :func:`~benchpress.predict.intervals.calibration.new_model_records`). With ``reach``
    (n_sources, n_benchmarks) bool, cells regime, the held-out cells out of their
    model's source reach are flagged and take the calibrator's quantile for them.

    Returns
    -------
    dict
        ``cells`` (polars.DataFrame: one row per held-out cell with ``fold,
        model_index, benchmark_index, benchmark_id, scale, model_count, model_count_bin,
        actual, predicted, lower, upper, width, width_points, covered, trust,
        within10, out_of_reach``), and summary frames ``overall`` (``percent`` and ``all`` rows),
        ``per_benchmark`` and ``per_model_count``. ``model_count`` is how many scores
        the model had in the fit; widths in points.
    """
    Y = check_scores(Y, scales)
    if regime == "new_models":
        rec = new_model_records(predictor, Y, scales, seed=seed, covariates=covariates)
    else:
        rec = heldout_records(predictor, Y, scales, folds, covariates=covariates, reach=reach)
    lower, upper, trust = (np.empty(rec["fold"].size) for _ in range(3))
    for k, tr in enumerate(rec["transforms"]):  # the interval space of each fold's fit
        sel = rec["fold"] == k
        j, zhat, X, out = rec["j"][sel], rec["zhat"][sel], rec["X"][sel], rec["out"][sel]
        lower[sel], upper[sel] = calibrator.predict_interval(zhat, X, tr, j, out)
        trust[sel] = calibrator.trust(zhat, X, tr, j, rec["point"][sel], out)
    bids = (np.asarray(benchmark_ids, dtype=object) if benchmark_ids is not None
            else np.arange(Y.shape[1]).astype(str).astype(object))
    a, p = rec["actual"], rec["predicted"]
    cells = pl.DataFrame({
        "fold": rec["fold"].astype(np.int64), "model_index": rec["i"].astype(np.int64),
        "benchmark_index": rec["j"].astype(np.int64),
        "benchmark_id": bids[rec["j"]].tolist(), "scale": scales.kind[rec["j"]].tolist(),
        "model_count": rec["model_count"].astype(np.int64),
        "model_count_bin": _count_bin(rec["model_count"]).tolist(),
        "actual": a, "predicted": p, "lower": lower, "upper": upper,
        "width": upper - lower, "width_points": (upper - lower) / rec["point"],
        "covered": (a >= lower - 1e-9) & (a <= upper + 1e-9),
        "trust": trust, "within10": np.abs(a - p) <= TRUST_POINTS * rec["point"],
        "out_of_reach": rec["out"].astype(bool),
    })
    return {"cells": cells, **summarize(cells)}


def _summary(frame: pl.DataFrame, by: str | None) -> pl.DataFrame:
    aggs = [pl.len().alias("n_cells"), pl.col("covered").mean().alias("coverage"),
            pl.col("width_points").median().alias("median_width"),
            pl.col("trust").mean().alias("mean_trust"),
            pl.col("within10").mean().alias("within10")]
    if by is None:
        return frame.select(aggs)
    out = frame.group_by(by, maintain_order=True).agg(aggs)
    if by == "model_count_bin":
        rank = {b: k for k, b in enumerate(_BINS)}
        return out.sort(pl.col(by).replace_strict(rank, return_dtype=pl.Int64))
    return out.sort(by)


def summarize(cells: pl.DataFrame) -> dict:
    """Summary frames of an interval-coverage cell table (see :func:`interval_coverage`).

    Widths are medians in points; ``overall`` has a ``percent`` row (percent-scale
    benchmarks, the headline) and an ``all`` row.
    """
    overall = pl.concat([
        _summary(cells.filter(pl.col("scale") == "percent"), None).insert_column(
            0, pl.Series("cells", ["percent"])),
        _summary(cells, None).insert_column(0, pl.Series("cells", ["all"])),
    ])
    percent = cells.filter(pl.col("scale") == "percent")
    return {"overall": overall, "per_benchmark": _summary(cells, "benchmark_id"),
            "per_model_count": _summary(cells, "model_count_bin"),
            "per_reach": _summary(percent, "out_of_reach")}


def evaluate_intervals(predictor: BasePredictor, Y, scales: BenchmarkScales,
                       folds: Folds | None, *, regime: str = "cells",
                       calibration_seed: int = 1001, calibration_seeds: int = 2,
                       seed: int = 2001, benchmark_ids=None, covariates=None,
                       reach=None) -> dict:
    """Calibrate on our own random partitions, then measure coverage on other data.

    Cells regime: calibrated on per-model partitions with seeds ``calibration_seed ..``,
    measured on ``folds``. New-model regime: calibrated with ``calibration_seed``,
    measured with ``seed``. ``covariates`` (n_models, n_features) reach every fit of a
    predictor that accepts them; ``reach`` (which sources report each benchmark) gives
    the cells regime its quantile for cells out of a model's source reach. Returns :func:`interval_coverage`'s dict plus ``calibrator``
    (its JSON form).
    """
    cal = calibrate(predictor, Y, scales, regime=regime, seed=calibration_seed,
                    n_seeds=calibration_seeds, covariates=covariates, reach=reach)
    out = interval_coverage(predictor, Y, scales, folds, cal, benchmark_ids=benchmark_ids,
                            regime=regime, seed=seed, covariates=covariates, reach=reach)
    return {**out, "calibrator": cal.to_json()}


def coverage_json(result: dict) -> dict:
    """JSON-ready summary: headline (percent cells) at top level, breakdowns nested."""
    head = result["overall"].filter(pl.col("cells") == "percent").to_dicts()
    head = head[0] if head else {}
    allc = result["overall"].filter(pl.col("cells") == "all").to_dicts()[0]
    return {"coverage": head.get("coverage"), "median_width": head.get("median_width"),
            "n_cells": head.get("n_cells"), "mean_trust": head.get("mean_trust"),
            "within10": head.get("within10"),
            "all_cells": {k: v for k, v in allc.items() if k != "cells"},
            "per_model_count": result["per_model_count"].to_dicts(),
            "out_of_reach": result["per_reach"].to_dicts(),
            "per_benchmark": result["per_benchmark"].to_dicts(),
            "calibrator": result.get("calibrator")}
