"""Effect of the probe search's model sample (``ProbeSearch(max_models=...)``) on its choice.

On the 2026-05 matrix (``--sources benchpress``, 84 models) the greedy + swap search
(k=5) is run leaving out and scoring only a seeded sample of ``max_models`` models, and the
chosen set is then scored by the exact search (every model left out): its full
leave-one-model-out pooled MedAE. ``max_models`` = 84 is the exact search itself.

Run from the repository root after ``benchpress build``::

    python benchmarks/probe_sample_study.py [--sizes 20,40,84] [--seeds 0,1,2] [--k 5]
"""

from __future__ import annotations

import argparse
import time

from benchpress.api import BenchPress
from benchpress.predict.probes import ProbeSearch

__all__ = ["main"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20,40,84", help="comma-separated max_models")
    ap.add_argument("--seeds", default="0,1,2", help="sample seeds (one run per seed)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--sources", default="benchpress")
    a = ap.parse_args(argv)
    bp = BenchPress.from_snapshot(sources=a.sources.split(","))
    Y, costs = bp.matrix.values, bp.benchmark_costs()

    def search(max_models, seed=0):
        return ProbeSearch(bp.estimator, max_models=max_models, seed=seed).fit(
            Y, bp.scales, benchmark_ids=bp.matrix.benchmark_ids, **bp._side_info())

    exact = search(None)
    print(f"matrix: {Y.shape[0]} models x {Y.shape[1]} benchmarks; k={a.k}; exact = every "
          "model left out")
    print("| max_models | seed | models scored | fits (s) | chosen probes "
          "| sampled MedAE | exact full-LOMO MedAE |")
    print("|---|---|---|---|---|---|---|")
    for size in (int(s) for s in a.sizes.split(",")):
        for seed in (int(s) for s in a.seeds.split(",")):
            t0 = time.perf_counter()
            s = exact if size >= Y.shape[0] else search(size, seed)
            fit_s = exact.fit_seconds_ if s is exact else time.perf_counter() - t0
            sel = s.select(a.k, costs=costs)
            full = exact.score(list(sel.final.probes), costs=costs)
            print(f"| {size} | {seed if s.sampled_ else '-'} | {s.scored_.size} | {fit_s:.1f} "
                  f"| {', '.join(sel.final.probes)} | {sel.final.medae:.4f} | {full.medae:.4f} |")
            if not s.sampled_:
                break  # exact: the seed plays no part
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
