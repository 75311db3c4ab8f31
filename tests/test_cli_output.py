"""The output contract (docs/guide/output.md), for every command that prints results:
--format table|csv|json, JSON valid with a trailing newline (and the user's --param values
under "params"), CSV parseable, --out FILE holding the bytes printed; and tables that stay
readable at 80 columns."""

from __future__ import annotations

import csv
import io
import json

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import COMMANDS, main
from benchpress.precision import rounded

# about 11 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=11)


FAST = ["--method", "benchmark_mean"]  # the contract is about output, not the predictor
# command line -> the name of its "write the output to FILE" option (None: same as printed)
COMMAND_LINES = {
    "sql": ["sql", "SELECT model_id, benchmark_id, score FROM cells ORDER BY 1, 2 LIMIT 5"],
    "summary": ["summary"],
    "aliases suggest": ["aliases", "suggest"],
    "identity": ["identity"],
    "snapshot list": ["snapshot", "list"],
    "snapshot show": ["snapshot", "show", "latest"],
    "stats": ["stats"],
    "diff": ["diff", "latest"],
    "predict": ["predict", "--scores", "gpqa_diamond=78,hle=20", *FAST],
    "compare": ["compare", "gpt-5.4", "claude-opus-4.6", "--benchmarks", "hle,gpqa_diamond", *FAST],
    "evaluate": ["evaluate", "--make-folds", "2", *FAST],
    "evaluate new-models": ["evaluate", "--new-models", "3,5", *FAST],
    "evaluate temporal": ["evaluate", "--temporal", "--known", "3", "--no-intervals",
                          "--cutoffs", "2025-09-01,2026-01-01", "--baselines", "", *FAST],
    "rank": ["rank", "--max-rank", "3", *FAST],  # ranks 1-3: a third of the default's fits
    "probes": ["probes", "--no-search", *FAST],
    "backtest": ["backtest", "--cutoff", "2025-06-01", "--probes", "2", *FAST],
    "ranking": ["ranking", "--make-folds", "2", *FAST],
    "intervals": ["intervals", "--calibration-seeds", "1", *FAST],
    "forecasts score": ["forecasts", "score", "--from", "latest", "--to", "latest"],
    "suspects": ["suspects"],
    "drift": ["drift", "--probes-k", "1", "--n-boot", "2", "--method", "benchmark_mean",
              "--probe-method", "benchmark_mean", "--max-rank", "2", "--n-submatrices", "1",
              "--probe-max-models", "20"],
}
# where --out FILE is not "the bytes printed": the metrics files of the DVC pipeline hold
# figures only, and drift's full document is --report FILE; both keep 4 significant digits
METRICS_OUT = {"evaluate", "evaluate new-models", "evaluate temporal", "intervals"}
ROUNDED_OUT = METRICS_OUT | {"drift"}
OUT_OPTION = {"drift": "--report"}


def _fits_80_columns(line: str) -> bool:
    """At most 80 columns, or a path alone on its line (longer than the terminal, as the
    workspace's path may be: never broken, so it can be copied)."""
    return len(line) <= 80 or (" " not in line.strip() and "/" in line)


@pytest.fixture(scope="module")
def run(built_2026_05):
    home = built_2026_05.root

    def _run(*args, env=None):
        result = CliRunner(env=env).invoke(main, [str(a) for a in args] + ["--home", str(home)])
        assert result.exit_code == 0, (args, result.stderr, result.exception)
        return result
    _run("snapshot", "create")
    return _run


def test_every_printing_command_is_covered():
    # they report on stderr (fit: what it wrote, or a JSON summary), or (serve) run a server
    # whose pages have their own tests
    # (replay: a whole history, its output tested in test_replay)
    quiet = {"init", "ingest", "build", "pull", "add-model", "report", "serve", "fit", "replay"}
    covered = {line.split()[0] for line in COMMAND_LINES} | {"complete"}  # its own test below
    assert set(COMMANDS) - quiet <= covered, set(COMMANDS) - quiet - covered


# the two slowest command lines run in `make test` only (seconds of fits each)
SLOW_LINES = {"rank": 7, "drift": 5}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow(seconds=SLOW_LINES[n])) if n in SLOW_LINES else n
    for n in COMMAND_LINES])
