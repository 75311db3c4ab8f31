"""The blends: a low-rank completion and the nearest models, weighted by how much is known.

ALS (rank 4 with pairwise regression, :class:`~benchpress.predict.models.als_predictor.ALSPredictor`)
is best on models with many scores: the registry's missing cells, the paper's folds. A
model known from only a few scores is another matter. Its fold-in is shrunk toward the
population, and new releases sit above the population, so ALS predicts them too low.
Its nearest registered models, each shifted by its mean gap to the new model
(:class:`~benchpress.predict.models.knn.KNNModels` with ``offset=True``), are not shrunk, and the
registry is full of near-siblings (effort levels, previews, sizes of one family).

A blend averages the two in z units, with the nearest models' weight set by how many
scores the model has (``knn_weights`` over the buckets ``KNOWN_EDGES``), then mixes in a
regression of each benchmark on the model's known ones over the models near it
(``reg_weights``; :func:`~benchpress.predict.models.knn.local_regression`), which follows how a
benchmark moves with the known ones where the average only copies the neighbours' level.
That half is :class:`NeighbourMix`, a part both predictors here hold (what they do with
it is written once, in ``_NeighbourBlend``, the first of their bases). The weights were
chosen on the temporal yardstick (``benchpress evaluate --temporal``, README "Forecasts
that hold up") on its early cutoffs and checked on the later ones and on later releases.
The spread of a blended cell (the feature its interval grows with) adds the disagreement
of the low-rank half and the nearest models to the low-rank half's spread.

* :class:`SideBlendPredictor` (``make_predictor("default")``, the default since
  2026-12-02): side information (:class:`~benchpress.predict.models.side_info.SideInfoPredictor`, what
  is known of a model before its scores) under the nearest models.
* :class:`BlendPredictor` (``make_predictor("blend")``, the default of 2026-12-01): the
  rank-4 ALS alone under the nearest models; what the default gives a model without
  metadata.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError
from benchpress.predict.base import check_scores
from benchpress.predict.models.knn import KNNModels, local_regression
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.models.side_info import SideInfoPredictor
from benchpress.predict.size_limits import LIMITS

__all__ = ["BlendPredictor", "SideBlendPredictor", "NeighbourMix", "KNOWN_EDGES",
           "KNN_WEIGHTS", "REG_WEIGHTS", "REG_NOISE", "REG_ALPHA", "knn_weight"]

#: Buckets of a model's known-score count: (0, 1], (1, 3], (3, 5], (5, 8], (8, inf).
KNOWN_EDGES = (1, 3, 5, 8)
#: The nearest models' weight per bucket (chosen on the temporal yardstick's early cutoffs;
#: at one score 0.7, between what side information (0.5) and als4 (0.9) want under them, since
#: a model given without metadata is folded in on als4's rows).
KNN_WEIGHTS = (0.7, 0.5, 0.4, 0.3, 0.35)
#: The local regression's largest weight per bucket, in the mix of the two halves (a model
#: with more than 8 scores is left to the low-rank half and its neighbours). A cell's weight
#: is this times ``reg_noise / (reg_noise + v)``, ``v`` the regression's residual variance
#: near the model on that benchmark: inverse-variance weighting against the rest of the
#: blend, taken to have variance ``REG_NOISE`` (z units squared). Chosen on the temporal
#: yardstick's early cutoffs with the ridge penalty ``REG_ALPHA`` (README, "Forecasts that
#: hold up"); until 2026-12-05 a fixed 0.5, penalty 0.3.
REG_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 0.0)
REG_NOISE = 0.05
REG_ALPHA = 0.03
#: The nearest models per benchmark are looked for among this many nearest models
#: (:mod:`benchpress.predict.size_limits`); a benchmark none of them scored is ALS alone.
KNN_CANDIDATES = LIMITS.knn_candidates


def knn_weight(n_known, weights) -> np.ndarray:
    """The nearest models' weight for models with ``n_known`` scores (array in, array out)."""
    idx = np.searchsorted(np.asarray(KNOWN_EDGES), np.asarray(n_known), side="left")
    return np.asarray(weights, dtype=float)[np.minimum(idx, len(weights) - 1)]


