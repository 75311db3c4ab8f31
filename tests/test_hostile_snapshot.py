"""Hostile registry and snapshot folders: SQL text planted in a data folder never runs, and
damaged or edited tables are refused in one line wherever they are read.

One registry (the 2026-05 matrix, with snapshot `base`) per module, copied from the session's
build; every test works on its own copy and damages it itself.
"""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import RegistryError
from benchpress.home import Home
from benchpress.store import tables
from benchpress.store.matrix import load_matrix
from benchpress.store.snapshot import create_snapshot, get_snapshot
from benchpress.store.sql import query
from benchpress.store.tables import read_table

N_CELLS = 2604
PWN = "\nCOPY (SELECT * FROM read_csv('/etc/passwd', header=false, sep='|')) TO 'pwn.csv';\n"


@pytest.fixture(scope="module")
def built(built_2026_05) -> Home:
    home = built_2026_05  # this module's copy of the session's 2026-05 registry
    create_snapshot(home, tag="base")
    return home


@pytest.fixture
def ws(built, tmp_path, monkeypatch) -> Home:
    """A private copy of the built workspace; the current folder is an empty scratch folder."""
    home = Home(tmp_path / "ws")
    shutil.copytree(built.root, home.root)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return home


def _cli(home: Home, *args: str):
    return CliRunner().invoke(main, [*args, "--home", str(home.root)])


def _one_line_error(res, code: int = 1) -> str:
    assert res.exit_code == code, (res.exit_code, res.output)
    assert "Traceback" not in res.output and "ComputeError" not in res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def _flip_bit(path, offset_fraction: float = 0.5, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * offset_fraction)] ^= 1 << bit
    path.write_bytes(bytes(data))


def _rewrite_one_score(path) -> tuple[str, str, float]:
    """Rewrite a cells table as valid Parquet with one score changed; returns the cell."""
    cells = pl.read_parquet(path)
    row = cells.row(0, named=True)
    changed = cells.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(99.9).otherwise(pl.col("score")).alias("score"))
    changed.write_parquet(path)
    assert pl.read_parquet(path)["score"][0] == 99.9 != row["score"]
    return row["model_id"], row["benchmark_id"], row["score"]


def _no_file_written(*folders) -> None:
    for folder in folders:
        assert not list(folder.rglob("pwn.csv")), folder


# --- 1. no SQL text from a data folder runs ---------------------------------------------------

