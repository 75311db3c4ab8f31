"""Tables at 80 columns keep each command's key columns (what the answer is), and repeated
warnings are said once with a count."""

from __future__ import annotations

import json

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.cli.common import render
from benchpress.store.aliases import suggest_aliases
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.tables import read_table
from tests.conftest import MATRIX_2026_02

FAST = ["--method", "benchmark_mean"]


def header(table: str) -> list[str]:
    """The column names of the first rich table printed in `table`."""
    lines = table.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    return [c.strip() for c in lines[top + 1].strip("┃").split("┃")]


@pytest.fixture(scope="module")
def two_versions(built_2026_05):
    """This module's copy of the 2026-05 registry, snapshotted as `may`, then the 2026-02
    matrix ingested beside it (the live registry): conflicts and changed cells."""
    create_snapshot(built_2026_05, tag="may")
    ingest(built_2026_05, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    return built_2026_05


def run80(home, *args):
    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, [*map(str, args), "--home", str(home.root)])
    assert result.exit_code == 0, (args, result.stderr, result.exception)
    return result


def test_key_columns_come_first_and_are_never_cut(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    long = "gpqa_diamond, hle, codeforces_rating, mmlu_pro, arc_agi_1, aime_2025"
    frame = pl.DataFrame({**{f"filler_{i}": ["x" * 12] for i in range(8)},
                          "set": ["paper"], "probes": [long], "medae": [3.9]})
    render(pl.concat([frame, frame]), "table", key=("set", "probes", "medae"))
    out = capsys.readouterr().out
    assert header(out)[:3] == ["set", "probes", "medae"]
    assert max(len(line) for line in out.splitlines()) <= 80
    # the set is whole: wrapped onto more lines, never cut with an ellipsis
    text = " ".join(out.split())
    assert all(p.strip() in text for p in long.split(",")) and "…" not in out.split("medae")[1]


def test_compare_keeps_gap_and_p_ahead_at_80_columns(two_versions):
    out = run80(two_versions, "compare", "gpt-5.4", "claude-opus-4.6", "gemini-3-pro", *FAST).stdout
    assert header(out) == ["benchmark_id", "model", "score", "gap", "p_ahead"]


def test_sql_keeps_the_column_it_is_sorted_by(two_versions):
    out = run80(two_versions, "sql", "SELECT * FROM conflicts ORDER BY abs(difference) DESC LIMIT 5").stdout
    assert header(out)[0] == "difference"


def test_probes_show_every_set_whole_with_its_medae(two_versions):
    result = run80(two_versions, "probes", "--no-search", "--snapshot", "may", *FAST)
    assert header(result.stdout)[:3] == ["set", "probes", "medae"]
    doc = CliRunner().invoke(main, ["probes", "--no-search", "--snapshot", "may", *FAST,
                                    "--format", "json", "--home", str(two_versions.root)])
    text = " ".join(result.stdout.replace("│", " ").split())
    for scored in json.loads(doc.stdout)["evaluated"].values():
        assert all(p in text for p in scored["probes"]), scored["probes"]


def test_aliases_suggest_lists_each_pair_once_with_its_similarity(two_versions):
    table = lambda name: read_table(two_versions.registry, name)  # noqa: E731
    rows = suggest_aliases(table("models"), table("cells"), table("scores"), min_score=85.0)
    pairs = [frozenset(p) for p in rows.select("alias", "canonical_id").rows()]
    assert rows.height > 0 and len(pairs) == len(set(pairs))
    out = run80(two_versions, "aliases", "suggest").stdout
    assert header(out)[:3] == ["alias", "canonical_id", "similarity"]


def test_diff_shows_the_cause_of_each_change(two_versions):
    out = run80(two_versions, "diff", "may", "current").stdout
    tables = out.split("largest changes")[1]
    assert header(tables)[:4] == ["model_id", "benchmark_id", "difference", "cause"]


def test_each_kind_of_build_warning_is_said_once_with_a_count(home, tmp_path):
    """Two models whose provider two sources give differently: one warning line naming both
    (every add-model repeated the whole list); -v lists each."""
    go = lambda *a: CliRunner().invoke(main, [*map(str, a), "--home", str(home.root)])  # noqa: E731
    for mid in ("acme-1", "acme-2"):
        assert go("add-model", mid, "--provider", "Acme", "--scores", "hle=20",
                  "--source", "https://acme.example/blog").exit_code == 0
    other = tmp_path / "other.csv"
    other.write_text("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,"
                     "reference_url,source_type,reported_setting,notes\n"
                     + "".join(f"{m},{m},Acme Labs,2026-01-01,false,gpqa_diamond,50,"
                               "https://other.example/x,third_party,,\n" for m in ("acme-1", "acme-2")))
    assert go("ingest", other, "--adapter", "releases-csv", "--id", "other").exit_code == 0
    quiet = go("add-model", "acme-3", "--scores", "hle=21", "--source", "https://acme.example/3")
    warnings = [line for line in quiet.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: 2 models: sources disagree on the provider (acme-1, acme-2); "
                        "-v lists each"]
    loud = go("add-model", "acme-4", "--scores", "hle=22", "--source", "https://acme.example/4", "-v")
    assert [line.split("'")[1] for line in loud.stderr.splitlines()
            if line.startswith("warning:")] == ["acme-1", "acme-2"]
