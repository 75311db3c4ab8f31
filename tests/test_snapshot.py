"""Snapshots: content-derived ids, immutability, resolution by id/tag/latest, CLI."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import SnapshotNotFound, UsageError
from benchpress.home import Home
from benchpress.store.diff import diff
from benchpress.store.ingest import ingest
from benchpress.store.releases import add_model
from benchpress.store.snapshot import (
    create_snapshot, get_snapshot, list_snapshots, resolve_snapshot, table_digest, verify_snapshot,
)
from benchpress.store.sql import query
from benchpress.store.tables import TABLE_NAMES, write_folder_atomic
from benchpress.version import __version__
from tests.conftest import BP_2026_05, make_home

# about 6 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=6)

URL = "https://acme.example/blog/acme-2"


def _small_home(root):
    """A workspace whose registry holds one hand-entered release (builds in well under 1 s)."""
    home = make_home(root)
    add_model(home, "acme-2", {"gpqa_diamond": 71.2, "hle": 20.1}, source_url=URL,
              provider="Acme", release_date="2026-11-01")
    return home


def test_create_freezes_a_byte_copy_with_a_full_manifest(built_2026_05):
    home = built_2026_05
    snap, created = create_snapshot(home, tag="may")
    assert created and snap.path == home.snapshots / snap.id
    assert len(snap.id) == 16 and all(c in "0123456789abcdef" for c in snap.id)
    for name in TABLE_NAMES:
        assert (snap.path / f"{name}.parquet").read_bytes() == \
            (home.registry / f"{name}.parquet").read_bytes()
    m = json.loads((snap.path / "manifest.json").read_text())
    assert m["id"] == snap.id and m["tags"] == ["may"] and m["created_at"].startswith("20")
    assert m["benchpress_version"] == __version__
    assert set(m["tables"]) == set(TABLE_NAMES)
    assert all(len(t["content_sha256"]) == 64 and len(t["file_sha256"]) == 64
               for t in m["tables"].values())
    assert m["counts"]["cells"] == pl.read_parquet(home.registry / "cells.parquet").height == 2604
    assert m["metrics"]["n_models"] == 84 and m["metrics"]["n_benchmarks"] == 133
    assert m["metrics"]["n_models_scored"] == 84
    (source,) = m["sources"]
    assert source["source_id"] == "benchpress-2026-05"
    assert source["sha256"] == "0a72850d418a944f96033823ae98b74a422c4b206f60160215a9fc49473d206f"
    assert verify_snapshot(snap) == []
    # a snapshot is a registry folder: SQL runs on it as on the live registry
    assert query(snap.path, "SELECT count(*) AS n FROM cells")["n"][0] == 2604


def test_same_data_same_id_and_nothing_rewritten(built_2026_05):
    home = built_2026_05
    first, _ = create_snapshot(home)
    before = {p.name: p.read_bytes() for p in first.path.iterdir() if p.name != "manifest.json"}
    again, created = create_snapshot(home, tag="weekly")
    assert not created and again.id == first.id
    assert "weekly" in again.tags and again.created_at == first.created_at
    assert {p.name: p.read_bytes() for p in again.path.iterdir() if p.name != "manifest.json"} == before
    assert [s.id for s in list_snapshots(home)] == [first.id]


def test_id_is_stable_across_independent_builds(tmp_path, built_2026_05):
    """Rebuilding the same inputs elsewhere (new fetch times) gives the same id."""
    other = make_home(tmp_path / "other")
    ingest(other, str(BP_2026_05), source_id="benchpress-2026-05")
    assert create_snapshot(other)[0].id == create_snapshot(built_2026_05)[0].id


def test_source_date_epoch_makes_the_snapshot_byte_identical_and_latest_stays_last(
        tmp_path, monkeypatch):
    """With SOURCE_DATE_EPOCH (as the pipeline sets it) the same registry gives the same
    bytes in two workspaces (what a fresh clone's `dvc repro` needs); a second snapshot
    dated alike is stamped a microsecond later, so `latest` is still the one made last."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1779408000")
    first, again = (create_snapshot(_small_home(tmp_path / ws))[0] for ws in ("a", "b"))
    assert first.created_at == "2026-05-22T00:00:00.000000+00:00"
    assert sorted(p.name for p in first.path.iterdir()) == sorted(
        [*(f"{name}.parquet" for name in TABLE_NAMES), "build.json", "manifest.json"])
    for f in first.path.iterdir():
        assert f.read_bytes() == (again.path / f.name).read_bytes(), f.name
    home = Home(tmp_path / "a")
    add_model(home, "acme-3", {"hle": 25.0}, source_url=URL)
    second, _ = create_snapshot(home)
    assert second.created_at == "2026-05-22T00:00:00.000001+00:00"
    assert resolve_snapshot(home, "latest") == second.path
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    res = CliRunner().invoke(main, ["snapshot", "create",
                                    "--home", str(_small_home(tmp_path / "c").root)])
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1] == (
        "Error: SOURCE_DATE_EPOCH='yesterday' is not a whole number of seconds since "
        "1970-01-01 UTC; unset it or give one such as 1779408000")


