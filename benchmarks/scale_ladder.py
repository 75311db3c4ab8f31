"""Scale ladder: time and peak memory of each CLI step on synthetic registries of growing size.

Usage::

    .venv/bin/python benchmarks/scale_ladder.py --rungs 1000x200,3000x300 --fill 0.05 \
        --seed 0 [--timeout 600] [--steps ingest,snapshot,sql,...] [--workdir DIR]

For each rung ``MxB`` (models x benchmarks) this

1. makes a synthetic score matrix: low-rank (rank 2) logits plus per-model and
   per-benchmark offsets plus Gaussian noise, mapped to 0-100 by a sigmoid; each cell is
   observed with probability ``--fill`` (every model and benchmark gets at least 3 scores);
2. writes it as a BenchPress JSON file (``models[]``, ``benchmarks[]``, ``scores[]``), or
   above ``--part-rows`` cells (default 1,000,000) as a folder of such files, each under the
   per-file cap, ingested as one source; and runs ``benchpress init`` on a fresh home;
3. runs each step as its own process (``benchpress ... --home HOME``) and reads that
   process's own wall time and peak resident memory (``os.wait4`` rusage ``ru_maxrss``
   of the finished child, its waited-for children included); a step that runs past
   ``--timeout`` seconds is killed (its whole process group) and reported as "timeout".

Steps: ``ingest``, ``snapshot`` (snapshot create), ``sql`` (``SELECT * FROM matrix
LIMIT 5``), ``sql_of`` (the same through ``matrix_of`` of two benchmarks), ``evaluate``
(3 per-model folds), ``complete``, ``fit`` (the first ``predict``: fits and stores the
fit), ``predict`` (a second ``predict`` process, from the stored fit), ``probes``
(``--k 5``). A table per step and rung follows, with the previous rung and the growth
ratio beside each figure. Nothing is cached between rungs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["make_scores", "write_json", "run_step", "run_rung", "main", "STEPS"]

STEPS = ("ingest", "snapshot", "sql", "sql_of", "evaluate", "complete", "fit", "predict",
         "probes")
BIN = Path(sys.executable).with_name("benchpress")
#: scores per JSON file (about 117 MB): a larger rung is written as a folder of parts
PART_ROWS = 1_000_000


def make_scores(n_models: int, n_benchmarks: int, fill: float, seed: int, *,
                rank: int = 2, noise: float = 0.3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic observed cells: ``rows, cols, scores``, each shape (n_cells,), scores in
    (0, 100) from a rank-``rank`` logit model plus offsets and noise."""
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(n_models, rank))
    V = rng.normal(size=(n_benchmarks, rank)) / np.sqrt(rank)
    a, b = rng.normal(0.0, 0.7, n_models), rng.normal(0.0, 1.0, n_benchmarks)
    mask = rng.random((n_models, n_benchmarks)) < fill
    # at least 3 scores per model and per benchmark
    mask[np.arange(n_models)[:, None], rng.integers(0, n_benchmarks, (n_models, 3))] = True
    mask[rng.integers(0, n_models, (3, n_benchmarks)), np.arange(n_benchmarks)[None, :]] = True
    rows, cols = np.nonzero(mask)
    logit = (U[rows] * V[cols]).sum(axis=1) + a[rows] + b[cols]
    logit += rng.normal(0.0, noise, rows.size)
    return rows, cols, np.round(100.0 / (1.0 + np.exp(-logit)), 2)


def write_json(path: Path, n_models: int, n_benchmarks: int, rows, cols, scores, *,
               part_rows: int = 0) -> Path:
    """Write the cells in the BenchPress JSON format (see
    ``benchpress.adapters.benchpress_json``); returns what to ingest.

    With ``part_rows`` > 0 and more cells than that, ``path`` (without its suffix) becomes a
    folder of ``part-000.json``, ``part-001.json`` ... of at most ``part_rows`` scores each
    (so that every file stays under the per-file cap, ``InputLimits.max_member_bytes``; the models
    and benchmarks are listed in the first), which is ingested as one source; else one file.
    Each part is written and released before the next.
    """
    url = "https://example.org/synthetic"
    models = [{"id": f"m{i:06d}", "name": f"Model {i}"} for i in range(n_models)]
    benchmarks = [{"id": f"b{j:04d}", "name": f"Bench {j}", "metric": "accuracy"}
                  for j in range(n_benchmarks)]

    def part(lo: int, hi: int, listed: bool) -> str:
        doc = {"models": models if listed else [], "benchmarks": benchmarks if listed else [],
               "scores": [{"model_id": f"m{i:06d}", "benchmark_id": f"b{j:04d}",
                           "score": float(s), "reference_url": url}
                          for i, j, s in zip(rows[lo:hi].tolist(), cols[lo:hi].tolist(),
                                             scores[lo:hi].tolist())]}
        return json.dumps(doc)

    n = len(rows)
    if part_rows <= 0 or n <= part_rows:
        path.write_text(part(0, n, True))
        return path
    folder = path.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("part-*.json"):
        stale.unlink()
    for k, lo in enumerate(range(0, n, part_rows)):
        (folder / f"part-{k:03d}.json").write_text(part(lo, min(lo + part_rows, n), k == 0))
    return folder


