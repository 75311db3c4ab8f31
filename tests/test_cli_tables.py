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

# about 5 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=5)

FAST = ["--method", "benchmark_mean"]


def header(table: str) -> list[str]:
    """The column names of the first rich table printed in `table` (a name on two lines,
    "resolved_" over "score", joined)."""
    lines = table.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    end = next(i for i, line in enumerate(lines) if line.startswith("┡") and i > top)
    parts = [[c.strip() for c in line.strip("┃").split("┃")] for line in lines[top + 1:end]]
    return ["".join(col) for col in zip(*parts)]


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


def rows_of(table: str) -> list[list[str]]:
    """The cells of each line of the first rich table in `table` (a wrapped cell: two lines)."""
    lines = table.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    body = lines[top + 1:next(i for i, line in enumerate(lines) if line.startswith("└"))]
    return [[c.strip() for c in line.strip("│").split("│")] for line in body]


def test_compare_shows_the_biggest_gaps_first_with_whole_scores(two_versions):
    """Two models at 80 columns: the key (benchmark, gap, p_ahead) then one column per
    model, no score wrapped or cut, the 20 biggest gaps (as a share of the range) of the
    JSON's rows, the leader marked, and a summary line over every benchmark."""
    from benchpress.cli.compare_table import DEFAULT_LIMIT, LEADER_MARK

    models = ("gpt-5.4", "claude-opus-4.6")
    result = run80(two_versions, "compare", *models, *FAST)
    assert header(result.stdout) == ["benchmark_id", "gap", "p_ahead", *models]
    assert max(map(len, result.stdout.splitlines())) <= 80
    rows = rows_of(result.stdout)
    doc = json.loads(CliRunner().invoke(main, ["compare", *models, *FAST, "--format", "json",
                                               "--home", str(two_versions.root)]).stdout)
    by_id = {r["benchmark_id"]: r for r in doc["rows"]}
    ranked = sorted(doc["rows"], key=lambda r: -(r["relative_gap"] or -1))
    assert len(rows) == DEFAULT_LIMIT and all(r[0] for r in rows)  # one line each: none wraps
    assert [r[0] for r in rows] == [r["benchmark_id"] for r in ranked[:DEFAULT_LIMIT]]
    for cells in rows:
        want = by_id[cells[0]]
        for name, cell in zip(models, cells[3:]):
            assert cell.endswith(LEADER_MARK) == (want["leader"] == name), cells
            shown = 0.51 if abs(want[name]) >= 1000 else 0.051  # whole numbers from 1,000
            assert float(cell.split()[0]) == pytest.approx(want[name], abs=shown)
            assert ("±" in cell) == (want[f"{name}_src"] == "predicted"), cells
    leads = sum(r["leader"] == models[0] for r in doc["rows"])
    assert f"{models[0]} leads on {leads} of {len(doc['rows'])} benchmarks" in \
        " ".join(result.stdout.split())
    every = run80(two_versions, "compare", *models, *FAST, "--all")
    # a long benchmark id may wrap onto a second line, whose score cells are empty
    assert len([r for r in rows_of(every.stdout) if r[3]]) == len(doc["rows"])


def test_sql_shows_both_values_of_a_conflict(two_versions):
    """Both values of a conflict in view at 80 columns, also when ranked by their difference
    (headers wider than their numbers take two lines)."""
    out = run80(two_versions, "sql", "SELECT * FROM conflicts LIMIT 5").stdout
    assert header(out)[:5] == ["model_id", "benchmark_id", "resolved_score", "other_score",
                               "difference"]
    ranked = run80(two_versions, "sql", "SELECT * FROM conflicts ORDER BY abs(difference) DESC "
                                        "LIMIT 10").stdout
    assert header(ranked)[:5] == ["difference", "model_id", "benchmark_id", "resolved_score",
                                  "other_score"]
    assert max(map(len, ranked.splitlines())) <= 80


def _help_pages(command, path=()):
    """Every click command under `command` (the lazy groups' too), with its path."""
    import click

    yield list(path), command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _help_pages(command.get_command(ctx, name), (*path, name))


def test_every_help_page_fits_80_columns():
    pages = list(_help_pages(main))
    assert len(pages) > 30
    runner = CliRunner(env={"COLUMNS": "80"})
    for path, _ in pages:
        result = runner.invoke(main, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, (path, result.output)
        wide = [line for line in result.output.splitlines() if len(line) > 80]
        assert not wide, (path, wide)


def test_standing_notes_are_said_once_per_session_and_wrapped(two_versions):
    """The predict legend and the note on the shipped fit's sources: said, wrapped to 80
    columns, then not again in this session; again in another session (the marker's
    session changed) and with BENCHPRESS_NOTES=always; the JSON always holds the note."""
    marker = two_versions.root / ".cache" / "notes.json"
    marker.unlink(missing_ok=True)
    legend = "score: given, or predicted with its 90% interval"
    ask = ("predict", "--scores", "hle=20", *FAST)
    first = run80(two_versions, *ask)
    assert legend in first.stderr and "note: predicted from every source" in first.stderr
    assert max(map(len, first.stderr.splitlines())) <= 80
    again = run80(two_versions, *ask)
    assert legend not in again.stderr and "from_pretrained" not in again.stderr
    assert again.stdout == first.stdout
    seen = json.loads(marker.read_text())
    marker.write_text(json.dumps({k: {**v, "session": -1} for k, v in seen.items()}))
    assert legend in run80(two_versions, *ask).stderr  # another terminal
    logged = CliRunner(env={"COLUMNS": "80", "BENCHPRESS_NOTES": "always"}).invoke(
        main, [*ask, "--home", str(two_versions.root)])
    assert legend in logged.stderr and "from_pretrained" in logged.stderr
    doc = json.loads(CliRunner().invoke(main, [*ask, "--format", "json", "--home",
                                               str(two_versions.root)]).stdout)
    assert "from_pretrained" in doc["pretrained_note"]


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
