"""The registry commands as a user runs them: exit codes, output formats, errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from tests.conftest import BP_2026_05, MATRIX_2026_02


# about 12 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=12)


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    assert run("init", root, "--no-git").exit_code == 0
    assert run("ingest", BP_2026_05, "--id", "bp", "--home", root).exit_code == 0
    return root


def test_init_makes_a_workspace(tmp_path):
    result = run("init", tmp_path / "new", "--no-git")
    assert result.exit_code == 0
    assert (tmp_path / "new" / "schemas" / "benchmarks.csv").is_file()
    assert (tmp_path / "new" / "sources").is_dir()


@pytest.mark.parametrize("args", [["build"], ["ingest", "--all"]])
def test_building_an_empty_workspace_says_there_is_no_source(tmp_path, args):
    """Issue 24 (left over): was 'internal error (TypeError: unhashable type: 'Column')'."""
    root = tmp_path / "ws"
    assert run("init", root, "--no-git").exit_code == 0
    result = CliRunner().invoke(main, [*args, "--home", str(root)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: {root / 'sources'}: no sources to build from; add one "
                             "with `benchpress ingest FILE` or `benchpress add-model`\n")
    assert not (root / "registry").exists()
    after = CliRunner().invoke(main, ["summary", "--home", str(root)])  # and nothing half-made
    assert after.exit_code == 1 and "no registry built yet" in after.stderr


def test_ingest_prints_a_summary_and_the_source_id(tmp_path):
    root = tmp_path / "ws"
    run("init", root, "--no-git")
    result = run("ingest", BP_2026_05, "--id", "bp", "--home", root)
    assert result.exit_code == 0
    assert result.stdout.strip() == "bp"
    assert "bp (benchpress-page): read 2604, accepted 2604, merged by normalization 0, quarantined 0" in result.stderr


def test_ingest_with_rejected_rows_exits_3_and_keeps_them(ws):
    result = run("ingest", MATRIX_2026_02, "--id", "m02", "--home", ws)
    assert result.exit_code == 3  # landed with rejects: not the 1 of a refused file
    assert "quarantined 8" in result.stderr
    assert "m02 scores[615]: field 'row': duplicate of an earlier row (scores[351])" in result.stderr
    assert "Error: 8 row(s) were rejected and kept in the quarantine table" in result.stderr
    count = run("sql", "SELECT count(*) AS n FROM quarantine", "--format", "json", "--home", ws)
    assert json.loads(count.stdout) == [{"n": 8}]


def test_ingest_needs_a_location_or_all(ws):
    result = run("ingest", "--home", ws)
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: give either LOCATION or --all"


def test_sql_formats(ws):
    q = "SELECT model_id, score FROM cells WHERE benchmark_id = 'gpqa_diamond' ORDER BY score DESC LIMIT 2"
    as_json = json.loads(run("sql", q, "--format", "json", "--home", ws).stdout)
    assert [set(r) for r in as_json] == [{"model_id", "score"}] * 2
    as_csv = run("sql", q, "--format", "csv", "--home", ws).stdout.splitlines()
    assert as_csv[0] == "model_id,score" and len(as_csv) == 3
    assert as_csv[1].split(",")[0] == as_json[0]["model_id"]
    table = run("sql", q, "--home", ws).stdout
    assert as_json[0]["model_id"] in table


def test_sql_refuses_writes(ws):
    result = run("sql", "DELETE FROM cells", "--home", ws)
    assert result.exit_code == 1
    assert "only a single SELECT query is allowed" in result.stderr


def test_add_model_then_query_it(ws):
    result = run("add-model", "acme-2", "--provider", "Acme", "--release-date", "2026-11-01",
                 "--scores", "gpqa_diamond=71.2,hle=20.1", "--source", "https://acme.example/blog",
                 "--home", ws)
    assert result.exit_code == 0, result.stderr
    rows = json.loads(run("sql", "SELECT benchmark_id, score, reference_url, source_id FROM cells "
                          "WHERE model_id = 'acme-2' ORDER BY 1", "--format", "json", "--home", ws).stdout)
    assert rows == [
        {"benchmark_id": "gpqa_diamond", "score": 71.2, "reference_url": "https://acme.example/blog", "source_id": "releases"},
        {"benchmark_id": "hle", "score": 20.1, "reference_url": "https://acme.example/blog", "source_id": "releases"},
    ]
    lines = (ws / "sources" / "releases.csv").read_text().splitlines()
    assert [line.split(",")[5] for line in lines if line.startswith("acme-2,")] == ["gpqa_diamond", "hle"]


@pytest.mark.parametrize("scores, message", [
    ("gpqa_diamond=140", "score outside the benchmark's range (score 140.0, allowed 0.0 to 100.0)"),
    ("no_such_bench=3", "benchmark has no known scale"),
])
def test_add_model_refuses_nonsense(ws, scores, message):
    before = (ws / "registry" / "cells.parquet").read_bytes()
    result = run("add-model", "acme-3", "--scores", scores, "--source", "https://acme.example", "--home", ws)
    assert result.exit_code == 1
    assert message in result.stderr
    assert not (ws / "sources" / "releases.csv").exists()
    assert (ws / "registry" / "cells.parquet").read_bytes() == before


def test_add_model_bad_scores_syntax_is_a_usage_error(ws):
    # one parser for every door (`benchpress.api.typed_scores`): "=" or ":", nothing else
    result = run("add-model", "acme-4", "--scores", "gpqa_diamond 70", "--source", "https://a.example", "--home", ws)
    assert result.exit_code == 2
    assert "is not BENCHMARK=VALUE" in result.stderr


def test_alias_suggest_and_accept(ws):
    count = "SELECT count(*) AS n FROM models"
    before = json.loads(run("sql", count, "--format", "json", "--home", ws).stdout)
    # case and punctuation are merged by the deterministic rules alone
    run("add-model", "O3 Mini (High)", "--scores", "gpqa_diamond=79.7", "--source", "https://a.example",
        "--home", ws)
    assert json.loads(run("sql", count, "--format", "json", "--home", ws).stdout) == before
    # a spelling the rules cannot merge is suggested, not merged
    run("add-model", "o3mini-hi", "--scores", "gpqa_diamond=79.7", "--source", "https://a.example", "--home", ws)
    rows = json.loads(run("aliases", "suggest", "--source", "releases", "--format", "json", "--home", ws).stdout)
    best = next(r for r in rows if r["alias"] == "o3mini-hi")
    assert best["canonical_id"].startswith("o3-mini")
    before = json.loads(run("sql", count, "--format", "json", "--home", ws).stdout)
    assert run("aliases", "accept", "o3mini-hi", "o3-mini-high", "--home", ws).exit_code == 0
    assert run("build", "--home", ws).exit_code == 0
    after = json.loads(run("sql", count, "--format", "json", "--home", ws).stdout)
    assert after[0]["n"] == before[0]["n"] - 1


def test_registry_commands_do_not_load_the_predictor(ws):
    """`benchpress sql` imports only what it needs (commands load lazily)."""
    import subprocess
    import sys

    code = ("import sys; from benchpress.cli import main\n"
            "try:\n    main(['sql', 'SELECT count(*) AS n FROM cells', '--format', 'csv', "
            f"'--home', {str(ws)!r}])\n"
            "except SystemExit:\n    pass\n"
            "print('predictor loaded' if 'benchpress.predict' in sys.modules else 'predictor not loaded')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["n", "2604", "predictor not loaded"]


def test_build_counts_rejected_rows_by_source_and_reason(ws):
    assert run("ingest", MATRIX_2026_02, "--id", "m02", "--allow-rejects", "--home", ws).exit_code == 0
    quiet = run("build", "--home", ws)
    assert quiet.exit_code == 0
    assert "  rejected 8: 8 row: duplicate of an earlier row" in quiet.stderr
    assert "rejected:" not in quiet.stderr  # no row by row listing without --verbose
    assert "--verbose" in quiet.stderr
    loud = run("build", "--verbose", "--home", ws)
    listed = [ln for ln in loud.stderr.splitlines() if ln.startswith("  rejected: m02 scores[")]
    assert len(listed) == 8
    assert "m02 scores[615]: field 'row': duplicate of an earlier row (scores[351])" in loud.stderr


def test_rejection_reasons_drop_row_numbers_and_values():
    from benchpress.cli.registry_cmds import rejection_reason

    assert rejection_reason("epoch x.csv line 10: field 'model_id': model_id: not_nullable "
                            "(value: missing); benchmark has no known scale: empty model name, "
                            "the row names no model (an agent (or a mix))") == \
        "model_id: empty model name, the row names no model"
    assert rejection_reason("s [17] r1: field 'benchmark_id': benchmark has no known scale "
                            "(architect mode: two models (planner and editor))") == \
        "benchmark_id: benchmark has no known scale"
    assert rejection_reason("no field named here") == "other"


def test_alias_accept_refuses_an_unknown_target(ws):
    result = run("aliases", "accept", "o3mini-hx", "o3-mini-hgh", "--home", ws)
    assert result.exit_code == 1
    assert "not in the registry" in result.stderr and "'o3-mini-high'" in result.stderr
    assert "o3mini-hx" not in (ws / "schemas" / "aliases.csv").read_text()


def test_summary_puts_each_yardsticks_default_first(ws):
    """The temporal files hold 40 figures, one block per method, baselines first; the
    summary used to show their first 12 (als4's), never the default's."""
    figures = {f"{m}_k{k}_{f}": float(n) for n, (m, k, f) in enumerate(
        (m, k, f) for m in ("als4", "default", "knn") for k in (1, 3, 5)
        for f in ("medae", "coverage90", "bias", "n_cells") if f != "coverage90" or m == "default")}
    # ratios to the baselines, first in this file: shown after every method's MedAE all the same
    figures = {**{f"vs_{m}_k3_{f}": 0.9 for m in ("als4", "knn") for f in ("lo", "ratio")},
               **figures}
    (ws / "metrics").mkdir()
    (ws / "metrics" / "temporal.json").write_text(json.dumps({**figures, "method": "default"}))
    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["summary", "--home", str(ws)])
    assert result.exit_code == 0, result.output
    line = " ".join(result.stdout.split("metrics/temporal.json: ")[1].split())
    shown = [part.split("=")[0] for part in line.split(" (+")[0].split(", ")]
    assert shown[:7] == ["method"] + [f"default_k{k}_{f}" for k in (1, 3, 5)
                                      for f in ("medae", "coverage90")]
    assert shown[7:13] == [f"{m}_k{k}_medae" for m in ("als4", "knn") for k in (1, 3, 5)]
    assert shown[13:15] == ["vs_als4_k3_ratio", "vs_knn_k3_ratio"]
    assert line.endswith(f"(+{len(figures) + 1 - len(shown)} more: --format json)")