@pytest.mark.parametrize("where", ["snapshot", "registry"])
def test_sql_planted_in_views_sql_never_runs(ws, tmp_path, where):
    snap = get_snapshot(ws, "base")
    folder = snap.path if where == "snapshot" else ws.registry
    # a snapshot made before this change carried the registry's views.sql: give it one
    views = folder / "views.sql"
    views.write_text((ws.registry / "views.sql").read_text() + PWN
                     + "CREATE OR REPLACE VIEW cells AS SELECT 1 AS model_id;\n")
    args = ("--snapshot", snap.id) if where == "snapshot" else ()
    res = _cli(ws, "sql", "SELECT count(*) AS n FROM cells", *args, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == [{"n": N_CELLS}]
    _no_file_written(tmp_path, folder)
    # the planted text is not data: the snapshot's tables still verify
    res = _cli(ws, "snapshot", "show", snap.id, "--verify", "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["id"] == snap.id


def test_a_snapshot_with_no_views_sql_answers_every_view(ws):
    snap = get_snapshot(ws, "base")
    (snap.path / "views.sql").unlink(missing_ok=True)
    for view in ("matrix", "conflicts", "source_values", "source_comparison"):
        assert query(snap.path, f"SELECT count(*) AS n FROM {view}")["n"][0] >= 0
    assert query(snap.path, "SELECT count(*) AS n FROM matrix")["n"][0] == 84
    assert query(snap.path, "SELECT count(*) AS n FROM source_values")["n"][0] == N_CELLS


def test_new_snapshots_carry_no_sql_text(ws):
    assert not (get_snapshot(ws, "base").path / "views.sql").exists()


# --- 2. damaged or edited tables are never served --------------------------------------------

def test_a_flipped_bit_in_a_snapshot_is_refused_everywhere(ws):
    snap = get_snapshot(ws, "base")
    _flip_bit(snap.path / "cells.parquet")
    expected = f"Error: snapshot {snap.id}: cells.parquet does not match its manifest digest"
    for args in (["sql", "SELECT count(*) FROM cells", "--snapshot", snap.id],
                 ["diff", snap.id, "current"],
                 ["diff", "current", "base", "--format", "json"],
                 ["stats", "--snapshot", "base"]):
        assert _one_line_error(_cli(ws, *args)).startswith(expected), args
    line = _one_line_error(_cli(ws, "snapshot", "show", "base", "--verify"))
    assert line.startswith(f"Error: snapshot {snap.id} is damaged: ")
    assert "cells.parquet: file hash differs from the manifest" in line
    with pytest.raises(RegistryError, match="cells.parquet does not match its manifest digest"):
        load_matrix(snap.path)
    # the other tables are intact and still served
    assert read_table(snap.path, "models").height == 84


def test_a_valid_parquet_rewrite_of_a_snapshot_is_not_a_change(ws):
    snap = get_snapshot(ws, "base")
    _rewrite_one_score(snap.path / "cells.parquet")
    for args in (["sql", "SELECT score FROM cells", "--snapshot", "base"],
                 ["diff", "base", "current", "--format", "json"]):
        line = _one_line_error(_cli(ws, *args))
        assert f"snapshot {snap.id}: cells.parquet does not match its manifest digest" in line
    line = _one_line_error(_cli(ws, "snapshot", "show", "base", "--verify"))
    assert "content hash differs" in line and "does not match the content" in line


def test_the_live_registry_is_checked_against_its_build_record(ws):
    recorded = json.loads((ws.registry / "build.json").read_text())["files"]
    assert set(recorded) >= {f"{t}.parquet" for t in tables.TABLE_NAMES}
    model, bench, score = _rewrite_one_score(ws.registry / "cells.parquet")
    line = _one_line_error(_cli(ws, "sql", "SELECT * FROM cells WHERE model_id = $m",
                                "-p", "m", model))
    assert line.startswith(f"Error: registry {ws.registry}: cells.parquet does not match")
    assert "benchpress build" in line
    # a snapshot is refused too: it would freeze the edited table
    _one_line_error(_cli(ws, "snapshot", "create"))


def test_an_undecodable_table_is_one_line_not_a_traceback(ws):
    snap = get_snapshot(ws, "base")
    path = snap.path / "scores.parquet"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle - 200:middle + 200] = b"\xff" * 400  # inside the compressed pages
    path.write_bytes(bytes(data))
    line = _one_line_error(_cli(ws, "snapshot", "show", "base", "--verify"))
    assert "scores.parquet: file hash differs" in line
    assert "scores.parquet: not readable Parquet" in line or "content hash differs" in line
    _one_line_error(_cli(ws, "diff", "base", "current"))
    # a build record without its digests is refused, not read unchecked (issue 27, Low 9)
    shutil.copyfile(path, ws.registry / "scores.parquet")
    build = json.loads((ws.registry / "build.json").read_text())
    del build["files"]
    (ws.registry / "build.json").write_text(json.dumps(build))
    with pytest.raises(pl.exceptions.ComputeError):  # the damage defeats the decoder
        pl.read_parquet(ws.registry / "scores.parquet")
    line = _one_line_error(_cli(ws, "sql", "SELECT count(*) FROM scores"))
    assert f"{ws.registry / 'build.json'}: lists no file digests" in line
    assert "benchpress build" in line


def test_a_missing_table_is_one_line(ws):
    snap = get_snapshot(ws, "base")
    (snap.path / "models.parquet").unlink()
    line = _one_line_error(_cli(ws, "sql", "SELECT 1", "--snapshot", "base"))
    assert line.startswith(f"Error: snapshot {snap.id}: models.parquet cannot be read")


def test_each_file_is_hashed_once_per_process(ws, monkeypatch):
    snap = get_snapshot(ws, "base")
    calls = []
    real = tables.hashlib.sha256

    class Spy:
        @staticmethod
        def sha256(data=b""):
            calls.append(len(data))
            return real(data)

    monkeypatch.setattr(tables, "hashlib", Spy)
    first = read_table(snap.path, "cells")
    assert len(calls) == 1
    assert read_table(snap.path, "cells").equals(first) and len(calls) == 1
    # a changed file (new size or modification time) is hashed again, and refused
    _flip_bit(snap.path / "cells.parquet", 0.3)
    with pytest.raises(RegistryError, match="does not match its manifest digest"):
        read_table(snap.path, "cells")
    assert len(calls) == 2
