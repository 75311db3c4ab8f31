"""Time the pre-fit model against a refit: first answer as a process, later answers in
process, and the CLI's `predict` with and without its stored fit.

Usage::

    .venv/bin/python benchmarks/bench_pretrained.py [--repeat 5] [--home .]

Rows (median of ``--repeat`` runs, seconds):

* ``process: from_pretrained + predict`` -- ``python -c "from benchpress import BenchPress;
  BenchPress.from_pretrained().predict({...})"``, a new process each time (import included);
  beside it the same with a refit: ``BenchPress(<the artifact's matrix>, <its method>)``,
  i.e. the fit and both interval calibrations, as without an artifact.
* ``in process: predict`` -- later predictions of a loaded object (pretrained vs. the refit
  object once fitted, which then answers equally fast).
* ``CLI predict/compare (stored fit)`` -- ``benchpress predict --scores ...`` and
  ``benchpress compare gpt-5 claude-opus-4.5`` on the home's live registry (all sources),
  reusing its cached fit, vs. ``BENCHPRESS_FIT_CACHE=`` (off: fit and calibrate every
  time). Needs a built registry in ``--home``; skipped otherwise.

The last column is the ratio refit / pretrained.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1, "swe_bench_verified": 70.0}
PRETRAINED = ("from benchpress import BenchPress; "
              f"BenchPress.from_pretrained().predict({SCORES!r})")
REFIT = ("from benchpress import BenchPress; from benchpress.api.artifact import load_artifact, "
         "DEFAULT_ARTIFACT; from benchpress.predict.state import make_estimator; "
         "a = load_artifact(DEFAULT_ARTIFACT); m = a['manifest']; "
         "BenchPress(a['matrix'], make_estimator(m['method'], m['params']))"
         f".predict({SCORES!r})")


CPU: list = []  # CPU seconds (user + sys) of each timed process, in order


def _timed(cmd, env=None, cwd=None) -> float:
    """Wall seconds of one process; its CPU seconds are appended to CPU (on a shared,
    busy machine the CPU time is the steadier figure)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def _cpu_median(n: int) -> float:
    return statistics.median(CPU[-n:])


def _median(f, repeat: int) -> float:
    return statistics.median(f() for _ in range(repeat))


def _in_process(repeat: int) -> tuple[float, float]:
    from benchpress import BenchPress
    from benchpress.api.artifact import DEFAULT_ARTIFACT, load_artifact
    from benchpress.predict.state import make_estimator

    pre = BenchPress.from_pretrained()
    art = load_artifact(DEFAULT_ARTIFACT)
    refit = BenchPress(art["matrix"], make_estimator(art["manifest"]["method"],
                                                     art["manifest"]["params"]))
    refit.predict(SCORES)  # fit + calibrate once
    pre.predict(SCORES)

    def one(bp):
        t = time.perf_counter()
        bp.predict(SCORES)
        return time.perf_counter() - t
    return _median(lambda: one(pre), repeat), _median(lambda: one(refit), repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--home", type=Path, default=REPO)
    args = ap.parse_args()
    py = sys.executable
    cwd = tempfile.mkdtemp()  # outside the repository, like a user's session
    few = max(1, args.repeat // 2)
    rows = [("process: from_pretrained + predict",
             _median(lambda: _timed([py, "-c", PRETRAINED], cwd=cwd), args.repeat))]
    rows[-1] += (_median(lambda: _timed([py, "-c", REFIT], cwd=cwd), few),)
    cpu = [(rows[-1][0] + " [CPU]", statistics.median(CPU[-args.repeat - few:-few]),
            _cpu_median(few))]
    rows.append(("in process: predict", *_in_process(args.repeat * 4)))
    exe = str(Path(py).with_name("benchpress"))
    cli = [exe, "predict", "--scores", ",".join(f"{k}={v}" for k, v in SCORES.items()),
           "--home", str(args.home), "--format", "csv"]
    if (args.home / "registry" / "build.json").is_file():
        _timed(cli)  # make the stored fit if it is not there yet
        off = {**os.environ, "BENCHPRESS_FIT_CACHE": ""}
        rows.append(("CLI predict, whole registry (stored fit)",
                     _median(lambda: _timed(cli), args.repeat)))
        rows[-1] += (_median(lambda: _timed(cli, env=off), few),)
        cpu.append((rows[-1][0] + " [CPU]", statistics.median(CPU[-args.repeat - few:-few]),
                    _cpu_median(few)))
        cmp = [exe, "compare", "gpt-5", "claude-opus-4.5", "--home", str(args.home),
               "--format", "csv"]
        _timed(cmp)
        rows.append(("CLI compare, whole registry (stored fit)",
                     _median(lambda: _timed(cmp), args.repeat)))
        rows[-1] += (_median(lambda: _timed(cmp, env=off), few),)
        cpu.append((rows[-1][0] + " [CPU]", statistics.median(CPU[-args.repeat - few:-few]),
                    _cpu_median(few)))
    else:
        print(f"(no registry in {args.home}: CLI row skipped; run `make main` first)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; wall-clock medians, "
          "then the processes' CPU time (user + sys)")
    print(f"{'':44s} {'pretrained':>11s} {'refit':>9s} {'ratio':>7s}")
    for name, pre, refit in rows + cpu:
        print(f"{name:44s} {pre * 1e3:9.1f}ms {refit * 1e3:7.0f}ms {refit / pre:6.1f}x")


if __name__ == "__main__":
    main()
