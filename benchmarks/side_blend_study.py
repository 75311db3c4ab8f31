"""Side information under the nearest models: a measured next step for the default.

`--method side` (the default's ALS plus a prior from what is known of a model before its
scores: provider, family, release date, reasoning) and the default's blend with the shifted
nearest models (`benchpress/predict/blend.py`) help in different places. This study puts
the second on top of the first, exactly as the default puts it on top of als4 (same kNN
weights by known-score count, same spread), and measures it beside both:

* own random partitions (per-model 3 folds, seeds 1001-1003, `--sources
  benchpress,releases`): where a choice may be made;
* the published folds (reported, never used for a choice);
* the temporal yardstick on the whole registry (`evaluate --temporal`, later models with
  their registry covariates).

A new model given by its scores alone has no covariates, so there the blend answers as the
default does. Not adopted yet (see README, "Forecasts that hold up": switching the default
moves the shipped model, the app and every figure at once).

Run from the repository root after `make main` (about 4 minutes)::

    python benchmarks/side_blend_study.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchpress.api import BenchPress
from benchpress.predict import make_predictor
from benchpress.predict.base import check_scores
from benchpress.predict.blend import BlendPredictor
from benchpress.predict.side import SideInfoPredictor

PUBLISHED = Path("../shared/data/benchpress-2026-05/folds_s10_f3_bs42_ms1.json")


class SideBlend(SideInfoPredictor):
    """`--method side` blended with the shifted nearest models as the default blends als4
    (:class:`BlendPredictor`'s ``_mix``, ``_fit_knn`` and spread, reused as they are)."""

    method = "side_blend"

    def __init__(self, rank: int = 4, *, knn_weights=(0.9, 0.9, 0.8, 0.6, 0.35), knn_k=5,
                 knn_min_shared=3, **side_params):
        super().__init__(rank, **side_params)
        self.knn_weights, self.knn_k, self.knn_min_shared = knn_weights, knn_k, knn_min_shared

    @classmethod
    def _param_names(cls) -> list[str]:
        return sorted(set(SideInfoPredictor._param_names())
                      | {"knn_weights", "knn_k", "knn_min_shared"})

    def _fit(self, Y, scales) -> None:
        super()._fit(Y, scales)
        self.knn_ = BlendPredictor._fit_knn(self, Y, scales)

    def _training_mix(self):
        return BlendPredictor._mix(self, super()._predict(), self.knn_.Z_,
                                   exclude=np.arange(self.Y_.shape[0]))

    def _predict(self) -> np.ndarray:
        return self._training_mix()[0]

    def complete_spread(self) -> np.ndarray:
        s, gap = super().complete_spread(), self._training_mix()[1]
        return np.sqrt(s * s + 0.25 * gap * gap)

    def fold_in(self, scores, *, covariates=None, refit=None, return_spread=False):
        if refit:
            return super().fold_in(scores, covariates=covariates, refit=True)
        S = np.asarray(scores, dtype=float)
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        P, spread = super().fold_in(S2, covariates=covariates, return_spread=True)
        P, gap = BlendPredictor._mix(self, P, self.transform_.transform(S2))
        spread = np.sqrt(spread * spread + 0.25 * gap * gap)
        if S.ndim == 1:
            P, spread = P[0], spread[0]
        return (P, spread) if return_spread else P


def side_blend() -> SideBlend:
    params = make_predictor("side").get_params()
    params.pop("method", None)
    return SideBlend(**params)


def main() -> None:
    paper = BenchPress.from_snapshot(".", "latest", sources=["benchpress", "releases"])
    whole = BenchPress.from_snapshot(".", "latest")
    methods = {"default": lambda: make_predictor("default"), "side": lambda: make_predictor("side"),
               "side_blend": side_blend}
    print(f"{'method':11s} {'own folds 1001-1003':>20s} {'published folds':>16s}")
    for name, make in methods.items():
        bp = BenchPress(paper.matrix, make(), contracts_dir=paper.contracts_dir,
                        folder=paper.folder)
        own = np.mean([bp.evaluate(bp.folds(n_folds=3, seed=s)).overall.medae
                       for s in (1001, 1002, 1003)])
        pub = bp.evaluate(bp.folds(PUBLISHED, folds_sources=["benchpress"])).overall.medae
        print(f"{name:11s} {own:20.3f} {pub:16.3f}", flush=True)
    bp = BenchPress(whole.matrix, side_blend(), contracts_dir=whole.contracts_dir,
                    folder=whole.folder)
    res = bp.evaluate_temporal(known=(1, 3, 5))
    print("temporal yardstick, side_blend (whole registry, percent cells):")
    for r in res.summary().iter_rows(named=True):
        print(f"  k={r['k']}: MedAE {r['medae']:.2f}, 90% coverage {r['coverage90']:.1f}%")


if __name__ == "__main__":
    main()
