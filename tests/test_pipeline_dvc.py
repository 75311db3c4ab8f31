"""The DVC pipeline end to end, with real DVC, real git and a temporary local remote.

A workspace is assembled from this checkout's pipeline files (dvc.yaml, params.yaml, .dvc/,
the package, contracts and two source configs), so uncommitted work is what gets tested.
The story: 2026-02 matrix -> `dvc repro` -> commit; add the 2026-05 matrix -> `dvc repro`
-> commit; `dvc repro` again does nothing; one changed score re-runs the stages below it and
adds exactly one snapshot; `dvc push --all-commits`; a fresh clone `dvc pull`s byte-identical
snapshots (and an old revision's registry); a fresh clone without the remote re-makes the
latest snapshot (same content id) offline with `dvc repro`. The predictor's stages write
metrics and plot data that `dvc metrics diff` and `dvc plots diff` compare across revisions.

The predictor's stages end to end: tests/test_pipeline_dvc_predictor.py (a module of its own,
so that `make test` runs the two on different workers). Both are marked slow: `make
test-quick` leaves them out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchpress.store.diff import diff_folders
from benchpress.store.snapshot import Snapshot, registry_metrics, verify_snapshot
from tests.conftest import REPO, SHARED_DATA

FEB, MAY = "llm-benchmark-matrix-2026-02", "benchpress-2026-05"
# the registry's stages (the story below runs the pipeline up to them, `dvc repro
# snapshot registry_metrics`); the predictor's stages run once at the end, on the final data
ALL = {"pull", "build", "snapshot", "registry_metrics"}
PREDICTOR = {"fit", "pretrained", "evaluate", "new_models", "temporal", "later_releases",
             "intervals", "probes", "drift", "forecasts", "plot_data"}
PLOTS = {"probe_curve", "drift_error", "drift_structure", "forecast_error"}
RELEASE = ("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,reference_url,"
           "source_type,reported_setting,notes\n"
           "acme-2,Acme 2,Acme,2026-11-01,false,gpqa_diamond,{score},"
           "https://acme.example/blog/acme-2,official_blog,,\n")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BENCHPRESS_", "DVC_", "GIT_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    return env


def run(cwd: Path, *args: str, stdout_only: bool = False) -> str:
    proc = subprocess.run(list(args), cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout if stdout_only else proc.stdout + proc.stderr


def metrics_diff(cwd: Path, rev: str, *flags: str) -> dict:
    """`dvc metrics diff REV --json` (stdout only: warnings go to stderr)."""
    return json.loads(run(cwd, sys.executable, "-m", "dvc", "metrics", "diff", rev, "--json",
                          *flags, stdout_only=True))


def plots(cwd: Path, *args: str) -> dict[str, dict]:
    """`dvc plots show|diff ... --json`: plot id -> {"revisions": [...], "values": [...]}."""
    out = json.loads(run(cwd, sys.executable, "-m", "dvc", "plots", *args, "--json",
                         stdout_only=True))
    found = {}
    for plot_id, renders in out["data"].items():
        (render,) = renders
        assert render["type"] == "vega", plot_id
        found[plot_id] = {"revisions": sorted(render["revisions"]),
                          "values": render["content"]["data"]["values"]}
    return found


def dvc(cwd: Path, *args: str) -> str:
    return run(cwd, sys.executable, "-m", "dvc", *args)


def repro(cwd: Path) -> str:
    """`dvc repro` of the registry's stages only."""
    return dvc(cwd, "repro", "snapshot", "registry_metrics")


def commit(ws: Path, message: str) -> None:
    run(ws, "git", "add", "-A")
    run(ws, "git", "commit", "-q", "-m", message)


def ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def snapshot_ids(ws: Path) -> list[str]:
    """Ids of the complete snapshots, oldest first (what `benchpress snapshot list` shows)."""
    manifests = [json.loads(p.read_text()) for p in (ws / "snapshots").glob("*/manifest.json")]
    return [m["id"] for m in sorted(manifests, key=lambda m: (m["created_at"], m["id"]))]


def monthly(ws: Path) -> dict[str, str]:
    """month tag -> id of the snapshot carrying it (`snapshot create --monthly`)."""
    manifests = [json.loads(p.read_text()) for p in (ws / "snapshots").glob("*/manifest.json")]
    return dict(sorted((t, m["id"]) for m in manifests for t in m["tags"]))


