"""SIGKILL at random points of `build`, `snapshot create`, `add-model`, `ingest`, `fit --out`
and `predict` (which writes the fit cache), each run as its own process (forked from one that imported the CLI once, `tests/forked_cli.py`, so
that the kills land in the commands' work, not in the interpreter's start), at least 91
kills (issue 45), with the invariants checked after each:

- after the recovery the next command runs first (`tables.recover` and `journal.settle`
  under the lock), no temporary registry folder, journal or candidate file is left, and the
  registry is one complete build (every table, with the counts its build.json records);
- releases.csv and the registry agree row for row (no phantom row: a killed add-model is in
  both or in neither), the registry records releases.csv's digest, and the source configs
  are exactly the registry's sources;
- every add-model and ingest that reported success is still there, and nothing that was
  there once is lost later;
- every snapshot listed verifies (a folder whose bytes already verified is not read
  through again: `verify_snapshot` and `load_artifact` read nothing but the folder, so the
  same bytes give the same answer; a byte changed since is verified anew);
- the `fit --out` folder, once its swap is settled as the next write settles it
  (`settle_swap`), is a whole artifact (every digest verifies and it loads), never missing
  once a run has written it, with no `.old` or trash folder beside it;
- the fit cache, once the next write's lock has swept what killed writes left, holds no
  temporary folder, every fit in it loads whole, and its index is bounded.

A small home (releases.csv and one small source) keeps each command near a quarter of a
second (it was twice that with Python's start and imports in each run); each kill lands at
a random delay between a fifth of the command's calibrated run time and a little past its
end (never above 1.5 s), so that some runs also finish and report success between the
kills.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import signal
import time
from pathlib import Path

import polars as pl
import pytest

from benchpress.api.artifact import MANIFEST, load_artifact
from benchpress.api.fit_store import INDEX_DIR, INDEX_PER_FIT, FitStore, fit_cache_dir
from benchpress.store.ingest import ingest
from benchpress.store.journal import journal_path, settle
from benchpress.store.releases import add_model
from benchpress.store.snapshot import Snapshot, list_snapshots, verify_snapshot
from benchpress.store.tables import TABLE_NAMES, locked, recover, settle_swap
from tests.conftest import REPO, make_home
from tests.forked_cli import ForkedCLI

pytestmark = pytest.mark.slow(seconds=28)  # half a minute of kills; `make test` runs it

MIN_KILLS = 91
# the loop stops at MIN_KILLS (about 25 s on an idle machine); the budget only bounds a
# machine so loaded that kills come slowly (`make test` runs two workers beside whatever else
# runs: 38 kills in 85 s were measured under a load of 9 on 2 cores)
TIME_BUDGET_S = 420.0
HEADER = "model_id,benchmark_id,score,reference_url,source_type\n"


#: imported once by the zygote the commands are forked from
PRELOAD = ("benchpress.cli.registry_cmds", "benchpress.cli.snapshot_cmds",
           "benchpress.cli.fit_cmds", "benchpress.cli.predict_cmds", "benchpress.api",
           "benchpress.store.build", "benchpress.store.ingest", "benchpress.store.releases",
           "benchpress.store.snapshot", "benchpress.validate.schemas", "scipy.sparse")


def _small_source(folder: Path, k: int) -> Path:
    path = folder / f"ext-{k}.csv"
    path.write_text(HEADER + f"ext-{k},hle,{10 + k % 50},https://ext.example/{k},official_blog\n",
                    encoding="utf-8")
    return path


def _commands(home: Path, inputs: Path, k: int) -> dict[str, list[str]]:
    fit = ["--home", str(home), "--method", "als4", "--param", f"n_starts={2 + k % 3}"]
    return {
        "fit --out": ["fit", *fit, "--out", str(inputs.parent / "fit-out")],
        "predict": ["predict", *fit, "--scores", f"hle={k % 90 + 1}", "--format", "csv"],
        "build": ["build", "--home", str(home)],
        "snapshot create": ["snapshot", "create", "--home", str(home)],
        "add-model": ["add-model", f"acme-{k}", "--scores", f"hle={k % 90 + 1},gpqa_diamond=50",
                      "--source", f"https://acme.example/{k}", "--home", str(home)],
        "ingest": ["ingest", str(_small_source(inputs, k)), "--id", f"ext-{k}",
                   "--adapter", "releases-csv", "--home", str(home)],
    }


def _releases_rows(path: Path) -> set[tuple[str, str, float]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return {(r["model_id"], r["benchmark_id"], float(r["score"])) for r in csv.DictReader(fh)}


def _folder_digest(folder: Path) -> str:
    """sha256 over every file of `folder` (relative path and content)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0"
                          + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _whole(state: dict, folder: Path, check) -> None:
    """`check(folder)` (it raises or asserts when the folder is not whole), unless a folder
    of these very bytes at this path passed it before in this loop: the checks read nothing
    else, and most of the folders stay as they were from one command to the next (the
    whole checks of every snapshot and stored fit after every run were most of the loop's
    time)."""
    key = (str(folder), _folder_digest(folder))
    if key not in state["whole"]:
        check(folder)
        state["whole"].add(key)


def _snapshot_verifies(folder: Path) -> None:
    snap = Snapshot.load(folder)
    assert verify_snapshot(snap) == [], snap.id


