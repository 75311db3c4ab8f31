"""Side information under the nearest models: the study that made it the default.

`--method side` (ALS plus a prior from what is known of a model before its scores:
provider, family, release date, reasoning) and the nearest models (`--method blend`, the
rank-4 ALS under the shifted nearest models, the default of 2026-12-01) help in different
places. The default since 2026-12-02 puts the nearest models on top of side information
exactly as `blend` puts them on top of als4 (the same parts and gate,
`benchpress/predict/models/blend.py`; since 2026-12-06 a gate learned on the yardstick's
early cutoffs weighs the parts, README / docs "Forecasts that hold up"). This study
measures them side by side (the rows of the blends as they were on the morning of
2026-12-02 are in the table of the README; their parameters are gone):

* own random partitions (per-model 3 folds, seeds 1001-1003, `--sources
  benchpress,releases`): where a choice may be made;
* the published folds (reported, never used for a choice);
* the temporal yardstick on the whole registry (`evaluate --temporal`, later models with
  their registry covariates).

Run from the repository root after `make main` (about 4 minutes)::

    python benchmarks/side_blend_study.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchpress.api import BenchPress
from benchpress.predict import make_predictor

PUBLISHED = Path("../shared/data/benchpress-2026-05/folds_s10_f3_bs42_ms1.json")
METHODS = (("blend", "blend", {}), ("side", "side", {}), ("default", "default", {}))


def main() -> None:
    paper = BenchPress.from_snapshot(".", "latest", sources=["benchpress", "releases"])
    whole = BenchPress.from_snapshot(".", "latest")
    print(f"{'method':17s} {'own folds 1001-1003':>20s} {'published folds':>16s}")
    for label, name, params in METHODS:
        bp = BenchPress(paper.matrix, make_predictor(name, **params),
                        contracts_dir=paper.contracts_dir, folder=paper.folder)
        own = np.mean([bp.evaluate(bp.folds(n_folds=3, seed=s)).overall.medae
                       for s in (1001, 1002, 1003)])
        pub = bp.evaluate(bp.folds(PUBLISHED, folds_sources=["benchpress"])).overall.medae
        print(f"{label:17s} {own:20.3f} {pub:16.3f}", flush=True)
    res = whole.evaluate_temporal(known=(1, 3, 5))
    print("temporal yardstick, default (whole registry, percent cells):")
    for r in res.summary().iter_rows(named=True):
        print(f"  k={r['k']}, metadata {r['metadata']}: MedAE {r['medae']:.2f}, 90% coverage "
              f"{r['coverage90']:.1f}%")


if __name__ == "__main__":
    main()
