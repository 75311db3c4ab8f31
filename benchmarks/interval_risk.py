"""Can a per-cell risk feature narrow the default's 90% intervals on the published folds?

Refits the default on our own random folds (seeds 1001-1002: where the calibrator is
fitted, as ``benchpress intervals`` does), on seed 1003 (a check) and on the paper's
published folds, and keeps every held-out cell's residual and risk features
(:mod:`benchpress.predict.intervals.features`). Beside them, candidate features computed
from each fold's *training* matrix only (never the held-out cells):

- ``disagree``: |low-rank half - nearest models| at the cell (the parts' disagreement);
- ``bench_nb`` / ``model_nb``: RMS residual of the benchmark's / the model's observed
  training cells against the nearest models' leave-self-out prediction (a cross-fitted
  spread, where the in-sample one of the low-rank half is shrunk);
- ``bench_nb_med`` / ``model_nb_med``: the same as medians (heavy tails);
- ``bench_sd``: the benchmark's spread of z scores.

Each candidate (log, as the risk model reads spreads) is added to the risk regression of
:class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator`, calibrated on the
seeds 1001-1002 cells and scored on the check seed and the published folds (coverage,
median width in points, percent cells). Then the bounds: the calibrator at 88/90/92%
nominal, and per-benchmark or per-model exact quantiles fitted on the published cells
themselves (an oracle the calibrator cannot have).

Run from the repository root (about 1 minute on a free core)::

    python benchmarks/interval_risk.py --snapshot latest \
        --folds ../shared/data/benchpress-2026-05/folds_s10_f3_bs42_ms1.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchpress.api import BenchPress
from benchpress.api.fold_files import read_folds
from benchpress.errors import run_script
from benchpress.predict import make_predictor
from benchpress.predict.evaluation.folds import make_folds
from benchpress.predict.evaluation.heldout import fold_fits
from benchpress.predict.intervals.calibrator import IntervalCalibrator, score_bounds
from benchpress.predict.intervals.features import point_size
from benchpress.predict.intervals.support import MatrixSupport
from benchpress.predict.models.side_info import covariate_kwargs

CANDIDATES = ("disagree", "bench_nb", "model_nb", "bench_nb_med", "model_nb_med", "bench_sd")


def candidates(fitted, support: MatrixSupport, i, j) -> dict:
    """The candidate features (:data:`CANDIDATES`) of held-out cells ``(i, j)`` from a
    blend fitted without them, in the interval space of ``support``."""
    Y = fitted.Y_
    obs = ~np.isnan(Y)
    tf, space = support.transform, fitted.transform_
    n = Y.shape[0]
    Zn = fitted.neighbours_.models_.predict_z(space.transform(Y), exclude=np.arange(n))
    zn = tf.transform(space.to_scores(Zn))
    zl = tf.transform(fitted.low_rank_.complete(keep_observed=False))
    res = np.where(obs, np.abs(support.Z - zn), np.nan)
    with np.errstate(all="ignore"):
        return {"disagree": np.abs(zl - zn)[i, j],
                "bench_nb": np.sqrt(np.nanmean(res ** 2, axis=0))[j],
                "model_nb": np.sqrt(np.nanmean(res ** 2, axis=1))[i],
                "bench_nb_med": np.nanmedian(res, axis=0)[j],
                "model_nb_med": np.nanmedian(res, axis=1)[i],
                "bench_sd": np.nanstd(np.where(obs, support.Z, np.nan), axis=0)[j]}


def records(est, Y, scales, covariates, folds) -> list[dict]:
    """Per fold: the held-out cells' residuals, features, candidates and interval space."""
    out = []
    for _, i, j, fitted in fold_fits(est, Y, scales, folds, **covariate_kwargs(est, covariates)):
        support = MatrixSupport(fitted)
        zhat, X = support.cells(i, j)
        keep = np.isfinite(zhat)
        extra = candidates(fitted, support, i, j)
        r = support.transform.transform(Y[i, j], cols=j) - zhat
        out.append({"i": i[keep], "j": j[keep], "actual": Y[i, j][keep], "zhat": zhat[keep],
                    "r": r[keep], "X": X[keep], "tf": support.transform,
                    **{k: v[keep] for k, v in extra.items()}})
    return out


