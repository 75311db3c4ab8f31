"""Choosing a probe set: greedy forward selection with a swap pass.

:func:`select_probes` (what :meth:`ProbeSearch.select
<benchpress.predict.probes.search.ProbeSearch.select>` runs) alternates two steps, each a plain
function of a fitted :class:`~benchpress.predict.probes.search.ProbeSearch`:

* :func:`greedy_add` scores every affordable candidate added to the chosen set and keeps
  the best (ties: lower cost, then lower column index);
* :func:`swap_pass` replaces one chosen probe by an unchosen one, the best such swap,
  while that lowers the objective by more than rounding noise (1e-6).

Both return how many candidate sets they scored; the caller adds them up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, UsageError
from benchpress.predict.probes.search import ProbeSearch, ProbeSelection

__all__ = ["Candidates", "greedy_add", "swap_pass", "select_probes", "SWAP_MODES"]

#: When the swap pass runs: after the final addition, after every addition, never.
SWAP_MODES = ("final", "each", "none")
_GAIN = 1e-6  # a swap must lower the objective by more than this (not rounding noise)


@dataclass(frozen=True)
class Candidates:
    """Allowed probes (column indices, (n_candidates,)), every benchmark's cost
    (n_benchmarks,) and the optional budget on a set's summed cost."""

    index: np.ndarray
    cost: np.ndarray
    budget: float | None

    def affordable(self, spent: float) -> np.ndarray:
        """Candidates whose cost fits in the budget beside ``spent``."""
        if self.budget is None:
            return self.index
        return self.index[self.cost[self.index] + spent <= self.budget + 1e-9]

    def spent(self, chosen) -> float:
        return float(np.nansum(self.cost[chosen]))


def greedy_add(search: ProbeSearch, chosen: list, cand: Candidates, target=None):
    """The best affordable probe added to ``chosen``.

    Returns ``(chosen + [best], objective value, n_sets_scored)``, or ``(None, nan, 0)``
    when no candidate fits.
    """
    pool = np.setdiff1d(cand.affordable(cand.spent(chosen)), chosen)
    if pool.size == 0:
        return None, float("nan"), 0
    masks = np.repeat(search.mask(chosen)[None], pool.size, axis=0)
    masks[np.arange(pool.size), pool] = True
    vals = search.objective_values(masks, target)
    best = np.lexsort((pool, np.nan_to_num(cand.cost[pool]), vals))[0]
    return chosen + [int(pool[best])], float(vals[best]), int(pool.size)


def swap_pass(search: ProbeSearch, chosen: list, value: float, cand: Candidates, *,
              max_rounds: int, target=None):
    """Swap single probes of ``chosen`` (objective ``value``) while a swap really helps.

    Returns ``(chosen, value, swaps, n_sets_scored)`` with ``swaps`` a list of
    ``{"k", "out", "in", "before", "after"}`` (benchmark ids).
    """
    swaps, n_scored = [], 0
    for _round in range(max_rounds if len(chosen) > 1 else 0):
        trial, labels = [], []
        for p in range(len(chosen)):
            rest = [c for q, c in enumerate(chosen) if q != p]
            for c in np.setdiff1d(cand.affordable(cand.spent(rest)), chosen):
                trial.append(search.mask(rest + [int(c)]))
                labels.append((p, int(c)))
        if not trial:
            break
        vals = search.objective_values(np.asarray(trial), target)
        n_scored += len(trial)
        b = int(np.argmin(vals))
        if not vals[b] < value - _GAIN:
            break
        p, c = labels[b]
        ids = search.benchmark_ids_
        swaps.append({"k": len(chosen), "out": ids[chosen[p]], "in": ids[c],
                      "before": value, "after": float(vals[b])})
        chosen = chosen[:p] + [c] + chosen[p + 1:]
        value = float(vals[b])
    return chosen, value, swaps, n_scored


