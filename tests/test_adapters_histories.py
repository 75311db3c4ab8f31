"""The adapters of four shared histories (BFCL, tau2-bench, SWE-bench, LMArena) against the real
files of every version: detection by content, every version read, and the newest version
ingested with at least 95% of its published values landed under the upstream entry name and
cited as the upstream file at its commit, counted by `tests/history_data.py` without the
adapters."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import polars as pl
import pytest

from benchpress.adapters import detect_adapter, get_adapter
from benchpress.adapters.bfcl import parse_name
from benchpress.adapters.swebench import board_id, entry_id
from benchpress.adapters.tau2_bench import simulator_label
from benchpress.errors import BadInputError
from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests.conftest import make_home
from tests import history_data as hd

pytestmark = pytest.mark.duration(seconds=6)

ADAPTER = {"bfcl": "bfcl", "tau2-bench": "tau2-bench", "swe-bench": "swe-bench",
           "lmarena": "lmarena"}
SOURCES = sorted(ADAPTER)


@pytest.mark.parametrize("source", SOURCES)
def test_every_version_is_recognised_and_read(source, shared_data):
    """Each shared version (folder) is detected as its format and read with scores; formats
    change inside the histories (renamed files, new headers, new layouts)."""
    for row in hd.versions(source):
        path = hd.folder(source) / row["date"]
        assert detect_adapter(path).name == ADAPTER[source], row["date"]
        out = get_adapter(ADAPTER[source]).read(path)
        assert out.scores.height > 0 and out.models.height > 0, row["date"]
        # each value cites its file by its path in the folder (the build makes it a URL)
        assert (~out.scores["reference_url"].str.contains("://")).all(), row["date"]


@pytest.mark.parametrize("source", ["bfcl", "swe-bench", "lmarena"])
def test_a_single_file_is_recognised_too(source, shared_data):
    newest = hd.folder(source) / hd.versions(source)[-1]["date"]
    file = sorted(p for p in newest.iterdir() if p.suffix in (".csv", ".json")
                  and p.name != "_index.json")[0]
    assert detect_adapter(file).name == ADAPTER[source]
    out = get_adapter(ADAPTER[source]).read(file)
    assert out.scores["reference_url"].is_null().all()  # the build cites the source's URL


@pytest.fixture(scope="module")
def newest(tmp_path_factory, shared_data):
    """source -> (registry scores of its newest version ingested alone, version label)."""
    out = {}
    for source in SOURCES:
        home = make_home(tmp_path_factory.mktemp(f"newest-{source}") / "ws")
        version = hd.versions(source)[-1]["date"]
        sid, report = ingest(home, str(hd.folder(source) / version))
        assert read_table(home.registry, "sources")["url"].to_list()[0].startswith(
            "https://github.com/")
        out[source] = (read_table(home.registry, "scores"), version, home)
    return out


@pytest.mark.parametrize("source", SOURCES)
def test_newest_version_lands_95_percent_under_upstream_names_cited(source, newest):
    scores, version, _ = newest[source]
    expected = hd.published(source, version)
    upstream = Counter({(name, hd.blob(source, version, file), value): n
                        for (name, file, value), n in expected.items()})
    # values compare exactly: both sides parse the same decimal text to the same float
    landed = Counter(zip(scores["raw_model_id"], scores["reference_url"], scores["score"]))
    matched = sum(min(k, landed[key]) for key, k in upstream.items())
    total = sum(upstream.values())
    assert total > 100
    assert matched / total >= 0.95, (source, matched, total)
    assert not scores["reference_url"].str.starts_with("file:").any()


def test_bfcl_modes_regimes_and_lower_is_better_columns(newest):
    scores, version, home = newest["bfcl"]
    benchmarks = read_table(home.registry, "benchmarks")
    direction = dict(zip(benchmarks["benchmark_id"], benchmarks["higher_is_better"]))
    scale = dict(zip(benchmarks["benchmark_id"], benchmarks["scale"]))
    assert scale["bfcl_total_cost"] == "dollars" and direction["bfcl_total_cost"] is False
    assert scale["bfcl_latency_mean"] == "seconds" and direction["bfcl_latency_mean"] is False
    assert direction["bfcl_format_sensitivity_max_delta"] is False
    row = scores.filter((pl.col("raw_model_id") == "Claude-Opus-4-5-20251101 (FC)")
                        & (pl.col("benchmark_id") == "bfcl_overall"))
    assert row["score"].to_list() == [77.47]
    models = read_table(home.registry, "models")
    fc = models.filter(pl.col("name") == "Claude-Opus-4-5-20251101 (FC)")
    assert json.loads(fc["setting"][0])["mode"] == "FC"
    assert parse_name("o1-2024-12-17 (Prompt + Thinking)") == {"mode": "Prompt + Thinking"}
    # the FC and Prompt rows of one model stay two rows
    assert {"claude-opus-4-5-20251101-fc", "claude-opus-4-5-20251101-prompt"} <= set(
        models["model_id"])


def test_bfcl_first_release_reads_its_shifted_layout(shared_data):
    """2024-03-20: 16 header fields over 17-field rows; read in the next release's order."""
    first = get_adapter("bfcl").read(hd.folder("bfcl") / "2024-03-20").scores
    second = get_adapter("bfcl").read(hd.folder("bfcl") / "2024-03-21").scores
    pick = lambda s: dict(zip(s.filter(pl.col("model_id") == "GPT-4-1106-Preview (FC)")  # noqa: E731
                              ["benchmark_id"], s.filter(pl.col("model_id") == "GPT-4-1106-Preview (FC)")["score_raw"]))
    assert pick(first) == pick(second)
    assert pick(first)["bfcl_overall"] == "84.28%"


