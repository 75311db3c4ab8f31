"""Predict one new model from a stored fit, in process: load time and per-call latency.

Usage::

    .venv/bin/python benchmarks/predict_latency.py HOME [HOME ...] [--repeat 50]
    .venv/bin/python benchmarks/predict_latency.py . --method side \
        --scores gpqa_diamond=80,hle=20,mmlu_pro=85     # the project's own registry

Each HOME is a registry workspace whose fit is already stored (run ``benchpress predict``
there once, e.g. the ``fit`` step of ``benchmarks/scale_ladder.py``, whose rung homes are
``<workdir>/rung_MxB/home``). For each home this loads the stored fit as ``benchpress
predict`` does (``BenchPress.from_stored_fit``: no matrix for a large registry) and then
times ``predict`` of the ladder's five known scores (or ``--scores``) ``--repeat`` times,
printing the load time and the median and 90th percentile of one call, in milliseconds.
The first call is timed apart (it warms the caches). ``--method`` names the stored fit's
predictor (default: the default).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

KNOWN = {"b0000": 50.0, "b0001": 60.0, "b0002": 40.0, "b0003": 55.0, "b0004": 45.0}


def measure(home: Path, repeat: int, method: str = "default", known=None) -> dict:
    """``load_s``, ``first_ms``, ``median_ms``, ``p90_ms`` and ``n_models`` for one home."""
    from benchpress.api.facade import BenchPress, _home
    from benchpress.api.fit_store import FitStore
    from benchpress.predict import make_predictor

    h = _home(home)
    t0 = time.perf_counter()
    known = known or KNOWN
    bp = BenchPress.from_stored_fit(h, store=FitStore.for_home(h),
                                    predictor=make_predictor(method))
    load = time.perf_counter() - t0
    if bp is None:
        raise SystemExit(f"{home}: no stored fit; run `benchpress predict --method {method} "
                         f"--scores ... --home {home}` once first")
    t0 = time.perf_counter()
    bp.predict(known)
    first = time.perf_counter() - t0
    calls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        bp.predict(known)
        calls.append(time.perf_counter() - t0)
    calls.sort()
    return {"load_s": load, "first_ms": 1e3 * first, "median_ms": 1e3 * statistics.median(calls),
            "p90_ms": 1e3 * calls[int(0.9 * (len(calls) - 1))]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("homes", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--method", default="default")
    ap.add_argument("--scores", default=None, help="known scores, e.g. gpqa_diamond=80,hle=20")
    a = ap.parse_args(argv)
    known = ({k.strip(): float(v) for k, v in (p.split("=") for p in a.scores.split(","))}
             if a.scores else None)
    print("| home | load stored fit | first predict | predict, median | predict, p90 |")
    print("| --- | --- | --- | --- | --- |")
    for home in a.homes:
        r = measure(home, a.repeat, a.method, known)
        print(f"| {home} | {r['load_s']:.3f} s | {r['first_ms']:.1f} ms | "
              f"{r['median_ms']:.1f} ms | {r['p90_ms']:.1f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
