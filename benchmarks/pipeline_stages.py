"""Wall time and peak memory of every stage of `make main`, in a fresh clone of a revision.

Usage::

    .venv/bin/python benchmarks/pipeline_stages.py [--rev main] [--against HEAD]
        [--stages pull,build,...] [--workdir DIR] [--timeout 1800]

The revision is cloned into a temporary folder beside a link to the shared data (so
params.yaml's ``data.mirror: ../shared/data`` resolves as in the repository), and each stage
of its dvc.yaml runs as ``dvc repro --single-item --force STAGE`` in order, in its own
process: its wall seconds and peak resident memory (``os.wait4`` rusage of the finished
process, its waited-for children included) are printed as they finish. The package is the
clone's own (``PYTHONPATH``), run by this interpreter's environment, so two revisions are
measured with the same installed dependencies; the install itself is not timed.

With ``--against REV2`` both revisions are measured, one after the other, and a table puts
each stage's time and memory side by side with their ratio (REV2 over REV). Timings on a
machine other jobs share move by tens of percent: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_ladder import run_step  # noqa: E402  (the same timing of one process)

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["measure", "main"]


def _clone(rev: str, where: Path) -> Path:
    """A clone of this repository at `rev` in `where/repo`, with `where/shared` linking to
    the shared data folder beside the repository."""
    repo = where / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    subprocess.run(["git", "checkout", "-q", rev], cwd=repo, check=True)
    (where / "shared").symlink_to((ROOT.parent / "shared").resolve())
    return repo


def measure(rev: str, workdir: Path, stages: list[str] | None, timeout: float) -> list[dict]:
    """One row per stage of `rev`'s dvc.yaml (or `stages`): stage, seconds, peak_mb, status."""
    where = Path(tempfile.mkdtemp(dir=workdir, prefix=f"stages-{rev.replace('/', '_')}-"))
    repo = _clone(rev, where)
    order = list(yaml.safe_load((repo / "dvc.yaml").read_text())["stages"])
    env = dict(os.environ, PYTHONPATH=str(repo), DVC_NO_ANALYTICS="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for key in [k for k in env if k.startswith("BENCHPRESS_")]:
        del env[key]
    rows = []
    for stage in stages or order:
        got = run_step([sys.executable, "-m", "dvc", "repro", "--single-item", "--force", stage],
                       timeout, where / "log.txt", cwd=repo, env=env)
        rows.append({"stage": stage, **got})
        print(f"{rev} {stage:16s} {got['seconds']:8.1f} s {got['cpu_seconds']:8.1f} CPU-s "
              f"{got['peak_mb']:8.0f} MB {got['status']} (load {os.getloadavg()[0]:.1f})",
              file=sys.stderr, flush=True)
    return rows


def _table(runs: dict[str, list[dict]]) -> str:
    """One row per stage (and the total): each revision's wall seconds, CPU seconds and peak
    MB, with the second revision's over the first's (wall, CPU) when there are two."""
    revs = list(runs)
    stages = list(dict.fromkeys(r["stage"] for rows in runs.values() for r in rows))
    by = {rev: {r["stage"]: r for r in rows} for rev, rows in runs.items()}
    head = f"{'stage':16s}" + "".join(f"{rev[:10]:>11s} s {'CPU-s':>7s} {'MB':>6s}" for rev in revs)
    if len(revs) == 2:
        head += f"{'wall ratio':>11s}{'CPU ratio':>10s}"
    lines = [head]
    for stage in [*stages, "total"]:
        line = f"{stage:16s}"
        walls, cpus = [], []
        for rev in revs:
            if stage == "total":
                secs = sum(r["seconds"] for r in runs[rev])
                cpu = sum(r["cpu_seconds"] for r in runs[rev])
                mb = max((r["peak_mb"] for r in runs[rev]), default=0.0)
            elif stage in by[rev]:
                secs, cpu, mb = (by[rev][stage][k] for k in ("seconds", "cpu_seconds", "peak_mb"))
            else:
                secs = cpu = mb = None
            walls.append(secs)
            cpus.append(cpu)
            line += (f"{secs:11.1f}   {cpu:7.1f} {mb:6.0f}" if secs is not None
                     else f"{'-':>11s}   {'-':>7s} {'-':>6s}")
        if len(revs) == 2 and None not in walls and walls[0] and cpus[0]:
            line += f"{walls[1] / walls[0]:11.2f}{cpus[1] / cpus[0]:10.2f}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default="HEAD", help="revision to measure (default HEAD)")
    ap.add_argument("--against", help="a second revision, measured after the first")
    ap.add_argument("--stages", help="comma-separated stages (default: all, in order)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per stage")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    stages = [s for s in (args.stages or "").split(",") if s] or None
    runs = {}
    for rev in [args.rev, *([args.against] if args.against else [])]:
        runs[rev] = measure(rev, args.workdir, stages, args.timeout)
    print(_table(runs))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["status"] == "ok" for rows in runs.values() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
