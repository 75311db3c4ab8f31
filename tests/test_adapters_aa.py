"""Artificial Analysis adapter on the real `llms.json` snapshots: counts, spot values against the
raw file, the parenthesised settings, estimated values, AA's harness beside the vendors'
figures, model metadata and the benchmarks' run costs."""

from __future__ import annotations

import csv
import json
import math
import statistics

import pytest

from benchpress.adapters import artificial_analysis as aa
from benchpress.adapters import detect_adapter
from benchpress.store.ingest import ingest
from benchpress.store.sql import query
from tests.conftest import REPO, SHARED_DATA, build_repo_sources

# about 6 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=6)


AA_DIR = SHARED_DATA / "artificial-analysis"
NEWEST = AA_DIR / "llms_2026-05-22.json"


def _raw(path=NEWEST) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _values(doc: dict) -> list[tuple[str, str, float]]:
    """(name, field, value) of every non-null value the adapter should emit, from the raw file."""
    out = []
    for m in doc["models"]:
        for key, v in m["evaluations"].items():
            if not key.endswith("_is_estimated") and v is not None:
                out.append((m["name"], key, v))
        elo = ((m.get("breakdowns") or {}).get("gdpval") or {}).get("elo")
        if elo is not None:
            out.append((m["name"], "breakdowns.gdpval.elo", elo))
    return out


@pytest.fixture(scope="module")
def reg(tmp_path_factory, shared_data):
    """The 2026-05 matrix and the repo's Artificial Analysis source, built from the mirror."""
    return build_repo_sources(tmp_path_factory.mktemp("aa") / "ws",
                              ("benchpress-2026-05", "artificial-analysis"))


def _sql(home, text, params=None):
    return query(home.registry, text, params)


def test_every_value_of_the_snapshot_is_one_accepted_observation(reg):
    home, summary = reg
    doc = _raw()
    values = _values(doc)
    s = summary["artificial-analysis"]
    assert (s.rows_read, s.rows_accepted, s.rows_quarantined) == (len(values), len(values), 0)
    assert len(values) == 6593
    assert _sql(home, "SELECT count(*) FROM scores WHERE source_id = 'artificial-analysis'").item() == len(values)
    assert doc["meta"]["model_count"] == len(doc["models"]) == 494
    scored = {aa.parse_name(name)[0] for name, _, _ in values}  # 5 models have no value at all
    assert len(scored) == 489
    raw_ids = _sql(home, """SELECT DISTINCT raw_model_id FROM scores
                            WHERE source_id = 'artificial-analysis'""")["raw_model_id"]
    assert set(raw_ids) == scored
    # every model is described: by AA, or first by the matrix (AA then fills its blanks)
    described = _sql(home, """SELECT count(*) FROM models WHERE model_id IN
                              (SELECT model_id FROM scores WHERE source_id = 'artificial-analysis')""").item()
    assert described == _sql(home, """SELECT count(DISTINCT model_id) FROM scores
                                      WHERE source_id = 'artificial-analysis'""").item()


def test_fractions_become_percent_and_indexes_keep_their_scale(reg):
    home, _ = reg
    glm = next(m for m in _raw()["models"] if m["name"] == "GLM-4.5V (Non-reasoning)")
    rows = {r["benchmark_id"]: r for r in _sql(home, """
        SELECT s.benchmark_id, s.score, s.score_raw, s.unit, s.reported_setting, b.scale, b.lower, b.upper
        FROM scores s JOIN benchmarks b USING (benchmark_id)
        WHERE s.source_id = 'artificial-analysis' AND s.raw_model_id = 'GLM-4.5V (non-reasoning)'
        """).iter_rows(named=True)}
    ev = glm["evaluations"]
    gpqa = rows["gpqa_diamond"]  # AA's "gpqa" is GPQA Diamond
    assert gpqa["unit"] == "fraction" and gpqa["scale"] == "percent"
    assert math.isclose(gpqa["score"], 100 * ev["gpqa"]) and float(gpqa["score_raw"]) == ev["gpqa"]
    assert math.isclose(rows["tau2_bench_telecom"]["score"], 100 * ev["tau2_bench"])
    index = rows["aa_intelligence_index"]
    assert index["scale"] == "index" and index["unit"] is None
    assert math.isclose(index["score"], ev["artificial_analysis_intelligence_index"])
    omni = rows["aa_omniscience"]
    assert math.isclose(omni["score"], ev["aa_omniscience"]) and omni["score"] < 0
    assert (omni["scale"], omni["lower"], omni["upper"]) == ("score", -100.0, 100.0)
    assert math.isclose(rows["gdpval_aa_elo"]["score"], glm["breakdowns"]["gdpval"]["elo"])
    assert "apex_agents" not in rows  # null in the file: no row
    for r in rows.values():  # the harness is on every observation
        assert json.loads(r["reported_setting"])["harness"] == "Artificial Analysis"
    # every percent-scale value is 100x its raw fraction
    conv = _sql(home, """SELECT score, score_raw FROM scores WHERE source_id = 'artificial-analysis'
                         AND unit = 'fraction'""")
    fractions = [v for _, key, v in _values(_raw()) if aa.EVALUATIONS.get(key, (0, None))[1] == "fraction"]
    assert conv.height == len(fractions) == 4620
    assert all(math.isclose(s, 100 * float(r), abs_tol=1e-9) for s, r in conv.iter_rows())


