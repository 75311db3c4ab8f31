"""kNN fold-in: a search of the fitted models against the refit every baseline used to do.

Usage::

    .venv/bin/python benchmarks/bench_knn.py [HOME] [--repeat 5]

On the registry of HOME (default: this project, after ``make main``), fits ``--method
knn`` once, then times the fold-in of one new model (5 known scores of a registered
model) both ways, side by side in this process: ``fold_in(row)`` (the search, what
``predict --method knn`` does now) and ``fold_in(row, refit=True)`` (a refit with the row
appended, what it did before). Prints the median of ``--repeat`` calls of each, their
ratio, and the largest difference between the two answers in points (the search ranks
the new row against the fitted models' z-scores; the refit also moves the z-scale a
little, so they differ by a small amount, not by float rounding).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def timed(fn, repeat: int) -> tuple[float, object]:
    """Median seconds of ``repeat`` calls of ``fn`` and its last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("home", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from benchpress.api import BenchPress
    from benchpress.predict import make_predictor

    bp = BenchPress.from_snapshot(args.home, predictor=make_predictor("knn"))
    Y = bp.matrix.values
    knn = make_predictor("knn").fit(Y, bp.scales)
    i = int(np.argmax((~np.isnan(Y)).sum(axis=1)))  # the registered model with most scores
    known = np.flatnonzero(~np.isnan(Y[i]))[:5]
    row = np.full(Y.shape[1], np.nan)
    row[known] = Y[i, known]
    search_s, a = timed(lambda: knn.fold_in(row), args.repeat)
    refit_s, b = timed(lambda: knn.fold_in(row, refit=True), args.repeat)
    print(f"registry: {Y.shape[0]} models x {Y.shape[1]} benchmarks")
    print(f"fold-in by search: {search_s * 1000:9.1f} ms")
    print(f"fold-in by refit:  {refit_s * 1000:9.1f} ms")
    print(f"ratio: {refit_s / search_s:.0f}x; largest difference "
          f"{np.nanmax(np.abs(a - b)):.2f} points")


if __name__ == "__main__":
    main()
