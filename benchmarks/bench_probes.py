"""Time greedy probe selection (LOMO fits + batched fold-in) against a refit-per-model design.

Usage::

    .venv/bin/python benchmarks/bench_probes.py [--method default] [--k 5] [--refit-models 12]

On the BenchPress 2026-05 matrix (84 models x 133 benchmarks, read from ../shared/data
beside the repo) this

1. runs :class:`benchpress.predict.probes.search.ProbeSearch` end to end: one leave-one-model-out
   fit per model, then greedy forward selection of ``--k`` probes over all benchmarks
   with the swap pass after every addition, and reports the wall time and the number of
   candidate sets scored;
2. measures, in the same process, the refit-per-model design of the paper's code
   (for each model, refit the whole matrix with that model's row cut down to the
   probes; :func:`benchpress.predict.probes.search.refit_transcripts`) on the first
   ``--refit-models`` models for one candidate set, and extrapolates it linearly to
   all models (one candidate set) and to every candidate set the greedy search scored.
   The extrapolated figures are labelled as such.

Both designs use the same predictor configuration and single-threaded BLAS.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchpress.blas_threads import single_blas_thread  # noqa: E402
from benchpress.predict import make_predictor  # noqa: E402
from benchpress.predict.probes.search import ProbeSearch, refit_transcripts  # noqa: E402
from tests.predict_data import load_matrix  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="default")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--refit-models", type=int, default=12,
                    help="models refitted to time the refit-per-model design")
    args = ap.parse_args()
    Y, _, bench_ids, scales = load_matrix()
    n_models = Y.shape[0]
    predictor = make_predictor(args.method)  # one object; every fit below is a clone

    with single_blas_thread():
        t0 = time.perf_counter()
        search = ProbeSearch(predictor).fit(Y, scales, benchmark_ids=bench_ids)
        t_fit = time.perf_counter() - t0
        sel = search.select(args.k)
        t_total = time.perf_counter() - t0

        probe = np.isin(bench_ids, sel.final.probes)
        t1 = time.perf_counter()
        refit_transcripts(predictor, Y, scales, probe, models=range(args.refit_models))
        t_refit_sub = time.perf_counter() - t1
        t2 = time.perf_counter()
        search.predict_cells(probe[None])
        t_one_set = time.perf_counter() - t2

    per_set_refit = t_refit_sub / args.refit_models * n_models
    greedy_refit = per_set_refit * sel.n_sets_scored
    print(f"matrix: {n_models} models x {len(bench_ids)} benchmarks, method {args.method!r}")
    print(f"chosen ({args.k} probes): {', '.join(sel.final.probes)}")
    print(f"  pooled MedAE {sel.final.medae:.3f} (probe cells exact), "
          f"{sel.final.medae_hidden:.3f} on non-probe cells")
    print(f"LOMO + fold-in greedy search: {t_total:.1f} s total "
          f"({t_fit:.1f} s for {n_models} LOMO fits, {t_total - t_fit:.1f} s scoring "
          f"{sel.n_sets_scored} candidate sets)")
    print(f"  scoring one candidate set by fold-in: {t_one_set * 1000:.0f} ms")
    print(f"refit-per-model design, measured on {args.refit_models} models: {t_refit_sub:.2f} s")
    print(f"  EXTRAPOLATED to all {n_models} models, one candidate set: {per_set_refit:.1f} s "
          f"(fold-in is {per_set_refit / t_one_set:.0f}x faster per set, after the LOMO fits)")
    print(f"  EXTRAPOLATED to the {sel.n_sets_scored} sets this search scored: "
          f"{greedy_refit / 60:.0f} min = {greedy_refit / 3600:.1f} h")
    print(f"speed ratio, whole search (extrapolated refit / measured LOMO+fold-in): "
          f"{greedy_refit / t_total:.0f}x")


if __name__ == "__main__":
    main()
