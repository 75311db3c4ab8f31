"""Calibrated 90% prediction intervals and trust probabilities for predicted scores.

Method (split-conformal scaling of a per-cell risk estimate, computed in a standardized
space so that intervals respect every benchmark's range):

1. **Space.** A :class:`ScaleTransform` fitted on the training matrix (logit for percent
   and other 0-100 scales, then z-scores); a residual is ``r = z(actual) - z(predicted)``.
2. **Risk features** of a cell (model i, benchmark j), from the training matrix: ensemble
   spread of the prediction, how many scores model i and benchmark j have, the in-sample
   RMS residual of row i and column j, the Pearson r of model i with its most similar
   model that has a score on j, and ``|z(predicted)|``
   (:mod:`~benchpress.predict.intervals.features`; their support, the arrays or the
   on-demand computation behind them: :mod:`~benchpress.predict.intervals.support`).
3. **Risk model.** Ridge regression of ``log(|r| + 0.01)`` on the features; the risk is
   ``s = exp(x @ coef_)``.
4. **Conformal scaling.** On held-out data the calibration never trained on, the
   half-width is ``q * s`` with ``q`` the ``ceil((n + 1)(1 - alpha)) / n`` quantile of
   ``|r / s|``; ``z(predicted) +- q s`` is mapped back through the inverse transform and
   clipped to ``[lower, upper]`` (percent intervals stay in 0-100, asymmetric near ends).
   Two regimes are calibrated separately: missing cells of known models
   (:func:`heldout_records`, per-model k-fold) and new models folded in from a few
   scores (:func:`new_model_records`). In the cells regime, a cell of a benchmark that
   no source of the model's scores reports
   (:func:`~benchpress.predict.intervals.calibrator.out_of_reach`: a model one
   leaderboard lists, on another's benchmarks) takes a quantile of its own, calibrated
   on whole sources held out of models (:func:`source_block_folds`).
5. **Trust** = P(|actual - predicted| <= 10 points), a *point* being 1% of the
   benchmark's range (1 pp on percent; 1% of the observed range when unbounded): the
   window is mapped to z units and read off the empirical distribution of ``r / s``.

:func:`calibrate` fits an
:class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator` for an unfitted predictor object
(every held-out fit is a :func:`~benchpress.predict.estimator.clone` of it);
:func:`complete_intervals` and :func:`fold_in_intervals` apply it. Coverage on held-out
data: :mod:`benchpress.predict.evaluation.coverage`.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import TooLittleData, UsageError
from benchpress.predict.estimator import BasePredictor, check_scores, clone
from benchpress.predict.evaluation.folds import Folds, make_folds
from benchpress.predict.evaluation.heldout import fold_fits
from benchpress.predict.intervals.calibrator import (
    MIN_CALIBRATION_CELLS, REGIMES, IntervalCalibrator, out_of_reach,
)
from benchpress.predict.intervals.features import point_size
from benchpress.predict.intervals.support import MatrixSupport
from benchpress.predict.models.side_info import covariate_kwargs
from benchpress.predict.models.sparse_als import use_sparse
from benchpress.predict.size_limits import LIMITS, SizeLimits
from benchpress.predict.transform import BenchmarkScales

__all__ = ["heldout_records", "new_model_records", "calibrate", "complete_intervals",
           "fold_in_intervals", "fold_in_rows", "source_block_folds", "temporal_groups",
           "UNDATED_SHARE", "TEMPORAL_GIVEN", "MIN_CALIBRATION_MODELS"]

#: the fewest models with 2 or more scores a matrix must hold for held-out fits to
#: calibrate intervals on (:func:`calibrate`)
MIN_CALIBRATION_MODELS = 3


def _intervals(support: MatrixSupport, calibrator: IntervalCalibrator, zhat, X, shape,
               out=None):
    cols = np.tile(np.arange(shape[1]), shape[0])
    out = None if out is None else np.ravel(out)
    ok = np.isfinite(zhat)
    z = np.where(ok, zhat, 0.0)
    pts = support.points()[cols]
    lower, upper = calibrator.predict_interval(z, X, support.transform, cols, out)
    trust = calibrator.trust(z, X, support.transform, cols, pts, out)
    nan = np.full(z.shape, np.nan)
    return {k: np.where(ok, v, nan).reshape(shape)
            for k, v in (("lower", lower), ("upper", upper), ("trust", trust))}


def complete_intervals(predictor: BasePredictor, calibrator: IntervalCalibrator,
                       support: MatrixSupport | None = None, *, rows=None) -> dict:
    """Intervals of every cell of a fitted predictor's completion: a dict of
    (n_models, n_benchmarks) arrays ``predicted`` (also for observed cells), ``lower``,
    ``upper`` and ``trust``; NaN where there is no prediction. ``support`` may reuse a
    :class:`MatrixSupport` of ``predictor``. ``rows`` (model indices) limits the work
    to those models: the arrays are then (len(rows), n_benchmarks), equal to those rows
    of the full result. The cells' risk features are made ``support_block_rows`` models at
    a time (the support's limits), so memory stays bounded on a large registry (same
    numbers). A cell out of its
    model's source reach takes the calibrator's quantile for those (:meth:`IntervalCalibrator.out_cells`)."""
    support = support or MatrixSupport(predictor)
    n_m, n_b = support.predictor.Y_.shape
    r = np.arange(n_m) if rows is None else np.asarray(rows, dtype=np.int64)
    if support.sparse:
        pred = {"predicted": support.predictor.complete_rows(r, keep_observed=False)}
    parts, step = [], support.limits.support_block_rows
    for block in np.split(r, np.arange(step, r.size, step)):
        i, j = np.repeat(block, n_b), np.tile(np.arange(n_b), block.size)
        zhat, X = support.cells(i, j)
        out = calibrator.out_cells(~np.isnan(support.predictor.Y_[block]))
        parts.append(_intervals(support, calibrator, zhat, X, (block.size, n_b), out))
    return {"predicted": pred["predicted"] if support.sparse else support.P[r],
            **{k: np.vstack([p[k] for p in parts]) if parts else np.full((0, n_b), np.nan)
               for k in ("lower", "upper", "trust")}}


def fold_in_intervals(predictor: BasePredictor, calibrator: IntervalCalibrator | None, scores,
                      support: MatrixSupport | None = None, *, covariates=None) -> dict:
    """Fold-in predictions with intervals for new models.

    ``scores`` (n_benchmarks,) or (n_rows, n_benchmarks) are known scores (NaN =
    unknown); ``predictor`` is fitted and ``calibrator`` calibrated for the same method
    (:func:`calibrate`; None: no intervals, lower, upper and trust NaN); ``support`` may
    reuse a :class:`MatrixSupport` of ``predictor``.
    ``covariates`` reach the fold-in of predictors that accept them: (n_rows, n_features),
    or per row a covariate row or None (that row is folded in without, as a model given
    without metadata is; see :func:`fold_in_rows`).
    Returns a dict of arrays shaped like ``scores``: ``predicted, lower, upper, trust``.
    """
    S = np.asarray(scores, dtype=float)
    S2 = np.atleast_2d(S)
    P, spread = fold_in_rows(predictor, S2, covariates)
    if calibrator is None:  # point predictions alone (a matrix too small to calibrate on)
        out = {"predicted": P, **{k: np.full(S2.shape, np.nan) for k in ("lower", "upper", "trust")}}
        return {k: v[0] for k, v in out.items()} if S.ndim == 1 else out
    support = support or MatrixSupport(predictor)
    zhat, X = support.new_rows(S2, P, spread)
    out = {"predicted": P, **_intervals(support, calibrator, zhat, X, S2.shape)}
    return {k: v[0] for k, v in out.items()} if S.ndim == 1 else out


def fold_in_rows(predictor, S2, covariates=None):
    """Fold-in predictions and spread (None for predictors without one) of rows ``S2``
    (n_rows, n_benchmarks), with the rows' ``covariates`` when the predictor accepts them:
    (n_rows, n_features), or per row a covariate row or None (that row without; the rows
    with covariates are folded in again with them, which changes others' numbers by float
    rounding at most)."""
    def one(rows, extra):
        if hasattr(predictor, "complete_spread"):
            return predictor.fold_in(S2[rows], return_spread=True, **extra)
        return predictor.fold_in(S2[rows], **extra), None

    if covariates is None or not getattr(predictor, "accepts_covariates", False):
        return one(slice(None), {})
    has = np.array([c is not None for c in covariates], dtype=bool)
    if has.all():
        return one(slice(None), covariate_kwargs(predictor, np.atleast_2d(
            np.asarray(list(covariates), dtype=float))))
    P, spread = one(slice(None), {})
    if has.any():
        X = np.vstack([c for c in covariates if c is not None])
        P_has, spread_has = one(has, covariate_kwargs(predictor, X))
        P[has] = P_has
        if spread is not None:
            spread[has] = spread_has
    return P, spread


def _records(parts: list) -> dict:
    keys = ("fold", "i", "j", "actual", "predicted", "zhat", "residual_z", "X", "model_count",
            "point", "out")
    rec = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in keys}
    rec["transforms"] = [p["transform"] for p in parts]
    return rec


def _part(k, support, Y, i, j, predicted, zhat, X, counts, pts, out=None) -> dict:
    za = support.transform.transform(Y[i, j], cols=j)
    keep = np.isfinite(zhat)
    vals = {"fold": np.full(i.size, k), "i": i, "j": j, "actual": Y[i, j],
            "predicted": predicted, "zhat": zhat, "residual_z": za - zhat, "X": X, "model_count": counts,
            "point": pts[j], "out": np.zeros(i.size, dtype=bool) if out is None else out}
    return {**{n: v[keep] for n, v in vals.items()}, "transform": support.transform}


def heldout_records(predictor: BasePredictor, Y, scales: BenchmarkScales, folds: Folds, *,
                    covariates=None, reach=None) -> dict:
    """Cells regime: refit a clone of the unfitted ``predictor`` with each fold hidden;
    collect the held-out cells.

    Returns a dict of arrays of shape (n_cells,) (``X``: (n_cells, n_features)): ``fold,
    i, j, actual, predicted, zhat`` (prediction in the interval space), ``residual_z,
    X, model_count`` (the model's training score count), ``point``, ``out`` (the cell
    is out of its model's source reach in the fold's training matrix, given ``reach``
    (n_sources, n_benchmarks) bool; all False without); and ``transforms``, the
    interval space of each fold. Held-out cells must be observed in ``Y``
    (:func:`~benchpress.predict.evaluation.heldout.fold_fits`). ``covariates`` (n_models,
    n_features) reach every fit of a predictor that accepts them.
    """
    Y = check_scores(Y, scales)
    pts, parts, obs = point_size(scales, Y), [], ~np.isnan(Y)
    for k, i, j, fitted in fold_fits(predictor, Y, scales, folds,
                                     **covariate_kwargs(predictor, covariates)):
        support = MatrixSupport(fitted)
        zhat, X = support.cells(i, j)
        out = None
        if reach is not None:
            trained = obs.copy()
            trained[i, j] = False
            out = out_of_reach(trained, reach)[i, j]
        parts.append(_part(k, support, Y, i, j, support.predicted_at(i, j), zhat, X,
                           support.model_counts[i], pts, out))
    return _records(parts)


def source_block_folds(observed, reach, *, n_folds: int = 2, seed: int = 1001,
                       min_left: int = 3) -> Folds:
    """Held-out cells that look like a model before a second source lists it: for each
    model with scores on the benchmarks of two or more sources, one of those sources at
    random, and every score of the model on that source's benchmarks hidden (only where
    at least ``min_left`` of its scores stay). The models are split at random into
    ``n_folds`` folds. ``observed`` (n_models, n_benchmarks) bool; ``reach``
    (n_sources, n_benchmarks) bool as in :func:`out_of_reach`. No folds with fewer than
    two sources."""
    obs = np.asarray(observed, dtype=bool)
    R = np.asarray(reach, dtype=bool)
    in_source = obs.astype(np.int64) @ R.T.astype(np.int64)  # (n_models, n_sources)
    candidate = (in_source > 0) & (obs.sum(axis=1)[:, None] - in_source >= min_left)
    rows = np.flatnonzero(candidate.any(axis=1))
    rng = np.random.default_rng(seed)
    if R.shape[0] < 2 or rows.size < n_folds:
        return Folds((), (), ())
    keys = np.where(candidate[rows], rng.random((rows.size, R.shape[0])), np.inf)
    hidden = obs[rows] & R[keys.argmin(axis=1)]  # (n_rows, n_benchmarks)
    fold = rng.permutation(rows.size) % n_folds
    cells = []
    for f in range(n_folds):
        ii, jj = np.nonzero(hidden[fold == f])
        cells.append(np.column_stack([rows[fold == f][ii], jj]).astype(np.int64))
    return Folds(tuple(cells), (seed,) * n_folds, tuple(range(n_folds)))


def temporal_groups(release_dates, eligible, n_groups: int = 5, min_group: int = 5):
    """Calibration groups that look like the future: the models released in each of the
    last ``n_groups`` months that hold at least ``min_group`` eligible models, each paired
    with the models released before that month (its training rows). ``eligible`` (bool,
    n_models) marks the models with enough scores. Returns ``[(test_rows, train_mask)]``,
    empty when too few models are dated."""
    dates = np.array([str(d)[:7] if d else "" for d in release_dates])
    months = sorted({d for d in dates[eligible] if len(d) == 7}, reverse=True)
    out = []
    for month in months:
        test = np.flatnonzero(eligible & (dates == month))
        train = (dates != "") & (dates < month)
        if test.size >= min_group and train.sum() >= 3 * test.size:
            out.append((test, train))
        if len(out) == n_groups:
            break
    return out[::-1]


#: With at least this share of the eligible models undated, the new-model calibration
#: adds random groups of the undated ones to its temporal groups (LiveBench gives no
#: release dates: without them its models' intervals covered 51-76% of later truths).
UNDATED_SHARE = 0.2


def _random_groups(rows, n_groups: int, rng) -> list:
    """``rows`` split at random into ``n_groups`` held-out groups, each fitted on every
    other model: ``[(test_rows, None)]``."""
    group = rng.permutation(rows.size) % n_groups
    return [(rows[group == g], None) for g in range(n_groups)]


#: Known-score counts of the temporal calibration groups (cycled over their models): the
#: counts `predict --scores` meets, from one score up.
TEMPORAL_GIVEN = (1, 3, 5, 8)


def new_model_records(predictor: BasePredictor, Y, scales: BenchmarkScales, *,
                      n_groups: int = 5, given=(3, 5, 8, 12), seed: int = 1001,
                      covariates=None, release_dates=None, memo=None) -> dict:
    """New-model regime: whole models are held out (``n_groups`` groups, one fit each of a
    clone of the unfitted ``predictor``);
    each is folded in from ``given[k]`` random known scores (cycled over models) and its
    other scores are predicted. Same keys as :func:`heldout_records`. ``covariates``
    (n_models, n_features): each fit gets the kept rows', each fold-in the held-out
    models' own rows (predictors that accept them only).

    With ``release_dates`` (one per model, ISO or None), the groups are temporal
    (:func:`temporal_groups`: each of the last months' models, fitted on the models
    released before it, revealing 1, 3, 5 or 8 scores): the future the intervals are used
    for, where new models sit above the population. Without enough dated models, random."""
    Y = check_scores(Y, scales)
    obs, pts, parts = ~np.isnan(Y), point_size(scales, Y), []
    rng = np.random.default_rng(seed)
    groups = []
    if release_dates is not None:
        given = TEMPORAL_GIVEN
        eligible = obs.sum(axis=1) >= min(given) + 2
        groups = temporal_groups(release_dates, eligible, n_groups)
        if groups:  # models without a date (a leaderboard that gives none) are held out at
            # random beside the dated months, so that their benchmarks are calibrated too
            undated = eligible & np.array([not d for d in release_dates])
            if undated.sum() >= UNDATED_SHARE * eligible.sum():
                groups += _random_groups(np.flatnonzero(undated), n_groups, rng)
    if not groups:
        groups = _random_groups(np.flatnonzero(obs.sum(axis=1) >= min(given) + 2), n_groups,
                                rng)
    for g, (mine, train) in enumerate(groups):
        keep = np.ones(Y.shape[0], dtype=bool) if train is None else train.copy()
        keep[mine] = False
        extra = covariate_kwargs(predictor, covariates, keep)
        if memo is None:
            support = MatrixSupport(clone(predictor).fit(Y[keep], scales, **extra))
        else:  # the fits and supports a memo made before on the same rows (the same numbers)
            support = memo.support(memo.fit(predictor, Y[keep], scales, **extra), MatrixSupport)
        k = np.asarray(given)[np.arange(mine.size) % len(given)]
        keys = np.where(obs[mine], rng.random((mine.size, Y.shape[1])), np.inf)
        known = obs[mine] & (np.argsort(np.argsort(keys, axis=1), axis=1) < k[:, None])
        S = np.where(known, Y[mine], np.nan)
        X_mine = covariate_kwargs(predictor, covariates, mine).get("covariates")
        P, spread = fold_in_rows(support.predictor, S, X_mine)
        zhat, X = support.new_rows(S, P, spread)
        ii, jj = np.nonzero(obs[mine] & ~known)
        flat = ii * Y.shape[1] + jj
        parts.append(_part(g, support, Y, mine[ii], jj, P[ii, jj], zhat[flat], X[flat],
                           known.sum(axis=1)[ii], pts))
    return _records(parts)


def calibrate(predictor: BasePredictor, Y, scales: BenchmarkScales, *, regime: str = "cells",
              folds: Folds | None = None, alpha: float = 0.1, seed: int = 1001,
              n_seeds: int = 2, n_folds: int = 3, covariates=None,
              release_dates=None, reach=None, limits: SizeLimits = LIMITS, memo=None
              ) -> IntervalCalibrator:
    """Fit an :class:`IntervalCalibrator` for the unfitted ``predictor`` on held-out data
    of ``Y`` (each held-out fit is a clone of it).

    ``regime="cells"``: missing cells of known models (for completions), on this
    project's own random per-model partitions (seeds ``seed .. seed + n_seeds - 1``,
    ``n_folds`` folds each; never the published ones) unless ``folds`` is given.
    ``regime="new_models"``: new models folded in from a few scores
    (:func:`new_model_records` with ``seed``; temporal groups with ``release_dates``).
    ``covariates`` (n_models, n_features) reach every fit and fold-in of a predictor that
    accepts them. In the cells regime, ``reach`` (n_sources, n_benchmarks) bool, which
    sources report each benchmark, adds two fits with whole sources held out of models
    (:func:`source_block_folds`, ``seed``) and a quantile of their own for cells out of
    a model's source reach (:meth:`IntervalCalibrator.fit_out`). A matrix of the cells
    solver with more than ``limits.calibration_max_models`` models is calibrated on a
    seeded sample of that many (its intervals then err on the wide side). ``memo`` (a
    :class:`~benchpress.predict.evaluation.fit_memo.FitMemo`, new-model regime only) hands out the
    groups' fits already made on the same rows (the temporal yardstick's cutoffs share
    them); the same numbers.
    """
    Y = check_scores(Y, scales)
    if regime not in REGIMES:
        raise UsageError(f"unknown regime {regime!r}; choose 'cells' or 'new_models'")
    # held-out fits of one or two models are no fits (a side fit of one model has no
    # covariate to learn from): said at once, before any of them runs
    measured = int(((~np.isnan(Y)).sum(axis=1) >= 2).sum())
    if measured < MIN_CALIBRATION_MODELS or (~np.isnan(Y)).sum() < MIN_CALIBRATION_CELLS:
        raise TooLittleData(f"calibrating intervals needs at least {MIN_CALIBRATION_MODELS} "
                            f"models with 2 or more scores and {MIN_CALIBRATION_CELLS} scores; "
                            f"the matrix has {measured} and {int((~np.isnan(Y)).sum())}")
    most = limits.calibration_max_models
    if folds is None and use_sparse(*Y.shape, limits=limits) and Y.shape[0] > most:
        keep = np.sort(np.random.default_rng(seed).choice(Y.shape[0], most, replace=False))
        Y = Y[keep]
        if covariates is not None:
            covariates = np.asarray(covariates)[keep]
        if release_dates is not None:
            release_dates = np.asarray(release_dates, dtype=object)[keep]
    if regime == "new_models":
        rec = new_model_records(predictor, Y, scales, seed=seed, covariates=covariates,
                                release_dates=release_dates, memo=memo)
    else:
        if folds is None:
            folds = make_folds(~np.isnan(Y), n_folds=n_folds, seed=seed, n_seeds=n_seeds)
        rec = heldout_records(predictor, Y, scales, folds, covariates=covariates, reach=reach)
    cal = IntervalCalibrator(alpha, regime=regime).fit(rec["residual_z"], rec["X"],
                                                       cols=rec["j"], n_benchmarks=Y.shape[1])
    if regime == "cells" and reach is not None:
        blocks = source_block_folds(~np.isnan(Y), reach, seed=seed)
        if len(blocks):
            more = heldout_records(predictor, Y, scales, blocks, covariates=covariates,
                                   reach=reach)
            cal.fit_out(*(np.concatenate([rec[k], more[k]]) for k in ("residual_z", "X", "out")),
                        reach)
    return cal
