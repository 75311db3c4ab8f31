"""How low can a forecast go? The all-but-one floor of the temporal yardstick.

The temporal yardstick (`benchpress evaluate --temporal`) reveals k = 1, 3 or 5 scores of
each later model. This study asks the same fits the easiest version of that question:
each percent-scale score of each later model is predicted from *all* of its other scores
(every cutoff of the last 12 months, fitted on the models released before it, fold-in
without refit). No reveal of 3 or 5 scores can expect to do better than this, so it
bounds what the yardstick's targets can ask of the same model class.

Run from the repository root after `make main` (about a minute)::

    python benchmarks/forecast_floor.py                   # default and als4, whole registry
"""

from __future__ import annotations

import argparse

import numpy as np

from benchpress.api import BenchPress
from benchpress.predict import make_predictor
from benchpress.predict.estimator import check_scores, clone
from benchpress.predict.evaluation.temporal import monthly_cutoffs


def all_but_one(Y: np.ndarray, percent: np.ndarray):
    """Rows of later models with one percent cell hidden each: (S, rows, cols), where
    S (n_cells, n_benchmarks) is row ``rows[c]`` of ``Y`` without its cell ``cols[c]``."""
    rows, cols = np.nonzero(~np.isnan(Y) & percent[None, :])
    S = Y[rows].copy()
    S[np.arange(rows.size), cols] = np.nan
    return S, rows, cols


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default="default,als4")
    ap.add_argument("--sources", default="", help="comma-separated sources ('' = all)")
    args = ap.parse_args(argv)
    bp = BenchPress.from_snapshot(".", "latest",
                                  sources=[s for s in args.sources.split(",") if s] or None)
    m = bp.matrix
    Y = check_scores(m.values, bp.scales)
    percent = np.asarray(bp.scales.kind) == "percent"
    dates = np.array([str(d)[:10] if d else "" for d in m.models["release_date"].to_list()])
    cutoffs = monthly_cutoffs(dates, 12)
    errors = {name: [] for name in args.methods.split(",")}
    for start, end in zip(cutoffs, cutoffs[1:] + ["9999-12-31"]):
        train = (dates != "") & (dates < start)
        later = (dates >= start) & (dates < end) & ((~np.isnan(Y)).sum(axis=1) >= 6)
        if not later.any():
            continue
        trained = (~np.isnan(Y[train])).any(axis=0)
        T = np.where(trained[None, :], Y[later], np.nan)
        S, rows, cols = all_but_one(T, percent)
        for name in errors:
            pred = clone(make_predictor(name)).fit(Y[train], bp.scales)
            P = pred.fold_in(S)
            errors[name].append(np.abs(P[np.arange(rows.size), cols] - T[rows, cols]))
    print(f"{'method':10s} {'n_cells':>8s} {'all-but-one MedAE':>18s}")
    for name, e in errors.items():
        e = np.concatenate(e)
        print(f"{name:10s} {e.size:8d} {np.median(e):18.2f}")


if __name__ == "__main__":
    main()