def test_parenthesised_settings_read_like_other_sources_effort_suffixes(reg):
    home, _ = reg
    by_raw = dict(_sql(home, """SELECT DISTINCT raw_model_id, model_id FROM scores
                                WHERE source_id = 'artificial-analysis'""").iter_rows())
    got = {m["name"]: by_raw.get(aa.parse_name(m["name"])[0]) for m in _raw()["models"]}
    identity = {r[0]: r[1:] for r in _sql(home, "SELECT model_id, family, version_date, effort FROM models").iter_rows()}
    expect = {
        "GLM-4.5V (Non-reasoning)": ("glm-4.5v", None, "no-thinking"),
        "GLM-4.5V (Reasoning)": ("glm-4.5v", None, "thinking"),
        "Gemini 3.5 Flash (minimal)": ("gemini-3.5-flash", None, "minimal"),
        "Claude Opus 4.6 (Adaptive Reasoning, Max Effort)": ("claude-opus-4.6", None, "max"),
        "Claude Sonnet 4.6 (Non-reasoning, High Effort)": ("claude-sonnet-4.6", None, "high+no-thinking"),
        "Claude 3.5 Sonnet (Oct '24)": ("claude-3.5-sonnet", "2024-10", None),
    }
    for name, ident in expect.items():
        assert identity[got[name]] == ident, name
    # "GPT-5 (high)" is gpt-5-high, which the alias table already joins to the matrix's gpt-5
    assert got["GPT-5 (high)"] == "gpt-5"
    assert got["GPT-5 (medium)"] == "gpt-5-medium"
    assert aa.parse_name("GPT-4o (March 2025, chatgpt-4o-latest)") == (
        "GPT-4o (03-2025, chatgpt-4o-latest)", {"version": "2025-03"})
    # the setting the name states is kept on the model row
    setting = json.loads(_sql(home, "SELECT setting FROM models WHERE model_id = $m",
                              {"m": got["Claude Opus 4.6 (Adaptive Reasoning, Max Effort)"]}).item())
    assert (setting["reasoning"], setting["effort"]) == ("adaptive", "max")


def test_estimated_values_are_kept_marked_and_make_no_cell(reg):
    home, _ = reg
    flagged = {m["name"] for m in _raw()["models"]
               if m["evaluations"].get("artificial_analysis_intelligence_index_is_estimated")
               and m["evaluations"].get("artificial_analysis_intelligence_index") is not None}
    assert len(flagged) > 50
    kept = _sql(home, """SELECT raw_model_id, model_id, benchmark_id, notes FROM scores
                         WHERE source_id = 'artificial-analysis' AND audit_status = 'estimated'""")
    assert set(kept["raw_model_id"]) == {aa.parse_name(n)[0] for n in flagged}
    assert kept.height == len(flagged)
    assert set(kept["benchmark_id"]) == {"aa_intelligence_index"}
    assert all("estimated" in n for n in kept["notes"])
    as_cells = _sql(home, """SELECT count(*) FROM cells c JOIN scores s USING (model_id, benchmark_id)
                             WHERE s.audit_status = 'estimated' AND c.source_id = 'artificial-analysis'""").item()
    assert as_cells == 0
    measured = _sql(home, """SELECT count(*) FROM cells WHERE source_id = 'artificial-analysis'
                             AND benchmark_id = 'aa_intelligence_index'""").item()
    assert measured > 300  # the measured indexes do make cells