def test_one_changed_cell_gives_a_new_id_and_a_one_cell_diff(tmp_path):
    home = _small_home(tmp_path / "ws")
    old, _ = create_snapshot(home, tag="before")
    csv = home.releases_csv.read_text().replace("71.2", "71.3")
    home.releases_csv.write_text(csv)
    from benchpress.store.build import build

    build(home)
    new, created = create_snapshot(home, tag="after")
    assert created and new.id != old.id
    assert [s.id for s in list_snapshots(home)] == [old.id, new.id]
    d = diff(home, "before", "after")
    changed = d.cells.filter(pl.col("change") == "changed")
    assert d.cells.height == 1 and changed.height == 1
    row = changed.row(0, named=True)
    assert (row["model_id"], row["benchmark_id"], row["score_a"], row["score_b"]) == \
        ("acme-2", "gpqa_diamond", 71.2, 71.3)
    assert row["reference_url_a"] == row["reference_url_b"] == URL


def test_table_digest_ignores_row_order_and_fetch_times():
    df = pl.DataFrame({"a": [2, 1], "b": ["y", None], "retrieved_at": ["t1", "t2"]})
    assert table_digest(df) == table_digest(df.reverse().with_columns(pl.lit("t9").alias("retrieved_at")))
    assert table_digest(df) != table_digest(df.with_columns(pl.Series("a", [2, 3])))
    assert table_digest(df) != table_digest(df.rename({"b": "c"}))


def test_resolve_by_latest_tag_id_and_prefix(tmp_path):
    home = _small_home(tmp_path / "ws")
    first, _ = create_snapshot(home, tag="v1")
    add_model(home, "acme-3", {"hle": 25.0}, source_url=URL)
    second, _ = create_snapshot(home)
    assert resolve_snapshot(home, "latest") == second.path
    assert resolve_snapshot(home, "v1") == first.path
    assert resolve_snapshot(home, first.id) == first.path
    assert resolve_snapshot(home, second.id[:6]) == second.path
    assert resolve_snapshot(home, "current") == home.registry
    with pytest.raises(SnapshotNotFound, match="snapshot 'nope' not found"):
        get_snapshot(home, "nope")
    with pytest.raises(UsageError, match="tag 'latest' is not allowed"):
        create_snapshot(home, tag="latest")


def test_verify_finds_a_tampered_table(tmp_path):
    home = _small_home(tmp_path / "ws")
    snap, _ = create_snapshot(home)
    copy = tmp_path / "copy"
    shutil.copytree(snap.path, copy)
    cells = pl.read_parquet(copy / "cells.parquet").with_columns(pl.col("score") + 1)
    cells.write_parquet(copy / "cells.parquet")
    problems = verify_snapshot(type(snap).load(copy))
    assert any("cells.parquet: content hash differs" in p for p in problems)
    assert any("does not match the content" in p for p in problems)


