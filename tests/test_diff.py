"""`benchpress diff` between snapshots of the two shared matrices, checked against counts
recomputed here from the raw JSON files, the alias table and the id rules (no registry code)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import defaultdict
from functools import cache

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.store.build import build
from benchpress.store.diff import diff
from benchpress.store.snapshot import create_snapshot, get_snapshot
from tests.conftest import BP_2026_05, MATRIX_2026_02, REPO, SHARED_DATA, make_home

FEB, MAY = "llm-benchmark-matrix-2026-02", "benchpress-2026-05"


# about 31 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=31)


@pytest.fixture(scope="module")
def versions(tmp_path_factory, shared_data):
    """One workspace: the 2026-02 matrix as its only source (snapshot `feb`), then the
    2026-05 matrix in its place (`may`), then both (`both`)."""
    home = make_home(tmp_path_factory.mktemp("diff") / "ws")

    def use(*ids):
        for old in home.sources.glob("*.yaml"):
            old.unlink()
        for sid in ids:
            shutil.copyfile(REPO / "sources" / f"{sid}.yaml", home.sources / f"{sid}.yaml")
        build(home, mirror=SHARED_DATA)

    use(FEB)
    create_snapshot(home, tag="feb")
    use(MAY)
    create_snapshot(home, tag="may")
    use(FEB, MAY)
    create_snapshot(home, tag="both")
    return home


# --- the independent recomputation ----------------------------------------------------------

@cache  # read once: every raw id of the two matrices goes through it
def _aliases(kind: str) -> dict[str, str]:
    with open(REPO / "schemas" / "aliases.csv", newline="", encoding="utf-8") as fh:
        return {r["alias"]: r["canonical_id"] for r in csv.DictReader(fh) if r["kind"] == kind}


def _model(raw: str) -> str:
    """The id rule for these files: lowercase kebab case, then the alias table."""
    mid = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.+\-]+", "-", raw.strip().lower())).strip("-.")
    return _aliases("model").get(mid, mid)


def _bench(raw: str) -> str:
    """The id rule for these files: lowercase snake case, then the alias table."""
    bid = re.sub(r"_{2,}", "_", re.sub(r"[^a-z0-9.]+", "_", raw.strip().lower())).strip("_")
    return _aliases("benchmark").get(bid, bid)


def _raw_matrix(which: str):
    """models, {(model, benchmark): [values]}, {benchmark: raw spellings}, settings."""
    doc = json.loads((BP_2026_05 if which == "may" else MATRIX_2026_02).read_text())
    cells, spell, setting = defaultdict(list), defaultdict(set), {}
    models = {_model(m["id"]) for m in doc["models"]}
    if which == "may":
        for i, m in enumerate(doc["models"]):
            for j, b in enumerate(doc["benchmarks"]):
                if doc["observed"][i][j] is not None:
                    key = (_model(m["id"]), _bench(b["id"]))
                    cells[key].append(float(doc["observed"][i][j]))
                    spell[key[1]].add(b["id"])
                    reported = (doc["sources"][i][j] or {}).get("reported_setting")
                    if isinstance(reported, dict) and reported.get("mode") in ("thinking", "non-thinking"):
                        setting[key] = reported["mode"]
    else:
        reasoning = {_model(m["id"]): m.get("is_reasoning") for m in doc["models"]}
        for s in doc["scores"]:
            key = (_model(s["model_id"]), _bench(s["benchmark_id"]))
            cells[key].append(float(s["score"]))
            spell[key[1]].add(s["benchmark_id"])
            if reasoning.get(key[0]) is not None:
                setting[key] = "thinking" if reasoning[key[0]] else "non-thinking"
    models |= {m for m, _ in cells}
    return models, cells, spell, setting


def _expected(a: str, b: str) -> dict:
    models_a, cells_a, spell_a, _ = _raw_matrix(a)
    models_b, cells_b, spell_b, _ = _raw_matrix(b)
    bench_a, bench_b = set(spell_a), set(spell_b)
    common = cells_a.keys() & cells_b.keys()
    # a cell changed when the new value matches none of the old file's values for it; the
    # test also checks that it matches none of them exactly when it differs from the first
    differs_all = {k for k in common if all(abs(cells_b[k][0] - v) > 1e-9 for v in cells_a[k])}
    differs_first = {k for k in common if abs(cells_b[k][0] - cells_a[k][0]) > 1e-9}
    assert differs_all == differs_first, "a duplicated cell makes the expected value ambiguous"
    merged = {bid for bid in bench_a & bench_b
              if spell_a[bid] != spell_b[bid] and (spell_a[bid] | spell_b[bid]) - {bid}}
    return {
        "models": {"a": len(models_a), "b": len(models_b), "added": len(models_b - models_a),
                   "removed": len(models_a - models_b)},
        "benchmarks": {"a": len(bench_a), "b": len(bench_b), "added": len(bench_b - bench_a),
                       "removed": len(bench_a - bench_b), "merged": len(merged)},
        "cells": {"a": len(cells_a), "b": len(cells_b), "added": len(cells_b.keys() - cells_a.keys()),
                  "removed": len(cells_a.keys() - cells_b.keys()), "changed": len(differs_all)},
        "merged_ids": merged, "changed_keys": differs_all,
        "added_models": models_b - models_a, "removed_models": models_a - models_b,
    }


# --- the tests ---------------------------------------------------------------------------------

def test_only_duplicate_rows_were_quarantined(versions):
    """The recomputation above counts every raw row; that holds while the only rejects are
    exact duplicates (which never change the set of cells)."""
    for tag in ("feb", "may"):
        q = pl.read_parquet(get_snapshot(versions, tag).path / "quarantine.parquet")
        assert q.filter(pl.col("field") != "row").height == 0, q


def test_diff_counts_match_the_raw_files(versions):
    d = diff(versions, "feb", "may")
    exp = _expected("feb", "may")
    got = d.counts()
    for table in ("models", "benchmarks", "cells"):
        for key, value in exp[table].items():
            assert got[table][key] == value, (table, key)
    # the headline numbers of the two shared matrices, after normalization
    assert (got["cells"]["a"], got["cells"]["b"], got["cells"]["changed"]) == (1375, 2604, 288)
    assert got["cells"]["b"] - got["cells"]["added"] == 753  # cells in common
    assert set(d.models.filter(pl.col("change") == "added")["model_id"]) == exp["added_models"]
    assert set(d.models.filter(pl.col("change") == "removed")["model_id"]) == exp["removed_models"]
    changed = d.cells.filter(pl.col("change") == "changed")
    assert set(zip(changed["model_id"], changed["benchmark_id"])) == exp["changed_keys"]


def test_merged_benchmarks_are_the_alias_spellings(versions):
    d = diff(versions, "feb", "may")
    exp = _expected("feb", "may")
    merged = d.merged.filter(pl.col("kind") == "benchmark")
    assert set(merged["canonical_id"]) == exp["merged_ids"]
    assert {"hmmt_feb_2025", "gdpval_aa_elo", "video_mmmu", "tau2_bench_telecom"} <= exp["merged_ids"]
    row = merged.filter(pl.col("canonical_id") == "hmmt_feb_2025").row(0, named=True)
    assert (row["spellings_a"], row["spellings_b"]) == ("hmmt_2025", "hmmt_feb_2025")
    # not reported as a removal plus an addition
    assert "hmmt_feb_2025" not in set(d.benchmarks["benchmark_id"])


def test_changed_cells_carry_values_citations_and_setting_changes(versions):
    d = diff(versions, "feb", "may")
    _, cells_a, _, setting_a = _raw_matrix("feb")
    _, cells_b, _, setting_b = _raw_matrix("may")
    changed = d.cells.filter(pl.col("change") == "changed")
    for row in changed.iter_rows(named=True):
        key = (row["model_id"], row["benchmark_id"])
        assert row["score_a"] in cells_a[key] and row["score_b"] == cells_b[key][0]
        assert row["difference"] == pytest.approx(row["score_b"] - row["score_a"])
        assert row["reference_url_b"] and row["source_id_a"] == FEB and row["source_id_b"] == MAY
    # every cell whose mode moved between thinking and non-thinking (the 2026-02 model flag
    # against the 2026-05 cell's reported mode) is called out
    moved = {k for k in _expected("feb", "may")["changed_keys"]
             if k in setting_a and k in setting_b and setting_a[k] != setting_b[k]}
    flagged = set(zip(*changed.filter(pl.col("setting_changed")).select(
        "model_id", "benchmark_id").to_dict(as_series=False).values()))
    assert moved and moved <= flagged
    row = changed.filter((pl.col("model_id") == "claude-3.7-sonnet")
                         & (pl.col("benchmark_id") == "aime_2024")).row(0, named=True)
    assert (row["score_a"], row["score_b"], row["setting_a"], row["setting_b"]) == \
        (80.0, 23.3, "thinking", "non-thinking")
    assert d.counts()["cells"]["setting_changed"] == len(flagged)


def test_adding_a_source_removes_nothing(versions):
    counts = diff(versions, "may", "both").counts()
    assert counts["models"]["removed"] == counts["benchmarks"]["removed"] == 0
    assert counts["cells"]["removed"] == 0
    assert counts["cells"]["added"] == _expected("may", "feb")["cells"]["added"] == 622


def test_cli_json_sql_csv_and_parquet_agree(versions, tmp_path):
    runner = CliRunner()
    args = ["diff", "feb", "may", "--home", str(versions.root)]
    res = runner.invoke(main, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"] == diff(versions, "feb", "may").counts()
    assert len(doc["cells"]["changed"]) == doc["summary"]["cells"]["changed"] == 288
    first = doc["cells"]["changed"][0]
    assert {"model_id", "benchmark_id", "score_a", "score_b", "reference_url_a", "reference_url_b",
            "setting_a", "setting_b", "setting_changed"} <= first.keys()
    res = runner.invoke(main, [*args, "--format", "json", "--sql",
                               "SELECT change, count(*) AS n FROM cells GROUP BY change ORDER BY change"])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == [{"change": "added", "n": 1851}, {"change": "changed", "n": 288},
                                      {"change": "removed", "n": 622}]
    res = runner.invoke(main, [*args, "--format", "csv", "--out-dir", str(tmp_path / "d")])
    assert res.exit_code == 0
    assert res.stdout.splitlines()[0].startswith("change,model_id,benchmark_id,score_a,score_b")
    assert len(res.stdout.splitlines()) == 1 + 1851 + 288 + 622
    summary = pl.read_parquet(tmp_path / "d" / "summary.parquet")
    assert summary["table"].to_list() == ["models", "benchmarks", "sources", "source_versions",
                                          "cells"]
    res = runner.invoke(main, args)
    assert res.exit_code == 0
    assert "changed cells whose evaluation setting changed" in res.stdout
    assert "largest changes (top 15 of 288)" in res.stdout
    res = runner.invoke(main, [*args, "--sql", "DROP TABLE cells"])
    assert res.exit_code == 1 and "only a single SELECT" in res.stderr
    res = runner.invoke(main, ["diff", "feb", "nope", "--home", str(versions.root)])
    assert res.exit_code == 1 and "snapshot 'nope' not found" in res.stderr