def test_bfcl_refuses_a_ragged_table(tmp_path):
    bad = tmp_path / "data.csv"
    bad.write_text("Rank,Overall Acc,Model,Organization\n1,50%,x\n2,40%,y,Org,extra,more\n")
    with pytest.raises(BadInputError, match=r"data.csv line 2: 3 fields but the header has 4"):
        get_adapter("bfcl").read(bad)


def test_tau2_entries_are_submissions_with_their_user_simulator(newest):
    scores, version, home = newest["tau2-bench"]
    models = read_table(home.registry, "models")
    entry = models.filter(pl.col("model_id") == "gpt-5-2-sierra-2026-02-26").row(0, named=True)
    assert entry["entry_kind"] == "submission" and entry["base_model_id"] == "gpt-5.2"
    assert json.loads(entry["setting"])["user_simulator"] == "gpt-5.2"
    # a re-run under another user simulator is a benchmark version, never the base column
    mine = scores.filter(pl.col("model_id") == "gpt-5-2-sierra-2026-02-26")
    assert set(mine["benchmark_id"]) >= {"tau2_bench_airline@user-gpt-5.2",
                                         "tau2_bench_airline_cost@user-gpt-5.2"}
    legacy = scores.filter(pl.col("model_id") == "gpt-5-sierra-2025-08-09")
    assert "tau2_bench_telecom" in set(legacy["benchmark_id"])  # the gpt-4.1 simulator
    # vendors' figures of the original tau-bench are tau-bench, not tau2-bench
    opus = scores.filter(pl.col("model_id") == "claude-opus-4-anthropic-2025-05-22")
    assert set(opus["benchmark_id"]) == {"tau_bench_retail", "tau_bench_airline"}
    assert set(opus["source_type"]) == {"third_party_aggregator"}
    # a custom system names no model it runs
    custom = models.filter(pl.col("model_id") == "distyl-buttonagent-distyl-2026-03-25")
    assert custom["base_model_id"].to_list() == [None]
    assert simulator_label("gpt-4.1-2025-04-14") is None
    assert simulator_label("v1.0", "voice") is None


def test_tau2_leaves_out_what_the_manifest_does_not_list(shared_data):
    out = get_adapter("tau2-bench").read(hd.folder("tau2-bench") / "2025-10-03")
    assert not out.models["model_id"].str.starts_with("A_EXAMPLE").any()
    assert any("does not list" in n for n in out.notes)
    assert any("have no submission.json" in n for n in out.notes)  # listed, missing folders


def test_swebench_entries_are_agents_linked_to_their_model(newest):
    scores, version, home = newest["swe-bench"]
    models = read_table(home.registry, "models")
    trae = models.filter(pl.col("model_id") == "20250928-trae-doubao-seed-code").row(0, named=True)
    assert trae["entry_kind"] == "agent" and trae["base_model_id"] is None  # two models
    assert json.loads(trae["setting"])["models"] == ["Doubao-Seed-Code", "Doubao-Seed-1.6"]
    mini = models.filter(pl.col("model_id") == "20251124-mini-v1.16.0-claude-opus-4-5-20251101")
    assert mini["base_model_id"].to_list() == ["claude-opus-4-5-20251101"]
    runs = scores.filter(pl.col("model_id") == "20251124-mini-v1.16.0-claude-opus-4-5-20251101")
    assert {"swe_bench_verified_bash_only", "swe_bench_verified_bash_only_cost_per_instance"} <= \
        set(runs["benchmark_id"])
    assert board_id("test_leaderboard") == "swe_bench_full"
    assert entry_id({"name": "x", "logs": "https://github.com/swe-bench/experiments/tree/main/"
                     "evaluation/lite/20240402_sweagent_gpt4/logs"}) == "20240402_sweagent_gpt4"


def test_swebench_reads_a_board_listed_twice_once(shared_data):
    out = get_adapter("swe-bench").read(hd.folder("swe-bench") / "2024-07-29")
    assert out.scores.select("model_id", "benchmark_id").is_unique().all()
    assert any("listed twice" in n for n in out.notes)


def test_lmarena_boards_are_relative_ratings(newest):
    scores, version, home = newest["lmarena"]
    benchmarks = read_table(home.registry, "benchmarks")
    assert set(benchmarks.filter(pl.col("benchmark_id").str.starts_with("lmarena_"))["scale"]) \
        == {"elo"}
    first = get_adapter("lmarena").read(hd.folder("lmarena") / "2025-07-27")
    assert set(first.scores["benchmark_id"]) == {"lmarena_text", "lmarena_vision",
                                                  "lmarena_text_to_image"}
    setting = json.loads(first.scores.row(0, named=True)["reported_setting"])
    assert {"ci", "votes", "rank"} <= set(setting)


def test_a_copy_with_a_corrupt_member_is_one_clear_error(tmp_path, shared_data):
    copy = tmp_path / "2026-05-26"
    shutil.copytree(hd.folder("tau2-bench") / "2026-05-26", copy)
    (copy / "submissions" / "o3_openai_2025-01-15" / "submission.json").write_text("{oops")
    with pytest.raises(BadInputError, match=r"submissions/o3_openai_2025-01-15/submission.json: "
                                            r"malformed JSON"):
        get_adapter("tau2-bench").read(copy)
