"""A snapshot or an ingest killed mid-write (SIGKILL in a subprocess) leaves the registry and the
snapshot list valid and the data unchanged.

Each child process runs the real library code with one function wrapped so that the process
sends itself SIGKILL at a chosen point: while tables are being written, or between the two
renames of the registry swap. SIGKILL cannot be caught, so no cleanup code runs.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from benchpress.store.releases import add_model
from benchpress.store.snapshot import create_snapshot, list_snapshots, verify_snapshot
from benchpress.store.sql import query
from benchpress.store.tables import TABLE_NAMES, registry_exists
from tests.conftest import BP_2026_05, CLI, REPO, make_home

# about 31 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=31)


KILL_AFTER = textwrap.dedent("""
    import os, signal, sys

    def kill_after(module, name, n):
        '''Wrap module.name: the (n+1)-th call kills this process instead.'''
        original, calls = getattr(module, name), [0]
        def wrapper(*args, **kwargs):
            calls[0] += 1
            if calls[0] > n:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)
        setattr(module, name, wrapper)

    def kill_after_tables(n):
        '''Kill at the (n+1)-th table written into a new registry folder (not the prepared
        versions a build keeps in .cache/prepared before it).'''
        import polars
        original, calls = polars.DataFrame.write_parquet, [0]
        def wrapper(self, file, *args, **kwargs):
            if ".registry.tmp-" in str(file):
                calls[0] += 1
                if calls[0] > n:
                    os.kill(os.getpid(), signal.SIGKILL)
            return original(self, file, *args, **kwargs)
        polars.DataFrame.write_parquet = wrapper

    def kill_before_swap_in():
        # kill between the registry swap's two renames (old moved away, new not yet in)
        original = os.replace
        def wrapper(src, dst, *args, **kwargs):
            if os.path.basename(str(src)).startswith(".registry.tmp-"):
                os.kill(os.getpid(), signal.SIGKILL)
            return original(src, dst, *args, **kwargs)
        os.replace = wrapper
""")


def _run_killed(script: str) -> None:
    proc = subprocess.run([sys.executable, "-c", KILL_AFTER + textwrap.dedent(script)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def _files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def home(tmp_path):
    home = make_home(tmp_path / "ws")
    add_model(home, "acme-2", {"gpqa_diamond": 71.2, "hle": 20.1},
              source_url="https://acme.example/blog/acme-2")
    return home


@pytest.mark.parametrize("where", ["copy", "rename"])
def test_killed_snapshot_leaves_no_half_snapshot(home, where):
    first, _ = create_snapshot(home, tag="first")
    add_model(home, "acme-3", {"hle": 25.0}, source_url="https://acme.example/blog/acme-3")
    registry = _files(home.registry)
    hook = ("kill_after(shutil, 'copyfile', 3)" if where == "copy"
            else "kill_after(os, 'rename', 0)")
    _run_killed(f"""
        import os, shutil
        from pathlib import Path
        from benchpress.home import Home
        from benchpress.store.snapshot import create_snapshot
        {hook}
        create_snapshot(Home(Path({str(home.root)!r})))
    """)
    # the kill happened mid-write: a hidden temporary folder is all that is left of it
    assert list(home.snapshots.glob(".tmp-*"))
    assert [s.id for s in list_snapshots(home)] == [first.id]
    assert [p.name for p in home.snapshots.iterdir() if not p.name.startswith(".")] == [first.id]
    assert verify_snapshot(list_snapshots(home)[0]) == []
    assert _files(home.registry) == registry
    # the next run cleans up and makes the snapshot whole
    second, created = create_snapshot(home)
    assert created and second.id != first.id and verify_snapshot(second) == []
    assert not list(home.snapshots.glob(".tmp-*"))


@pytest.mark.parametrize("where", ["tables", "swap"])
def test_killed_ingest_leaves_the_registry_unchanged(home, where):
    snap, _ = create_snapshot(home)
    registry = _files(home.registry)
    hook = ("kill_after_tables(3)" if where == "tables"
            else "kill_before_swap_in()")
    _run_killed(f"""
        import polars
        from pathlib import Path
        from benchpress.home import Home
        from benchpress.store.ingest import ingest
        {hook}
        ingest(Home(Path({str(home.root)!r})), {str(BP_2026_05)!r}, source_id="benchpress-2026-05")
    """)
    if where == "tables":
        # killed while writing the new tables: the live registry was never touched
        assert _files(home.registry) == registry
        assert list(home.root.glob(".registry.tmp-*"))
    else:
        # killed between the two renames: the old registry waits in registry.old, and
        # readers fall back to it until the next writer puts it back
        assert not (home.registry / "build.json").exists()
        assert _files(home.root / "registry.old") == registry
        assert registry_exists(home.registry)
        assert query(home.registry, "SELECT count(*) AS n FROM cells")["n"][0] == 2
    # the source whose build never finished was not recorded
    assert not (home.sources / "benchpress-2026-05.yaml").exists()
    # the snapshot list is untouched, and the next writer (which recovers first) sees the
    # old data: the same content id, so no new snapshot
    assert [s.id for s in list_snapshots(home)] == [snap.id]
    again, created = create_snapshot(home)
    assert not created and again.id == snap.id
    assert _files(home.registry) == registry
    assert not (home.root / "registry.old").exists()
    assert not list(home.root.glob(".registry.tmp-*"))
    assert query(home.registry, "SELECT count(*) AS n FROM cells")["n"][0] == 2
    assert {f"{t}.parquet" for t in TABLE_NAMES} <= set(_files(home.registry))


# --- faults of the file system: one line, exit 1, nothing partial left (issue 14 item 8) ---

def _cli(args, *, fsize: int | None = None):
    """Run the CLI as a user does; `fsize` is a file size limit in bytes (`ulimit -f`)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit if fsize else None)


