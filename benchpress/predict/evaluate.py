"""Held-out evaluation: fold files, per-model k-fold partitions, metrics.

Folds are lists of held-out ``(model_index, benchmark_index)`` cells of the score matrix.
Two JSON layouts are read:

* the published index form ``{"n_models":..., "n_bench":..., "folds": [{"seed": 42,
  "fold": 0, "test_cells": [[i, j], ...]}, ...]}`` (indices in data order);
* an id form ``{"folds": [{"test_cells": [[model_id, benchmark_id], ...]}, ...]}``,
  resolved against given model and benchmark id lists.

:func:`make_folds` reproduces the published generator ("per-model k-fold",
``folds_s{n_seeds}_f{k}_bs{seed}_ms{min_scores}``): for each seed, one
``numpy.random.RandomState(seed)`` shuffles every model's observed benchmarks in model
order (models with fewer than ``min_scores`` observed cells are skipped); fold ``f`` of a
model holds positions ``[f*size, (f+1)*size)`` of its shuffled list with
``size = max(1, n_i // k)``, the last fold taking the remainder.

Metrics on the pooled held-out cells (score units): ``medae`` median absolute error;
``medape`` median of ``|error| / |actual|`` in percent (cells with ``|actual| <= 1e-6``
left out); ``within3``/``within5`` percent of cells with ``|error| <= 3`` / ``<= 5``;
``coverage`` fraction of held-out cells that got a finite prediction (the others are
left out of the error metrics); ``fold_medae_mean`` mean over folds of the per-fold MedAE.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, UsageError
from benchpress.predict._threads import single_blas_thread
from benchpress.predict.base import BasePredictor, check_scores
from benchpress.predict.transform import BenchmarkScales

__all__ = [
    "Folds",
    "Metrics",
    "EvaluationResult",
    "make_folds",
    "parse_folds",
    "read_folds",
    "folds_to_json",
    "evaluate",
    "compute_metrics",
    "fold_fits",
]

APE_EPS = 1e-6


@dataclass(frozen=True)
class Folds:
    """Held-out cell sets.

    Attributes
    ----------
    test_cells : tuple of ndarray, each shape (n_cells, 2), int
        ``[model_index, benchmark_index]`` rows of each fold.
    seeds : tuple of int or None
        Generating seed per fold (None when unknown).
    fold_ids : tuple of int
        Fold number within its seed.
    """

    test_cells: tuple
    seeds: tuple
    fold_ids: tuple

    def __len__(self) -> int:
        return len(self.test_cells)

    def __iter__(self):
        return iter(self.test_cells)

    @property
    def n_cells(self) -> int:
        """Total held-out cells over all folds."""
        return int(sum(len(c) for c in self.test_cells))


def make_folds(observed, *, n_folds: int = 3, seed: int = 42, n_seeds: int = 1,
               min_scores: int = 1) -> Folds:
    """Per-model k-fold partitions of the observed cells, for seeds ``seed .. seed+n_seeds-1``.

    Parameters
    ----------
    observed : array_like of bool, shape (n_models, n_benchmarks)
        Which cells have a score (e.g. ``~np.isnan(Y)``).
    n_folds : int, default 3
    seed : int, default 42
    n_seeds : int, default 1
        Number of independent partitions; ``n_seeds * n_folds`` folds are returned.
    min_scores : int, default 1
        Models with fewer observed cells are never held out.

    Returns
    -------
    Folds
        With ``seed=42, n_seeds=10, n_folds=3, min_scores=1`` on the published matrix this
        equals the published ``folds_s10_f3_bs42_ms1.json``.
    """
    obs = np.asarray(observed, dtype=bool)
    if obs.ndim != 2:
        raise BadInputError(f"observed must be 2-D, got shape {obs.shape}")
    if n_folds < 2 or n_seeds < 1:
        raise UsageError("need n_folds >= 2 and n_seeds >= 1")
    cells, seeds, ids = [], [], []
    counts = obs.sum(axis=1)
    held = counts >= min_scores
    rows = np.repeat(np.arange(obs.shape[0]), np.where(held, counts, 0))
    # position of each cell within its row's shuffled order, and that row's fold size
    pos = np.arange(rows.size) - np.repeat(np.cumsum(counts * held) - counts * held,
                                           np.where(held, counts, 0))
    size = np.maximum(1, counts[rows] // n_folds)
    fold = np.minimum(pos // size, n_folds - 1)
    for s in range(int(seed), int(seed) + int(n_seeds)):
        rng = np.random.RandomState(s)
        # one shuffle per model, in model order: this consumes the random stream exactly
        # as the published fold generator does, so the published folds are reproduced
        shuffled = [rng.shuffle(js) or js for js in
                    (np.flatnonzero(obs[i]) for i in np.flatnonzero(held))]
        cols = np.concatenate(shuffled) if shuffled else np.zeros(0, np.int64)
        for f in range(n_folds):
            sel = fold == f
            cells.append(np.column_stack([rows[sel], cols[sel]]).astype(np.int64))
            seeds.append(s)
            ids.append(f)
    return Folds(tuple(cells), tuple(seeds), tuple(ids))


def parse_folds(obj, model_ids=None, benchmark_ids=None) -> Folds:
    """Folds from an already-decoded JSON object (index or id form, see module doc)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("folds"), list):
        raise BadInputError('fold file must be an object with a "folds" list')
    midx = None if model_ids is None else {m: k for k, m in enumerate(model_ids)}
    bidx = None if benchmark_ids is None else {b: k for k, b in enumerate(benchmark_ids)}
    for key, ids in (("n_models", model_ids), ("n_bench", benchmark_ids)):
        if key in obj and ids is not None and int(obj[key]) != len(ids):
            raise BadInputError(f"fold file {key}={obj[key]} but the matrix has {len(ids)}")
    cells, seeds, fids = [], [], []
    for k, rec in enumerate(obj["folds"]):
        if not isinstance(rec, dict) or "test_cells" not in rec:
            raise BadInputError(f'fold {k} has no "test_cells"')
        raw = rec["test_cells"]
        rows = []
        for cell in raw:
            if not isinstance(cell, (list, tuple)) or len(cell) != 2:
                raise BadInputError(f"fold {k}: bad cell {cell!r}")
            m, b = cell
            if isinstance(m, str) or isinstance(b, str):
                if midx is None or bidx is None:
                    raise UsageError("id-form folds need model_ids and benchmark_ids")
                if m not in midx or b not in bidx:
                    raise BadInputError(f"fold {k}: unknown cell {cell!r}")
                rows.append((midx[m], bidx[b]))
            else:
                rows.append((int(m), int(b)))
        arr = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
        if midx is not None and arr.size and (arr[:, 0].max() >= len(midx) or arr.min() < 0):
            raise BadInputError(f"fold {k}: model index out of range")
        if bidx is not None and arr.size and arr[:, 1].max() >= len(bidx):
            raise BadInputError(f"fold {k}: benchmark index out of range")
        cells.append(arr)
        seeds.append(rec.get("seed"))
        fids.append(int(rec.get("fold", k)))
    return Folds(tuple(cells), tuple(seeds), tuple(fids))