def test_cli_create_list_show_and_sql_on_a_snapshot(tmp_path):
    home = _small_home(tmp_path / "ws")
    runner = CliRunner()
    args = ["--home", str(home.root)]
    res = runner.invoke(main, ["snapshot", "create", "--tag", "v1", *args])
    assert res.exit_code == 0, res.output
    sid = res.stdout.strip()
    assert (home.snapshots / sid / "manifest.json").is_file()
    res = runner.invoke(main, ["snapshot", "list", "--format", "json", *args])
    assert res.exit_code == 0
    (row,) = json.loads(res.stdout)
    assert row["id"] == sid and row["tags"] == "v1" and row["cells"] == 2
    res = runner.invoke(main, ["snapshot", "show", "v1", "--verify", "--format", "json", *args])
    assert res.exit_code == 0 and json.loads(res.stdout)["id"] == sid
    add_model(home, "acme-3", {"hle": 25.0}, source_url=URL)
    res = runner.invoke(main, ["sql", "SELECT count(*) AS n FROM cells", "--snapshot", "v1",
                               "--format", "json", *args])
    assert res.exit_code == 0 and json.loads(res.stdout) == [{"n": 2}]
    res = runner.invoke(main, ["sql", "SELECT count(*) AS n FROM cells", "--format", "json", *args])
    assert json.loads(res.stdout) == [{"n": 3}]
    res = runner.invoke(main, ["stats", "--snapshot", "v1", "--format", "json", *args])
    assert res.exit_code == 0 and json.loads(res.stdout)["n_cells"] == 2
    res = runner.invoke(main, ["snapshot", "show", "v9", *args])
    assert res.exit_code == 1
    assert res.stderr.startswith("Error: snapshot 'v9' not found")
    res = runner.invoke(main, ["snapshot", "create", "--tag", "no spaces", *args])
    assert res.exit_code == 2 and "tag 'no spaces' is not allowed" in res.stderr


def test_create_without_a_registry_is_one_clear_error(tmp_path):
    home = make_home(tmp_path / "empty")
    res = CliRunner().invoke(main, ["snapshot", "create", "--home", str(home.root)])
    assert res.exit_code == 1 and "no registry built yet" in res.stderr
    assert list_snapshots(home) == []


def test_cli_list_csv_and_stats_json_exact(tmp_path):
    home = _small_home(tmp_path / "ws")
    snap, _ = create_snapshot(home, tag="v1")
    runner = CliRunner()
    res = runner.invoke(main, ["snapshot", "list", "--format", "csv", "--home", str(home.root)])
    assert res.exit_code == 0
    assert res.stdout == ("id,created_at,tags,models,benchmarks,cells,scores,sources,versions\n"
                          f"{snap.id},{snap.created_at},v1,1,2,2,2,1,1\n")
    res = runner.invoke(main, ["stats", "--format", "json", "--home", str(home.root)])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == {
        "n_models": 1, "n_models_scored": 1, "n_benchmarks": 2, "n_cells": 2, "n_scores": 2,
        "n_sources": 1, "n_source_versions": 1, "n_quarantined": 0, "n_conflicting_cells": 0,
        "fill": 1.0, "per_source": {"releases": 2}}
    out = tmp_path / "metrics" / "registry.json"
    res = runner.invoke(main, ["stats", "--write-metrics", str(out), "--home", str(home.root)])
    assert res.exit_code == 0 and res.stdout == ""
    assert json.loads(out.read_text()) == json.loads(
        runner.invoke(main, ["stats", "--format", "json", "--home", str(home.root)]).stdout)


def test_a_damaged_manifest_is_one_clear_error(tmp_path):
    home = _small_home(tmp_path / "ws")
    snap, _ = create_snapshot(home)
    (snap.path / "manifest.json").write_text("{not json")
    res = CliRunner().invoke(main, ["snapshot", "list", "--home", str(home.root)])
    assert res.exit_code == 1
    assert res.stderr.startswith(f"Error: {snap.path / 'manifest.json'}: unreadable manifest")


