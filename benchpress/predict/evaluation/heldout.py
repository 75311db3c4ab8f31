"""Held-out evaluation: hide each fold's cells, refit a fresh copy of the predictor, score.

The predictor is an unfitted object (:func:`~benchpress.predict.factory.make_predictor`);
every fold fits its own :func:`~benchpress.predict.estimator.clone` of it, so the object passed
in is never fitted and its parameters reach every fit. Folds come from
:mod:`~benchpress.predict.evaluation.folds`, metrics from :mod:`~benchpress.predict.evaluation.metrics`.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from benchpress.errors import BadInputError
from benchpress.executor import LocalExecutor, get_executor
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.estimator import BasePredictor, check_predictor, check_scores, clone
from benchpress.predict.evaluation.folds import Folds
from benchpress.predict.evaluation.metrics import Metrics, cell_errors, compute_metrics, group_metrics
from benchpress.predict.transform import BenchmarkScales

__all__ = ["EvaluationResult", "evaluate", "fold_fits"]


@dataclass
class EvaluationResult:
    """Outcome of :func:`evaluate`.

    Attributes
    ----------
    method : str
    overall : Metrics
    per_fold, per_benchmark, per_model : polars.DataFrame
        Columns ``n_cells, coverage, medae, medape, within3, within5`` per group.
    cells : polars.DataFrame
        One row per held-out cell: ``fold, model_index, benchmark_index, model_id,
        benchmark_id, actual, predicted, abs_error`` (null when not predicted).
    seconds : float
        Wall time of the fits and predictions.
    """

    method: str
    overall: Metrics
    per_fold: pl.DataFrame
    per_benchmark: pl.DataFrame
    per_model: pl.DataFrame
    cells: pl.DataFrame
    seconds: float

    def to_json(self) -> dict:
        """Plain JSON-serialisable dict with snake_case keys."""
        out = {"method": self.method, **asdict(self.overall), "n_folds": self.per_fold.height,
               "seconds": self.seconds}
        out["per_benchmark"] = self.per_benchmark.to_dicts()
        out["per_model"] = self.per_model.to_dicts()
        return out


def _fold_cells(Y, folds: Folds) -> list:
    """Each fold's held-out cells ``(i, j)`` (n_cells,) each, checked against ``Y`` before
    any fit (the checks of :func:`fold_fits`, made up front).

    Raises BadInputError when a held-out cell is out of range or not observed in ``Y``."""
    n_m, n_b = Y.shape
    out = []
    for k, cells in enumerate(folds.test_cells):
        cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
        if cells.size and (cells[:, 0].max() >= n_m or cells[:, 1].max() >= n_b or cells.min() < 0):
            raise BadInputError(f"fold {k}: cell index out of range for a {n_m}x{n_b} matrix")
        i, j = cells[:, 0], cells[:, 1]
        unobserved = int(np.isnan(Y[i, j]).sum())
        if unobserved:
            raise BadInputError(f"fold {k}: {unobserved} held-out cells are not observed")
        out.append((i, j))
    return out


@contextmanager
def _hidden(Y, i, j):
    """``Y`` with cells ``(i, j)`` set to NaN for the block, their values put back after."""
    held = Y[i, j]
    Y[i, j] = np.nan
    try:
        yield Y
    finally:
        Y[i, j] = held


def _predict_fold(cells, *, predictor, Y, scales, extra, in_place=False):
    """One fold of :func:`evaluate` (an executor's task, possibly on another machine): a
    clone of ``predictor`` fitted on ``Y`` without ``cells = (i, j)``, and its predictions
    of those cells, shape (n_cells,). ``in_place`` (one task at a time in this process
    only): the cells are hidden in ``Y`` itself during the fit and restored, no copy."""
    i, j = cells
    with _hidden(Y if in_place else Y.copy(), i, j) as Yt, single_blas_thread():
        return clone(predictor).fit(Yt, scales, **extra).predict_cells(i, j)


def fold_fits(predictor: BasePredictor, Y, scales: BenchmarkScales, folds: Folds, *,
              covariates=None, progress=None):
    """Hide each fold's cells and refit: yields ``k, i, j, fitted`` per fold, with ``i, j``
    (n_cells,) the held-out cells and ``fitted`` a :func:`clone` of ``predictor`` fitted
    on ``Y`` (a checked score matrix) without them.

    ``covariates`` (n_models, n_features), when given, reach every fit (only predictors
    that accept them, e.g. :class:`~benchpress.predict.models.side_info.SideInfoPredictor`).
    ``progress(k, n, label)``, when given, is called after each fold's fit (``k`` of ``n``
    done); it only reports, so the results are the same with or without it.

    Raises BadInputError when a held-out cell is out of range or not observed in ``Y``.
    ``Y`` is changed during each fit (the fold's cells hidden) and restored before the
    fit is yielded.
    """
    extra = {} if covariates is None else {"covariates": covariates}
    cells = _fold_cells(Y, folds)
    n_folds = len(cells)
    for k, (i, j) in enumerate(cells):
        with _hidden(Y, i, j):  # in place (no second matrix), restored right after the fit
            fitted = clone(predictor).fit(Y, scales, **extra)
        if progress is not None:
            progress(k + 1, n_folds, f"fold {k + 1} of {n_folds}")
        yield k, i, j, fitted
        del fitted  # not kept alive through the next fit


def evaluate(predictor: BasePredictor, Y, scales: BenchmarkScales, folds: Folds, *,
             model_ids=None, benchmark_ids=None, covariates=None,
             progress=None, executor=None) -> EvaluationResult:
    """Hide each fold's cells, refit, predict them, and score the predictions.

    Parameters
    ----------
    predictor : BasePredictor
        An unfitted predictor (e.g. ``make_predictor("default", n_starts=60)``); each
        fold fits a clone of it.
    Y : array_like, shape (n_models, n_benchmarks)
        Full observed score matrix, score units, NaN = missing.
    scales : BenchmarkScales
    folds : Folds
        Every held-out cell must be observed in ``Y``.
    model_ids, benchmark_ids : sequence of str, optional
        Labels for the per-model / per-benchmark tables (indices otherwise).
    covariates : ndarray, shape (n_models, n_features), optional
        Per-model side information passed to every fit (see :func:`fold_fits`).
    progress : callable, optional
        ``progress(k, n, label)`` after each fold's fit (see :func:`fold_fits`).
    executor : str or Executor, optional
        Where the folds' fits run (:func:`benchpress.executor.get_executor`: None or
        "local" in this process, one after the other; a Dask scheduler address on its
        workers). The results are the same wherever they ran.

    Returns
    -------
    EvaluationResult
    """
    Y = check_scores(Y, scales)
    check_predictor(predictor)
    n_m, n_b = Y.shape
    mids = list(model_ids) if model_ids is not None else [str(i) for i in range(n_m)]
    bids = list(benchmark_ids) if benchmark_ids is not None else [str(j) for j in range(n_b)]
    if len(mids) != n_m or len(bids) != n_b:
        raise BadInputError("model_ids / benchmark_ids do not match the matrix shape")
    cells = _fold_cells(Y, folds)
    report = None if progress is None else (
        lambda k, n: progress(k, n, f"fold {k} of {n}"))
    t0 = time.perf_counter()
    ex = get_executor(executor)
    predicted = ex.map(  # the folds' fits: one map, results in input order
        _predict_fold, cells, progress=report, predictor=predictor, Y=Y, scales=scales,
        extra={} if covariates is None else {"covariates": covariates},
        in_place=isinstance(ex, LocalExecutor))
    seconds = time.perf_counter() - t0
    parts = [(k, i, j, Y[i, j], p) for k, ((i, j), p) in enumerate(zip(cells, predicted))]
    fold = np.concatenate([np.full(p[1].size, p[0]) for p in parts]) if parts else np.zeros(0, int)
    ii = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, int)
    jj = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, int)
    act = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0)
    prd = np.concatenate([p[4] for p in parts]) if parts else np.zeros(0)
    cells_df = pl.DataFrame({
        "fold": fold.astype(np.int64),
        "model_index": ii.astype(np.int64),
        "benchmark_index": jj.astype(np.int64),
        "model_id": [mids[x] for x in ii.tolist()],
        "benchmark_id": [bids[x] for x in jj.tolist()],
    }).hstack(cell_errors(act, prd))
    per_fold = group_metrics(cells_df, "fold")
    overall = Metrics(**{**asdict(compute_metrics(act, prd)),
                         "fold_medae_mean": per_fold["medae"].mean() if parts else None})
    return EvaluationResult(
        method=predictor.method,
        overall=overall,
        per_fold=per_fold,
        per_benchmark=group_metrics(cells_df, "benchmark_id"),
        per_model=group_metrics(cells_df, "model_id"),
        cells=cells_df,
        seconds=seconds,
    )