def read_folds(path, model_ids=None, benchmark_ids=None) -> Folds:
    """Read a fold JSON file (index or id form); ids are needed for the id form."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise BadInputError(f"cannot read fold file {path}: {exc}") from None
    return parse_folds(obj, model_ids, benchmark_ids)


def folds_to_json(folds: Folds, model_ids=None, benchmark_ids=None) -> dict:
    """JSON-ready dict: id form when both id lists are given, index form otherwise."""
    recs = []
    for cells, s, f in zip(folds.test_cells, folds.seeds, folds.fold_ids):
        if model_ids is not None and benchmark_ids is not None:
            tc = [[model_ids[i], benchmark_ids[j]] for i, j in cells.tolist()]
        else:
            tc = cells.tolist()
        recs.append({"seed": s, "fold": f, "test_cells": tc})
    return {"folds": recs}


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


def _cell_errors(actual, predicted) -> pl.DataFrame:
    """``actual, predicted, abs_error`` columns (null prediction/error = not predicted)."""
    a = np.asarray(actual, dtype=float)
    p = np.asarray(predicted, dtype=float)
    ok = np.isfinite(p)
    return pl.DataFrame({"actual": a, "predicted": np.where(ok, p, np.nan),
                         "abs_error": np.where(ok, np.abs(p - a), np.nan)}).fill_nan(None)


def _metric_exprs() -> list[pl.Expr]:
    """The metrics (module doc) over a frame of :func:`_cell_errors` columns."""
    err = pl.col("abs_error")
    ape = pl.when(pl.col("actual").abs() > APE_EPS).then(err / pl.col("actual").abs() * 100)
    return [pl.col("predicted").is_not_null().mean().alias("coverage"),
            err.median().alias("medae"), ape.median().alias("medape"),
            ((err <= 3.0).mean() * 100).alias("within3"),
            ((err <= 5.0).mean() * 100).alias("within5")]


def compute_metrics(actual, predicted) -> Metrics:
    """Metrics for 1-D arrays of actual and predicted scores (NaN prediction = uncovered)."""
    frame = _cell_errors(actual, predicted)
    row = frame.select(_metric_exprs()).row(0, named=True) if frame.height else {}
    nan = float("nan")
    return Metrics(**{k: nan if row.get(k) is None else float(row[k])
                      for k in ("medae", "medape", "within3", "within5", "coverage")},
                   n_cells=frame.height)


def _group_metrics(cells: pl.DataFrame, key: str) -> pl.DataFrame:
    return (cells.group_by(key, maintain_order=True)
            .agg(pl.len().alias("n_cells"), *_metric_exprs()).sort(key))


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


def _factory(method, params):
    if isinstance(method, str):
        from benchpress.predict.predictor import make_predictor

        make_predictor(method, **params)  # validate early
        return method, lambda: make_predictor(method, **params)
    if isinstance(method, BasePredictor):
        cfg = {**method.get_params(), **params}
        name = getattr(method, "method", type(method).__name__)

        def build():
            p = type(method)(**cfg)
            p.method = name
            return p

        return name, build
    raise UsageError("method must be a method name or a predictor instance")


def fold_fits(build, Y, scales: BenchmarkScales, folds: Folds):
    """Hide each fold's cells and refit: yields ``k, i, j, fitted`` per fold, with ``i, j``
    (n_cells,) the held-out cells and ``fitted`` the predictor made by ``build()`` and
    fitted on ``Y`` (a checked score matrix) without them.

    Raises BadInputError when a held-out cell is out of range or not observed in ``Y``.
    """
    n_m, n_b = Y.shape
    for k, cells in enumerate(folds.test_cells):
        cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
        if cells.size and (cells[:, 0].max() >= n_m or cells[:, 1].max() >= n_b or cells.min() < 0):
            raise BadInputError(f"fold {k}: cell index out of range for a {n_m}x{n_b} matrix")
        i, j = cells[:, 0], cells[:, 1]
        unobserved = int(np.isnan(Y[i, j]).sum())
        if unobserved:
            raise BadInputError(f"fold {k}: {unobserved} held-out cells are not observed")
        Yt = Y.copy()
        Yt[i, j] = np.nan
        yield k, i, j, build().fit(Yt, scales)


def evaluate(method, Y, scales: BenchmarkScales, folds: Folds, *, model_ids=None,
             benchmark_ids=None, **params) -> EvaluationResult:
    """Hide each fold's cells, refit, predict them, and score the predictions.

    Parameters
    ----------
    method : str or BasePredictor
        A name from :func:`~benchpress.predict.predictor.available_methods` (``params``
        override its defaults) or an unfitted predictor used as a template.
    Y : array_like, shape (n_models, n_benchmarks)
        Full observed score matrix, score units, NaN = missing.
    scales : BenchmarkScales
    folds : Folds
        Every held-out cell must be observed in ``Y``.
    model_ids, benchmark_ids : sequence of str, optional
        Labels for the per-model / per-benchmark tables (indices otherwise).

    Returns
    -------
    EvaluationResult
    """
    Y = check_scores(Y, scales)
    name, build = _factory(method, params)
    n_m, n_b = Y.shape
    mids = list(model_ids) if model_ids is not None else [str(i) for i in range(n_m)]
    bids = list(benchmark_ids) if benchmark_ids is not None else [str(j) for j in range(n_b)]
    if len(mids) != n_m or len(bids) != n_b:
        raise BadInputError("model_ids / benchmark_ids do not match the matrix shape")
    parts = []
    t0 = time.perf_counter()
    with single_blas_thread():
        for k, i, j, fitted in fold_fits(build, Y, scales, folds):
            parts.append((k, i, j, Y[i, j], fitted.complete(keep_observed=False)[i, j]))
    seconds = time.perf_counter() - t0
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
    }).hstack(_cell_errors(act, prd))
    per_fold = _group_metrics(cells_df, "fold")
    overall = Metrics(**{**asdict(compute_metrics(act, prd)),
                         "fold_medae_mean": per_fold["medae"].mean() if parts else None})
    return EvaluationResult(
        method=name,
        overall=overall,
        per_fold=per_fold,
        per_benchmark=_group_metrics(cells_df, "benchmark_id"),
        per_model=_group_metrics(cells_df, "model_id"),
        cells=cells_df,
        seconds=seconds,
    )