class NeighbourMix:
    """The nearest-models half of a blend: not a predictor, a part that a blended
    predictor fits beside its low-rank half and mixes that half's predictions with.

    Two answers come from the fitted models: the average of the nearest ones, each shifted
    by its gap to the row (:func:`~benchpress.predict.models.knn.neighbour_average`), and a
    regression of each benchmark on the row's known ones over the models near it
    (:func:`~benchpress.predict.models.knn.local_regression`). The first is mixed into the
    low-rank half with ``weights``, the second into that mix with ``reg_weights``, both by
    the row's known-score count; the regression's weight shrinks where it fits the models
    near the row loosely (``reg_noise``).

    Parameters
    ----------
    weights : tuple of 5 floats in [0, 1]
        Weight of the nearest models for a model with at most 1, 3, 5, 8 and more known
        scores (:data:`KNOWN_EDGES`).
    k, min_shared : int
        Neighbours per benchmark, and the scores a neighbour must share with the row.
    reg_weights : tuple of 5 floats in [0, 1]
        Largest weight of the local regression, per the same buckets (0: not computed).
    reg_alpha, reg_bandwidth : float
        Its ridge penalty and kernel width (z units).
    reg_noise : float >= 0
        The variance (z units squared) the rest of the mix is taken to have: a cell's
        regression weight is its bucket's times ``reg_noise / (reg_noise + v)``, ``v`` the
        regression's residual variance near the row on that benchmark. 0: the bucket's
        weight as it is, in every cell.
    logit_rule : str
        The predictor's z space (:data:`~benchpress.scales.LOGIT_RULES`).

    Attributes
    ----------
    models_ : KNNModels or None
        The fitted nearest models (the training rows); None when fitted with
        ``enabled=False`` (the cells solver, where the neighbour search of every completion
        would cost more than the fit): then every mix returns the low-rank half as it is.
    transform_ : ScaleTransform
        The predictor's fitted z transform.
    """

    def __init__(self, weights=KNN_WEIGHTS, k: int = 5, min_shared: int = 3,
                 reg_weights=REG_WEIGHTS, reg_alpha: float = REG_ALPHA,
                 reg_bandwidth: float = 0.5, reg_noise: float = REG_NOISE,
                 logit_rule: str = "percent"):
        self.weights, self.k, self.min_shared, self.logit_rule = weights, k, min_shared, logit_rule
        self.reg_weights, self.reg_alpha, self.reg_bandwidth = reg_weights, reg_alpha, reg_bandwidth
        self.reg_noise = reg_noise

    def fit(self, Y: np.ndarray, scales, transform, *, enabled: bool = True) -> "NeighbourMix":
        """Hold the training rows ``Y`` (n_models, n_benchmarks, score units) as the nearest
        models, in the predictor's fitted ``transform``."""
        for name, given in (("knn_weights", self.weights), ("reg_weights", self.reg_weights)):
            w = tuple(float(x) for x in np.atleast_1d(given))
            if len(w) != len(KNOWN_EDGES) + 1 or not all(0.0 <= x <= 1.0 for x in w):
                raise UsageError(f"{name} must be {len(KNOWN_EDGES) + 1} numbers in [0, 1], "
                                 f"got {given}")
        if not (float(self.reg_alpha) >= 0.0 and float(self.reg_bandwidth) > 0.0
                and float(self.reg_noise) >= 0.0):
            raise UsageError(f"reg_alpha and reg_noise must be >= 0 and reg_bandwidth > 0, "
                             f"got {self.reg_alpha}, {self.reg_noise} and {self.reg_bandwidth}")
        self.transform_ = transform
        self.models_ = None
        if enabled and Y.shape[0]:
            self.models_ = KNNModels(int(self.k), min_shared=int(self.min_shared), offset=True,
                                     weighting="distance", candidates=KNN_CANDIDATES,
                                     logit_rule=self.logit_rule
                                     ).fit(Y, scales, transform=transform)
        return self

    def mix(self, P_base: np.ndarray, Zq: np.ndarray, exclude=None):
        """Blend predictions ``P_base`` (score units) of query rows ``Zq`` (z units, NaN
        unknown; both (n_rows, n_benchmarks)) with their nearest models; returns (blend,
        |base - kNN|) in score units."""
        if self.models_ is None:
            return P_base, np.zeros_like(P_base)
        tf = self.transform_
        n_known = (~np.isnan(Zq)).sum(axis=1)
        Zk = self.models_.predict_z(Zq, exclude=exclude, fallback=False)
        Za = tf.transform(P_base)
        w = knn_weight(n_known, self.weights)[:, None]
        w = np.where(np.isnan(Zk), 0.0, w)  # no neighbour scored it: the base alone
        Zk = np.where(np.isnan(Zk), Za, Zk)
        Zm = (1.0 - w) * Za + w * Zk
        a = knn_weight(n_known, self.reg_weights)
        Zr, noise = np.full(Zq.shape, np.nan), np.full(Zq.shape, np.nan)
        rows = np.flatnonzero(a > 0)
        if rows.size:
            Zr[rows], noise[rows] = local_regression(
                Zq[rows], self.models_.Z_, alpha=float(self.reg_alpha),
                bandwidth=float(self.reg_bandwidth),
                exclude=None if exclude is None else np.asarray(exclude)[rows])
        a = np.where(np.isnan(Zr), 0.0, a[:, None])
        v0 = float(self.reg_noise)
        if v0 > 0:  # inverse-variance: trust the regression where it fits the models near it
            a = a * v0 / (v0 + np.nan_to_num(noise))
        Zm = np.where(a > 0, (1.0 - a) * Zm + a * np.nan_to_num(Zr), Zm)
        # (cells with neither half keep the base value as it was, not its clipped logit)
        P = np.where((w > 0) | (a > 0), tf.to_scores(Zm), P_base)
        return P, np.abs(P_base - tf.to_scores(Zk))

    def mix_training(self, P_base: np.ndarray):
        """:meth:`mix` of the training rows themselves, each without itself."""
        if self.models_ is None:
            return P_base, np.zeros_like(P_base)
        return self.mix(P_base, self.models_.Z_, exclude=np.arange(self.models_.Z_.shape[0]))

    @staticmethod
    def spread(base_spread: np.ndarray, gap: np.ndarray) -> np.ndarray:
        """A blended cell's spread: the base's with half the two halves' gap added in
        quadrature (score units)."""
        return np.sqrt(base_spread * base_spread + 0.25 * gap * gap)

    def fold_in(self, scores, scales, base_fold_in, return_spread: bool):
        """New rows from known ``scores`` ((n_benchmarks,) or (n_rows, n_benchmarks)):
        ``base_fold_in(S2)`` (the low-rank half: (rows, spread) of 2-D rows ``S2``) mixed
        with the rows' nearest models; the same shapes as a predictor's ``fold_in``."""
        S = np.asarray(scores, dtype=float)
        S2 = check_scores(np.atleast_2d(S), scales)
        P, spread = base_fold_in(S2)
        P, gap = self.mix(P, self.transform_.transform(S2))
        spread = self.spread(spread, gap)
        if S.ndim == 1:
            P, spread = P[0], spread[0]
        return (P, spread) if return_spread else P


