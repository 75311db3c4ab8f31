"""polars' thread count changes no output.

The tests run every process at one polars thread (tests/conftest.py sets
POLARS_MAX_THREADS, as it sets one BLAS thread); a user's commands run at one thread per
core. So the same commands run here in two
processes, at one thread and at two, and must give the same rows in the same order: the
built registry's tables, and an evaluation's figures. (An evaluation once listed k = 5
before k = 3 at one thread: a join's row order is polars' choice unless asked to keep
the left's.)
"""

from __future__ import annotations

import json
import os
import subprocess

import polars as pl
import pytest

from tests.conftest import BP_2026_05, CLI, MATRIX_2026_02, make_home

COMMANDS = (
    ("ingest", str(BP_2026_05), "--id", "benchpress-2026-05"),
    ("ingest", str(MATRIX_2026_02), "--id", "llm-benchmark-matrix-2026-02", "--allow-rejects"),
    ("evaluate", "--new-models", "3,5", "--seed", "3", "--n-seeds", "1", "--method", "published",
     "--format", "json"),
)


def _outputs(home, threads: int) -> tuple[list[str], dict[str, pl.DataFrame]]:
    """Each command's standard output (the workspace's path as ``<home>``), and the
    registry's tables (row order kept; without `retrieved_at`, the clock's time of each
    ingest), at `threads` threads."""
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads)}
    printed = []
    for args in COMMANDS:
        done = subprocess.run([*CLI, *args, "--home", str(home.root)], capture_output=True,
                              text=True, timeout=300, env=env)
        assert done.returncode == 0, (args, done.stderr)
        printed.append(done.stdout.replace(str(home.root), "<home>"))
    tables = {p.stem: pl.read_parquet(p).drop("retrieved_at", strict=False)
              for p in sorted(home.registry.glob("*.parquet"))}
    return printed, tables


@pytest.mark.usefixtures("shared_data")
def test_one_thread_and_two_give_the_same_tables_and_figures(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    one = _outputs(make_home(tmp_path / "one"), 1)
    two = _outputs(make_home(tmp_path / "two"), 2)
    assert {"scores", "cells", "models", "quarantine"} <= set(one[1]) == set(two[1])
    for name, table in one[1].items():
        assert table.height and table.equals(two[1][name]), name
    assert all(one[0]) and one[0][:-1] == two[0][:-1]  # what the ingests printed
    # the evaluation's figures (all but the seconds it took)
    figures = [json.loads(run[0][-1]) for run in (one, two)]
    for doc in figures:
        assert [r["known"] for r in doc["known"]] == [3, 5] and doc.pop("seconds") > 0
    assert figures[0] == figures[1]
