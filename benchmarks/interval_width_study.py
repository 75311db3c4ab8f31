"""How narrow can calibrated 90% intervals be? A study of the risk model behind them.

Usage::

    .venv/bin/python benchmarks/interval_width_study.py [--method default]   # after `make main`

Issue 6 asks for 90% intervals with a median width of at most 20 points on held-out cells
(the paper's are 27.2 wide). This script reads the BenchPress 2026-05 matrix from the
built registry (``--sources benchpress``), holds out its 30 published folds (from
../shared/data beside the repo), calibrates on this project's own partitions (seeds
1001-1002) exactly as ``benchpress intervals --folds`` does, and prints coverage and
median width (points, percent-scale cells) for split-conformal intervals built on
different risk estimates ``s``:

- ``no risk model``: one width for every cell (in the interval space);
- ``shipped``: :class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator`, a ridge model of
  ``log |r|`` on the seven features of :data:`~benchpress.predict.intervals.features.FEATURES`;
- ``+ held-out scale of benchmark and model``: adds each benchmark's and each model's
  mean ``log |r|`` over the calibration cells (leave-the-cell-out, shrunk to the mean);
- ``asymmetric``: the shipped risk with separate lower and upper quantiles of ``r / s``;
- ``optimistic: risk fitted on the test cells``: the same features plus per-benchmark
  effects, fitted on the held-out residuals themselves. It is not a method (it sees the
  answers); it bounds what these features can do, and its coverage is no longer 90%.

It also prints the quantiles of the held-out absolute error in points: a 90% interval
cannot be much narrower than the errors it must cover.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchpress.api import BenchPress  # noqa: E402
from benchpress.predict import make_folds, make_predictor  # noqa: E402
from benchpress.blas_threads import single_blas_thread  # noqa: E402
from benchpress.predict.intervals.calibration import heldout_records  # noqa: E402
from benchpress.predict.intervals.calibrator import IntervalCalibrator, score_bounds  # noqa: E402
from tests.predict_data import PUBLISHED_FOLDS  # noqa: E402

ALPHA, FLOOR = 0.1, 0.01


def group_scale(key: str, cal: dict, new: dict, prior: float = 10.0):
    """Mean log|r| of each group (benchmark ``j`` or model ``i``) over the calibration
    cells, shrunk to the overall mean; for calibration cells the cell's own residuals
    (one per partition) are left out. Returns (per calibration cell, per new cell)."""
    y = np.log(np.abs(cal["residual_z"]) + FLOOR)
    g, n = cal[key], int(max(cal[key].max(), new[key].max())) + 1
    total, count = np.bincount(g, y, n), np.bincount(g, None, n)
    _, cell = np.unique(cal["i"] * (cal["j"].max() + 1) + cal["j"], return_inverse=True)
    own, own_n = np.bincount(cell, y), np.bincount(cell)
    mu = y.mean()
    at_cal = (total[g] - own[cell] + prior * mu) / (count[g] - own_n[cell] + prior)
    at_new = (total[new[key]] + prior * mu) / (count[new[key]] + prior)
    return at_cal, at_new


def intervals(test: dict, half_lo, half_hi):
    """Score-unit bounds of ``zhat - half_lo .. zhat + half_hi`` in each fold's interval space."""
    lower, upper = np.empty(test["zhat"].size), np.empty(test["zhat"].size)
    for k, tr in enumerate(test["transforms"]):
        sel = test["fold"] == k
        z = test["zhat"][sel]
        lower[sel], upper[sel] = score_bounds(tr, z - half_lo[sel], z + half_hi[sel], test["j"][sel])
    return lower, upper


def report(name: str, test: dict, percent, lower, upper) -> None:
    a = test["actual"]
    covered = (a >= lower - 1e-9) & (a <= upper + 1e-9)
    width = (upper - lower) / test["point"]
    print(f"{name:48s} coverage {100 * covered[percent].mean():5.1f}%   "
          f"median width {np.median(width[percent]):5.1f}")


def conformal(risk_cal, r_cal, risk_test, *, signed: bool = False):
    """Half-widths (lower, upper) of split-conformal intervals scaled by the risk."""
    ratio = r_cal / risk_cal
    n = ratio.size
    if signed:
        lo = np.quantile(ratio, ALPHA / 2 * (1 + 1 / n), method="lower")
        hi = np.quantile(ratio, 1 - ALPHA / 2 * (1 + 1 / n), method="higher")
        return -lo * risk_test, hi * risk_test
    q = np.quantile(np.abs(ratio), min(1.0, np.ceil((n + 1) * (1 - ALPHA)) / n), method="higher")
    return q * risk_test, q * risk_test


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="default")
    args = ap.parse_args()
    bp = BenchPress.from_snapshot(REPO, sources=["benchpress"])
    Y, scales = bp.matrix.values, bp.scales
    folds = bp.folds(PUBLISHED_FOLDS)
    predictor = make_predictor(args.method)  # one object; each held-out fit is a clone
    with single_blas_thread():
        test = heldout_records(predictor, Y, scales, folds)
        cal = heldout_records(predictor, Y, scales,
                              make_folds(~np.isnan(Y), n_folds=3, seed=1001, n_seeds=2))
    percent = scales.kind[test["j"]] == "percent"
    err = np.abs(test["actual"] - test["predicted"]) / test["point"]
    q50, q75, q90 = np.quantile(err[percent], [0.5, 0.75, 0.9])
    print(f"{args.method}: {percent.sum()} held-out percent cells of the 30 published folds; "
          f"|error| quantiles 50/75/90%: {q50:.1f} / {q75:.1f} / {q90:.1f} points")

    r_cal, r_test = cal["residual_z"], test["residual_z"]
    ones_cal, ones_test = np.ones(r_cal.size), np.ones(r_test.size)
    report("no risk model (one width in z units)", test, percent,
           *intervals(test, *conformal(ones_cal, r_cal, ones_test)))

    shipped = IntervalCalibrator(ALPHA).fit(r_cal, cal["X"])
    report("shipped (ridge on the 7 risk features)", test, percent,
           *intervals(test, *conformal(shipped.risk(cal["X"]), r_cal, shipped.risk(test["X"]))))
    report("asymmetric (signed quantiles of r / s)", test, percent,
           *intervals(test, *conformal(shipped.risk(cal["X"]), r_cal, shipped.risk(test["X"]),
                                       signed=True)))

    b_cal, b_test = group_scale("j", cal, test)
    m_cal, m_test = group_scale("i", cal, test)
    X_cal = np.column_stack([cal["X"], b_cal, m_cal])
    X_test = np.column_stack([test["X"], b_test, m_test])
    richer = IntervalCalibrator(ALPHA).fit(r_cal, X_cal)
    report("+ held-out scale of benchmark and model", test, percent,
           *intervals(test, *conformal(richer.risk(X_cal), r_cal, richer.risk(X_test))))

    # not a method: the risk model (with per-benchmark effects) is fitted on the answers
    onehot = np.eye(Y.shape[1])[test["j"]]
    peek = IntervalCalibrator(ALPHA, ridge=1e-3).fit(r_test, np.column_stack([test["X"], onehot]))
    s_peek = peek.risk(np.column_stack([test["X"], onehot]))
    report("optimistic: risk fitted on the test cells", test, percent,
           *intervals(test, *conformal(s_peek, r_test, s_peek)))


if __name__ == "__main__":
    main()
