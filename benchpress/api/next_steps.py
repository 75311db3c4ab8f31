"""What to do after a prediction: which benchmark to run next, and which known models
the new one sits nearest to (`FittedModel.nearest`, as `BenchPress.nearest_models`).

Both work on a :class:`~benchpress.api.BenchPress` and its one fit, through its public
`predict_rows` (the fold-in every `predict` and `compare` uses), so the app's "run this
next" and "nearest models" panels rest on the same numbers as `predict`.
"""

from __future__ import annotations

import math

import numpy as np

from benchpress.predict.intervals.features import point_size
from benchpress.predict.size_limits import LIMITS

__all__ = ["run_next", "nearest_known"]


def _num(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def run_next(bp, row: np.ndarray, out: dict, *, top: int = 5, covariates=None,
             max_candidates: int = LIMITS.next_step_candidates) -> dict:
    """Which unobserved benchmark would narrow the other intervals most.

    For each candidate (the `max_candidates` unobserved benchmarks with the most scores in
    the matrix, each one more fold-in row), the row is folded in again with that benchmark set to its predicted
    value; the gain is the summed 90% interval width (in points, 1% of each benchmark's
    range) of the other unobserved benchmarks, before minus after.

    Parameters
    ----------
    bp : BenchPress
    row : ndarray of shape (n_benchmarks,)
        The given scores, NaN elsewhere.
    out : dict of ndarray of shape (n_benchmarks,)
        ``predicted``, ``lower``, ``upper`` of the row (its `predict`).
    covariates : ndarray of shape (n_features,), optional
        The new model's covariate row, when its prediction was given metadata.
    """
    m = bp.matrix
    col_count = (~np.isnan(m.values)).sum(axis=0)
    unobs = np.isnan(row) & np.isfinite(out["lower"])
    cand = np.flatnonzero(unobs)
    cand = cand[np.argsort(-col_count[cand], kind="stable")][:max_candidates]
    if cand.size == 0:
        return {"best": None, "ranked": [], "n_candidates": 0}
    R = np.tile(row, (cand.size, 1))
    R[np.arange(cand.size), cand] = out["predicted"][cand]
    after = bp.predict_rows(R, covariates=None if covariates is None
                            else [covariates] * cand.size)
    points = point_size(m.scales, m.values)
    w0 = (out["upper"] - out["lower"]) / points
    w1 = (after["upper"] - after["lower"]) / points
    others = np.tile(unobs, (cand.size, 1))
    others[np.arange(cand.size), cand] = False
    gain = np.nansum(np.where(others, w0[None, :] - w1, 0.0), axis=1)
    width_before = np.nansum(np.where(others, w0[None, :], 0.0), axis=1)
    order = np.argsort(-gain, kind="stable")
    costs = bp.benchmark_costs()
    ranked = [{"benchmark_id": m.benchmark_ids[cand[k]],
               "name": m.benchmarks["name"][int(cand[k])],
               "width_reduction_points": float(gain[k]),
               "width_reduction_share": float(gain[k] / width_before[k]) if width_before[k] else None,
               "cost": _num(costs[cand[k]])} for k in order[:top]]
    return {"best": ranked[0], "ranked": ranked, "n_candidates": int(cand.size)}


def nearest_known(bp, row: np.ndarray, n: int = 5) -> list[dict]:
    """The `n` known models nearest to `row` (`FittedModel.nearest`, the definition
    `BenchPress.nearest_models` gives), each with its scores on the given benchmarks
    (observed where measured, else predicted).

    Parameters
    ----------
    bp : BenchPress
    row : ndarray of shape (n_benchmarks,)
        The given scores, NaN elsewhere.

    Returns
    -------
    list of dict
        model_id, distance_z, n_measured (of the n_given benchmarks) and scores.
    """
    fit, m = bp.fitted, bp.matrix
    given = np.flatnonzero(~np.isnan(row))
    pos = {x: i for i, x in enumerate(m.model_ids)}
    return [{"model_id": r["model_id"], "distance_z": float(r["distance"]),
             "n_measured": int(r["n_measured"]), "n_given": int(given.size),
             "scores": {m.benchmark_ids[j]: _num(fit.completed[pos[r["model_id"]], j])
                        for j in given}}
            for r in fit.nearest(row, n).iter_rows(named=True)]
