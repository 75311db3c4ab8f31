"""The risk features of a predicted cell: their names, their formulas, and the pieces both
interval supports (:class:`~benchpress.predict.intervals.support.MatrixSupport` and its sparse
path, :class:`~benchpress.predict.intervals.cells_support.CellsSupport`) compute them from.

A cell (model i, benchmark j) is described by its prediction's start spread, how many
scores model i and benchmark j have, the in-sample RMS residual of row i and column j, the
Pearson r of model i with its most similar model that has a score on j, and ``|z(predicted)|``
(:data:`FEATURES`); the risk model of
:class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator` regresses on them.
"""

from __future__ import annotations

import numpy as np

from benchpress.predict.size_limits import LIMITS, SizeLimits
from benchpress.predict.transform import BenchmarkScales, ScaleTransform

__all__ = ["FEATURES", "LOGIT_RULE", "EPS", "point_size", "points_of_cells", "pair_corr",
           "pair_corr_moments", "nearest_similarity", "risk_features", "spread_in_z"]

#: Names of the risk features, in column order.
FEATURES = ("log_spread", "log_model_count", "log_benchmark_count", "model_fit_rms",
            "benchmark_fit_rms", "nearest_similarity", "abs_z")
#: Logit rule and margin (percentage points) of the interval space. Within the margin of
#: an end of its range a score counts as at the end, both ways: an actual score of 0 is read
#: as 0.5 when the calibration measures residuals, and a bound within 0.5 of an end is the
#: end itself (:func:`~benchpress.predict.intervals.calibrator.score_bounds`). With a margin
#: of 0.05, a model that solved nothing (CritPt, Terminal-Bench Hard: 4% of the later
#: releases' cells on the whole registry) lay 2.3 logits below a prediction of 0.5 and
#: outside almost every interval, and those cells' residuals widened everyone else's.
LOGIT_RULE, EPS = "percent_or_0_100", 0.5


def point_size(scales: BenchmarkScales, Y=None) -> np.ndarray:
    """One "point" per benchmark in score units, shape (n_benchmarks,): 1% of
    ``upper - lower`` if both are finite, else 1% of the observed range of ``Y``, else 1."""
    span = scales.upper - scales.lower
    if Y is not None:
        Y = np.asarray(Y, dtype=float)
        seen = ~np.isnan(Y).all(axis=0)
        lo = np.nanmin(np.where(seen, Y, 0.0), axis=0) if Y.size else 0.0
        hi = np.nanmax(np.where(seen, Y, 1.0), axis=0) if Y.size else 1.0
        span = np.where(np.isfinite(span), span, np.where(seen & (hi > lo), hi - lo, 100.0))
    return np.where(np.isfinite(span) & (span > 0), span / 100.0, 1.0)