def make_workspace(ws: Path, remote: Path, *, overrides: dict | None = None) -> None:
    """A git + DVC workspace from this checkout's pipeline files; `overrides` ({section:
    {key: value}}) replaces values of its params.yaml."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("benchpress", "schemas"):
        shutil.copytree(REPO / folder, ws / folder, ignore=ignore)
    for name in ("dvc.yaml", "params.yaml", ".dvcignore", ".gitignore", ".dvc/config",
                 ".dvc/.gitignore", "benchmarks/later_releases.py"):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, ws / name)
    params = yaml.safe_load((ws / "params.yaml").read_text())
    params["data"]["mirror"] = str(SHARED_DATA)
    for section, values in (overrides or {}).items():
        assert set(values) <= set(params[section]), f"params.yaml has no {section}.{values}"
        params[section].update(values)
    (ws / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (ws / "sources").mkdir()
    for name in (f"{FEB}.yaml", "releases.yaml"):
        shutil.copyfile(REPO / "sources" / name, ws / "sources" / name)
    (ws / "sources" / "releases.csv").write_text(RELEASE.format(score="71.2"))
    run(ws, "git", "init", "-q", "-b", "main")
    dvc(ws, "remote", "modify", "store", "url", str(remote))


@pytest.mark.slow(seconds=55)
@pytest.mark.usefixtures("shared_data")
def test_repro_push_clone_pull_gives_identical_snapshots(tmp_path):
    ws, remote = tmp_path / "ws", tmp_path / "remote"
    make_workspace(ws, remote)

    out = repro(ws)
    assert ALL <= ran(out)
    commit(ws, "2026-02 matrix")
    (feb,) = snapshot_ids(ws)
    feb_cells = json.loads((ws / "metrics" / "registry.json").read_text())["n_cells"]
    assert feb_cells > 1300  # the 2026-02 matrix (checked in detail in test_diff.py) + 1

    assert monthly(ws) == {"2026-02": feb}  # one month: the Feb matrix (and the releases)

    # a later source: a snapshot per month from February to May. The hand-entered releases
    # carry no date, so they belong to the newest month: February is now the Feb matrix
    # alone (a new snapshot, its tag moved), and March and April, which brought no version,
    # are February's snapshot again
    shutil.copyfile(REPO / "sources" / f"{MAY}.yaml", ws / "sources" / f"{MAY}.yaml")
    assert ALL <= ran(repro(ws))
    commit(ws, "2026-05 matrix")
    two = snapshot_ids(ws)
    assert two[0] == feb and len(two) == 3
    months = monthly(ws)
    assert list(months) == ["2026-02", "2026-03", "2026-04", "2026-05"]
    assert months["2026-02"] == months["2026-03"] == months["2026-04"] == two[1]
    assert months["2026-05"] == two[2]

    # nothing changed: nothing runs, nothing is rewritten
    before = tree(ws / "snapshots")
    out = repro(ws)
    assert ran(out) == set() and "Data and pipelines are up to date" in out
    assert tree(ws / "snapshots") == before

    # one changed score: the stages below it run again and add exactly one snapshot, the
    # newest month's (the months before are reused by their inputs' digest)
    (ws / "sources" / "releases.csv").write_text(RELEASE.format(score="71.3"))
    assert ALL <= ran(repro(ws))
    commit(ws, "acme-2 gpqa_diamond 71.2 -> 71.3")
    ids = snapshot_ids(ws)
    assert len(ids) == 4 and ids[:3] == two
    assert monthly(ws) == dict(months, **{"2026-05": ids[3]})
    cells = diff_folders(ws / "snapshots" / ids[2], ws / "snapshots" / ids[3]).cells
    assert cells.select("change", "model_id", "benchmark_id", "score_a", "score_b").rows() == \
        [("changed", "acme-2", "gpqa_diamond", 71.2, 71.3)]
    # a contract edit re-runs the build and the monthly snapshots (both read the contracts):
    # the build is deterministic, so tables that come out byte-identical stop the pipeline
    # there (no re-pull, no new snapshot, the snapshots folder unchanged)
    before = tree(ws / "snapshots")
    with open(ws / "schemas" / "scales.yaml", "a", encoding="utf-8") as fh:
        fh.write("# reviewed\n")
    out = ran(repro(ws))
    assert out == {"build", "snapshot"}
    assert snapshot_ids(ws) == ids and tree(ws / "snapshots") == before
    commit(ws, "contract comment")

    # metrics differ meaningfully between revisions
    metrics = metrics_diff(ws, "HEAD~3")
    cells = metrics["metrics/registry.json"]["n_cells"]
    assert cells["old"] == feb_cells and cells["new"] > cells["old"]

    # push every revision's data; a fresh clone pulls byte-identical snapshots
    dvc(ws, "push", "--all-commits")
    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", str(ws), str(clone))
    assert not (clone / "snapshots").exists()
    dvc(clone, "pull", *sorted(ALL))  # the registry stages' outputs (the story ran no others)
    assert tree(clone / "snapshots") == tree(ws / "snapshots")
    assert tree(clone / "registry") == tree(ws / "registry")
    assert "Data and pipelines are up to date" in repro(clone)
    assert all(verify_snapshot(Snapshot.load(clone / "snapshots" / i)) == [] for i in ids)
    # an old revision's registry is on the remote too
    run(clone, "git", "checkout", "-q", "HEAD~3")
    dvc(clone, "pull", "--force", *sorted(ALL))
    assert snapshot_ids(clone) == [feb]
    assert registry_metrics(clone / "registry")["n_cells"] == feb_cells

    # a fresh clone without the remote re-makes the latest snapshot offline, from the mirror
    fresh = tmp_path / "fresh"
    run(tmp_path, "git", "clone", "-q", str(ws), str(fresh))
    # (metrics files live in git, and the rebuilt registry is byte-identical, so the
    # metrics stage has nothing to do)
    assert ran(repro(fresh)) == ALL - {"registry_metrics"}
    assert monthly(fresh) == monthly(ws)  # the months as they stand (not the superseded ones)
    assert snapshot_ids(fresh) == [ids[1], ids[3]]
    assert tree(fresh / "snapshots" / ids[-1]).keys() == tree(ws / "snapshots" / ids[-1]).keys()
    assert (fresh / "metrics" / "registry.json").read_bytes() == \
        (ws / "metrics" / "registry.json").read_bytes()