def _leftovers(home) -> list[str]:
    patterns = [".registry.tmp-*", "registry.old", ".benchpress-journal.json*",
                "sources/.*.pending", "sources/.tmp-*", "snapshots/.tmp-*"]
    return [str(p) for pattern in patterns for p in home.root.glob(pattern)]


@pytest.fixture
def big_home(tmp_path):
    """A registry whose tables are larger than the 20 KB file size limit used below."""
    from benchpress.store.ingest import ingest

    home = make_home(tmp_path / "big")
    ingest(home, str(BP_2026_05), source_id="bp")
    add_model(home, "acme-2", {"hle": 20.1}, source_url="https://acme.example/blog/acme-2")
    return home


@pytest.mark.parametrize("command", [
    ["build"], ["snapshot", "create"],
    ["add-model", "acme-3", "--scores", "hle=25", "--source", "https://acme.example/3"],
])
def test_a_file_size_limit_is_one_line_and_leaves_nothing(big_home, command):
    registry, releases = _files(big_home.registry), big_home.releases_csv.read_bytes()
    result = _cli([*command, "--home", big_home.root], fsize=20_000)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: could not write ")
    assert "file too large" in result.stderr and "(EFBIG)" in result.stderr
    assert _files(big_home.registry) == registry and big_home.releases_csv.read_bytes() == releases
    assert _leftovers(big_home) == []
    assert list_snapshots(big_home) == []


