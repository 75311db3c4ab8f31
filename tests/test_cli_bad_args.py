"""Every command given bad arguments: one line on stderr starting `Error:`, no traceback,
exit 1 for bad input (a name, file or value the registry refuses) and 2 for bad usage
(options that do not parse or do not fit together). Nothing the command writes changes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from tests.conftest import SHARED_DATA

PUBLISHED_FOLDS = SHARED_DATA / "benchpress-2026-05" / "folds_s10_f3_bs42_ms1.json"
USAGE, BAD = 2, 1
S = ["--scores", "gpqa_diamond=78"]

# (arguments, exit code); "{tmp}" is a folder holding bad.json (not JSON), list.json (a JSON
# list, the wrong shape) and nothing else
CASES = [
    # -- click's own parsing: unknown command or option, missing or malformed values
    (["nosuch"], USAGE),
    (["--bogus"], USAGE),
    (["sql"], USAGE),
    (["sql", "SELECT 1", "--format", "xml"], USAGE),
    (["sql", "SELECT 1", "--timeout", "-1"], USAGE),
    (["sql", "SELECT 1", "--max-rows", "0"], USAGE),
    (["init"], USAGE),
    (["snapshot", "list", "--format", "yaml"], USAGE),
    (["snapshot", "nosuch"], USAGE),
    (["aliases", "suggest", "--min-score", "abc"], USAGE),
    (["aliases", "suggest", "--kind", "tool"], USAGE),
    (["aliases", "accept", "only-one"], USAGE),
    (["identity", "--limit", "-1"], USAGE),
    (["identity", "--min-score", "101"], USAGE),
    (["rank", "--seed", "x"], USAGE),
    (["probes", "--k", "x"], USAGE),
    (["probes", "--objective", "best"], USAGE),
    (["backtest"], USAGE),
    (["intervals", "--regime", "old_models"], USAGE),
    (["report", "--probes-k", "x"], USAGE),
    (["drift", "--var2-min", "high"], USAGE),
    (["evaluate", "--folds", "{tmp}/missing.json"], USAGE),
    (["evaluate", "--new-models", "3,x"], USAGE),
    (["evaluate", "--new-models", "3", "--make-folds", "3"], USAGE),
    (["compare", "gpt-4.1", "o3-high", "--scores-file", "{tmp}/missing.json"], USAGE),
    (["add-model", "acme-6", "--scores", "hle=25"], USAGE),  # no --source
    (["predict", *S, "--method", "nosuch"], USAGE),
    (["diff", "--limit", "many", "latest"], USAGE),
    (["build", "--mirror", "{tmp}/no-such-folder"], USAGE),
    (["pull", "--mirror", "{tmp}/no-such-folder"], USAGE),
    (["summary", "--format", "yaml"], USAGE),
    (["serve", "--port", "70000"], USAGE),
    (["fit"], USAGE),  # no --out
    (["replay"], USAGE),
    (["replay", "{tmp}/missing.yaml"], USAGE),
    (["forecasts", "score"], USAGE),
    (["forecasts", "score", "--from", "latest", "--to", "latest", "--new-max", "-1"], USAGE),
    (["fit", "--out", "{tmp}/fit", "--method", "knn"], USAGE),
    (["fit", "--out", "{tmp}/fit", "--probes", "1", "--probe-max-models", "2"], USAGE),
    (["probes", "--max-models", "1"], USAGE),
    (["suspects", "--threshold", "-1"], USAGE),
    (["suspects", "--threshold", "many"], USAGE),
    (["predict", "--scores-file", "{tmp}/bad.json"], BAD),
    (["predict", "--scores-file", "{tmp}/list.json"], BAD),
    # -- arguments that parse but do not fit together, or malformed --scores / --param
    (["predict"], USAGE),
    (["predict", *S, "--model", "gpt-4.1"], USAGE),
    (["predict", "--scores", "gpqa_diamond 78"], USAGE),  # (':' and '=' both separate)
    (["predict", "--scores", "gpqa_diamond=abc"], USAGE),
    (["predict", *S, "--param", "n_starts=abc"], USAGE),
    (["predict", *S, "--param", "nstarts=5"], USAGE),
    (["predict", *S, "--param", "n_starts"], USAGE),
    (["predict", *S, "--param", "rank=2.5"], USAGE),
    (["complete", "--method", "knn", "--param", "k=true"], USAGE),
    (["evaluate"], USAGE),
    (["evaluate", "--make-folds", "3", "--folds", str(PUBLISHED_FOLDS)], USAGE),
    (["ranking", "--make-folds", "3", "--margins", "a,b"], USAGE),
    (["probes", "--no-search", "--no-paper-sets"], USAGE),
    (["intervals", "--regime", "new_models", "--folds", str(PUBLISHED_FOLDS)], USAGE),
    (["intervals", "--by-source", "--regime", "new_models"], USAGE),
    (["intervals", "--by-source"], BAD),  # the 2026-05 registry has one source
    (["drift", "--param", "nstarts=5"], USAGE),
    (["report", "--param", "n_starts=abc"], USAGE),
    (["ingest"], USAGE),
    (["backtest", "--cutoff", "31/12/2025"], USAGE),  # option values the library refuses
    (["predict", *S, "--sources", "nosuch"], USAGE),
    (["snapshot", "create", "--tag", "bad tag!"], USAGE),
    (["report", "--drift", "{tmp}/list.json", "--out", "{tmp}/report"], BAD),
    (["ingest", "x.json", "--all"], USAGE),
    (["add-model", "acme-6", "--scores", "hle=25,hle=26", "--source", "https://x.example"], USAGE),
    (["add-model", "acme-6", "--scores", "hle", "--source", "https://x.example"], USAGE),
    # -- names, files, dates and values the registry refuses
    (["add-model", "acme-6", "--scores", "hle=25", "--release-date", "11/01/2026",
      "--source", "https://x.example"], BAD),
    (["add-model", "acme-6", "--scores", "hle=25", "--release-date", "2026-13-45",
      "--source", "https://x.example"], BAD),
    (["compare", "gpt-4.1"], BAD),  # fewer than two models
    (["predict", "--model", "no-such-model"], BAD),
    (["predict", *S, "--benchmarks", "no_such_benchmark"], BAD),  # unknown names: the resolver
    (["compare", "gpt-4.1", "o3-high", "--benchmarks", "gpqa_diamond,nosuch"], BAD),
    (["complete", "--snapshot", "nosuch"], BAD),
    (["sql", "SELECT 1", "--snapshot", "../../etc"], BAD),
    (["sql", "DELETE FROM cells"], BAD),
    (["sql", "SELECT * FROM nosuch"], BAD),
    (["snapshot", "show", "nosuch"], BAD),
    (["serve", "--snapshot", "nosuch"], BAD),
    (["replay", "{tmp}/bad.json"], BAD),
    (["replay", "{tmp}/list.json"], BAD),
    (["forecasts", "score", "--from", "nosuch", "--to", "latest"], BAD),
    (["diff", "nosuch"], BAD),
    (["stats", "--snapshot", "nosuch"], BAD),
    (["identity", "--snapshot", "nosuch"], BAD),
    (["suspects", "--snapshot", "nosuch"], BAD),
    (["ingest", "{tmp}/missing.json"], BAD),
    (["ingest", "{tmp}/bad.json"], BAD),
    (["aliases", "accept", "o3mini-hx", "no-such-model"], BAD),
    (["aliases", "accept", "gpqa-x", "no_such_benchmark", "--kind", "benchmark"], BAD),
    (["probes", "--costs", "{tmp}/bad.json", "--no-search"], BAD),
    (["probes", "--costs", "{tmp}/list.json", "--no-search"], BAD),
    (["compare", "gpt-4.1", "o3-high", "--scores-file", "{tmp}/bad.json"], BAD),
    (["compare", "gpt-4.1", "o3-high", "--scores-file", "{tmp}/list.json"], BAD),
    (["probes", "--previous", "{tmp}/list.json", "--k", "1", "--allowlist", "gpqa_diamond,hle",
      "--no-paper-sets", "--swap", "none"], BAD),
    (["evaluate", "--folds", "{tmp}/bad.json"], BAD),
    (["report", "--drift", "{tmp}/bad.json", "--out", "{tmp}/report"], BAD),
    (["report", "--timeline", "{tmp}/bad.json", "--out", "{tmp}/report"], BAD),
]


@pytest.fixture(scope="module")
def ws(built_2026_05, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad-args")
    (folder / "bad.json").write_text("{not json", encoding="utf-8")
    (folder / "list.json").write_text(json.dumps([1, 2, 3]), encoding="utf-8")
    return built_2026_05, folder


def _state(home) -> dict:
    """What a refused command must leave as it was: the sources, schemas and registry."""
    files = [p for d in (home.sources, home.schemas, home.registry) if d.exists()
             for p in sorted(d.rglob("*")) if p.is_file()]
    return {str(p): p.read_bytes() for p in files}


def test_the_table_covers_every_command():
    from benchpress.cli import COMMANDS

    assert len(CASES) >= 40
    named = {args[0] for args, _ in CASES}
    assert set(COMMANDS) <= named, set(COMMANDS) - named


@pytest.mark.parametrize(("args", "code"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_arguments_give_one_line(ws, args, code):
    home, folder = ws
    before = _state(home)
    argv = [a.replace("{tmp}", str(folder)) for a in args] + ["--home", str(home.root)]
    if args[0] in ("nosuch", "--bogus"):
        argv = argv[:1]
    result = CliRunner().invoke(main, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in lines[0]
    assert "Usage:" not in result.output
    assert result.exit_code == code, (result.exit_code, lines[0])
    assert _state(home) == before


def test_unknown_parameter_names_the_closest_and_lists_the_valid_ones(ws):
    home, _ = ws
    result = CliRunner().invoke(main, ["predict", *S, "--param", "nstarts=5",
                                       "--home", str(home.root)])
    line = result.stderr.strip()
    assert line.startswith("Error: unknown parameter 'nstarts' for method 'default'; "
                           "did you mean 'n_starts'?")
    assert "regression_weight" in line and "Predictor" not in line


def test_a_parameter_of_the_wrong_type_names_the_type(ws):
    home, _ = ws
    result = CliRunner().invoke(main, ["predict", *S, "--param", "n_starts=abc",
                                       "--home", str(home.root)])
    assert result.stderr.strip() == ("Error: --param n_starts=abc: 'n_starts' of method "
                                     "'default' must be an integer (default 30)")


def test_a_bare_group_still_shows_its_help():
    for argv in ([], ["snapshot"], ["aliases"]):
        result = CliRunner().invoke(main, argv)
        assert "Usage:" in result.output and "Commands:" in result.output, argv


@pytest.mark.parametrize(("typed", "expected"), [
    ("2,3", (2, 3)), (" 2 , 3 ", (2, 3)), ("[2, 3]", (2, 3)), ("3", (3,)), ("", ()),
])
def test_a_tuple_parameter_is_typed_as_integers_with_commas(typed, expected):
    from benchpress.cli.fit_options import parse_params

    assert parse_params([f"extra_ranks={typed}"], "side") == {"extra_ranks": expected}


@pytest.mark.parametrize("typed", ["two", "2.5", "true", "2,x"])
def test_a_tuple_parameter_of_the_wrong_type_says_what_it_takes(typed):
    from benchpress.cli.fit_options import parse_params
    from benchpress.errors import UsageError

    with pytest.raises(UsageError, match="'extra_ranks' of method 'side' must be integers "
                                         r"separated by commas, e.g. 2,3 \(default \(\)\)"):
        parse_params([f"extra_ranks={typed}"], "side")


def test_a_tuple_parameter_reaches_the_predictor_and_is_recorded_as_a_list(ws):
    home, _ = ws
    result = CliRunner().invoke(main, ["evaluate", "--make-folds", "2", "--method", "side",
                                       "--param", "extra_ranks=2,3", "--param", "n_starts=2",
                                       "--format", "json", "--home", str(home.root)])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["params"] == {"extra_ranks": [2, 3], "n_starts": 2} and doc["method"] == "side"