#: The blended predictors' parameters of their nearest-models half (NeighbourMix's).
NEIGHBOUR_PARAMS = ("knn_weights", "knn_k", "knn_min_shared", "reg_weights", "reg_alpha",
                    "reg_bandwidth", "reg_noise")


def _set_neighbour_params(predictor, **params) -> None:
    for name in NEIGHBOUR_PARAMS:
        value = params[name]
        # a tuple whatever came in (a JSON list from an artifact), so that parameters compare
        setattr(predictor, name, tuple(value) if isinstance(value, list) else value)


class _NeighbourBlend:
    """What both blended predictors do with their nearest-models half, whichever low-rank
    predictor follows this class in their bases (``super()`` is that half): fit it after
    the low-rank fit, blend the training rows with it, widen the spread by the halves'
    gap. Not a predictor on its own."""

    @classmethod
    def _param_names(cls) -> list[str]:
        # the low-rank class's own names (its signature, not this class's)
        low_rank = cls.__mro__[cls.__mro__.index(_NeighbourBlend) + 1]
        return sorted(set(low_rank._param_names()) | set(NEIGHBOUR_PARAMS))

    def _fit(self, Y: np.ndarray, scales) -> None:
        super()._fit(Y, scales)
        self.knn_ = self._fit_knn(Y, scales)

    def _fit_knn(self, Y: np.ndarray, scales) -> NeighbourMix:
        """The nearest-models half, once the low-rank half is fitted (the training rows'
        blend is made again when first asked for)."""
        self._training_mix = None
        mix = NeighbourMix(self.knn_weights, self.knn_k, self.knn_min_shared,
                           self.reg_weights, self.reg_alpha, self.reg_bandwidth,
                           self.reg_noise, self.logit_rule)
        return mix.fit(Y, scales, self.transform_, enabled=not self.uses_cells())

    def _mix_training(self):
        """The training rows blended (each without itself) and the halves' gap, made once."""
        if self._training_mix is None:
            self._training_mix = self.knn_.mix_training(super()._predict())
        return self._training_mix

    def _predict(self) -> np.ndarray:
        if self.knn_.models_ is None:
            return super()._predict()
        return self._mix_training()[0]

    def complete_spread(self) -> np.ndarray:
        """The low-rank half's spread with the two halves' disagreement added in quadrature
        (score units, (n_models, n_benchmarks))."""
        if self.knn_.models_ is None:
            return super().complete_spread()
        return NeighbourMix.spread(super().complete_spread(), self._mix_training()[1])


