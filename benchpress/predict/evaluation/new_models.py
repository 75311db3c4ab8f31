"""Whole new models held out: how well is a model predicted from its first few scores?

This is the question behind `benchpress predict --scores`: a model arrives with k scores
and we predict the rest. For each seed, the models with at least ``min_scores`` scores
are split at random into ``n_groups`` groups (:func:`new_model_split`). Each group is held
out whole, a clone of the unfitted predictor is fitted on the other models, and every
held-out model is folded in from the first k of a seeded random order of its own scores
(each k in ``known``); the error is on all its other scores.

``evaluate(..., folds)`` answers the other question: cells missing from models the fit
has seen. The figures pool absolute errors over seeds, groups and models (MedAE etc. as in
:mod:`~benchpress.predict.evaluation.metrics`). The same seed gives the same groups and score orders
for every predictor, so methods compare on identical cells.

>>> import numpy as np
>>> groups, position = new_model_split(np.ones((12, 9), dtype=bool), seed=1, n_groups=3)
>>> sorted(np.concatenate(groups).tolist()) == list(range(12)), sorted(position[0].tolist())
(True, [0, 1, 2, 3, 4, 5, 6, 7, 8])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from benchpress.errors import UsageError
from benchpress.predict.estimator import BasePredictor, check_scores, clone
from benchpress.predict.evaluation.metrics import cell_errors, group_metrics
from benchpress.predict.models.covariates import covariate_kwargs
from benchpress.predict.transform import BenchmarkScales
from benchpress.predict.size_limits import LIMITS, SizeLimits

__all__ = ["NewModelEvaluation", "new_model_split", "evaluate_new_models"]



@dataclass(frozen=True)
class NewModelEvaluation:
    """Outcome of :func:`evaluate_new_models`.

    Attributes
    ----------
    method : str
    overall : polars.DataFrame
        One row per k: ``known, n_models`` (distinct models held out), ``n_cells, coverage,
        medae, medape, within3, within5`` (pooled over seeds).
    per_seed : polars.DataFrame
        ``seed, known, n_cells`` and the metrics per seed and k.
    cells : polars.DataFrame
        One row per scored cell: ``seed, known, model_index, benchmark_index, actual,
        predicted, abs_error``.
    seeds : tuple of int
    seconds : float
        Wall time of the fits and fold-ins.
    """

    method: str
    overall: pl.DataFrame
    per_seed: pl.DataFrame
    cells: pl.DataFrame
    seeds: tuple
    seconds: float

    def to_json(self) -> dict:
        """JSON-ready dict with snake_case keys: the pooled figures per k at the top level
        (``k3_medae``, ``k3_within5``, ...; what the pipeline's metrics file holds), then
        the same per k as rows (``known``) and per seed."""
        rows = self.overall.to_dicts()
        figures = {f"k{r['known']}_{name}": r[name] for r in rows
                   for name in ("medae", "medape", "within3", "within5", "n_cells", "n_models")}
        return {"method": self.method, "regime": "new_models", "seeds": list(self.seeds),
                **figures, "known": rows, "per_seed": self.per_seed.to_dicts(),
                "seconds": self.seconds}


def new_model_split(observed, seed: int, *, n_groups: int = 5,
                    min_scores: int = LIMITS.new_model_min_scores):
    """The held-out groups and each model's random score order for one seed.

    Parameters
    ----------
    observed : ndarray of bool, shape (n_models, n_benchmarks)

    Returns
    -------
    groups : list of ndarray of int
        ``n_groups`` disjoint sets of model indices (the models with ``min_scores``+ scores).
    position : ndarray of int, shape (n_models, n_benchmarks)
        Each observed cell's place in its model's random order (0 = first known score);
        -1 for unobserved cells and for models that are never held out.
    """
    obs = np.asarray(observed, dtype=bool)
    rng = np.random.RandomState(seed)
    eligible = np.flatnonzero(obs.sum(axis=1) >= min_scores)
    groups = np.array_split(rng.permutation(eligible), n_groups)
    position = np.full(obs.shape, -1)
    for i in eligible:  # one seeded permutation per model, in index order (sequential draws)
        order = rng.permutation(np.flatnonzero(obs[i]))
        position[i, order] = np.arange(order.size)
    return groups, position


def _check_known(known) -> tuple:
    """The distinct score counts, sorted; a non-positive one is a UsageError."""
    ks = tuple(sorted({int(k) for k in known}))
    if not ks or min(ks) < 1:
        raise UsageError(f"known score counts must be positive integers, got {list(known)}")
    return ks


def evaluate_new_models(predictor: BasePredictor, Y, scales: BenchmarkScales, *,
                        known=(3, 5), seeds=(1001,), n_groups: int = 5,
                        min_scores: int | None = None, covariates=None,
                        progress=None, limits: SizeLimits = LIMITS) -> NewModelEvaluation:
    """Hold out whole models, fold each in from ``k`` of its scores, score the rest.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; each group's fit is a clone of it.
    Y : array_like, shape (n_models, n_benchmarks)
        Observed scores, score units, NaN = missing.
    scales : BenchmarkScales
    known : sequence of int
        How many of its own scores each held-out model is folded in from.
    seeds : sequence of int
        One random split (groups and score orders) per seed.
    n_groups : int
        Groups per seed: each is held out once (``n_groups`` fits per seed).
    min_scores : int, optional
        Models with fewer scores are never held out (default: ``limits.new_model_min_scores``,
        or ``max(known) + 3`` if larger, so each held-out model has 3+ scores to score).
    covariates : ndarray, shape (n_models, n_features), optional
        Per-model side information: each fit gets the kept rows', each fold-in the
        held-out models' own rows (predictors that accept them only).
    progress : callable, optional
        ``progress(k, n, label)`` after each fit.
    limits : SizeLimits
        Size thresholds (:mod:`benchpress.predict.size_limits`).

    Returns
    -------
    NewModelEvaluation
    """
    Y = check_scores(Y, scales)
    ks = _check_known(known)
    least = limits.new_model_min_scores
    min_scores = max(least, max(ks) + 3) if min_scores is None else int(min_scores)
    obs = ~np.isnan(Y)
    parts, n_fits, t0 = [], len(seeds) * n_groups, time.perf_counter()
    for s, seed in enumerate(seeds):
        groups, position = new_model_split(obs, seed, n_groups=n_groups, min_scores=min_scores)
        for g, rows in enumerate(groups):
            keep = np.ones(Y.shape[0], dtype=bool)
            keep[rows] = False
            fitted = clone(predictor).fit(Y[keep], scales,
                                          **covariate_kwargs(predictor, covariates, keep))
            pos = position[rows]
            for k in ks:
                S = np.where((pos >= 0) & (pos < k), Y[rows], np.nan)
                P = np.asarray(fitted.fold_in(S, **covariate_kwargs(predictor, covariates, rows)))
                ii, jj = np.nonzero(pos >= k)
                parts.append(pl.DataFrame({
                    "seed": np.full(ii.size, seed), "known": np.full(ii.size, k),
                    "model_index": rows[ii], "benchmark_index": jj,
                    **cell_errors(Y[rows[ii], jj], P[ii, jj]).to_dict()}))
            if progress:
                progress(s * n_groups + g + 1, n_fits, f"seed {seed}, group {g + 1}")
    seconds = time.perf_counter() - t0
    cells = pl.concat(parts) if parts else pl.DataFrame(
        schema={"seed": pl.Int64, "known": pl.Int64, "model_index": pl.Int64,
                "benchmark_index": pl.Int64, "actual": pl.Float64, "predicted": pl.Float64,
                "abs_error": pl.Float64})
    return NewModelEvaluation(predictor.method, _overall(cells),
                              group_metrics(cells, ["seed", "known"]), cells,
                              tuple(int(s) for s in seeds), seconds)


def _overall(cells: pl.DataFrame) -> pl.DataFrame:
    """Per k: ``known, n_models`` (distinct models: each is held out once per seed) and
    the pooled metrics of :func:`~benchpress.predict.evaluation.metrics.group_metrics`."""
    models = cells.group_by("known").agg(pl.col("model_index").n_unique().alias("n_models"))
    # in k's order: a join's own order depends on polars' threads
    return (group_metrics(cells, "known").join(models, on="known", maintain_order="left")
            .select("known", "n_models", "n_cells", "coverage", "medae", "medape", "within3",
                    "within5"))