def _candidates(search: ProbeSearch, candidates, costs, budget) -> Candidates:
    n_b = search.Y_.shape[1]
    cand = list(range(n_b)) if candidates is None else [
        c if isinstance(c, (int, np.integer)) else search.index_of([c])[0] for c in candidates]
    cost = np.zeros(n_b) if costs is None else np.asarray(costs, dtype=float)
    if cost.shape != (n_b,):
        raise BadInputError(f"costs must have one value per benchmark ({n_b}), got {cost.shape}")
    if budget is not None:
        if costs is None or not np.isfinite(cost).any():
            raise UsageError("a budget needs benchmark costs (registry metadata or a costs file)")
        cand = [c for c in cand if np.isfinite(cost[c]) and cost[c] <= budget]
    cand = [c for c in dict.fromkeys(cand) if search.obs_[:, c].any()]
    if not cand:
        raise UsageError("no candidate probe is allowed (check the allowlist and the budget)")
    return Candidates(np.asarray(cand), cost, budget)


def _target(search: ProbeSearch, models):
    if models is None:
        return None
    target = np.asarray(models, dtype=bool)
    if target.shape != (search.Y_.shape[0],) or not target.any():
        raise BadInputError("models must be a non-empty boolean mask over the models")
    cells = target[search.cell_model_]
    if not cells.any():
        raise BadInputError("none of the models the objective counts is among the models the "
                            "probe search scores (its sample); raise max_models")
    return cells


def select_probes(search: ProbeSearch, k: int = 5, *, candidates=None, costs=None,
                  budget: float | None = None, swap: str = "each", max_swap_rounds: int = 5,
                  models=None, progress=None) -> ProbeSelection:
    """Greedy forward selection of up to ``k`` probes with a swap pass (by default after
    every addition) on a fitted ``search``.

    Parameters
    ----------
    k : int
        Largest probe-set size.
    candidates : sequence of str or int, optional
        Allowed probes (default: every benchmark).
    costs : array_like of float, shape (n_benchmarks,), optional
        Cost per benchmark (NaN = unknown).
    budget : float, optional
        Upper bound on the summed cost of the set; candidates of unknown cost are
        then excluded.
    swap : {"final", "each", "none"}, default "each"
        Run the swap pass on the final set only, after every addition (the curve
        then shows swapped sets at every k), or not at all.
    max_swap_rounds : int
        Most swaps applied per pass.
    models : array_like of bool, shape (n_models,), optional
        Only these models' cells enter the objective (e.g. the most recent releases);
        the reported figures still cover every model.
    progress : callable, optional
        ``progress(k, n, label)`` after each probe is added (and swapped); it only
        reports, the selection is the same without it.
    """
    search._fitted()
    t0 = time.perf_counter()
    if k < 1:
        raise UsageError(f"k must be >= 1, got {k}")
    if swap not in SWAP_MODES:
        raise UsageError(f"swap must be 'final', 'each' or 'none', got {swap!r}")
    cand = _candidates(search, candidates, costs, budget)
    target = _target(search, models)
    chosen, steps, swaps, n_scored = [], [], [], 0
    for step in range(int(k)):
        grown, value, n = greedy_add(search, chosen, cand, target)
        if grown is None:
            break
        chosen, n_scored = grown, n_scored + n
        if swap == "each" or (swap == "final" and step == int(k) - 1):
            chosen, value, done, n = swap_pass(search, chosen, value, cand,
                                               max_rounds=max_swap_rounds, target=target)
            swaps, n_scored = swaps + done, n_scored + n
        mask = search.mask(chosen)
        steps.append(search.summary(chosen, mask, search.predict_cells(mask[None])[0],
                                    None if costs is None else cand.cost))
        n_scored += 1
        if progress is not None:
            progress(step + 1, int(k), f"probe {step + 1} of {int(k)} chosen")
    return ProbeSelection(
        objective=search.objective, scope=search.scope, method=search.method, steps=steps,
        candidates=tuple(search.benchmark_ids_[c] for c in cand.index), budget=budget,
        swaps=swaps, n_sets_scored=n_scored,
        seconds=time.perf_counter() - t0, fit_seconds=search.fit_seconds_)
