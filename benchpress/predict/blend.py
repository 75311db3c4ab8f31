"""The blend: the ALS completion and the nearest models, weighted by how much is known.

ALS (rank 4 with pairwise regression, :class:`~benchpress.predict.predictor.ALSPredictor`)
is best on models with many scores: the registry's missing cells, the paper's folds. A
model known from only a few scores is another matter. Its fold-in is shrunk toward the
population, and new releases sit above the population, so ALS predicts them too low.
Its nearest registered models, each shifted by its mean gap to the new model
(:class:`~benchpress.predict.knn.KNNModels` with ``offset=True``), are not shrunk, and the
registry is full of near-siblings (effort levels, previews, sizes of one family).

The blend averages the two in z units, with the nearest models' weight set by how many
scores the model has (``knn_weights`` over the buckets ``KNOWN_EDGES``). The weights were
chosen on the temporal yardstick (``benchpress evaluate --temporal``, README "Forecasts
that hold up") on its early cutoffs and checked on the later ones. The spread of a blended
cell (the feature its interval grows with) adds the disagreement of the two parts to the
ALS starts' spread.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError
from benchpress.predict.base import check_scores
from benchpress.predict.knn import KNNModels
from benchpress.predict.predictor import ALSPredictor
from benchpress.predict.limits import LIMITS

__all__ = ["BlendPredictor", "KNOWN_EDGES", "knn_weight"]

#: Buckets of a model's known-score count: (0, 1], (1, 3], (3, 5], (5, 8], (8, inf).
KNOWN_EDGES = (1, 3, 5, 8)
#: The nearest models per benchmark are looked for among this many nearest models
#: (:mod:`benchpress.predict.limits`); a benchmark none of them scored is ALS alone.
KNN_CANDIDATES = LIMITS.knn_candidates


def knn_weight(n_known, weights) -> np.ndarray:
    """The nearest models' weight for models with ``n_known`` scores (array in, array out)."""
    idx = np.searchsorted(np.asarray(KNOWN_EDGES), np.asarray(n_known), side="left")
    return np.asarray(weights, dtype=float)[np.minimum(idx, len(weights) - 1)]


class BlendPredictor(ALSPredictor):
    """ALS and nearest models blended in z units by known-score count.

    Parameters
    ----------
    knn_weights : tuple of 5 floats in [0, 1]
        Weight of the nearest models for a model with at most 1, 3, 5, 8 and more known
        scores (:data:`KNOWN_EDGES`).
    knn_k : int, default 5
        Neighbours per benchmark.
    knn_min_shared : int, default 3
    method : str, default "default"
        The name in output: this is ``make_predictor("default")`` (the rank-4 ALS alone
        is ``make_predictor("als4")``).
    **als_params
        The ALS part's parameters (:class:`ALSPredictor`; ``PRESETS["default"]``).

    Attributes
    ----------
    knn_ : KNNModels or None
        The fitted nearest-models part; None on the sparse path (a matrix of
        :data:`~benchpress.predict.sparse_als.SPARSE_MIN_CELLS` cells or more), where the
        neighbour search of every completion would cost more than the ALS fit: there the
        blend is ALS alone.
    """

    def __init__(self, rank: int = 4, *, knn_weights: tuple = (0.9, 0.9, 0.8, 0.6, 0.35),
                 knn_k: int = 5, knn_min_shared: int = 3, method: str = "default", **als_params):
        super().__init__(rank, method=method, **als_params)
        # a tuple whatever came in (a JSON list from an artifact), so that parameters compare
        self.knn_weights = tuple(knn_weights) if isinstance(knn_weights, list) else knn_weights
        self.knn_k = knn_k
        self.knn_min_shared = knn_min_shared

    @classmethod
    def _param_names(cls) -> list[str]:
        return sorted(set(ALSPredictor._param_names())
                      | {"knn_weights", "knn_k", "knn_min_shared"})

    def _fit(self, Y: np.ndarray, scales) -> None:
        w = tuple(float(x) for x in np.atleast_1d(self.knn_weights))
        if len(w) != len(KNOWN_EDGES) + 1 or not all(0.0 <= x <= 1.0 for x in w):
            raise UsageError(f"knn_weights must be {len(KNOWN_EDGES) + 1} numbers in [0, 1], "
                             f"got {self.knn_weights}")
        super()._fit(Y, scales)
        self.knn_ = self._fit_knn(Y, scales)
        self._training_mix = None

    def _fit_knn(self, Y: np.ndarray, scales) -> KNNModels | None:
        if self.uses_cells() or Y.shape[0] == 0:
            return None
        return KNNModels(int(self.knn_k), min_shared=int(self.knn_min_shared), offset=True,
                         weighting="distance", candidates=KNN_CANDIDATES,
                         logit_rule=self.logit_rule).fit(Y, scales)

    def _mix(self, P_als: np.ndarray, Zq: np.ndarray, exclude=None):
        """Blend ALS predictions ``P_als`` (score units) of query rows ``Zq`` (z units,
        NaN unknown) with their nearest models; returns (blend, |ALS - kNN|) in score units."""
        if self.knn_ is None:
            return P_als, np.zeros_like(P_als)
        Zk = self.knn_.predict_z(Zq, exclude=exclude, fallback=False)
        Za = self.transform_.transform(P_als)
        w = knn_weight((~np.isnan(Zq)).sum(axis=1), self.knn_weights)[:, None]
        w = np.where(np.isnan(Zk), 0.0, w)  # no neighbour scored it: ALS alone
        Zk = np.where(np.isnan(Zk), Za, Zk)
        # (cells without a neighbour keep the ALS value as it was, not its clipped logit)
        P = np.where(w > 0, self.transform_.to_scores((1.0 - w) * Za + w * Zk), P_als)
        return P, np.abs(P_als - self.transform_.to_scores(Zk))

    def _mix_training(self):
        """:meth:`_mix` of the fitted models themselves (each without itself), made once."""
        if getattr(self, "_training_mix", None) is None:
            self._training_mix = self._mix(ALSPredictor._predict(self), self.knn_.Z_,
                                           exclude=np.arange(self.Y_.shape[0]))
        return self._training_mix

    def _predict(self) -> np.ndarray:
        if self.knn_ is None:
            return super()._predict()
        return self._mix_training()[0]

    def complete_spread(self) -> np.ndarray:
        """The ALS starts' spread with the two parts' disagreement added in quadrature
        (score units, (n_models, n_benchmarks))."""
        s = super().complete_spread()
        if self.knn_ is None:
            return s
        gap = self._mix_training()[1]
        return np.sqrt(s * s + 0.25 * gap * gap)

    def fold_in(self, scores, *, refit: bool | None = None, return_spread: bool = False):
        """Full rows of new models from their known scores: the ALS fold-in blended with
        their nearest fitted models (see :meth:`ALSPredictor.fold_in` for the arguments)."""
        if refit:
            return super().fold_in(scores, refit=True)
        S = np.asarray(scores, dtype=float)
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        P_als, spread = super().fold_in(S2, return_spread=True)
        P, gap = self._mix(P_als, self.transform_.transform(S2))
        spread = np.sqrt(spread * spread + 0.25 * gap * gap)
        if S.ndim == 1:
            P, spread = P[0], spread[0]
        return (P, spread) if return_spread else P
