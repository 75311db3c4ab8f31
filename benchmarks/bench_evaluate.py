"""Time the 30-fold evaluation of the vectorized default engine against the loop oracle.

Usage::

    .venv/bin/python benchmarks/bench_evaluate.py [--method als4|published] [--loop-folds N]

Both runs refit the same ALS configuration (``als4``, the default until 2026-12-01, is
``PRESETS["default"]``; ``published`` is ``PRESETS["published"]``) on every published fold
of the BenchPress 2026-05 matrix (read from ../shared/data beside the repo) and predict
the held-out cells. The vectorized run is ``benchpress.predict.evaluation.heldout``; the loop run
uses ``tests/reference.py`` (one ``numpy.linalg.solve`` per model row and benchmark
column per sweep) with the package's transform and pairwise regression. With
``--loop-folds N`` only the first N folds are run by the loop version and its time is
scaled to all folds (its predictions are still compared on those N folds).
Prints both times, the speed ratio and both pooled MedAEs. ``--partitions SEED ...``
additionally compares the (current) default and published methods on fresh per-model 3-fold
partitions made with those seeds (``make_folds``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchpress.api.fold_files import read_folds  # noqa: E402
from benchpress.predict import PRESETS, evaluate, make_folds, make_predictor  # noqa: E402
from benchpress.blas_threads import single_blas_thread  # noqa: E402
from tests.predict_data import PUBLISHED_FOLDS, load_matrix  # noqa: E402
from tests.reference import loop_predict_scores  # noqa: E402


#: method -> the ALS configuration the loop oracle runs (the same as the method's)
LOOP_CONFIGS = {"als4": PRESETS["default"], "published": PRESETS["published"]}


def load():
    Y, mids, bids, scales = load_matrix()
    return Y, scales, read_folds(PUBLISHED_FOLDS, mids, bids)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="als4", choices=sorted(LOOP_CONFIGS))
    ap.add_argument("--loop-folds", type=int, default=None,
                    help="run the loop version on the first N folds only and extrapolate")
    ap.add_argument("--repeat", type=int, default=3, help="vectorized runs (best is kept)")
    ap.add_argument("--partitions", type=int, nargs="*", default=[],
                    help="also compare default vs published on these seeds' 3-fold partitions")
    ap.add_argument("--skip-loop", action="store_true", help="do not run the loop reference")
    args = ap.parse_args(argv)

    Y, scales, folds = load()
    for seed in args.partitions:
        part = make_folds(~np.isnan(Y), n_folds=3, seed=seed)
        d = evaluate(make_predictor("default"), Y, scales, part).overall
        p = evaluate(make_predictor("published"), Y, scales, part).overall
        print(f"partition seed {seed}: default MedAE {d.medae:.3f} (fold-mean "
              f"{d.fold_medae_mean:.3f}) vs published {p.medae:.3f} ({p.fold_medae_mean:.3f})")
    best, result = np.inf, None
    for _ in range(max(1, args.repeat)):
        result = evaluate(make_predictor(args.method), Y, scales, folds)
        best = min(best, result.seconds)
    o = result.overall
    print(f"vectorized {args.method}: {len(folds)} folds in {best:.3f} s  "
          f"(pooled MedAE {o.medae:.3f}, fold-mean {o.fold_medae_mean:.3f}, "
          f"MedAPE {o.medape:.2f}%, within3 {o.within3:.1f}%, within5 {o.within5:.1f}%)")

    if args.skip_loop:
        return 0
    n_loop = len(folds) if args.loop_folds is None else max(1, min(args.loop_folds, len(folds)))
    params = LOOP_CONFIGS[args.method]
    errs, max_diff = [], 0.0
    vec = result.cells
    t0 = time.perf_counter()
    with single_blas_thread():
        for k in range(n_loop):
            cells = folds.test_cells[k]
            Yt = Y.copy()
            Yt[cells[:, 0], cells[:, 1]] = np.nan
            P = loop_predict_scores(Yt, scales, **params)
            pred = P[cells[:, 0], cells[:, 1]]
            errs.append(np.abs(pred - Y[cells[:, 0], cells[:, 1]]))
            vpred = vec.filter(vec["fold"] == k)["predicted"].to_numpy()
            max_diff = max(max_diff, float(np.max(np.abs(vpred - pred))))
    loop_s = (time.perf_counter() - t0) * len(folds) / n_loop
    note = "" if n_loop == len(folds) else f" (extrapolated from {n_loop} folds)"
    print(f"loop reference: {len(folds)} folds in {loop_s:.1f} s{note}  "
          f"(pooled MedAE on its folds {np.median(np.concatenate(errs)):.3f})")
    print(f"max |vectorized - loop| prediction difference: {max_diff:.2e} score units")
    print(f"speed ratio loop / vectorized: {loop_s / best:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