def design(part: dict, names) -> np.ndarray:
    return np.column_stack([part["X"]] + [np.log(np.nan_to_num(part[n], nan=1.0) + 1e-2)
                                          for n in names])


def scored(half_of, parts, percent, points) -> tuple[float, float]:
    """Coverage and median width (points) of percent cells, ``half_of(part)`` the z
    half-widths."""
    covered, width = [], []
    for p in parts:
        lo, hi = score_bounds(p["tf"], p["zhat"] - half_of(p), p["zhat"] + half_of(p), p["j"])
        m = percent[p["j"]]
        covered.append(((p["actual"] >= lo - 1e-9) & (p["actual"] <= hi + 1e-9))[m])
        width.append(((hi - lo) / points[p["j"]])[m])
    return float(np.concatenate(covered).mean()), float(np.median(np.concatenate(width)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=".")
    ap.add_argument("--snapshot", default="latest")
    ap.add_argument("--sources", default="benchpress")
    ap.add_argument("--folds", required=True, help="the published folds (JSON)")
    args = ap.parse_args(argv)
    bp = BenchPress.from_snapshot(args.home, args.snapshot, sources=args.sources.split(","))
    Y, scales, X0 = bp.matrix.values, bp.scales, bp.covariates
    est = make_predictor("default")
    percent = np.asarray(scales.kind) == "percent"
    points = point_size(scales, Y)
    obs = ~np.isnan(Y)
    cal = records(est, Y, scales, X0, make_folds(obs, n_folds=3, seed=1001, n_seeds=2))
    own = records(est, Y, scales, X0, make_folds(obs, n_folds=3, seed=1003, n_seeds=1))
    pub = records(est, Y, scales, X0, read_folds(Path(args.folds), bp.matrix.model_ids,
                                                  bp.matrix.benchmark_ids))
    rows = []
    for names in [()] + [(c,) for c in CANDIDATES] + [CANDIDATES]:
        c = IntervalCalibrator(0.1).fit(np.concatenate([p["r"] for p in cal]),
                                        np.vstack([design(p, names) for p in cal]))
        half = (lambda p, c=c, names=names: c.q_ * c.risk(design(p, names)))
        rows.append(("+ all six" if len(names) > 1 else "+ " + names[0] if names
                     else "calibrator (shipped features)",
                     *scored(half, own, percent, points), *scored(half, pub, percent, points)))
    base = IntervalCalibrator(0.1).fit(np.concatenate([p["r"] for p in cal]),
                                       np.vstack([p["X"] for p in cal]))
    u = np.concatenate([np.abs(p["r"]) / base.risk(p["X"]) for p in pub])
    for level in (0.88, 0.92):
        q = float(np.quantile(u, level))
        rows.append((f"shipped features, {level:.0%} quantile of the published cells",
                     np.nan, np.nan, *scored(lambda p, q=q: q * base.risk(p["X"]), pub,
                                             percent, points)))
    for key, label in (("j", "benchmark"), ("i", "model")):
        idx = np.concatenate([p[key] for p in pub])
        q = np.array([np.quantile(u[idx == b], 0.9) if (idx == b).sum() >= 10
                      else np.quantile(u, 0.9) for b in range(idx.max() + 1)])
        rows.append((f"oracle: each {label}'s own 90% quantile on the published cells",
                     np.nan, np.nan,
                     *scored(lambda p, q=q, key=key: q[p[key]] * base.risk(p["X"]), pub,
                             percent, points)))
    print(f"{'risk model':62s} {'seed 1003':>13s} {'published':>13s}")
    for name, c1, w1, c2, w2 in rows:
        left = "" if np.isnan(c1) else f"{c1:6.1%} {w1:5.2f}"
        print(f"{name:62s} {left:>13s} {c2:6.1%} {w2:5.2f}")


if __name__ == "__main__":
    run_script(main, "interval_risk")
