"""A folder of self-contained parts (issue 27, High 4): each part lists its own models and
benchmarks; duplicates are found by the observation's identity across parts, never by a
row's position, and the exit code says what happened."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.store.sql import query

URL = "https://example.org/synthetic"
N_BENCH = 4


def _part(folder, k, models, extra=()):
    """part-00k.json: its own model and benchmark lists, one score per model and benchmark
    (score = 10 * model + benchmark, so every row differs), then the rows of `extra`."""
    scores = [{"model_id": f"m{i:03d}", "benchmark_id": f"b{j}", "score": 10.0 * i + j,
               "reference_url": URL} for i in models for j in range(N_BENCH)]
    doc = {"models": [{"id": f"m{i:03d}", "name": f"Model {i}"} for i in models],
           "benchmarks": [{"id": f"b{j}", "name": f"Bench {j}", "metric": "accuracy"}
                          for j in range(N_BENCH)],
           "scores": scores + list(extra)}
    (folder / f"part-{k:03d}.json").write_text(json.dumps(doc), encoding="utf-8")


def _ingest(home, folder):
    return CliRunner().invoke(main, ["ingest", str(folder), "--id", "parts",
                                     "--home", str(home.root)], catch_exceptions=False)


@pytest.fixture
def parts(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    _part(folder, 0, range(0, 5))
    return folder


def test_self_contained_parts_land_whole_with_no_false_duplicate(home, parts):
    _part(parts, 1, range(5, 10))
    result = _ingest(home, parts)
    assert result.exit_code == 0, result.stderr
    assert query(home.registry, "SELECT count(*) AS n FROM quarantine")["n"][0] == 0
    scores = query(home.registry, "SELECT model_id, benchmark_id, score FROM scores")
    assert scores.height == 10 * N_BENCH
    assert all(s == 10 * int(m[1:]) + int(b[1:]) for m, b, s in scores.iter_rows())


def test_a_repeated_observation_in_a_later_part_names_its_first_copy(home, parts):
    again = {"model_id": "m002", "benchmark_id": "b3", "score": 23.0, "reference_url": URL}
    _part(parts, 1, range(5, 10), extra=[again])
    result = _ingest(home, parts)
    assert result.exit_code == 3, result.stderr
    q = query(home.registry, "SELECT row, reason FROM quarantine")
    assert q.rows() == [("part-001.json scores[20]",
                         "duplicate of an earlier row (part-000.json scores[11])")]
    assert query(home.registry, "SELECT count(*) AS n FROM scores")["n"][0] == 10 * N_BENCH