def run_step(args: list[str], timeout: float, log: Path, max_gb: float = 0.0, *,
             cwd: Path | None = None, env: dict | None = None) -> dict:
    """Run one command in its own process group (address space capped at ``max_gb`` GB
    when > 0, so a step that needs more fails instead of starving the machine), in `cwd`
    with `env` when given; wall seconds, peak RSS (MB) and status ("ok", "error (exit N)"
    or "timeout"), and the CPU seconds it used (its waited-for children included: a
    figure that moves less than the wall time on a machine other jobs share)."""
    def cap():
        if max_gb > 0:
            lim = int(max_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    t0 = time.perf_counter()
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(args) + "\n").encode())
        out.flush()
        proc = subprocess.Popen(args, stdout=out, stderr=out, start_new_session=True,
                                preexec_fn=cap, cwd=cwd, env=env)
        status = None
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, code, usage = os.wait4(proc.pid, 0)
                status = "timeout"
                break
            time.sleep(0.02)
        proc.returncode = 0  # reaped by wait4 above
    secs = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(code)
    if status is None:
        status = "ok" if rc in (0, 3) else f"error (exit {rc})"
    return {"seconds": secs, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024.0, "status": status}


def _commands(home: Path, data: Path, out: Path) -> dict:
    h = ["--home", str(home)]
    b = str(BIN)
    known = "b0000=50,b0001=60,b0002=40,b0003=55,b0004=45"
    return {
        "ingest": [b, "ingest", str(data), "--id", "synthetic", *h],
        "snapshot": [b, "snapshot", "create", "--tag", "ladder", *h],
        "sql": [b, "sql", "SELECT * FROM matrix LIMIT 5", *h],
        "sql_of": [b, "sql", "SELECT * FROM matrix_of(['b0000','b0001']) LIMIT 5", *h],
        "evaluate": [b, "evaluate", "--make-folds", "3", "--seed", "0", "--format", "json", *h],
        "complete": [b, "complete", "--out", str(out / "completed.parquet"), *h],
        "fit": [b, "predict", "--scores", known, "--format", "json", *h],
        "predict": [b, "predict", "--scores", known, "--format", "json", *h],
        "probes": [b, "probes", "--k", "5", "--format", "json", *h],
    }


def run_rung(n_models: int, n_benchmarks: int, fill: float, seed: int, timeout: float,
             workdir: Path, steps=STEPS, max_gb: float = 0.0,
             part_rows: int = PART_ROWS) -> dict:
    """Make one rung's data and home, run ``steps`` in order; results by step name.

    The data is one JSON file, or above ``part_rows`` cells a folder of JSON files ingested
    as one source (see `write_json`)."""
    rung = workdir / f"rung_{n_models}x{n_benchmarks}"
    rung.mkdir(parents=True, exist_ok=True)
    home, log = rung / "home", rung / "log.txt"
    rows, cols, scores = make_scores(n_models, n_benchmarks, fill, seed)
    data = write_json(rung / "synthetic.json", n_models, n_benchmarks, rows, cols, scores,
                      part_rows=part_rows)
    init = run_step([str(BIN), "init", str(home), "--no-git"], timeout, log)
    if init["status"] != "ok":
        raise SystemExit(f"benchpress init failed for {rung.name}; see {log}")
    commands = _commands(home, data, rung)
    results = {"cells": int(rows.size)}
    for name in steps:
        res = run_step(commands[name], timeout, log, max_gb)
        results[name] = res
        print(f"  {n_models}x{n_benchmarks} {name:9s} {_cell(res)}", file=sys.stderr, flush=True)
    return results


def _cell(res: dict | None) -> str:
    if res is None:
        return "-"
    text = f"{res['seconds']:.1f} s, {res['peak_mb']:.0f} MB"
    return text if res["status"] == "ok" else f"{res['status']} after {text}"


def _ratio(new: dict, old: dict | None) -> str:
    if not old or new["status"] != "ok" or old["status"] != "ok":
        return "-"
    return f"x{new['seconds'] / max(old['seconds'], 1e-9):.1f} time, " \
           f"x{new['peak_mb'] / max(old['peak_mb'], 1e-9):.1f} mem"


def table(rungs: list[str], results: list[dict], steps) -> str:
    """Markdown table: one row per step and rung, with the previous rung and growth."""
    lines = ["| step | rung (cells) | time, peak RSS | previous rung | growth |",
             "|---|---|---|---|---|"]
    for name in steps:
        for k, (rung, res) in enumerate(zip(rungs, results)):
            prev = results[k - 1].get(name) if k else None
            lines.append(f"| {name} | {rung} ({res['cells']}) | {_cell(res.get(name))} | "
                         f"{_cell(prev)} | {_ratio(res[name], prev)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rungs", default="1000x200,3000x300,10000x500",
                    help="comma-separated MODELSxBENCHMARKS")
    ap.add_argument("--fill", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per step")
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("--max-gb", type=float, default=8.0,
                    help="address-space cap per step in GB (0: none)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where rung homes go (default: a new temporary folder)")
    ap.add_argument("--part-rows", type=int, default=PART_ROWS,
                    help="scores per JSON file; more cells make a folder of files (0: one file)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    a = ap.parse_args(argv)
    steps = [s for s in a.steps.split(",") if s]
    bad = sorted(set(steps) - set(STEPS))
    if bad:
        ap.error(f"unknown step {bad[0]!r}; choose from {', '.join(STEPS)}")
    rungs = [r.strip() for r in a.rungs.split(",") if r.strip()]
    workdir = a.workdir or Path(tempfile.mkdtemp(prefix="scale_ladder_"))
    results = []
    for r in rungs:
        m, _, b = r.partition("x")
        results.append(run_rung(int(m), int(b), a.fill, a.seed, a.timeout, workdir, steps,
                                a.max_gb, a.part_rows))
    print(table(rungs, results, steps))
    if a.json:
        a.json.write_text(json.dumps({"rungs": rungs, "fill": a.fill, "seed": a.seed,
                                      "results": results}, indent=1))
    print(f"homes and logs: {workdir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
