"""Leaderboard adapters (Epoch AI, LiveBench, Aider) on the real mirrored files and on small
files the tests write to reproduce each quirk: scales, effort variants, renames, encodings."""

from __future__ import annotations

import csv
import json
import math
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchpress.adapters import detect_adapter, epoch
from benchpress.adapters.fetch import fetch, tree_sha256
from benchpress.cli import main
from benchpress.errors import BadInputError, FetchError
from benchpress.store.aliases import accept_alias
from benchpress.store.build import build
from benchpress.store.ingest import ingest
from benchpress.store.sql import query
from benchpress.store.tables import read_table
from tests.conftest import BP_2026_05, REPO, SHARED_DATA, build_repo_sources

# about 10 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=10)


EPOCH = SHARED_DATA / "epoch-2025-12"
LIVEBENCH = SHARED_DATA / "livebench"
AIDER = SHARED_DATA / "aider-2026-05" / "polyglot_leaderboard.yml"
SOURCES = ["benchpress-2026-05", "epoch-2025-12", "livebench-2026-01-08", "aider-2026-05"]
RUNS_HEADER = "id,task,model,Best score (across scorers),Scores,log viewer,logs,job,started_at,Status,Manual evaluation,task version"


@pytest.fixture(scope="module")
def leaderboards(tmp_path_factory, shared_data):
    """The repo's source configs for the 2026-05 matrix and the three leaderboards, built from
    the mirror (folders for Epoch AI and LiveBench, a file for Aider)."""
    return build_repo_sources(tmp_path_factory.mktemp("lb") / "ws", SOURCES)


def _sql(home, text, params=None):
    return query(home.registry, text, params)


