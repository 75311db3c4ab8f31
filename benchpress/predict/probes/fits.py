"""The probe search's held-out fits and its batched scoring, as plain functions.

:class:`~benchpress.predict.probes.search.ProbeSearch` needs, for every model it scores, a fit
that has not seen that model. Small matrices get the paper's design, one
leave-one-model-out (LOMO) fit per model on every other model. Large ones get a bounded
design, so the work does not grow with the number of models:

* :func:`split_groups` splits the scored sample into ``n_groups`` seeded groups, each
  group left out of one fit (``n_groups`` fits instead of one per scored model);
* :func:`train_sample` bounds each fit's training set to a seeded sample of at most
  ``max_train`` models, plus the fewest models needed so every benchmark keeps
  ``min_scores`` scores (or all it has);
* :func:`slim` keeps of each fit only what a fold-in reads (transform, benchmark
  parameters, regression weights), not the model-sized arrays.

Fits and candidate scoring are lists of independent calls, run through
:func:`benchpress.executor.get_executor` (``map`` keeps input order, so the numbers do not
depend on where they ran).
"""

from __future__ import annotations

import copy

import numpy as np

from benchpress.blas_threads import single_blas_thread
from benchpress.predict.estimator import BasePredictor, check_scores, clone
from benchpress.predict.evaluation.metrics import abs_errors
from benchpress.predict.models.side_info import covariate_kwargs
from benchpress.predict.transform import BenchmarkScales
from benchpress.predict.size_limits import LIMITS

__all__ = ["refit_transcripts", "split_groups", "train_sample", "slim", "fit_group", "unique_rows",
           "predict_block", "objective_block"]


def split_groups(scored: np.ndarray, n_groups: int | None, seed: int) -> list[np.ndarray]:
    """The held-out groups of the scored models (ascending model rows within each group).

    ``n_groups`` None or at least ``scored.size``: one group per model, in order (LOMO);
    otherwise a seeded shuffle cut into ``n_groups`` groups of near-equal size.
    """
    if n_groups is None or int(n_groups) >= scored.size:
        return [scored[i:i + 1] for i in range(scored.size)]
    rng = np.random.default_rng([int(seed), 1])
    return [np.sort(g) for g in np.array_split(rng.permutation(scored), int(n_groups))]


def train_sample(obs: np.ndarray, active: np.ndarray, scored: np.ndarray,
                 max_train: int | None, seed: int,
                 min_scores: int = LIMITS.probe_min_benchmark_scores):
    """Model rows every fit may train on (ascending), or None for every model.

    Parameters
    ----------
    obs : ndarray of bool, shape (n_models, n_benchmarks)
    active : ndarray of int
        Models with at least one score.
    scored : ndarray of int
        The models left out and scored; they are drawn last (the groups leave them out of
        their own fits, and the per-benchmark minimum should not rest on them).
    max_train : int or None
        Bound on the seeded sample; None, or no more active models than it: None.

    Returns
    -------
    ndarray of int or None: a seeded sample of ``max_train`` models, together with, for
    each benchmark, its ``min_scores`` first observers in the same seeded order (so no
    benchmark is left with fewer scores than that, or than it has).
    """
    if max_train is None or active.size <= int(max_train):
        return None
    rng = np.random.default_rng([int(seed), 2])
    prio = np.full(obs.shape[0], np.iinfo(np.int64).max)
    prio[active] = rng.permutation(active.size)
    prio[scored] += active.size                          # scored models come last
    rows, cols = np.nonzero(obs[active])
    rows = active[rows]
    order = np.lexsort((prio[rows], cols))               # by benchmark, then priority
    cols_sorted = cols[order]
    first = np.searchsorted(cols_sorted, np.arange(obs.shape[1]))
    rank_in_bench = np.arange(order.size) - first[cols_sorted]
    must = np.unique(rows[order][rank_in_bench < int(min_scores)])
    by_prio = active[np.argsort(prio[active], kind="stable")]
    fill = by_prio[~np.isin(by_prio, must)][:max(int(max_train) - must.size, 0)]
    return np.sort(np.concatenate([must, fill]))


def slim(pred):
    """A shallow copy of a fitted predictor keeping only what ``fold_in`` reads: the
    model-sized arrays (training scores, model factors and biases, training-row
    completions) are cut to zero rows. Its ``fold_in`` gives the same numbers; nothing
    else (``complete``, a refit) is meant to be called on it."""
    out = copy.copy(pred)
    for name in ("Y_", "covariates_", "_raw_covariates"):
        value = getattr(out, name, None)
        if isinstance(value, np.ndarray):
            setattr(out, name, value[:0])
    for name in ("regression_z_", "base_z_"):
        if getattr(out, name, None) is not None:
            setattr(out, name, None)
    ens = getattr(out, "ensemble_", None)
    if ens is not None and hasattr(ens, "U_"):
        ens = copy.copy(ens)
        ens.U_, ens.model_bias_ = ens.U_[:, :0], ens.model_bias_[:, :0]
        out.ensemble_ = ens
    if getattr(out, "low_rank_", None) is not None:  # a blend: its low-rank part slimmed
        out.low_rank_ = slim(out.low_rank_)
    return out


