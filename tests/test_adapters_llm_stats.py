"""llm-stats adapter on the real `models/<org>/<model>/model.json` files: counts, spot values,
free-text benchmark names through the alias table, unresolved names in `aliases suggest`, and
the self-reported flag with the source type it implies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchpress.adapters import detect_adapter
from benchpress.cli import main
from benchpress.store.ingest import ingest
from benchpress.store.sql import query
from benchpress.validate.normalize import canonical_benchmark_id
from tests.conftest import SHARED_DATA, build_repo_sources

LLM_STATS = SHARED_DATA / "llm-stats-2025-05"
SID = "llm-stats-2025-05"


def _metrics() -> list[tuple[str, dict]]:
    """(model folder, metric) for every score in the raw files."""
    out = []
    for f in sorted((LLM_STATS / "models").glob("*/*/model.json")):
        out += [(f.parent.name, q) for q in json.loads(f.read_text(encoding="utf-8"))["qualitative_metrics"]]
    return out


@pytest.fixture(scope="module")
def reg(tmp_path_factory, shared_data):
    return build_repo_sources(tmp_path_factory.mktemp("ls") / "ws", ("benchpress-2026-05", SID))


def _sql(home, text, params=None):
    return query(home.registry, text, params)


def test_every_score_is_accepted_or_quarantined_for_an_unknown_name(reg):
    home, summary = reg
    s = summary[SID]
    metrics = _metrics()
    assert s.rows_read == len(metrics) == 1728
    assert s.rows_accepted + s.rows_quarantined == s.rows_read
    assert s.rows_accepted > 1100 and s.rows_quarantined > 0
    assert all("field 'benchmark_id': benchmark has no known scale (llm-stats benchmark name" in r
               for r in s.reasons)
    assert _sql(home, "SELECT count(*) FROM models WHERE source_id = $s", {"s": SID}).item() + \
        _sql(home, """SELECT count(*) FROM models WHERE source_id <> $s AND model_id IN
                      (SELECT model_id FROM scores WHERE source_id = $s)""", {"s": SID}).item() == 126


def test_free_text_names_resolve_through_ids_names_and_aliases(reg):
    home, _ = reg
    mapped = dict(_sql(home, "SELECT DISTINCT raw_benchmark_id, benchmark_id FROM scores WHERE source_id = $s",
                       {"s": SID}).iter_rows())
    assert mapped["GPQA"] == "gpqa_diamond"          # the alias table: 'GPQA' means Diamond
    assert mapped["MMMU-Pro"] == "mmmu_pro" and mapped["HumanEval"] == "humaneval"
    assert mapped["Humanity's Last Exam"] == "hle"
    assert mapped["ARC-C"] == "arc_challenge" and mapped["CharXiv-R"] == "charxiv_reasoning"  # reviewed rows
    o3 = {q["dataset_name"]: q for m, q in _metrics() if m == "o3-2025-04-16"}
    row = _sql(home, """SELECT score, score_raw, unit, reference_url, observed_at FROM scores
                        WHERE source_id = $s AND raw_model_id = 'o3-2025-04-16' AND raw_benchmark_id = 'GPQA'""",
               {"s": SID}).row(0, named=True)
    assert row["unit"] == "fraction" and math.isclose(row["score"], 100 * o3["GPQA"]["score"])
    assert row["reference_url"] == o3["GPQA"]["source_link"]
    assert row["observed_at"] == o3["GPQA"]["date_recorded"]
    # a value above 1 is not the fraction the format states: read on the benchmark's own scale
    mbpp = _sql(home, """SELECT benchmark_id, score, unit, notes FROM scores WHERE source_id = $s
                         AND raw_model_id = 'qwen3-235b-a22b' AND raw_benchmark_id = 'MBPP'""",
                {"s": SID}).row(0, named=True)
    assert (mbpp["benchmark_id"], mbpp["score"], mbpp["unit"]) == ("mbpp", 81.4, None)
    assert "not a 0-1 fraction" in mbpp["notes"]


def test_self_reported_flag_is_kept_and_sets_the_source_type(reg):
    home, _ = reg
    rows = _sql(home, "SELECT raw_model_id, raw_benchmark_id, source_type, reported_setting, reference_url "
                      "FROM scores WHERE source_id = $s", {"s": SID})
    raw = {(m, q["dataset_name"]): q["is_self_reported"] for m, q in _metrics()}
    third = 0
    for r in rows.iter_rows(named=True):
        flag = json.loads(r["reported_setting"])["self_reported"]
        assert flag is raw[(r["raw_model_id"], r["raw_benchmark_id"])]
        if flag:  # the developer's claim, typed by its link
            assert r["source_type"] != "third_party"
        else:
            assert r["source_type"] == "third_party"
            third += 1
    assert 0 < third < rows.height
    card = rows.filter(rows["reference_url"].str.starts_with("https://huggingface.co/")
                       & ~rows["reference_url"].str.contains("/spaces/"))
    claims = [json.loads(s)["self_reported"] for s in card["reported_setting"]]
    assert {t for t, c in zip(card["source_type"], claims) if c} == {"model_card"}


def test_unresolved_names_are_listed_by_aliases_suggest(reg):
    home, _ = reg
    quarantined = {canonical_benchmark_id(json.loads(r)["benchmark_id"]) for r in
                   _sql(home, "SELECT record FROM quarantine WHERE source_id = $s", {"s": SID})["record"]}
    assert {"mmstar", "docvqa", "chartqa"} <= quarantined
    assert not quarantined & set(_sql(home, "SELECT DISTINCT benchmark_id FROM scores")["benchmark_id"])
    result = CliRunner().invoke(main, ["aliases", "suggest", "--kind", "benchmark", "--source", "llm-stats",
                                       "--format", "json", "--home", str(home.root)], catch_exceptions=False)
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert quarantined <= {r["alias"] for r in rows}
    # a close known benchmark is offered; a name with nothing close is still listed
    assert any(r["alias"] == "global_mmlu_lite" and r["canonical_id"] == "mmlu" for r in rows)
    lonely = [r for r in rows if r["alias"] == "mmstar"]
    assert lonely and all(r["match"] in ("fuzzy", "none") for r in lonely)
    assert any(r["match"] == "none" and r["canonical_id"] is None for r in rows)


def test_ingest_detects_the_folder_and_a_single_model_file(home, tmp_path):
    assert detect_adapter(LLM_STATS).name == "llm-stats"
    one = LLM_STATS / "models" / "openai" / "o3-2025-04-16" / "model.json"
    assert detect_adapter(one).name == "llm-stats"
    sid, report = ingest(home, str(one), source_id="ls-one")
    s = next(x for x in report.sources if x.source_id == sid)
    assert s.adapter == "llm-stats"
    assert s.rows_read == len(json.loads(one.read_text())["qualitative_metrics"])
    # a cached copy has lost its folder name: the model's own name stands in
    assert query(home.registry, "SELECT model_id FROM models").rows() == [("o3",)]
    folder = tmp_path / "repo" / "models" / "acme"
    (folder / "acme-1").mkdir(parents=True)
    (folder / "acme-1" / "model.json").write_text(json.dumps({"name": "Acme 1", "qualitative_metrics": [
        {"dataset_name": "GPQA", "score": 0.5, "is_self_reported": False, "source_link": "https://acme.example/"}]}))
    sid, report = ingest(home, str(Path(tmp_path / "repo")), source_id="ls-acme")
    row = query(home.registry, "SELECT model_id, benchmark_id, score, source_type FROM scores "
                               "WHERE source_id = 'ls-acme'").row(0, named=True)
    assert row == {"model_id": "acme-1", "benchmark_id": "gpqa_diamond", "score": 50.0, "source_type": "third_party"}
    assert query(home.registry, "SELECT provider FROM models WHERE model_id = 'acme-1'").item() == "acme"