def _runs_csv(folder: Path, rows: list[tuple[str, str, str]], *, bom: bool = True) -> Path:
    """An Epoch benchmarks_runs.csv with (task, model, score) rows."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [RUNS_HEADER] + [
        f"r{k},{task},{model},{score},choice:{score},https://logs.epoch.ai/r{k},,,1 March 2025 2:10pm,Success,,1.0.0"
        for k, (task, model, score) in enumerate(rows)]
    (folder / "benchmarks_runs.csv").write_bytes(("\ufeff" if bom else "").encode() +
                                                 "\n".join(lines).encode() + b"\n")
    return folder


# ---------------------------------------------------------------- the real files, end to end

def test_repo_configs_ingest_every_leaderboard_and_count_every_reject(leaderboards):
    home, summary = leaderboards
    counts = {sid: (s.rows_read, s.rows_accepted, s.rows_quarantined) for sid, s in summary.items()}
    assert counts["epoch-2025-12"] == (714, 678, 36)
    # LiveBench's 2026-01-08 table at its newest commit (2026-07-01): 127 models
    assert counts["livebench-2026-01-08"] == (3930, 3930, 0)
    assert counts["aider-2026-05"] == (69, 66, 3)
    epoch_reasons = summary["epoch-2025-12"].reasons
    assert sum("empty model name" in r for r in epoch_reasons) == 35  # agents, mixes of models
    assert sum("duplicate of an earlier row" in r for r in epoch_reasons) == 1
    assert all("benchmark has no known scale" in r for r in summary["aider-2026-05"].reasons)
    architect = _sql(home, "SELECT record FROM quarantine WHERE source_id = 'aider-2026-05'")
    assert all("architect mode" in r for r in architect["record"])


def test_a_folder_mirror_is_pinned_and_cached_by_its_tree_digest(leaderboards):
    home, _ = leaderboards
    pinned = yaml.safe_load((REPO / "sources" / "epoch-2025-12.yaml").read_text())["sha256"]
    assert tree_sha256(EPOCH) == pinned
    assert (home.cache / pinned / "benchmarks_runs.csv").is_file()
    recorded = _sql(home, "SELECT sha256 FROM sources WHERE source_id = 'epoch-2025-12'").item()
    assert recorded == pinned


def test_epoch_fractions_are_converted_to_percent(leaderboards):
    home, _ = leaderboards
    with open(EPOCH / "benchmarks_runs.csv", encoding="utf-8-sig", newline="") as fh:
        raw = {(r["model"], r["task"]): r["Best score (across scorers)"] for r in csv.DictReader(fh)}
    row = _sql(home, """SELECT score, score_raw, unit FROM scores WHERE source_id = 'epoch-2025-12'
                        AND model_id = 'o3-high' AND benchmark_id = 'gpqa_diamond'""").row(0, named=True)
    assert row["score_raw"] == raw[("o3-2025-04-16_high", "GPQA diamond")]
    assert row["unit"] == "fraction"
    assert math.isclose(row["score"], 100 * float(row["score_raw"]))
    # every Epoch run landed on the percent scale, none unconverted
    runs = _sql(home, """SELECT s.score, s.score_raw, b.scale FROM scores s JOIN benchmarks b USING (benchmark_id)
                         WHERE s.source_id = 'epoch-2025-12' AND s.unit = 'fraction'""")
    assert runs.height == 541
    assert set(runs["scale"]) == {"percent"}
    assert all(math.isclose(s, 100 * float(r)) for s, r in zip(runs["score"], runs["score_raw"]))


def test_epoch_tasks_map_to_existing_benchmarks(leaderboards):
    home, _ = leaderboards
    mapped = dict(_sql(home, """SELECT DISTINCT raw_benchmark_id, benchmark_id FROM scores
                                WHERE source_id = 'epoch-2025-12' AND unit = 'fraction'""").iter_rows())
    assert mapped["GPQA diamond"] == "gpqa_diamond"
    assert mapped["SWE-Bench verified"] == "swe_bench_verified"
    assert mapped["FrontierMath-2025-02-28-Private"] == "frontiermath"
    assert mapped["FrontierMath-Tier-4-2025-07-01-Private"] == "frontiermath_tier4"
    assert mapped["MATH level 5"] == "math_level_5"


def test_efforts_stay_different_rows_with_parsed_identity(leaderboards):
    home, _ = leaderboards
    models = _sql(home, """SELECT model_id, family, version_date, effort FROM models
                           WHERE model_id LIKE 'o3-2025-04-16-%' ORDER BY model_id""")
    assert models.rows() == [("o3-2025-04-16-low", "o3", "2025-04-16", "low"),
                             ("o3-2025-04-16-medium", "o3", "2025-04-16", "medium")]
    # the high-effort run is the matrix's o3-high through the alias table; the others are not
    cells = _sql(home, """SELECT DISTINCT model_id FROM cells WHERE benchmark_id LIKE 'frontiermath%'
                          AND model_id IN ('o3-high', 'o3-2025-04-16-low', 'o3-2025-04-16-medium')""")
    assert sorted(cells["model_id"]) == ["o3-2025-04-16-low", "o3-2025-04-16-medium", "o3-high"]
    # effort from a matrix's setting when its id names none
    assert _sql(home, "SELECT effort FROM models WHERE model_id = 'gpt-5'").item() == "high"


def test_livebench_overall_is_the_mean_of_category_means(leaderboards):
    home, _ = leaderboards
    categories = json.loads((LIVEBENCH / "categories_2026_01_08.json").read_text())
    with open(LIVEBENCH / "table_2026_01_08.csv", encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh))
    means = [sum(float(first[t]) for t in tasks) / len(tasks) for tasks in categories.values()]
    expected = sum(means) / len(means)
    got = _sql(home, """SELECT score, derived, observed_at FROM scores WHERE source_id LIKE 'livebench%'
                        AND benchmark_id = 'livebench' AND model_id = $m ORDER BY row LIMIT 1""",
               {"m": first["model"]}).row(0, named=True)
    assert math.isclose(got["score"], expected, abs_tol=1e-4)
    assert got["derived"] is True and got["observed_at"] == "2026-01-08"
    tasks = _sql(home, """SELECT count(*) FROM scores WHERE source_id LIKE 'livebench%' AND derived
                          AND benchmark_id NOT LIKE '%_avg' AND benchmark_id <> 'livebench'""").item()
    assert tasks == 0


def test_livebench_bare_name_beside_effort_variants_is_the_default_effort(leaderboards):
    home, _ = leaderboards
    row = _sql(home, "SELECT family, effort FROM models WHERE model_id = 'gpt-5-mini-default-effort'")
    assert row.rows() == [("gpt-5-mini", "default")]
    # gpt-5-mini-high joins the matrix's gpt-5-mini (high effort) through the alias table
    merged = _sql(home, """SELECT DISTINCT raw_model_id FROM scores WHERE model_id = 'gpt-5-mini'
                           AND source_id LIKE 'livebench%'""")["raw_model_id"].to_list()
    assert merged == ["gpt-5-mini-high"]


def test_aider_runs_on_the_real_leaderboard(leaderboards):
    home, _ = leaderboards
    rows = _sql(home, """SELECT model_id, benchmark_id, score, reported_setting FROM scores
                         WHERE source_id = 'aider-2026-05' AND raw_model_id IN ('o3', 'o3 (high)',
                         'Gemini 2.5 Pro Preview 05-06', 'gpt-5 (high)') ORDER BY model_id""")
    by_id = {r["model_id"]: r for r in rows.iter_rows(named=True)}
    assert set(by_id) == {"o3", "o3-high", "gemini-2.5-pro-preview-05-06", "gpt-5"}
    assert by_id["gemini-2.5-pro-preview-05-06"]["benchmark_id"] == "aider_polyglot_diff"  # diff-fenced
    assert json.loads(by_id["o3-high"]["reported_setting"])["reasoning_effort"] == "high"
    assert json.loads(by_id["gpt-5"]["reported_setting"])["api_model"] == "openai/gpt-5"
    # each setting keeps its own row's pass_rate_2, as the leaderboard file gives it
    board = yaml.safe_load((SHARED_DATA / "aider-2026-05" / "polyglot_leaderboard.yml").read_text())
    given = {r["model"]: float(r["pass_rate_2"]) for r in board if r["model"] in ("o3", "o3 (high)")}
    assert by_id["o3"]["score"] == given["o3"] and by_id["o3-high"]["score"] == given["o3 (high)"]
    assert (given["o3"], given["o3 (high)"]) == (76.9, 81.3)  # two settings, two scores


def test_sql_puts_leaderboard_values_beside_the_matrix(leaderboards):
    home, _ = leaderboards
    raw = json.loads(BP_2026_05.read_text())
    i = [m["id"] for m in raw["models"]].index("o3-high")
    j = [b["id"] for b in raw["benchmarks"]].index("gpqa_diamond")
    row = _sql(home, """SELECT leaderboard_score, matrix_score, difference FROM source_comparison
                        WHERE model_id = 'o3-high' AND benchmark_id = 'gpqa_diamond'
                        AND leaderboard_source = 'epoch-2025-12' AND matrix_source = 'benchpress-2026-05'
                        """).row(0, named=True)
    assert math.isclose(row["leaderboard_score"], 81.8)
    assert math.isclose(row["matrix_score"], raw["observed"][i][j])
    assert math.isclose(row["difference"], 81.8 - raw["observed"][i][j], abs_tol=1e-4)
    disagreements = _sql(home, "SELECT * FROM source_disagreements")
    assert disagreements.height > 0 and (disagreements["abs_difference"] > 5).all()
    by_hand = _sql(home, """SELECT count(*) FROM source_comparison WHERE abs(leaderboard_score - matrix_score) > 5
                            AND scale IN ('percent', 'index')""").item()
    assert disagreements.height == by_hand
    assert {"epoch-2025-12", "livebench-2026-01-08", "aider-2026-05"} <= set(disagreements["leaderboard_source"])


def test_aliases_suggest_for_a_source_shows_identity_matches_with_scores(leaderboards):
    home, _ = leaderboards
    result = CliRunner().invoke(main, ["aliases", "suggest", "--source", "epoch", "--format", "json",
                                       "--home", str(home.root)], catch_exceptions=False)
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    hit = next(r for r in rows if r["alias"] == "claude-3-7-sonnet-20250219-64k"
               and r["canonical_id"] == "claude-3.7-sonnet")
    assert hit["match"] == "identity" and hit["shared"] >= 1 and "gpqa_diamond" in hit["scores"]
    # never proposes a contradicting effort or snapshot
    for r in rows:
        assert r["alias_effort"] is None or r["canonical_effort"] is None \
            or r["alias_effort"] == r["canonical_effort"]
    assert not any(r["alias"] == "gpt-5-2025-08-07-medium" and r["canonical_id"] == "gpt-5" for r in rows)


# ---------------------------------------------------------------- quirks, on files written here

def test_a_fraction_file_is_converted_and_a_mislabelled_one_refused(home, tmp_path):
    good = _runs_csv(tmp_path / "good", [("GPQA diamond", "acme-1_high", "0.5"),
                                         ("GPQA diamond", "acme-2", "0.731")])
    _, report = ingest(home, str(good), source_id="ep")
    scores = dict(_sql(home, "SELECT model_id, score FROM cells WHERE benchmark_id = 'gpqa_diamond'").iter_rows())
    assert scores == {"acme-1-high": 50.0, "acme-2": pytest.approx(73.1)}
    before = (home.registry / "cells.parquet").read_bytes()
    wrong = _runs_csv(tmp_path / "wrong", [("GPQA diamond", "acme-3", "85.0"),
                                           ("GPQA diamond", "acme-4", "73.1")])
    with pytest.raises(BadInputError, match=r"labelled as 0-1 fractions are above 1.*mislabelled"):
        ingest(home, str(wrong), source_id="ep-wrong")
    assert (home.registry / "cells.parquet").read_bytes() == before
    assert not (home.sources / "ep-wrong.yaml").exists()


@pytest.mark.parametrize("value", ["61", "61%"])
def test_one_stray_fraction_is_one_quarantined_row_with_its_reason(home, tmp_path, value):
    stray = _runs_csv(tmp_path / "stray", [("GPQA diamond", "acme-5", "0.61"),
                                           ("GPQA diamond", "acme-6", "0.42"),
                                           ("GPQA diamond", "acme-7", value)])
    _, report = ingest(home, str(stray), source_id="ep-stray")
    summary = next(s for s in report.sources if s.source_id == "ep-stray")
    assert (summary.rows_accepted, summary.rows_quarantined) == (2, 1)
    assert f"{value} is labelled a 0-1 fraction but is above 1: mislabelled" in summary.reasons[0]


def test_epoch_bom_multiline_fields_and_empty_models(home, tmp_path):
    folder = _runs_csv(tmp_path / "ep", [("GPQA diamond", "acme-1_high", "0.5"),
                                         ("MATH level 5", "acme-1_high", "0.9")])
    (folder / "model_versions.csv").write_bytes(
        "\ufeffid,Model,Version release date,Hugging Face developer id,Link,Notes,benchmarks/runs,"
        "Display name,Unique display name\n"
        'old-1,Old,2023-01-01,,,"first line\n\nthird line, with a comma",,,\n'
        "acme-1_high,Acme 1,2025-03-01,,,,r0,Acme 1 (high),\n".encode())
    (folder / "external_benchmark_os_world.csv").write_bytes(
        "\ufeffAgent,Model version,Score,Source,Source link,Notes (details),Date added,Trajectories\n"
        "Some Agent (50 steps),,34.500,OS World Website,https://os-world.github.io/,,13/3/2025,\n"
        "Acme (100 steps),acme-1_high,28.000,OS World Website,https://os-world.github.io/,,24/2/2025,\n".encode())
    assert detect_adapter(folder).name == "epoch"
    _, report = ingest(home, str(folder), source_id="ep")
    summary = next(s for s in report.sources if s.source_id == "ep")
    assert (summary.rows_read, summary.rows_accepted, summary.rows_quarantined) == (4, 3, 1)
    assert "external_benchmark_os_world.csv line 2: field 'model_id'" in summary.reasons[0]
    assert "empty model name" in summary.reasons[0]
    model = _sql(home, "SELECT * FROM models WHERE model_id = 'acme-1-high'").row(0, named=True)
    assert (model["name"], model["release_date"], model["effort"]) == ("Acme 1 (high)", "2025-03-01", "high")
    assert _sql(home, "SELECT count(*) FROM models").item() == 1  # only versions with scores
    # row pointers count the lines of quoted multi-line fields
    records = epoch.csv_records("model_versions.csv", (folder / "model_versions.csv").read_bytes())
    assert [(line, r["id"]) for line, r in records] == [(2, "old-1"), (5, "acme-1_high")]
    observed = _sql(home, "SELECT observed_at FROM scores WHERE benchmark_id = 'osworld'").item()
    assert observed == "2025-02-24"


def test_epoch_reads_its_zip_like_its_folder(tmp_path):
    archive = tmp_path / "benchmark_data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted(EPOCH.iterdir()):
            zf.write(p, f"benchmark_data/{p.name}")
    assert detect_adapter(archive).name == "epoch"
    assert tree_sha256(archive) == tree_sha256(EPOCH)
    a, b = epoch.read(EPOCH), epoch.read(archive)
    assert a.scores.equals(b.scores) and a.models.equals(b.models)
    # a zip pinned by its tree digest is accepted into the cache
    got = fetch(archive.as_uri(), tmp_path / "cache", expected_sha256=tree_sha256(EPOCH))
    assert got.sha256 == tree_sha256(EPOCH)


def test_a_mirror_folder_with_other_content_is_refused(tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(EPOCH, mirror / "epoch")
    (mirror / "epoch" / "extra.csv").write_text("x\n")
    with pytest.raises(FetchError, match="tree sha256 is"):
        fetch("https://epoch.ai/data/benchmark_data.zip", tmp_path / "cache", mirror=mirror,
              mirror_path="epoch", expected_sha256=tree_sha256(EPOCH))


@pytest.mark.parametrize("content, message", [
    ("id,task,model,Best score (across scorers)\nr1,GPQA diamond,caf\xe9,0.5\n".encode("latin-1"),
     r"benchmarks_runs.csv: not UTF-8 text \(byte \d+\)"),
    (b'id,task,model,Best score (across scorers)\nr1,"GPQA diamond,acme,0.5\nr2,x,y,0.1\n',
     r"benchmarks_runs.csv line 2"),
])
def test_epoch_encoding_and_shape_errors_name_the_file(tmp_path, content, message):
    folder = tmp_path / "ep"
    folder.mkdir()
    (folder / "benchmarks_runs.csv").write_bytes(content)
    with pytest.raises(BadInputError, match=message):
        epoch.read(folder)


def _livebench(folder: Path, date: str, header: list[str], rows: list[list[str]], categories: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tag = date.replace("-", "_")
    (folder / f"table_{tag}.csv").write_text(
        "\n".join(",".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
    (folder / f"categories_{tag}.json").write_text(json.dumps(categories), encoding="utf-8")
    return folder


def test_livebench_renames_map_through_aliases_and_unknown_tasks_are_refused(home, tmp_path):
    folder = _livebench(
        tmp_path / "lb", "2024-08-31",
        ["model", "LCB_generation", "coding_completion", "zebra_puzzle", "mystery_task"],
        [["model-a", "60", "40", "30", "10"],
         ["model-b", "50", "30", "", "20"],
         ["", "1", "2", "3", "4"]],
        {"Coding": ["LCB_generation", "coding_completion"], "Reasoning": ["zebra_puzzle"]})
    _, report = ingest(home, str(folder), source_id="lb")
    summary = next(s for s in report.sources if s.source_id == "lb")
    bench = set(read_table(home.registry, "benchmarks")["benchmark_id"])
    assert {"livebench_code_generation", "livebench_code_completion"} <= bench
    assert not {"livebench_lcb_generation", "livebench_coding_completion", "livebench_mystery_task"} & bench
    raw = _sql(home, "SELECT DISTINCT raw_benchmark_id FROM scores WHERE benchmark_id = 'livebench_code_generation'")
    assert raw.item() == "livebench_lcb_generation"
    # model-a: overall = mean(mean(60, 40), 30); model-b lacks a Reasoning task: no overall
    overall = dict(_sql(home, "SELECT model_id, score FROM scores WHERE benchmark_id = 'livebench'").iter_rows())
    assert overall == {"model-a": pytest.approx(40.0)}
    # the unknown task (2 rows) and the nameless row are quarantined and counted
    assert summary.rows_quarantined == 3
    assert sum("no known scale" in r for r in summary.reasons) == 2
    assert sum("empty model name" in r for r in summary.reasons) == 1


def test_aider_efforts_formats_and_reruns(home, tmp_path):
    runs = [
        {"model": "o3", "edit_format": "diff", "pass_rate_2": 76.9, "date": "2025-06-25",
         "command": "aider --model o3"},
        {"model": "o3", "edit_format": "diff", "pass_rate_2": 79.0, "date": "2025-07-01",
         "command": "aider --model o3"},
        {"model": "o3 (high)", "edit_format": "diff-fenced", "pass_rate_2": 81.3, "date": "2025-06-25",
         "command": "aider --model o3 --reasoning-effort high"},
        {"model": "Grok 3 Mini Beta", "edit_format": "whole", "pass_rate_2": 49.3, "date": "2025-04-10",
         "command": "aider --model xai/grok-3-mini-beta --reasoning-effort high"},
        {"model": "claude-x (no thinking)", "edit_format": "diff", "pass_rate_2": 50.0, "date": "2025-05-01",
         "thinking_tokens": 0, "command": "aider --model claude-x"},
        {"model": "R1 + Sonnet", "edit_format": "architect", "pass_rate_2": 64.0, "date": "2025-01-23",
         "command": "aider --architect --model r1 --editor-model sonnet"},
        {"model": None, "edit_format": "diff", "pass_rate_2": 10.0, "date": "2025-01-01"},
    ]
    path = tmp_path / "polyglot_leaderboard.yml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    _, report = ingest(home, str(path), source_id="aider")
    summary = next(s for s in report.sources if s.source_id == "aider")
    assert (summary.rows_read, summary.rows_accepted, summary.rows_quarantined) == (7, 5, 2)
    cells = {(r["model_id"], r["benchmark_id"]): r for r in
             _sql(home, "SELECT * FROM cells").iter_rows(named=True)}
    # two runs of o3 diff: both observations, the newer one shown
    assert cells[("o3", "aider_polyglot_diff")]["score"] == 79.0
    assert cells[("o3", "aider_polyglot_diff")]["n_observations"] == 2
    assert cells[("o3-high", "aider_polyglot_diff")]["score"] == 81.3
    assert cells[("grok-3-mini-beta-high", "aider_polyglot_whole")]["score"] == 49.3
    efforts = dict(_sql(home, "SELECT model_id, effort FROM models").iter_rows())
    assert efforts == {"o3": None, "o3-high": "high", "grok-3-mini-beta-high": "high",
                       "claude-x-no-thinking": "no-thinking"}


def test_an_accepted_alias_applies_on_the_next_build(home, shared_data):
    for sid in ("benchpress-2026-05", "epoch-2025-12"):
        shutil.copy(REPO / "sources" / f"{sid}.yaml", home.sources)
    build(home, mirror=SHARED_DATA)
    alias = "claude-3-7-sonnet-20250219-64k"
    n = _sql(home, "SELECT count(*) FROM scores WHERE model_id = $a", {"a": alias}).item()
    assert n > 0
    accept_alias(home.schemas, "model", alias, "claude-3.7-sonnet", "reviewed: GPQA 79.7 vs 78.2")
    build(home, mirror=SHARED_DATA)
    assert _sql(home, "SELECT count(*) FROM scores WHERE model_id = $a", {"a": alias}).item() == 0
    moved = _sql(home, """SELECT count(*) FROM scores WHERE model_id = 'claude-3.7-sonnet'
                          AND raw_model_id = 'claude-3-7-sonnet-20250219_64K'""").item()
    assert moved == n


def test_an_undescribed_epoch_external_file_is_refused_not_guessed(home, tmp_path):
    folder = _runs_csv(tmp_path / "ep", [("GPQA diamond", "acme-1", "0.5")])
    (folder / "external_benchmark_simplebench.csv").write_text(
        "id,Model version,Score,Source,Source link\n"
        "r1,acme-1,0.62,SimpleBench,https://simple-bench.com/\n", encoding="utf-8")
    _, report = ingest(home, str(folder), source_id="ep")
    summary = next(s for s in report.sources if s.source_id == "ep")
    assert (summary.rows_accepted, summary.rows_quarantined) == (1, 1)
    assert "benchmark has no known scale" in summary.reasons[0]
    assert "not described in epoch.EXTERNAL" in summary.reasons[0]
    assert _sql(home, "SELECT count(*) FROM scores WHERE benchmark_id = 'simplebench'").item() == 0


def test_livebench_lone_table_reads_its_categories_only_when_beside_it(tmp_path):
    """A table read where it lies finds its categories file and derives category scores; a
    copy alone (as in the download cache) derives nothing and says how to get them."""
    from benchpress.adapters import livebench

    beside = livebench.read(LIVEBENCH / "table_2026_01_08.csv")
    assert any(r["benchmark_id"] == "livebench" for r in beside.scores.to_dicts())
    alone = tmp_path / "table_2026_01_08.csv"
    shutil.copy(LIVEBENCH / "table_2026_01_08.csv", alone)
    out = livebench.read(alone)
    assert not any(r["benchmark_id"].endswith("_avg") for r in out.scores.to_dicts())
    assert out.scores.height == beside.scores.filter(~beside.scores["derived"]).height
    assert any("ingest the folder or zip" in n for n in out.notes)


def test_aider_names_the_line_of_malformed_yaml_and_refuses_other_documents(tmp_path):
    from benchpress.adapters import aider

    bad = tmp_path / "board.yml"
    bad.write_text("- dirname: a\n  pass_rate_2: 1\n- dirname: [b, c\n")
    with pytest.raises(BadInputError, match=r"board\.yml: malformed YAML at line 4: did not "
                                            r"find expected ',' or '\]'$"):
        aider.read(bad)
    with pytest.raises(BadInputError, match="data.json: expected a YAML list of leaderboard runs"):
        aider.read(BP_2026_05)  # a 1 MB JSON document (YAML too), parsed by libyaml