def points_of_cells(scales: BenchmarkScales, y, cols, n_benchmarks: int) -> np.ndarray:
    """:func:`point_size` from observed cells ``y`` (n_cells,) in columns ``cols``."""
    lo, hi = np.full(n_benchmarks, np.inf), np.full(n_benchmarks, -np.inf)
    order = np.argsort(cols, kind="stable")
    c, v = cols[order], y[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if c.size else np.zeros(0, int)
    if c.size:
        lo[c[starts]] = np.minimum.reduceat(v, starts)
        hi[c[starts]] = np.maximum.reduceat(v, starts)
    seen = np.isfinite(lo)
    span = scales.upper - scales.lower
    span = np.where(np.isfinite(span), span, np.where(seen & (hi > lo), hi - lo, 100.0))
    return np.where(np.isfinite(span) & (span > 0), span / 100.0, 1.0)


def pair_corr_moments(A, Mb, B0, B2, *, min_overlap: int = 3) -> np.ndarray:
    """Pearson r between rows of ``A`` (n_a, p; NaN = missing) and rows of a matrix B given
    by its moments: mask ``Mb``, values with 0 where missing ``B0`` and their squares
    ``B2``, each (n_b, p). Computed on shared entries only; pairs with fewer than
    ``min_overlap`` shared entries get 0. Returns (n_a, n_b)."""
    Ma = (~np.isnan(A)).astype(float)
    A0 = np.nan_to_num(A)
    n = Ma @ Mb.T
    sa, sb = A0 @ Mb.T, Ma @ B0.T
    saa, sbb = (A0 * A0) @ Mb.T, Ma @ B2.T
    sab = A0 @ B0.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = n * sab - sa * sb
        var = (n * saa - sa * sa) * (n * sbb - sb * sb)
        r = cov / np.sqrt(var)
    return np.where((n >= min_overlap) & (var > 1e-12), np.nan_to_num(r), 0.0)


def pair_corr(A, B, min_overlap: int = 3) -> np.ndarray:
    """Pearson r between rows of A (n_a, p) and rows of B (n_b, p) on shared entries;
    NaN marks missing. Pairs with fewer than ``min_overlap`` shared entries get 0."""
    B0 = np.nan_to_num(B)
    return pair_corr_moments(A, (~np.isnan(B)).astype(float), B0, B0 * B0,
                             min_overlap=min_overlap)


def nearest_similarity(Zr, Z, obs, *, exclude_self: bool = False,
                       limits: SizeLimits = LIMITS) -> np.ndarray:
    """The nearest-model feature of rows ``Zr`` (n_rows, n_benchmarks, z space, NaN =
    missing) against training rows ``Z`` (n_models, n_benchmarks) with observed cells
    ``obs`` (same shape, bool): for each row and benchmark j, the largest Pearson r
    (floored at 0) with a candidate training model that has a score on j; shape (n_rows,
    n_benchmarks). With ``exclude_self``, ``Zr`` is ``Z``
    itself and a model is not its own neighbour.

    Candidates: every training model, or above ``limits.support_max_candidates`` a fixed
    seeded sample of that many (an approximation). Up to
    ``limits.support_exact_max_models`` training models the correlations are one product
    (as they always were: same figures to the bit); above it, blocks of
    ``limits.support_block_rows`` rows (the same formula; a BLAS may then sum in another
    order: last-bit differences), so the working memory is about block rows * n_models
    floats."""
    n_r, n_train = Zr.shape[0], Z.shape[0]
    cand = np.arange(n_train)
    if n_train > limits.support_max_candidates:
        cand = np.sort(np.random.default_rng(0).choice(n_train, limits.support_max_candidates,
                                                       replace=False))
    Zc = Z if cand.size == n_train else Z[cand]
    slot = np.full(n_train, -1)
    slot[cand] = np.arange(cand.size)
    step = n_r if n_train <= limits.support_exact_max_models else max(limits.support_block_rows, 1)
    out = np.zeros((n_r, obs.shape[1]))
    cols = [np.flatnonzero(obs[cand, j]) for j in range(obs.shape[1])]
    for start in range(0, n_r, max(step, 1)):
        stop = min(start + step, n_r)
        C = pair_corr(Zr[start:stop], Zc)
        if exclude_self:
            own = slot[start:stop]
            C[np.flatnonzero(own >= 0), own[own >= 0]] = 0.0
        for j, m in enumerate(cols):
            out[start:stop, j] = np.max(C[:, m], axis=1, initial=0.0)
    return out


def risk_features(spread_z, model_count, benchmark_count, model_rms, benchmark_rms, near,
                  zhat) -> np.ndarray:
    """The risk features of cells (n_cells, n_features), in the order of :data:`FEATURES`,
    from each cell's spread (z units), its model's and benchmark's score counts and
    in-sample RMS residuals, its nearest-model similarity and its z prediction (each
    (n_cells,))."""
    return np.column_stack([
        np.log(spread_z + 1e-3), np.log1p(model_count), np.log1p(benchmark_count), model_rms,
        benchmark_rms, near, np.abs(np.nan_to_num(zhat))])


def spread_in_z(transform: ScaleTransform, P, spread) -> np.ndarray:
    """Half the width of ``P +- spread`` (score units) in the z space of ``transform``:
    a prediction's start spread as the risk features read it (same shape as ``P``)."""
    s = np.nan_to_num(np.asarray(spread, dtype=float))
    hi, lo = transform.transform(P + s), transform.transform(P - s)
    return np.nan_to_num(np.abs(hi - lo) / 2.0)