@pytest.fixture
def read_only_home(big_home, tmp_path):
    """`big_home` seen through a read-only path: a read-only bind mount as root (root
    ignores permission bits), the write bits removed otherwise."""
    import os
    import stat

    if os.geteuid() == 0:
        view = tmp_path / "ro"
        view.mkdir()
        subprocess.run(["mount", "--bind", "-o", "ro", str(big_home.root), str(view)], check=True)
        yield big_home, view
        subprocess.run(["umount", str(view)], check=True)
    else:
        folders = [big_home.root, *(p for p in big_home.root.rglob("*") if p.is_dir())]
        for folder in folders:
            folder.chmod(folder.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        yield big_home, big_home.root
        for folder in folders:
            folder.chmod(folder.stat().st_mode | stat.S_IWUSR)


@pytest.mark.parametrize("command", [
    ["build"], ["snapshot", "create"],
    ["add-model", "acme-3", "--scores", "hle=25", "--source", "https://acme.example/3"],
    ["ingest", str(REPO / "sources" / "releases.csv"), "--id", "more"],
])
def test_a_read_only_home_is_one_line(read_only_home, command):
    home, view = read_only_home
    registry = _files(home.registry)
    result = _cli([*command, "--home", view])
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: could not ")
    assert ("read-only file system (EROFS)" in result.stderr
            or "permission denied (EACCES)" in result.stderr)
    assert str(view) in result.stderr
    assert _files(home.registry) == registry and _leftovers(home) == []


def test_concurrent_add_models_lose_cleanly(home):
    """Five add-models at once: each either lands (in releases.csv and the registry) or is
    refused at the lock having written nothing; the file is never rewritten by a loser."""
    import csv as csv_module

    from benchpress.store.tables import read_table

    procs = {f"acme-c{k}": subprocess.Popen(
        [*CLI, "add-model", f"acme-c{k}", "--scores", f"hle={30 + k}",
         "--source", f"https://acme.example/c{k}", "--home", str(home.root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(5)}
    outcome = {m: (p.wait(timeout=120), p.stderr.read()) for m, p in procs.items()}
    won = {m for m, (code, _) in outcome.items() if code == 0}
    lost = {m for m, (code, err) in outcome.items() if code == 1 and "another build is running" in err}
    assert won and won | lost == set(procs), outcome
    with open(home.releases_csv, encoding="utf-8", newline="") as fh:
        in_csv = {r["model_id"] for r in csv_module.DictReader(fh)}
    in_registry = set(read_table(home.registry, "scores")["model_id"])
    assert in_csv == in_registry == {"acme-2"} | won


@pytest.mark.parametrize("where, committed", [
    ("before the journal", False), ("writing the tables", False),
    ("after the swap", True), ("after the rename", True),
])
def test_killed_add_model_rolls_back_or_forward(home, where, committed):
    """SIGKILL at each step of add-model's transaction: the next command leaves the row in
    both releases.csv and the registry (killed after the commit point) or in neither."""
    import csv as csv_module

    from benchpress.store.build import build
    from benchpress.store.journal import journal_path
    from benchpress.store.tables import read_table

    hook = {
        "before the journal": "kill_after(build_module, 'begin', 0)",
        "writing the tables": "kill_after_tables(3)",
        "after the swap": "kill_after(build_module, 'finish', 0)",
        # journal_path: settle, begin, then finish's last step (removing the journal)
        "after the rename": "kill_after(journal_module, 'journal_path', 2)",
    }[where]
    _run_killed(f"""
        import polars
        from pathlib import Path
        import benchpress.store.build as build_module
        import benchpress.store.journal as journal_module
        from benchpress.home import Home
        from benchpress.store.releases import add_model
        {hook}
        add_model(Home(Path({str(home.root)!r})), "acme-3", {{"hle": 25.0}},
                  source_url="https://acme.example/blog/acme-3")
    """)
    # what the kill left: a candidate file, and from the journal step on, the journal
    assert (home.sources / ".releases.csv.pending").exists() == (where != "after the rename")
    assert journal_path(home).exists() == (where != "before the journal")
    build(home)  # the next command settles the interrupted transaction first

    def models():
        with open(home.releases_csv, encoding="utf-8", newline="") as fh:
            in_csv = {r["model_id"] for r in csv_module.DictReader(fh)}
        return in_csv, set(read_table(home.registry, "scores")["model_id"])

    expected = {"acme-2", "acme-3"} if committed else {"acme-2"}
    assert models() == (expected, expected)
    assert not journal_path(home).exists() and _leftovers(home) == []
    add_model(home, "acme-4", {"hle": 30.0}, source_url="https://acme.example/blog/acme-4")
    assert models() == (expected | {"acme-4"},) * 2


@pytest.mark.parametrize("hook, committed", [
    ("kill_after(build_module, 'finish', 0)", True),
    ("kill_after_tables(3)", False),
])
def test_snapshot_create_settles_a_killed_add_model_first(home, hook, committed):
    """A journal left mid-transaction, then `snapshot create`: the snapshot holds the rows
    releases.csv holds (rolled forward or back before the freeze), not only the registry's."""
    import csv as csv_module

    import polars as pl

    from benchpress.store.journal import journal_path

    _run_killed(f"""
        import polars
        from pathlib import Path
        import benchpress.store.build as build_module
        from benchpress.home import Home
        from benchpress.store.releases import add_model
        {hook}
        add_model(Home(Path({str(home.root)!r})), "acme-3", {{"hle": 25.0}},
                  source_url="https://acme.example/blog/acme-3")
    """)
    assert journal_path(home).exists()
    snapshot, created = create_snapshot(home)
    assert created and not journal_path(home).exists()
    with open(home.releases_csv, encoding="utf-8", newline="") as fh:
        in_csv = {r["model_id"] for r in csv_module.DictReader(fh)}
    in_snapshot = set(pl.read_parquet(snapshot.path / "scores.parquet")["model_id"])
    expected = {"acme-2", "acme-3"} if committed else {"acme-2"}
    assert in_csv == in_snapshot == expected
    assert not (home.sources / ".releases.csv.pending").exists()