def test_write_folder_atomic_is_whole_or_absent(tmp_path):
    """The one folder writer behind builds and snapshots: a failed fill leaves nothing; a
    replacement swaps the whole folder and removes the old one; the marker holds the
    document computed from the filled folder."""
    target = tmp_path / "t"

    def failing(tmp):
        (tmp / "a.txt").write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_folder_atomic(target, failing, "marker.json", lambda tmp: {})
    assert list(tmp_path.iterdir()) == []
    for text in ("one", "two"):
        write_folder_atomic(target, lambda tmp, text=text: (tmp / "a.txt").write_text(text),
                            "marker.json",
                            lambda tmp: {"files": sorted(p.name for p in tmp.iterdir())})
        assert (target / "a.txt").read_text() == text
        assert json.loads((target / "marker.json").read_text()) == {"files": ["a.txt"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_a_tag_names_one_snapshot(tmp_path):
    """Reusing a tag is an error unless moved; a duplicated tag (older versions) is never
    silently resolved, in `--snapshot` or in `diff`."""
    home = _small_home(tmp_path / "ws")
    runner = CliRunner()
    args = ["--home", str(home.root)]
    first = runner.invoke(main, ["snapshot", "create", "--tag", "acme-added", *args])
    assert first.exit_code == 0, first.stderr
    old = first.stdout.strip()
    same = runner.invoke(main, ["snapshot", "create", "--tag", "acme-added", *args])
    assert same.exit_code == 0 and same.stdout.strip() == old   # same data: same snapshot
    add_model(home, "acme-3", {"hle": 25.0}, source_url=URL)
    before = {s.id: s.tags for s in list_snapshots(home)}
    again = runner.invoke(main, ["snapshot", "create", "--tag", "acme-added", *args])
    assert again.exit_code == 2 and again.stderr.count("\n") == 1
    assert again.stderr == (f"Error: tag 'acme-added' already names snapshot {old}; choose another "
                            "tag, or --move-tag to move it to this one\n")
    assert {s.id: s.tags for s in list_snapshots(home)} == before   # nothing written
    moved = runner.invoke(main, ["snapshot", "create", "--tag", "acme-added", "--move-tag", *args])
    assert moved.exit_code == 0, moved.stderr
    new = moved.stdout.strip()
    assert new != old and f"moved tag 'acme-added' from snapshot {old} to {new}" in moved.stderr
    assert {s.id: s.tags for s in list_snapshots(home)} == {old: [], new: ["acme-added"]}
    assert get_snapshot(home, "acme-added").id == new
    assert runner.invoke(main, ["snapshot", "create", "--move-tag", *args]).exit_code == 2

    # a tag left on two snapshots by an older version: an error listing both, everywhere
    manifest = home.snapshots / old / "manifest.json"
    doc = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**doc, "tags": ["acme-added"]}))
    with pytest.raises(UsageError, match=f"tag 'acme-added' is on 2 snapshots: .*{old}.*"):
        get_snapshot(home, "acme-added")
    for cmd in (["diff", "acme-added", "current"], ["stats", "--snapshot", "acme-added"]):
        res = runner.invoke(main, [*cmd, *args])
        assert res.exit_code == 2 and old in res.stderr and new in res.stderr, res.stderr
        assert res.stderr.count("\n") == 1
    with pytest.raises(UsageError):
        diff(home, "acme-added", "current")
    # moving the tag again repairs it
    fixed = runner.invoke(main, ["snapshot", "create", "--tag", "acme-added", "--move-tag", *args])
    assert fixed.exit_code == 0 and old in fixed.stderr
    assert get_snapshot(home, "acme-added").id == new
    assert [s.tags for s in list_snapshots(home) if s.id == old] == [[]]


def test_models_without_a_cell_are_counted_apart():
    """`n_models` counts the models table; `n_models_scored` only those with a cell, the rows
    a predictor fits (the app's "models with scores")."""
    from benchpress.store.snapshot import _metrics

    tables = {
        "models": pl.DataFrame({"model_id": ["a", "b", "c"]}),
        "benchmarks": pl.DataFrame({"benchmark_id": ["x", "y"]}),
        "cells": pl.DataFrame({"model_id": ["a", "a", "b"], "n_disagreeing": [0, 1, 0]}),
        "scores": pl.DataFrame({"source_id": ["s", "s", "s", "s"]}),
        "sources": pl.DataFrame({"source_id": ["s"]}),
        "quarantine": pl.DataFrame({"row": ["r1"]}),
    }
    m = _metrics(tables)
    assert (m["n_models"], m["n_models_scored"], m["n_cells"]) == (3, 2, 3)
    assert m["n_conflicting_cells"] == 1 and m["fill"] == 0.5