def fit_group(group, *, predictor, Y, scales, covariates=None, train=None):
    """One held-out fit: a :func:`clone` of ``predictor`` fitted on the rows of ``Y``
    (n_models, n_benchmarks) outside ``group`` (model indices), restricted to ``train``
    (model indices) when given; ``covariates`` (n_models, n_features) or None. Returns the
    :func:`slim` fitted clone."""
    n_m = Y.shape[0]
    rows = np.setdiff1d(np.arange(n_m) if train is None else train, group)
    Yt = np.delete(Y, group, axis=0) if train is None else Y[rows]
    kwargs = {} if covariates is None else {"covariates": covariates[rows]}
    with single_blas_thread():
        return slim(clone(predictor).fit(Yt, scales, **kwargs))


def unique_rows(seen: np.ndarray):
    """``np.unique(seen, axis=0, return_inverse=True)`` for a bool array (n, m), faster:
    the rows are packed into big-endian 64-bit words, whose order is the rows'
    lexicographic order, so the unique rows come out in the same order.

    Returns
    -------
    uniq : ndarray of bool, shape (n_unique, m)
    inv : ndarray of int, shape (n,)
    """
    n, m = seen.shape
    packed = np.packbits(seen, axis=1)                        # column 0 -> top bit
    width = -(-max(packed.shape[1], 1) // 8) * 8
    words = np.zeros((n, width), dtype=np.uint8)
    words[:, :packed.shape[1]] = packed
    words = words.view(">u8")                                 # (n, width // 8)
    if words.shape[1] == 1:
        _, first, inv = np.unique(words[:, 0], return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(words, axis=0, return_index=True, return_inverse=True)
    return seen[first], inv.reshape(-1)


def predict_block(block, masks) -> np.ndarray:
    """Predicted observed cells of some scored models under each probe set.

    Parameters
    ----------
    block : list of ``(fit, y, js, extra)``
        Per model: its held-out fit, its score row (n_benchmarks,), its observed columns
        ``js`` and the fold-in keywords (covariates).
    masks : ndarray of bool, shape (n_sets, n_benchmarks)

    Returns
    -------
    ndarray, shape (n_sets, sum of len(js)): fold-ins, probe cells exact.
    """
    n_sets, n_b = masks.shape
    out = np.empty((n_sets, sum(js.size for _, _, js, _ in block)))
    start = 0
    with single_blas_thread():
        for fit, y, js, extra in block:
            seen = masks[:, js]                                   # (n_sets, n_obs_i)
            uniq, inv = unique_rows(seen)
            rows = np.full((uniq.shape[0], n_b), np.nan)
            rows[:, js] = np.where(uniq, y[js], np.nan)
            kw = {k: np.repeat(v[None], rows.shape[0], axis=0) for k, v in extra.items()}
            P = fit.fold_in(rows, **kw)[:, js]                    # (n_unique, n_obs_i)
            P = np.where(uniq, y[js], P)                          # probe cells are exact
            out[:, start:start + js.size] = P[inv.reshape(-1)]
            start += js.size
    return out


def objective_block(masks, *, block, actual, cell_bench, objective, scope,
                    target=None) -> np.ndarray:
    """The objective of a chunk of probe sets ``masks`` (n_sets, n_benchmarks) against
    ``block`` (see :func:`predict_block`), ``actual`` (n_cells,) the scored cells' values
    and ``cell_bench`` (n_cells,) their columns; returns the pooled median per set, shape
    (n_sets,)."""
    err, ape = abs_errors(actual, predict_block(block, masks))
    vals = err if objective == "medae" else ape
    if scope == "hidden":
        vals = np.where(masks[:, cell_bench], np.nan, vals)
    return np.nanmedian(vals if target is None else vals[:, target], axis=1)


def refit_transcripts(predictor: BasePredictor, Y, scales: BenchmarkScales, probe_mask, *,
                      models=None, covariates=None) -> np.ndarray:
    """The paper's design: per model, refit (a clone of the unfitted ``predictor``) on the
    matrix with that model's row cut down to the probes, and read its predicted row.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; each refit is a clone.
    probe_mask : array_like of bool, shape (n_benchmarks,)
    models : sequence of int, optional
        Model rows to predict (default: all).
    covariates : ndarray, shape (n_models, n_features), optional
        Reach every refit of a predictor that accepts them.

    Returns
    -------
    ndarray, shape (n_models, n_benchmarks): predicted rows (NaN for rows not in ``models``).
    """
    Y = check_scores(Y, scales)
    probe = np.asarray(probe_mask, dtype=bool)
    out = np.full(Y.shape, np.nan)
    rows = range(Y.shape[0]) if models is None else models
    with single_blas_thread():
        for i in rows:  # one refit per model: the slow design this module replaces
            Yt = Y.copy()
            Yt[i, ~probe] = np.nan
            out[i] = clone(predictor).fit(
                Yt, scales, **covariate_kwargs(predictor, covariates)).complete(
                keep_observed=False)[i]
    return out