class BlendPredictor(_NeighbourBlend, ALSPredictor):
    """The rank-4 ALS and the nearest models blended in z units by known-score count.

    Parameters
    ----------
    knn_weights : tuple of 5 floats in [0, 1]
        Weight of the nearest models for a model with at most 1, 3, 5, 8 and more known
        scores (:data:`KNOWN_EDGES`).
    knn_k : int, default 5
        Neighbours per benchmark.
    knn_min_shared : int, default 3
    reg_weights : tuple of 5 floats in [0, 1]
        Weight of the local regression over the nearest models, per the same buckets.
    reg_alpha, reg_bandwidth, reg_noise : float, default 0.03, 0.5, 0.05
        Its ridge penalty, kernel width and the variance its weight is set against
        (:class:`NeighbourMix`).
    method : str, default "blend"
        The name in output (``make_predictor("blend")``; the rank-4 ALS alone is
        ``make_predictor("als4")``).
    **als_params
        The ALS half's parameters (:class:`ALSPredictor`; ``PRESETS["default"]``).

    Attributes
    ----------
    knn_ : NeighbourMix
        The fitted nearest-models half; on the sparse path (a matrix of
        ``LIMITS.cells_solver_min_cells`` cells or more) it holds no models and the
        blend is ALS alone.
    """

    def __init__(self, rank: int = 4, *, knn_weights: tuple = KNN_WEIGHTS, knn_k: int = 5,
                 knn_min_shared: int = 3, reg_weights: tuple = REG_WEIGHTS,
                 reg_alpha: float = REG_ALPHA, reg_bandwidth: float = 0.5,
                 reg_noise: float = REG_NOISE, method: str = "blend",
                 **als_params):
        super().__init__(rank, method=method, **als_params)
        _set_neighbour_params(self, knn_weights=knn_weights, knn_k=knn_k,
                              knn_min_shared=knn_min_shared, reg_weights=reg_weights,
                              reg_alpha=reg_alpha, reg_bandwidth=reg_bandwidth,
                              reg_noise=reg_noise)

    def fold_in(self, scores, *, refit: bool | None = None, return_spread: bool = False):
        """Full rows of new models from their known scores: the ALS fold-in blended with
        their nearest fitted models (see :meth:`ALSPredictor.fold_in` for the arguments)."""
        if refit:
            return super().fold_in(scores, refit=True)
        base = super().fold_in
        return self.knn_.fold_in(scores, self.scales_,
                                 lambda S2: base(S2, return_spread=True), return_spread)


class SideBlendPredictor(_NeighbourBlend, SideInfoPredictor):
    """Side information and the nearest models blended in z units by known-score count:
    the default.

    The side half is :class:`~benchpress.predict.models.side_info.SideInfoPredictor` with its own
    defaults; a model folded in without covariates gets its ALS rows (see there), so then
    the numbers are :class:`BlendPredictor`'s. On the cells solver (a matrix of
    ``LIMITS.cells_solver_min_cells`` cells or more), which side information does not
    have, the fit is the rank-4 ALS alone, as :class:`BlendPredictor`'s is there.

    Parameters
    ----------
    knn_weights, knn_k, knn_min_shared, reg_weights, reg_alpha, reg_bandwidth, reg_noise
        As :class:`BlendPredictor`'s.
    method : str, default "default"
    **side_params
        :class:`~benchpress.predict.models.side_info.SideInfoPredictor`'s parameters.

    Attributes
    ----------
    knn_ : NeighbourMix
    """

    cells_path = True  # by dropping the covariates (the side half has no cells solver)

    def __init__(self, rank: int = 4, *, knn_weights: tuple = KNN_WEIGHTS, knn_k: int = 5,
                 knn_min_shared: int = 3, reg_weights: tuple = REG_WEIGHTS,
                 reg_alpha: float = REG_ALPHA, reg_bandwidth: float = 0.5,
                 reg_noise: float = REG_NOISE, method: str = "default",
                 **side_params):
        super().__init__(rank, method=method, **side_params)
        _set_neighbour_params(self, knn_weights=knn_weights, knn_k=knn_k,
                              knn_min_shared=knn_min_shared, reg_weights=reg_weights,
                              reg_alpha=reg_alpha, reg_bandwidth=reg_bandwidth,
                              reg_noise=reg_noise)

    def fit(self, Y, scales, covariates=None) -> "SideBlendPredictor":
        """Fit on scores ``Y`` (n_models, n_benchmarks) and optional ``covariates``
        (n_models, n_features); the cells solver fits without the covariates."""
        if np.ndim(Y) == 2 and self._choose_solver(np.asarray(Y)) == "cells":
            covariates = None
        return super().fit(Y, scales, covariates)

    def fold_in(self, scores, *, covariates=None, refit: bool | None = None,
                return_spread: bool = False):
        """Full rows of new models from their known scores and optional covariates: the side
        fold-in blended with their nearest fitted models (arguments as
        :meth:`SideInfoPredictor.fold_in`)."""
        if refit:
            return super().fold_in(scores, covariates=covariates, refit=True)
        base = super().fold_in
        return self.knn_.fold_in(
            scores, self.scales_,
            lambda S2: base(S2, covariates=covariates, return_spread=True), return_spread)
