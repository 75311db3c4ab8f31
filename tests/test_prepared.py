"""Prepared versions kept on disk by content (`store.prepared`): a second build reads no
source file and gives the same bytes; a damaged entry is prepared again; an edit of the
contracts is another key (a reviewed verdict is not: it acts after the preparation); a full
build prunes what it did not use."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from benchpress.adapters import ADAPTERS, get_adapter
from benchpress.store import build as build_module
from benchpress.store.build import build, prepared_folder
from tests.conftest import REPO, SHARED_DATA, make_home

FEB = "llm-benchmark-matrix-2026-02"


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def reads(monkeypatch) -> list:
    """Calls of the benchpress-json adapter's `read` (the session's in-process memo off, so
    that only the disk cache can spare them)."""
    monkeypatch.setitem(build_module._MEMO, "on", False)
    adapter = get_adapter("benchpress-json")
    calls = []
    monkeypatch.setitem(ADAPTERS, adapter.name, replace(
        adapter, read=lambda path: calls.append(path) or adapter.read(path)))
    return calls


@pytest.fixture
def ws(tmp_path):
    home = make_home(tmp_path / "ws")
    shutil.copy(REPO / "sources" / f"{FEB}.yaml", home.sources)
    return home


def test_a_second_build_reads_nothing_and_gives_the_same_bytes(ws, reads):
    build(ws, mirror=SHARED_DATA)
    first = _tree(ws.registry)
    assert len(reads) == 1 and len(list(prepared_folder(ws).iterdir())) == 1
    build(ws, mirror=SHARED_DATA)
    assert len(reads) == 1  # served from .cache/prepared
    assert _tree(ws.registry) == first


def test_a_damaged_entry_is_prepared_again(ws, reads):
    build(ws, mirror=SHARED_DATA)
    first = _tree(ws.registry)
    (entry,) = prepared_folder(ws).iterdir()
    scores = entry / "scores.parquet"
    data = bytearray(scores.read_bytes())
    data[len(data) // 2] ^= 0xFF
    scores.write_bytes(bytes(data))
    build(ws, mirror=SHARED_DATA)
    assert len(reads) == 2 and _tree(ws.registry) == first
    (entry,) = prepared_folder(ws).iterdir()  # written again, whole
    assert (entry / "scores.parquet").read_bytes() != bytes(data)


def test_other_contracts_are_another_key_and_unused_entries_are_pruned(ws, reads):
    build(ws, mirror=SHARED_DATA)
    (old,) = prepared_folder(ws).iterdir()
    with open(ws.schemas / "scales.yaml", "a", encoding="utf-8") as fh:
        fh.write("# reviewed\n")
    build(ws, mirror=SHARED_DATA)
    assert len(reads) == 2
    (new,) = prepared_folder(ws).iterdir()  # the old key's entry pruned
    assert new.name != old.name


def test_a_reviewed_verdict_rebuilds_from_the_prepared_versions(ws, reads):
    """`cell_reviews.csv` acts on the assembled observations (`store.verdicts`), not on a
    version's preparation: recording a verdict reads no source file again, and the value
    it names leaves the cells all the same."""
    import polars as pl

    from benchpress.store.tables import read_table

    build(ws, mirror=SHARED_DATA)
    (entry,) = prepared_folder(ws).iterdir()
    cell = read_table(ws.registry, "scores").row(0, named=True)
    (ws.schemas / "cell_reviews.csv").write_text(
        "model_id,benchmark_id,source_id,score,verdict,note,reviewer\n"
        f"{cell['model_id']},{cell['benchmark_id']},{FEB},,exclude,a test's verdict,me\n",
        encoding="utf-8")
    build(ws, mirror=SHARED_DATA)
    assert len(reads) == 1
    assert [p.name for p in prepared_folder(ws).iterdir()] == [entry.name]
    scores = read_table(ws.registry, "scores")
    assert scores.filter((pl.col("model_id") == cell["model_id"])
                         & (pl.col("benchmark_id") == cell["benchmark_id"])).height == 0
    out = read_table(ws.registry, "quarantine").filter(pl.col("field") == "review")
    assert out.height == 1 and "a test's verdict" in out["reason"][0]
