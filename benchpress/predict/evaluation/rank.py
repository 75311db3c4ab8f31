"""Rank diagnostics: how many latent factors the score matrix supports.

Two checks, as in the BenchPress paper:

1. held-out error of :class:`~benchpress.predict.models.baselines.SoftImpute` at ranks 1..8 on
   the same folds (the rank with the lowest pooled MedAE "wins"); beside it, when given a
   predictor that has a ``rank`` parameter (the default, side, ALS, published), that
   predictor's own held-out error at each rank (``method_medae``), which is how its rank
   was chosen;
2. the share of variance captured by the first singular vectors of large *complete*
   submatrices (no missing cell), after the standard transform (logit for percent
   benchmarks, per-column z-scores computed within the submatrix).

Complete submatrices are found by greedy column addition (:func:`complete_submatrices`):
starting from one benchmark, repeatedly add the benchmark that keeps the most models
observed on every chosen benchmark (ties: lowest index), recording the (models,
benchmarks) submatrix after each addition, until fewer than ``min_rows`` models remain.
This is run once from every starting benchmark; for each number of benchmarks the
submatrix with the most models is kept (a frontier of complete submatrices), and the
frontier is returned largest (by cell count) first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from benchpress.errors import BadInputError
from benchpress.predict.estimator import BasePredictor, check_scores, clone, flat_params
from benchpress.predict.models.baselines import SoftImpute
from benchpress.predict.evaluation.heldout import evaluate
from benchpress.predict.evaluation.folds import Folds
from benchpress.predict.transform import BenchmarkScales, ScaleTransform

__all__ = ["RankDiagnostics", "rank_errors", "best_rank", "complete_submatrices", "singular_spectra",
           "submatrix_variance", "rank_diagnostics"]



def rank_errors(Y, scales: BenchmarkScales, folds: Folds, ranks=range(1, 9), *,
                predictor: BasePredictor | None = None, covariates=None,
                progress=None) -> pl.DataFrame:
    """Held-out soft-impute error per rank, and ``predictor``'s own at each rank.

    Parameters
    ----------
    predictor : BasePredictor, optional
        Unfitted; when it has a ``rank`` parameter, a clone of it at each rank is
        evaluated on the same folds (with ``covariates``, (n_models, n_features), when it
        takes them). Others (baselines without a rank) add nothing.
    progress : callable, optional
        ``progress(k, n, label)`` before each rank's evaluation.

    Returns
    -------
    polars.DataFrame
        Columns ``rank, medae, medape, within3, within5, fold_medae_mean`` (soft-impute)
        and, with a ranked ``predictor``, ``method_medae``.
    """
    ranks = [int(r) for r in ranks]
    ranked = predictor is not None and any(
        k == "rank" or k.endswith("__rank") for k in flat_params(predictor))
    extra = {} if covariates is None or not getattr(predictor, "accepts_covariates", False) \
        else {"covariates": covariates}
    per_rank = 2 if ranked else 1  # evaluations per rank
    steps = len(ranks) * per_rank
    rows = []
    for k, r in enumerate(ranks):
        if progress:
            progress(k * per_rank, steps, f"soft-impute, rank {r}")
        m = evaluate(SoftImpute(rank=r), Y, scales, folds).overall
        row = {"rank": r, "medae": m.medae, "medape": m.medape, "within3": m.within3,
               "within5": m.within5, "fold_medae_mean": m.fold_medae_mean}
        if ranked:
            if progress:
                progress(k * per_rank + 1, steps, f"{predictor.method}, rank {r}")
            own = clone(predictor).set_params(rank=r)
            row["method_medae"] = evaluate(own, Y, scales, folds, **extra).overall.medae
        rows.append(row)
    return pl.DataFrame(rows)


def best_rank(errs: pl.DataFrame) -> int:
    """The rank with the lowest pooled MedAE in :func:`rank_errors` output (the lowest
    rank among ties)."""
    return int(errs["rank"][errs["medae"].arg_min()])


def complete_submatrices(observed, *, min_rows: int = 10,
                         min_cols: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """Frontier of large fully observed submatrices by greedy column addition.

    Parameters
    ----------
    observed : array_like of bool, shape (n_models, n_benchmarks)
    min_rows, min_cols : int
        Smaller submatrices are not reported.

    Returns
    -------
    list of (model_indices, benchmark_indices)
        At most one per number of benchmarks (the one with most models), sorted by
        number of cells, largest first.
    """
    obs = np.asarray(observed, dtype=bool)
    if obs.ndim != 2:
        raise BadInputError(f"observed must be 2-D, got {obs.shape}")
    best: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for start in range(obs.shape[1]):
        rows = obs[:, start].copy()
        cols = [start]
        while rows.sum() >= min_rows:
            k = len(cols)
            if k >= min_cols and (k not in best or best[k][0].size < rows.sum()):
                best[k] = (np.flatnonzero(rows), np.array(sorted(cols)))
            counts = obs[rows].sum(axis=0)
            counts[cols] = -1
            nxt = int(np.argmax(counts))
            if counts[nxt] < min_rows:
                break
            cols.append(nxt)
            rows &= obs[:, nxt]
    return sorted(best.values(), key=lambda rc: -(rc[0].size * rc[1].size))


def submatrix_variance(Y, scales: BenchmarkScales, rows, cols, *, logit_rule: str = "percent",
                       n_components: int = 3) -> np.ndarray:
    """Cumulative share of variance of the first singular vectors of a complete submatrix.

    The submatrix ``Y[rows][:, cols]`` is transformed (logit rule) and z-scored per
    column within itself; returns an array of length ``n_components`` with the
    cumulative ``sum_{k<=K} s_k^2 / sum s^2``.
    """
    Y = check_scores(Y, scales)
    sub = Y[np.ix_(rows, cols)]
    if np.isnan(sub).any():
        raise BadInputError("submatrix has missing cells")
    sc = scales.subset(cols)
    Z = ScaleTransform.from_scales(sc, logit_rule=logit_rule).fit_transform(sub)
    s = np.linalg.svd(Z, compute_uv=False)
    share = np.cumsum(s**2) / max(float((s**2).sum()), 1e-300)
    out = np.full(n_components, 1.0)
    out[: min(n_components, share.size)] = share[:n_components]
    return out


@dataclass
class RankDiagnostics:
    """Result of :func:`rank_diagnostics`.

    Attributes
    ----------
    rank_errors : polars.DataFrame
        Held-out soft-impute metrics per rank (and ``method_medae``, the predictor's own,
        see :func:`rank_errors`).
    best_rank : int
        Rank with the lowest pooled soft-impute MedAE.
    submatrices : polars.DataFrame
        One row per complete submatrix: ``n_models, n_benchmarks, var1, var2, var3``
        (cumulative variance shares) and the ``model_indices`` / ``benchmark_indices``.
    """

    rank_errors: pl.DataFrame
    best_rank: int
    submatrices: pl.DataFrame

    def to_json(self) -> dict:
        """JSON-ready dict with snake_case keys."""
        return {"best_rank": self.best_rank, "rank_errors": self.rank_errors.to_dicts(),
                "submatrices": self.submatrices.to_dicts()}


def rank_diagnostics(Y, scales: BenchmarkScales, folds: Folds, *, ranks=range(1, 9),
                     min_rows: int = 10, min_cols: int = 5, predictor=None, covariates=None,
                     progress=None) -> RankDiagnostics:
    """Run both rank checks (see module doc); ``predictor``, ``covariates`` and
    ``progress`` as in :func:`rank_errors`."""
    Y = check_scores(Y, scales)
    errs = rank_errors(Y, scales, folds, ranks, predictor=predictor, covariates=covariates,
                       progress=progress)
    best = best_rank(errs)
    rows = []
    for r, c in complete_submatrices(~np.isnan(Y), min_rows=min_rows,
                                     min_cols=min_cols):
        v = submatrix_variance(Y, scales, r, c)
        rows.append({"n_models": int(r.size), "n_benchmarks": int(c.size),
                     "var1": float(v[0]), "var2": float(v[1]), "var3": float(v[2]),
                     "model_indices": r.tolist(), "benchmark_indices": c.tolist()})
    schema = {"n_models": pl.Int64, "n_benchmarks": pl.Int64, "var1": pl.Float64,
              "var2": pl.Float64, "var3": pl.Float64, "model_indices": pl.List(pl.Int64),
              "benchmark_indices": pl.List(pl.Int64)}
    return RankDiagnostics(errs, best, pl.DataFrame(rows, schema=schema))


def singular_spectra(Y, scales: BenchmarkScales, fitted) -> dict:
    """Singular values, z units: of the largest complete submatrix of ``Y`` (n_models,
    n_benchmarks), and of the column-centred completion of the ``fitted`` predictor.
    Returns ``{label: ndarray}`` (one or two entries)."""
    curves = {}
    subs = complete_submatrices(~np.isnan(Y))
    if subs:
        r, c = subs[0]
        sc = scales.subset(c)
        Z = ScaleTransform.from_scales(sc).fit_transform(Y[np.ix_(r, c)])
        curves[f"largest complete submatrix ({r.size}x{c.size})"] = np.linalg.svd(
            Z, compute_uv=False)
    tr = ScaleTransform.from_scales(scales).fit(Y)
    Z = np.nan_to_num(tr.transform(fitted.complete(keep_observed=False)))
    curves["completed matrix"] = np.linalg.svd(Z - Z.mean(axis=0), compute_uv=False)
    return curves
