"""The registry built from the real shared matrices: counts, values, citations, merges."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from benchpress.store.sql import query
from benchpress.store.tables import read_table
from tests.conftest import BP_2026_05, MATRIX_2026_02


def test_2026_05_alone_has_every_cell_with_its_citation(built_2026_05):
    raw = json.loads(BP_2026_05.read_text())
    cells = read_table(built_2026_05.registry, "cells")
    assert read_table(built_2026_05.registry, "models").height == 84
    assert read_table(built_2026_05.registry, "benchmarks").height == 133
    assert cells.height == 2604

    expected = {}
    for i, m in enumerate(raw["models"]):
        for j, b in enumerate(raw["benchmarks"]):
            if raw["observed"][i][j] is not None:
                src = raw["sources"][i][j] or {}
                expected[(m["id"], b["id"])] = (raw["observed"][i][j], src.get("url") or None,
                                               src.get("type") or None)
    got = {(r["model_id"], r["benchmark_id"]): r for r in cells.iter_rows(named=True)}
    assert got.keys() == expected.keys()
    for key, (value, url, source_type) in expected.items():
        assert math.isclose(got[key]["score"], value, abs_tol=1e-12), key
        assert got[key]["reference_url"] == url, key
        if source_type:
            assert got[key]["source_type"] == source_type, key


def test_missing_urls_and_dropped_cells_are_kept_and_countable(built_2026_05):
    counts = query(built_2026_05.registry, """
        SELECT count(*) FILTER (WHERE reference_url IS NULL) AS no_url,
               count(*) FILTER (WHERE audit_status = 'dropped') AS dropped
        FROM cells""").row(0, named=True)
    assert counts == {"no_url": 25, "dropped": 4}


def test_models_keep_the_file_order_and_metadata(built_2026_05):
    raw = json.loads(BP_2026_05.read_text())
    models = read_table(built_2026_05.registry, "models").sort("ordinal")
    assert models["model_id"].to_list() == [m["id"] for m in raw["models"]]
    first = models.row(0, named=True)
    assert first["provider"] == raw["models"][0]["provider"]
    assert first["is_reasoning"] == raw["models"][0]["reasoning"]


def test_second_matrix_merges_shared_ids_and_keeps_conflicts(built_both):
    a = json.loads(BP_2026_05.read_text())
    b = json.loads(MATRIX_2026_02.read_text())
    models = read_table(built_both.registry, "models")
    ids_a, ids_b = {m["id"] for m in a["models"]}, {m["id"] for m in b["models"]}
    assert models.height == len(ids_a | ids_b)

    bench = set(read_table(built_both.registry, "benchmarks")["benchmark_id"])
    for merged_away in ("hmmt_2025", "gdpval_aa", "video_mmu", "tau_bench_telecom"):
        assert merged_away not in bench
    assert {"mmlu", "mmlu_pro", "mmmlu"} <= bench  # three different benchmarks

    # every observation from both files is kept (the 8 exact duplicate rows go to quarantine)
    scores = read_table(built_both.registry, "scores")
    assert scores.height == 2604 + len(b["scores"]) - 8
    merged = scores.filter(pl.col("raw_benchmark_id") == "hmmt_2025")
    assert merged.height > 0 and set(merged["benchmark_id"]) == {"hmmt_feb_2025"}

    conflicts = query(built_both.registry, """
        SELECT count(DISTINCT (model_id, benchmark_id)) AS n FROM conflicts""").item()
    disagreeing = query(built_both.registry,
                        "SELECT count(*) FROM cells WHERE n_disagreeing > 0").item()
    assert conflicts == disagreeing > 200


def test_resolution_prefers_the_higher_priority_source(built_both):
    # among cells where an official blog and a third party disagree, the blog wins, unless
    # the blog is a vendor's (or a leaderboard's) word on another maker's model
    wrong = query(built_both.registry, """
        SELECT c.model_id, c.benchmark_id FROM cells c JOIN scores s USING (model_id, benchmark_id)
        WHERE s.source_type = 'official_blog' AND c.source_type IN ('third_party', 'leaderboard',
              'third_party_aggregator', 'unknown') AND coalesce(s.audit_status, '') <> 'dropped'
              AND s.measured_by NOT IN ('other_vendor', 'leaderboard')""")
    assert wrong.height == 0
    quoted = query(built_both.registry, """
        SELECT count(*) AS n FROM cells c JOIN scores s USING (model_id, benchmark_id)
        WHERE s.source_type = 'official_blog' AND s.measured_by = 'other_vendor'
              AND c.source_type IN ('third_party', 'leaderboard', 'third_party_aggregator')""")
    assert quoted.item() > 0  # the quotes the old rule let win


def test_sql_answers_models_with_both_benchmarks(built_2026_05):
    raw = json.loads(BP_2026_05.read_text())
    jg = [b["id"] for b in raw["benchmarks"]].index("gpqa_diamond")
    jh = [b["id"] for b in raw["benchmarks"]].index("hle")
    expected = {m["id"] for m, row in zip(raw["models"], raw["observed"])
                if row[jg] is not None and row[jh] is not None}
    got = query(built_2026_05.registry, """
        SELECT model_id FROM cells WHERE benchmark_id IN ('gpqa_diamond', 'hle')
        GROUP BY model_id HAVING count(*) = 2""")
    assert set(got["model_id"]) == expected


def test_matrix_view_is_wide(built_2026_05):
    wide = query(built_2026_05.registry, "SELECT * FROM matrix")
    assert wide.shape == (84, 134)
    assert wide.filter(pl.col("model_id") == "o3-mini-high")["gpqa_diamond"].item() is not None


@pytest.mark.parametrize("statement", [
    "CREATE TABLE x AS SELECT 1",
    "COPY cells TO 'out.csv'",
    "DROP VIEW cells",
    "SELECT 1; DROP VIEW cells",
    "INSERT INTO cells SELECT * FROM cells",
])
def test_sql_is_read_only(built_2026_05, statement):
    from benchpress.errors import BadInputError

    with pytest.raises(BadInputError, match="only a single SELECT"):
        query(built_2026_05.registry, statement)


def test_sql_cannot_read_files_outside_the_registry(built_2026_05):
    from benchpress.errors import BadInputError

    with pytest.raises(BadInputError, match="SQL error"):
        query(built_2026_05.registry, "SELECT * FROM read_csv('/etc/passwd')")


def test_sql_binds_parameters(built_2026_05):
    got = query(built_2026_05.registry,
                "SELECT count(*) FROM cells WHERE benchmark_id = $b", {"b": "gpqa_diamond"})
    assert got.item() > 50
