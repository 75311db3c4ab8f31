"""NYT Connections adapter on the real leaderboard history (`../shared/data/nyt-connections-
history/`, 65 dated copies): rows filed under the benchmark version of their puzzle count, the
left-out tables counted, and the whole history built as versions of one source."""

from __future__ import annotations

import csv
import re

import polars as pl
import pytest
import yaml

from benchpress.adapters import detect_adapter
from benchpress.adapters import nyt_connections as nyt
from benchpress.store.build import build
from benchpress.store.sql import query
from benchpress.store.tables import read_table
from tests.conftest import REPO, SHARED_DATA, build_repo_sources, make_home

# about 5 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=5)

HISTORY = SHARED_DATA / "nyt-connections-history"
NEWEST = HISTORY / "2026-05-22"


def _raw(folder):
    with open(folder / "leaderboard.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _counted(rows):
    """(name, score, n_puzzles) of the raw rows of the extended table with a score."""
    return [(r["model"], float(r["score_pct"]), r["n_puzzles"]) for r in rows
            if r["table"] == "Leaderboard: Extended Version" and r["score_pct"] not in ("", "nan")]


def test_newest_copy_values_and_benchmark_versions():
    out = nyt.read(NEWEST)
    assert detect_adapter(NEWEST).name == "nyt-connections"
    assert detect_adapter(NEWEST / "leaderboard.csv").name == "nyt-connections"
    raw = _raw(NEWEST)
    counted = _counted(raw)
    scores = out.scores.filter(pl.col("benchmark_id").str.starts_with("nyt_connections@"))
    assert scores.height == len(counted) == 79
    got = {(m, b): float(s) for m, b, s in scores.select("model_id", "benchmark_id", "score_raw").rows()}
    for name, score, n in counted:
        assert got[(nyt.parse_name(name)[0], f"nyt_connections@{n}")] == score
    commit = raw[0]["commit"]
    assert set(scores["reference_url"]) == {nyt.README_URL.format(commit=commit)}
    # the original version's `Model | Score` table: model and score as the README gives them
    original = dict(out.scores.filter(pl.col("benchmark_id") == nyt.ORIGINAL)
                    .select("model_id", "score_raw").rows())
    raw_original = {r["rank"]: r["model"] for r in raw if "Original" in r["table"]
                    and r["rank"] != "Model"}
    assert original == raw_original and len(original) == 29  # 30 rows, one its header
    tables = {}
    for r in raw:
        tables[r["table"]] = tables.get(r["table"], 0) + 1
    notes = " | ".join(out.notes)
    assert f"{tables['Leaderboard: Older models']} 'Older models' rows" in notes
    assert f"{tables['Leaderboard: Newest 100 puzzles, extended version']} 'Newest 100" in notes
    declared = set(out.benchmarks["benchmark_id"])
    assert declared == {"nyt_connections@940", nyt.ORIGINAL}


def test_settings_in_names():
    assert nyt.parse_name("o3-pro (medium reasoning)") == ("o3-pro (medium)",
                                                           {"effort": "medium", "reasoning": True})
    assert nyt.parse_name("GPT-5.2 (extra high reasoning)")[0] == "GPT-5.2 (xhigh)"
    assert nyt.parse_name("Grok 4 Fast (Non-Reasoning)")[1] == {"reasoning": False}
    assert nyt.parse_name("DeepSeek V3.1 (Sept)") == ("DeepSeek V3.1 (Sept)", {})


@pytest.mark.parametrize("day", sorted(p.name for p in HISTORY.iterdir()))
def test_every_copy_files_rows_by_puzzle_count(day):
    raw = _raw(HISTORY / day)
    out = nyt.read(HISTORY / day)
    counted = _counted(raw)
    ext = out.scores.filter(pl.col("benchmark_id") != nyt.ORIGINAL)
    assert sorted(ext["benchmark_id"].to_list()) == sorted(f"nyt_connections@{n}" for _, _, n in counted)
    if not counted:  # the early copies list ranks only
        assert any("without a score" in n for n in out.notes)


@pytest.fixture(scope="module")
def history_home(tmp_path_factory):
    """The 65 copies as versions of one source, as the shipped config lists them."""
    config = yaml.safe_load((REPO / "sources" / "nyt-connections.yaml").read_text())
    fields = ("version", "url", "mirror_path", "sha256")
    entries = [*config["versions"], {k: config[k] for k in fields}]
    home = make_home(tmp_path_factory.mktemp("nyt") / "ws")
    config = {"id": "nyt", "adapter": "nyt-connections", **{k: config[k] for k in fields},
              "versions": [{k: e[k] for k in fields} for e in entries[:-1]]}
    (home.sources / "nyt.yaml").write_text(yaml.safe_dump(config))
    build(home, mirror=SHARED_DATA)
    return home, entries


def test_history_is_one_source_whose_cells_never_mix_puzzle_counts(history_home):
    home, entries = history_home
    assert len(entries) == 65 == len(list(HISTORY.iterdir()))
    cells = read_table(home.registry, "cells").filter(
        pl.col("benchmark_id").str.starts_with("nyt_connections@"))
    # each cell's value is its model's row with that puzzle count in the copy it comes from
    raw = {}
    for version, rows in ((v, _raw(HISTORY / v)) for v in set(cells["source_version"])):
        for name, score, n in _counted(rows):
            raw[(version, nyt.parse_name(name)[0].lower(), n)] = score
    scores = read_table(home.registry, "scores")
    spellings = (cells.join(scores, on=["model_id", "benchmark_id", "source_version"])
                 .group_by("model_id", "benchmark_id", "source_version")
                 .agg(pl.col("raw_model_id").unique()))
    assert spellings.height == cells.height
    spelled = {(m, b, v): names for m, b, v, names in spellings.rows()}
    for mid, bench, score, version in cells.select("model_id", "benchmark_id", "score",
                                                   "source_version").rows():
        n = bench.split("@")[1]
        assert any(raw.get((version, name.lower(), n)) == score
                   for name in spelled[(mid, bench, version)])
    # models moved to 'Older models' (no count) keep their last counted cell: Grok 4 at 759
    grok = cells.filter(pl.col("model_id") == "grok-4")
    assert grok.select("benchmark_id", "score").rows() == [("nyt_connections@759", 91.7)]
    counts = sorted({int(b.split("@")[1]) for b in cells["benchmark_id"]})
    assert {601, 651, 759, 940} <= set(counts)


def test_repo_config_builds_from_the_mirror(tmp_path):
    home, summary = build_repo_sources(tmp_path / "ws", ["nyt-connections"])
    assert summary["nyt-connections"].rows_quarantined == 0
    doc = query(home.registry, "SELECT benchmark_id, count(*) AS n FROM cells GROUP BY 1 "
                               "ORDER BY 1").to_dicts()
    assert doc == [{"benchmark_id": "nyt_connections@940", "n": 79},
                   {"benchmark_id": nyt.ORIGINAL, "n": summary["nyt-connections"].rows_accepted - 79}]
    assert re.fullmatch(r"https://github\.com/lechmazur/nyt-connections/blob/[0-9a-f]{40}/README\.md",
                        yaml.safe_load((REPO / "sources" / "nyt-connections.yaml").read_text())["url"])


def test_a_versioned_id_survives_normalization_and_a_label_with_an_at_does_not():
    from benchpress.validate.normalize import canonical_benchmark_id

    assert canonical_benchmark_id("nyt_connections@940") == "nyt_connections@940"
    assert canonical_benchmark_id("aa_intelligence_index@2026-05-22") == "aa_intelligence_index@2026-05-22"
    assert canonical_benchmark_id("GPQA-Diamond (pass@1)") == "gpqa_diamond_pass_1"
    assert canonical_benchmark_id("AIME 2025 avg@16") == "aime_2025_avg_16"
