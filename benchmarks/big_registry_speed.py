"""Speed and memory on the big default registry (issue 43 item 8), before and after, side by side.

Usage (from the repository root, on a registry built with every source: ~242k scores,
26 sources, 213 versions, 6,117 models x 277 benchmarks)::

    .venv/bin/python benchmarks/big_registry_speed.py                 # every part
    .venv/bin/python benchmarks/big_registry_speed.py --parts grams,predict
    .venv/bin/python benchmarks/big_registry_speed.py --home PATH --out speed.json

Parts:

* ``grams``: the side-information ridge of one fit (``masked_ridge``: a ridge per
  benchmark on its observed rows) on the real covariates of the models released before
  the last monthly cutoff (a temporal yardstick fit), solved over every covariate as
  before (``dense_ridge`` below) and over the live ones only; checks they agree.
* ``temporal``: the temporal yardstick as ``dvc repro``'s ``temporal`` stage runs it
  (``default`` beside ``als4,knn,regression``, 1, 3 and 5 revealed scores, random and
  popular orders, intervals), with the fit memo (as shipped) and without it (every fit
  made anew, as before 2026-12-07); checks both give the same cells.
* ``predict``: one new model predicted from five known scores by the default predictor
  fitted on the whole registry (``BenchPress.predict``): the first call and the median
  of ``--repeat`` calls.

Prints one table (seconds of wall time and of this process's CPU, each ratio old/new) and
the peak resident memory. The machine is shared: CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


@contextmanager
def timed(into: dict, key: str):
    w, c = time.perf_counter(), time.process_time()
    yield
    into[key] = {"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c}


def dense_grams(obs, Xs, block: int = 1 << 22):
    """The Gram matrices as ``masked_grams`` made them until 2026-12-07: one matrix
    product of ``obs'`` with every row's outer product, blocks of rows at a time, over
    every row and covariate (now: only the rows with a cell and the covariates not zero
    on all of them)."""
    n, p = Xs.shape
    out = np.zeros((obs.shape[1], p * p))
    step = max(1, block // (p * p))
    for a in range(0, n, step):
        outer = (Xs[a:a + step, :, None] * Xs[a:a + step, None, :]).reshape(-1, p * p)
        out += obs[a:a + step].T.astype(float) @ outer
    return out.reshape(-1, p, p)


def dense_ridge(obs, Xs, R, alpha):
    """The side-information ridge as it was solved until 2026-12-07 (every covariate)."""
    A = dense_grams(obs, Xs) + alpha * np.eye(Xs.shape[1])
    return np.linalg.solve(A, (Xs.T @ R).T[..., None])[..., 0].T


def part_grams(bp, rows: dict, rows_of: str) -> None:
    import benchpress.predict.models.side_info as side_info
    from benchpress.predict import make_predictor
    from benchpress.predict.models.covariates import covariate_kwargs

    m = bp.matrix
    dates = np.array([str(d or "")[:10] for d in m.models["release_date"].to_list()])
    cutoff = sorted(d for d in dates if d)[-1][:7] + "-01"
    train = (dates != "") & (dates < cutoff)
    seen, real = [], side_info.masked_ridge

    def capture(obs, Xs, R, alpha):  # the arguments of the real fit's call
        seen.append((obs.copy(), Xs.copy(), R.copy(), alpha))
        return real(obs, Xs, R, alpha)

    side_info.masked_ridge = capture
    try:
        est = make_predictor("default")
        est.fit(m.values[train], bp.scales, **covariate_kwargs(est, bp.covariates, train))
    finally:
        side_info.masked_ridge = real
    if not seen:
        raise SystemExit("the fit solved no side-information ridge")
    obs, Xs, R, alpha = max(seen, key=lambda a: a[1].size)
    live = int((Xs[obs.any(axis=1)] != 0).any(axis=0).sum())
    print(f"ridge: {train.sum()} training rows (before {cutoff}), {Xs.shape[1]} covariates "
          f"({live} live), {int(obs.sum())} observed cells", file=sys.stderr)
    t = {}
    with timed(t, "old"):
        old = dense_ridge(obs, Xs, R, alpha)
    with timed(t, "new"):
        new = real(obs, Xs, R, alpha)
    assert np.allclose(old, new, atol=1e-9), "the ridge coefficients differ"
    rows[f"side-info ridge (one {rows_of} fit)"] = t


def part_temporal(bp, rows: dict) -> None:
    import benchpress.predict.evaluation.temporal as temporal
    from benchpress.predict.evaluation.fit_memo import FitMemo

    kw = dict(methods=("als4", "knn", "regression"), known=(1, 3, 5), seed=1001)
    t = {}
    with timed(t, "new"):
        shipped = bp.evaluate_temporal(**kw)
    real = temporal.FitMemo
    temporal.FitMemo = lambda: FitMemo(max_fits=0)  # every fit made anew
    try:
        with timed(t, "old"):
            plain = bp.evaluate_temporal(**kw)
    finally:
        temporal.FitMemo = real
    assert shipped.cells.equals(plain.cells), "the memo changed the cells"
    print(f"temporal: {len(shipped.cutoffs)} cutoffs, {shipped.cells.height} cells, "
          f"the same with and without the memo", file=sys.stderr)
    rows["temporal yardstick (fit memo)"] = t


def part_predict(bp, rows: dict, repeat: int) -> None:
    m = bp.matrix
    counts = (~np.isnan(m.values)).sum(axis=0)
    known = {m.benchmark_ids[j]: float(np.nanmedian(m.values[:, j]))
             for j in np.argsort(-counts)[:5]}
    t = {}
    with timed(t, "fit"):
        bp.predict(known)  # fits on first use
    calls = []
    for _ in range(repeat):
        w = time.perf_counter()
        bp.predict(known)
        calls.append(time.perf_counter() - w)
    rows["fit, whole registry (first predict)"] = {"new": t["fit"]}
    rows["predict one model (median call)"] = {"new": {"wall_s": statistics.median(calls),
                                                      "cpu_s": float("nan")}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", default=".")
    ap.add_argument("--parts", default="grams,temporal,predict")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from benchpress.api import BenchPress

    parts = args.parts.split(",")
    rows: dict = {}
    t0 = time.perf_counter()
    bp = BenchPress.from_snapshot(args.home)
    print(f"registry: {len(bp.matrix.model_ids)} models x {len(bp.matrix.benchmark_ids)} "
          f"benchmarks, {int((~np.isnan(bp.matrix.values)).sum())} cells "
          f"(loaded in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    if "grams" in parts:
        part_grams(bp, rows, "cutoff")
    if "temporal" in parts:
        part_temporal(bp, rows)
    if "predict" in parts:
        part_predict(bp, rows, args.repeat)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"{'part':40} {'old wall':>9} {'new wall':>9} {'old cpu':>8} {'new cpu':>8} "
          f"{'ratio':>6}")
    for name, r in rows.items():
        old, new = r.get("old", {}), r["new"]
        ratio = (old["cpu_s"] / new["cpu_s"]) if old and new["cpu_s"] > 0 else float("nan")
        print(f"{name:40} {old.get('wall_s', float('nan')):9.2f} {new['wall_s']:9.3f} "
              f"{old.get('cpu_s', float('nan')):8.2f} {new['cpu_s']:8.2f} {ratio:6.1f}")
    print(f"peak resident memory: {peak_gb:.2f} GB")
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "peak_gb": peak_gb}, indent=1))


if __name__ == "__main__":
    main()