def test_each_format_parses_and_out_writes_the_same_bytes(run, name, tmp_path):
    args = COMMAND_LINES[name]
    help_text = CliRunner().invoke(main, [*args[:2 if name.startswith(("aliases", "snapshot", "forecasts")) else 1],
                                          "--help"]).stdout
    assert "table" in help_text and "csv" in help_text and "json" in help_text
    out_flag = OUT_OPTION.get(name, "--out")

    as_json = run(*args, "--format", "json", out_flag, tmp_path / "out.json")
    assert as_json.stdout.endswith("\n")
    doc = json.loads(as_json.stdout)
    written = (tmp_path / "out.json").read_text(encoding="utf-8")
    if name in METRICS_OUT:  # the figures only: a subset of what is printed, rounded
        figures = json.loads(written)
        assert figures and all(rounded(doc[k]) == v for k, v in figures.items())
    elif name in ROUNDED_OUT:  # what is printed, each float to 4 significant digits
        assert json.loads(written) == rounded(doc)
    else:
        assert written == as_json.stdout
    if "--method" in args:  # the predictor and the --param values given (none here)
        assert doc["method"] == "benchmark_mean" and doc["params"] == {}
    if name == "rank":
        assert [r["rank"] for r in doc["rank_errors"]] == [1, 2, 3]

    as_csv = run(*args, "--format", "csv", out_flag, tmp_path / "out.csv")
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows and len({len(r) for r in rows}) == 1, as_csv.stdout[:300]  # a header at least
    if name not in ROUNDED_OUT:
        assert (tmp_path / "out.csv").read_text(encoding="utf-8") == as_csv.stdout

    table = run(*args, env={"COLUMNS": "80"})
    assert table.stdout.strip()
    assert all(map(_fits_80_columns, table.stdout.splitlines())), table.stdout


def test_params_record_what_the_user_gave_even_a_default(run):
    doc = json.loads(run("predict", "--scores", "gpqa_diamond=78", "--method", "knn",
                         "--param", "k=5", "--format", "json").stdout)
    assert doc["method"] == "knn" and doc["params"] == {"k": 5}  # 5 is knn's default
    doc = json.loads(run("predict", "--scores", "gpqa_diamond=78", "--method", "knn",
                         "--format", "json").stdout)
    assert doc["params"] == {}


def test_predict_reads_a_scores_file_and_keeps_the_asked_benchmarks(run, tmp_path):
    given = tmp_path / "acme.json"
    given.write_text(json.dumps({"gpqa_diamond": 78, "hle": 20}))
    from_file = json.loads(run("predict", "--scores-file", given, "--benchmarks",
                               "mmlu_pro,aime_2025", *FAST, "--format", "json").stdout)
    from_text = json.loads(run("predict", "--scores", "gpqa_diamond=78,hle=20", *FAST,
                               "--format", "json").stdout)
    assert [p["benchmark_id"] for p in from_file["predictions"]] == ["mmlu_pro", "aime_2025"] or \
        sorted(p["benchmark_id"] for p in from_file["predictions"]) == ["aime_2025", "mmlu_pro"]
    by_id = {p["benchmark_id"]: p for p in from_text["predictions"]}
    assert all(p == by_id[p["benchmark_id"]] for p in from_file["predictions"])


def test_complete_out_csv_is_the_printed_csv(run, tmp_path):
    printed = run("complete", *FAST, "--format", "csv").stdout
    run("complete", *FAST, "--out", tmp_path / "full.csv")
    assert (tmp_path / "full.csv").read_text(encoding="utf-8") == printed
    assert pl.read_csv(tmp_path / "full.csv").height == 84


@pytest.mark.parametrize("args", [["complete", *FAST],
                                  ["sql", "SELECT * FROM matrix LIMIT 3"],
                                  ["sql", "SELECT * FROM scores LIMIT 5"]])
def test_wide_tables_show_data_at_80_columns(run, args):
    result = run(*args, env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    body = [ln for ln in lines if ln.startswith("│")]
    assert body and all(any(ch.isalnum() for ch in ln) for ln in body)
    assert "columns not shown" in result.stderr and "--format csv" in result.stderr
    assert result.stderr.count("note:") == 1  # one note, wrapped to the width
    assert max(map(len, result.stderr.splitlines())) <= 80


def test_one_wide_row_is_shown_transposed(run):
    result = run("sql", "SELECT * FROM matrix WHERE model_id = 'gpt-4.1'", env={"COLUMNS": "80"})
    assert "column" in result.stdout and "gpqa_diamond" in result.stdout
    assert max(map(len, result.stdout.splitlines())) <= 80


def test_long_cells_are_cut_and_headers_stay_whole(run):
    result = run("sql", "SELECT repeat('x', 300) AS a_long_header_name, "
                 "'https://example.org/' || repeat('p', 200) AS url", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert len(lines) <= 6 and max(map(len, lines)) <= 80   # no wrapping over many lines
    assert "a_long_header_name" in result.stdout and "…" in result.stdout


def test_csv_defuses_formulas(run):
    result = run("sql", "SELECT '=cmd|''/c calc''!A1' AS name", "--format", "csv")
    assert result.stdout.splitlines()[1] == "'=cmd|'/c calc'!A1"


def _leaf_commands():
    import click

    ctx = click.Context(main)

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                yield from walk(cmd.get_command(ctx, name), [*path, name])
        else:
            yield " ".join(path), cmd
    return list(walk(main, []))


def test_every_option_has_help_text():
    import click

    missing = [f"{path} {p.opts[0]}" for path, cmd in _leaf_commands() for p in cmd.params
               if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert not missing, missing


def test_rank_and_ranking_point_at_each_other():
    helps = {path: " ".join(cmd.help.split()) for path, cmd in _leaf_commands()
             if path in ("rank", "ranking")}
    assert "benchpress ranking" in helps["rank"] and "benchpress rank`" in helps["ranking"]
    assert helps["rank"].startswith("Matrix rank") and helps["ranking"].startswith("Model order")