def test_aa_harness_sits_beside_the_vendors_figures(reg):
    home, _ = reg
    rows = _sql(home, """SELECT benchmark_id, leaderboard_score, matrix_score, leaderboard_setting
                         FROM source_comparison WHERE leaderboard_source = 'artificial-analysis'
                         AND matrix_source = 'benchpress-2026-05' AND model_id = 'gpt-5'""")
    by_bench = {r["benchmark_id"]: r for r in rows.iter_rows(named=True)}
    assert {"gpqa_diamond", "hle"} <= set(by_bench)
    gpt5 = next(m for m in _raw()["models"] if m["name"] == "GPT-5 (high)")
    assert math.isclose(by_bench["gpqa_diamond"]["leaderboard_score"], 100 * gpt5["evaluations"]["gpqa"])
    assert json.loads(by_bench["gpqa_diamond"]["leaderboard_setting"])["evaluation"] == "gpqa"


def test_model_metadata_fills_the_models_table(reg):
    home, _ = reg
    row = _sql(home, "SELECT * FROM models WHERE model_id = 'glm-4.5v-non-reasoning'").row(0, named=True)
    assert (row["name"], row["provider"], row["release_date"]) == ("GLM-4.5V (Non-reasoning)", "Z AI", "2025-08-11")
    assert row["is_reasoning"] is False and row["open_weights"] is True
    meta = json.loads(row["setting"])
    assert (meta["parameters_total_b"], meta["parameters_active_b"], meta["context_window_tokens"]) == (108, 12, 64000)
    assert (meta["price_usd_per_1m_input"], meta["price_usd_per_1m_output"]) == (0.6, 1.8)
    assert math.isclose(meta["index_cost_usd"], 203.4875922, rel_tol=1e-9)


def test_benchmark_costs_are_the_medians_of_aa_run_costs(reg):
    home, _ = reg
    costs = aa.benchmark_costs(NEWEST)
    # GPQA by hand: each priced model's GPQA tokens times its list prices, then the median
    runs = []
    for m in _raw()["models"]:
        p, tok = m["pricing"], ((m.get("breakdowns") or {}).get("eval_token_counts") or {}).get("gpqa")
        if tok and p.get("price_1m_input_tokens") and p.get("price_1m_output_tokens"):
            usd = (tok["inputTokens"] * p["price_1m_input_tokens"]
                   + tok["outputTokens"] * p["price_1m_output_tokens"]) / 1e6
            if usd > 0:
                runs.append(usd)
    assert len(runs) > 200
    assert math.isclose(costs["gpqa_diamond"], statistics.median(runs))
    with open(REPO / "schemas" / "benchmarks.csv", encoding="utf-8", newline="") as fh:
        contract = {r["benchmark_id"]: r["cost"] for r in csv.DictReader(fh) if r["cost"]}
    assert set(contract) == set(costs)
    for bid, usd in costs.items():
        assert math.isclose(float(contract[bid]), usd, abs_tol=0.005), bid
    built = dict(_sql(home, "SELECT benchmark_id, cost FROM benchmarks WHERE cost IS NOT NULL").iter_rows())
    assert math.isclose(built["gpqa_diamond"], float(contract["gpqa_diamond"]))
    assert built["aa_intelligence_index"] > built["hle"] > built["gpqa_diamond"] > 0


def test_ingest_detects_an_older_snapshot(home):
    older = AA_DIR / "llms_2026-04-10.json"
    assert detect_adapter(older).name == "artificial-analysis"
    sid, report = ingest(home, str(older), source_id="aa-0410")
    s = next(x for x in report.sources if x.source_id == sid)
    assert s.adapter == "artificial-analysis"
    assert (s.rows_read, s.rows_quarantined) == (len(_values(_raw(older))), 0)


def test_an_undescribed_evaluation_is_quarantined_not_guessed(home, tmp_path):
    doc = {"meta": {"source_url": aa.URL, "fetched_at": "2026-06-01T00:00:00"},
           "models": [{"name": "Acme 1 (high)", "slug": "acme-1", "reasoning_model": True,
                       "creator": {"name": "Acme"}, "release_date": "2026-05-01",
                       "evaluations": {"gpqa": 0.5, "artificial_analysis_intelligence_index": 40.0,
                                       "artificial_analysis_intelligence_index_is_estimated": True,
                                       "brand_new_eval": 0.7}}]}
    path = tmp_path / "llms.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, report = ingest(home, str(path), source_id="aa-new")
    s = next(x for x in report.sources if x.source_id == "aa-new")
    assert (s.rows_read, s.rows_accepted, s.rows_quarantined) == (3, 2, 1)
    assert "benchmark has no known scale" in s.reasons[0] and "brand_new_eval" in s.reasons[0]
    reg = home.registry
    assert query(reg, "SELECT model_id, effort FROM models").rows() == [("acme-1-high", "high")]
    assert query(reg, "SELECT count(*) FROM cells").item() == 1  # the estimate makes no cell