def _check(home, state: dict) -> None:
    """Recover as the next command would, then assert every invariant of the docstring."""
    with locked(home.lock):
        recover(home.registry)
        settle(home)
    root = home.root
    assert not list(root.glob(".registry.tmp-*")) and not (root / "registry.old").exists()
    assert not journal_path(home).exists() and not list(home.sources.glob(".*.pending"))
    manifest = json.loads((home.registry / "build.json").read_text())
    tables = {t: pl.read_parquet(home.registry / f"{t}.parquet") for t in TABLE_NAMES}
    assert {t: df.height for t, df in tables.items()} == manifest["counts"]
    csv_rows = _releases_rows(home.releases_csv)
    releases = tables["scores"].filter(pl.col("source_id") == "releases")
    assert csv_rows == set(releases.select("model_id", "benchmark_id", "score").rows())
    assert manifest["sources"]["releases"] == hashlib.sha256(home.releases_csv.read_bytes()).hexdigest()
    configs = {p.stem for p in home.sources.glob("*.yaml")}
    assert configs == set(tables["sources"]["source_id"])
    # reported successes are durable, and nothing present once is lost later
    assert state["added"] <= {m for m, _, _ in csv_rows}, state["added"] - {m for m, _, _ in csv_rows}
    assert state["ingested"] <= configs
    assert state["rows"] <= csv_rows and state["configs"] <= configs
    state["rows"], state["configs"] = csv_rows, configs
    for snap in list_snapshots(home):
        _whole(state, snap.path, _snapshot_verifies)
    _check_fits(home, state)


def _check_fits(home, state: dict) -> None:
    """The invariants of the `fit --out` folder and the fit cache (see the docstring)."""
    out = home.root.parent / "fit-out"
    settle_swap(out, MANIFEST)
    assert not out.with_name("fit-out.old").exists() and not list(out.parent.glob(".fit-out.*"))
    if state["fit_out"]:
        assert out.is_dir(), "a fit --out that reported success is gone"
    if out.exists():
        _whole(state, out, load_artifact)
    cache = fit_cache_dir(home)
    if cache.exists():
        with FitStore(cache)._write_lock():
            entries = [p.name for p in cache.iterdir()]
            assert not [n for n in entries if ".tmp-" in n or n.endswith(".old")], entries
            for entry in cache.iterdir():
                if len(entry.name) == 41 and entry.is_dir():  # a fit (`FitStore.key`)
                    _whole(state, entry, load_artifact)
            index = cache / INDEX_DIR
            assert not index.exists() or len(list(index.iterdir())) <= INDEX_PER_FIT * 6


def _record_success(state: dict, name: str, k: int) -> None:
    if name == "fit --out":
        state["fit_out"] = True
    elif name == "add-model":
        state["added"].add(f"acme-{k}")
    elif name == "ingest":
        state["ingested"].add(f"ext-{k}")


@pytest.fixture
def run(tmp_path):
    """``run(argv, kill_after)`` -> (exit code, stderr) of a command forked from the zygote."""
    with ForkedCLI(REPO, PRELOAD) as cli:
        yield lambda argv, delay: cli.run(argv, tmp_path / "stderr.txt", delay)


def test_random_sigkills_leave_no_lost_or_phantom_rows(tmp_path, monkeypatch, run):
    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    monkeypatch.delenv("BENCHPRESS_CACHE", raising=False)
    monkeypatch.delenv("BENCHPRESS_FIT_CACHE", raising=False)
    home = make_home(tmp_path / "ws")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    add_model(home, "acme-0", {"hle": 20.0}, source_url="https://acme.example/0")
    ingest(home, str(_small_source(inputs, 0)), adapter="releases-csv", source_id="ext-0")
    state = {"added": {"acme-0"}, "ingested": {"ext-0"}, "rows": set(), "configs": set(),
             "fit_out": False, "whole": set()}
    _check(home, state)

    rng = random.Random(14)
    runtime = {}
    for k, name in enumerate(["build", "snapshot create", "add-model", "ingest", "fit --out",
                              "predict"], start=1):
        start = time.perf_counter()  # calibration: each command once, to its end
        code, err = run(_commands(home.root, inputs, k)[name], None)
        runtime[name] = time.perf_counter() - start
        assert code == 0, err
        _record_success(state, name, k)
        _check(home, state)

    kills, runs, started = 0, 0, time.perf_counter()
    k = 100
    while kills < MIN_KILLS and time.perf_counter() - started < TIME_BUDGET_S:
        k += 1
        name = rng.choice(sorted(runtime))
        # a fit's write (and its swap) comes at its end: its kills range over all of it
        cap = 1.5 if name in ("build", "snapshot create", "add-model", "ingest") else 4.0
        delay = min(cap, rng.uniform(0.2, 1.2) * runtime[name])
        code, err = run(_commands(home.root, inputs, k)[name], delay)
        runs += 1
        if code == -signal.SIGKILL:
            kills += 1
        else:
            assert code == 0, f"{name}: exit {code}: {err}"
            _record_success(state, name, k)
        _check(home, state)
    print(f"{kills} kills in {runs} runs, {time.perf_counter() - started:.1f} s; calibrated "
          f"run times {runtime}")
    assert kills >= MIN_KILLS, f"only {kills} kills in {runs} runs within {TIME_BUDGET_S} s"

    # the next plain command of each kind succeeds and leaves no temporary files anywhere
    for name in ("build", "snapshot create", "fit --out", "predict"):
        code, err = run(_commands(home.root, inputs, k + 1)[name], None)
        assert code == 0, err
    assert not list(home.snapshots.glob(".tmp-*"))
    _check(home, state)
