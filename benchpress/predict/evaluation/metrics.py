"""Held-out error metrics, pooled and per group, as polars expressions.

Metrics on held-out cells (score units): ``medae`` median absolute error; ``medape``
median of ``|error| / |actual|`` in percent (cells with ``|actual| <= 1e-6`` left out);
``within3``/``within5`` percent of cells with ``|error| <= 3`` / ``<= 5``; ``coverage``
fraction of held-out cells that got a finite prediction (the others are left out of the
error metrics); ``fold_medae_mean`` mean over folds of the per-fold MedAE.

One definition serves :mod:`~benchpress.predict.evaluation.heldout`,
:mod:`~benchpress.predict.probes.search` and :mod:`~benchpress.predict.evaluation.backtest`.

>>> m = compute_metrics([50.0, 60.0, 70.0], [52.0, 60.5, float("nan")])
>>> (m.medae, m.coverage, m.n_cells)
(1.25, 0.6666666666666666, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["Metrics", "compute_metrics", "cell_errors", "metric_exprs", "group_metrics",
           "abs_errors", "APE_EPS"]

#: ``|actual|`` at or below this is left out of the percentage error.
APE_EPS = 1e-6


@dataclass(frozen=True)
class Metrics:
    """Pooled held-out metrics (see module doc for definitions and units)."""

    medae: float
    medape: float
    within3: float
    within5: float
    coverage: float
    n_cells: int
    fold_medae_mean: float | None = None


def cell_errors(actual, predicted) -> pl.DataFrame:
    """``actual, predicted, abs_error`` columns (null prediction/error = not predicted)."""
    a = np.asarray(actual, dtype=float)
    p = np.asarray(predicted, dtype=float)
    ok = np.isfinite(p)
    return pl.DataFrame({"actual": a, "predicted": np.where(ok, p, np.nan),
                         "abs_error": np.where(ok, np.abs(p - a), np.nan)}).fill_nan(None)


def metric_exprs() -> list[pl.Expr]:
    """The metrics (module doc) over a frame of :func:`cell_errors` columns."""
    err = pl.col("abs_error")
    ape = pl.when(pl.col("actual").abs() > APE_EPS).then(err / pl.col("actual").abs() * 100)
    return [pl.col("predicted").is_not_null().mean().alias("coverage"),
            err.median().alias("medae"), ape.median().alias("medape"),
            ((err <= 3.0).mean() * 100).alias("within3"),
            ((err <= 5.0).mean() * 100).alias("within5")]


def compute_metrics(actual, predicted) -> Metrics:
    """Metrics for 1-D arrays of actual and predicted scores (NaN prediction = uncovered)."""
    frame = cell_errors(actual, predicted)
    row = frame.select(metric_exprs()).row(0, named=True) if frame.height else {}
    nan = float("nan")
    return Metrics(**{k: nan if row.get(k) is None else float(row[k])
                      for k in ("medae", "medape", "within3", "within5", "coverage")},
                   n_cells=frame.height)


def group_metrics(cells: pl.DataFrame, key: str | list[str]) -> pl.DataFrame:
    """``key, n_cells`` and the metrics per group of a :func:`cell_errors` frame, sorted
    (``key``: a column, or a list of them)."""
    return (cells.group_by(key, maintain_order=True)
            .agg(pl.len().alias("n_cells"), *metric_exprs()).sort(key))


def abs_errors(actual, predicted) -> tuple[np.ndarray, np.ndarray]:
    """Absolute error and absolute percentage error (%, NaN where ``|actual| <=``
    :data:`APE_EPS`), both shaped like ``predicted`` (``actual`` broadcasts against it):
    the per-cell definitions behind :func:`metric_exprs`, as arrays for batched scoring
    of many predictions at once (probe search)."""
    actual = np.asarray(actual, dtype=float)
    err = np.abs(predicted - actual)
    nz = np.abs(actual) > APE_EPS
    ape = np.where(nz, err / np.where(nz, np.abs(actual), 1.0) * 100.0, np.nan)
    return err, ape
