"""predict / add-model + predict --model / compare / probes / backtest / ranking, as a user runs them."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress import BenchPress
from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.predict import make_predictor
from tests.conftest import REPO, SHARED_DATA
from tests.predict_data import PUBLISHED_FOLDS

# about 24 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=24)


ALLOWLIST = SHARED_DATA / "benchpress-2026-05" / "probe_allowlist_low_cost.json"


@pytest.fixture(scope="module")
def run(built_2026_05):
    def _run(*args):
        return CliRunner().invoke(main, [str(a) for a in args] + ["--home", built_2026_05.root],
                                  catch_exceptions=False)
    _run.home = str(built_2026_05.root)
    return _run


# -- predict ---------------------------------------------------------------------------
@pytest.mark.parametrize("scores", ["gpqa_diamond=71.2,hle=20.1",
                                    ",".join(f"{b}=60" for b in ["gpqa_diamond", "mmlu_pro",
                                             "aime_2025", "math_500", "ifeval", "livecodebench",
                                             "swe_bench_verified", "simpleqa", "arena_hard",
                                             "mmmu", "hmmt_feb_2025", "aider_polyglot_diff",
                                             "tau2_bench_retail", "scicode", "ifbench",
                                             "aime_2024", "browsecomp", "terminal_bench",
                                             "arc_agi_1", "hle"])])
def test_predict_from_any_subset(run, scores):
    result = run("predict", "--scores", scores, "--method", "published", "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["predictions"]) == 133 and doc["unknown"] == []
    given = {p["benchmark_id"]: p["given"] for p in doc["predictions"] if p["given"] is not None}
    assert len(given) == scores.count("=")


def test_predict_table_shows_every_prediction_and_interval_at_80_columns(run):
    args = ["predict", "--scores", "gpqa_diamond=71.2,hle=20.1", "--method", "published",
            "--home", run.home]
    doc = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    table = CliRunner(env={"COLUMNS": "80"}).invoke(main, args)
    lines = table.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and "columns not shown" not in table.stderr
    rows = {ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in lines
            if ln.startswith("│")}
    assert len(rows) == len(doc["predictions"]) == 133
    for p in doc["predictions"]:
        shown = rows[p["benchmark_id"]]
        if p["kind"] == "given":
            assert shown == f"{p['given']:.1f} given"
        else:  # the prediction and its interval, as printed in JSON, rounded
            fmt = lambda v: f"{round(v)}" if abs(v) >= 1000 else f"{round(v, 1)}"  # noqa: E731
            expected = f"{fmt(p['predicted'])} [{fmt(p['lower'])}, {fmt(p['upper'])}]"
            assert shown == expected, (p, shown)


def test_predict_names_a_given_score_the_others_contradict(run):
    """A dropped digit (7.1 for 71) among four scores: one note line on stderr naming it
    and what the others imply, the same in the JSON; it is still used as given."""
    typed = run("predict", "--scores", "gpqa_diamond=7.1,mmlu_pro=80,hle=20,aime_2025=85",
                "--format", "json")
    assert typed.exit_code == 0, typed.stderr
    doc = json.loads(typed.stdout)
    c = doc["contradicted"]
    assert c["benchmark_id"] == "gpqa_diamond" and c["given"] == 7.1
    assert c["z"] < -3 and 60 < c["expected"] < 95
    notes = [n for n in " ".join(typed.stderr.split()).split("note: ")
             if n.startswith("gpqa_diamond=7.1")]  # a note is wrapped to the terminal
    assert len(notes) == 1 and "check it (it was used as given)" in notes[0]
    given = {p["benchmark_id"]: p["predicted"] for p in doc["predictions"] if p["kind"] == "given"}
    assert given["gpqa_diamond"] == 7.1
    fine = run("predict", "--scores", "gpqa_diamond=71,mmlu_pro=80,hle=20,aime_2025=85",
               "--format", "json")
    assert json.loads(fine.stdout)["contradicted"] is None and "far from" not in fine.stderr


def test_compare_names_a_new_models_contradicted_score(run, tmp_path):
    scores = tmp_path / "new.json"
    scores.write_text(json.dumps({
        "acme-3": {"gpqa_diamond": 7.1, "mmlu_pro": 80, "hle": 20, "aime_2025": 85},
        "acme-4": {"gpqa_diamond": 71, "mmlu_pro": 80, "hle": 20, "aime_2025": 85}}))
    out = run("compare", "gpt-5", "--scores-file", scores, "--format", "json")
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert list(doc["contradicted"]) == ["acme-3"]
    assert doc["contradicted"]["acme-3"]["benchmark_id"] == "gpqa_diamond"
    notes = [ln for ln in out.stderr.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: acme-3: gpqa_diamond=7.1 is far")


def test_predict_refuses_unknown_names_unless_asked(run):
    bad = run("predict", "--scores", "gpqa_diamond=71,gpqa_diamnd=70", "--method", "published")
    assert bad.exit_code == 1 and bad.stdout == ""
    assert bad.stderr == "Error: unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?\n"
    result = run("predict", "--scores", "gpqa_diamond=71,not_a_bench=3", "--method", "published",
                 "--format", "json", "--ignore-unknown")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["unknown"] == ["not_a_bench"]
    assert result.stderr == ("warning: unknown benchmark(s) ignored (--ignore-unknown): "
                             "not_a_bench\n")


@pytest.mark.parametrize("scores, message", [
    ("gpqa_diamond=140", "outside gpqa_diamond's percent range"),
    ("gpqa_diamond=-3", "outside"),
])
def test_predict_refuses_nonsense(run, scores, message):
    result = run("predict", "--scores", scores)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and message in result.stderr


def test_predict_usage_errors(run):
    assert run("predict").exit_code == 2
    assert run("predict", "--scores", "gpqa_diamond").exit_code == 2
    twice = run("predict", "--scores", "gpqa_diamond=70,gpqa_diamond=71")
    assert twice.exit_code == 2 and "more than once" in twice.stderr
    alias = run("predict", "--scores", "GPQA Diamond=70,gpqa_diamond=71")
    assert alias.exit_code == 1 and "twice" in alias.stderr
    typo = run("predict", "--scores", "gpqa_diamond=70", "--method", "defualt")
    assert typo.exit_code == 2 and "'defualt' is not one of" in typo.stderr


def test_add_model_then_predict_its_row(tmp_path):
    from tests.conftest import BP_2026_05

    def go(*args):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    root = tmp_path / "ws"
    assert go("init", root, "--no-git").exit_code == 0
    assert go("ingest", BP_2026_05, "--id", "bp", "--home", root).exit_code == 0
    added = go("add-model", "acme-2", "--provider", "Acme", "--release-date", "2026-05-01",
               "--scores", "gpqa_diamond=71.2,hle=20.1,mmlu_pro=80", "--source",
               "https://acme.example/blog", "--home", root)
    assert added.exit_code == 0, added.stderr
    result = go("predict", "--model", "acme-2", "--method", "published", "--format", "json",
                "--home", root)
    assert result.exit_code == 0, result.stderr
    rows = {p["benchmark_id"]: p for p in json.loads(result.stdout)["predictions"]}
    assert rows["gpqa_diamond"]["given"] == 71.2 and rows["hle"]["given"] == 20.1
    assert rows["swe_bench_verified"]["given"] is None
    assert 0 <= rows["swe_bench_verified"]["predicted"] <= 100
    missing = go("predict", "--model", "acme2", "--home", root)
    assert missing.exit_code == 1
    assert missing.stderr == "Error: unknown model 'acme2'; did you mean 'acme-2'?\n"


def test_one_answer_per_question_on_the_real_matrix(tmp_path):
    """A model added with add-model: `predict --model`, `predict --scores` with its scores
    and id, and `compare` print the same numbers; so do `predict --scores` without the id
    and `compare` of the same scores typed in as a new model; given scores are shown as
    given. (The default uses what the registry knows of a model: its id and metadata.)"""
    from tests.conftest import BP_2026_05

    def go(*args):
        return CliRunner().invoke(main, [str(a) for a in args] + ["--home", root],
                                  catch_exceptions=False)

    root = tmp_path / "ws"
    assert CliRunner().invoke(main, ["init", str(root), "--no-git"]).exit_code == 0
    assert go("ingest", BP_2026_05, "--id", "bp").exit_code == 0
    scores = "gpqa_diamond=78.4,hle=24.3,mmlu_pro=80"
    assert go("add-model", "acme-2", "--scores", scores, "--source",
              "https://acme.example/blog").exit_code == 0

    def rows(result):
        assert result.exit_code == 0, result.stderr
        return {p["benchmark_id"]: p for p in json.loads(result.stdout)["predictions"]}

    by_model = rows(go("predict", "--model", "acme-2", "--format", "json"))
    by_scores = rows(go("predict", "--scores", scores, "--metadata", "model_id=acme-2",
                        "--format", "json"))
    assert by_model == by_scores
    typed = rows(go("predict", "--scores", scores, "--format", "json"))
    gpqa = by_model["gpqa_diamond"]
    assert gpqa["given"] == gpqa["predicted"] == 78.4 and gpqa["kind"] == "given"
    assert gpqa["lower"] is None and gpqa["trust"] is None
    swe = by_model["swe_bench_verified"]
    assert swe["kind"] == "predicted" and swe["lower"] <= swe["predicted"] <= swe["upper"]

    new = tmp_path / "acme3.json"
    new.write_text(json.dumps({"acme-3": {"gpqa_diamond": 78.4, "hle": 24.3, "mmlu_pro": 80}}))
    cmp = go("compare", "acme-3", "gpt-5", "claude-opus-4.5", "acme-2", "--scores-file", new,
             "--format", "json")
    assert cmp.exit_code == 0, cmp.stderr
    doc = {r["benchmark_id"]: r for r in json.loads(cmp.stdout)["rows"]}
    for name, want in (("acme-2", by_model), ("acme-3", typed)):
        for b, p in want.items():
            # predict prints 2 decimals; compare's JSON may print more
            assert doc[b][name] == pytest.approx(p["predicted"], abs=0.005 + 1e-9), (b, name)
            assert doc[b][f"{name}_src"] == ("observed" if p["kind"] == "given" else "predicted")
    table = go("compare", "acme-3", "gpt-5", "claude-opus-4.5", "--scores-file", new,
               "--benchmarks", "gpqa_diamond,swe_bench_verified")
    assert table.exit_code == 0, table.stderr
    typed_swe = typed["swe_bench_verified"]["predicted"]
    # observed as is, predicted with half its interval's width
    assert "│ 78.4 " in table.stdout and f"{typed_swe:.1f} ±" in table.stdout


# -- compare ---------------------------------------------------------------------------
def test_compare_two_models_and_a_new_one(run, tmp_path):
    scores = tmp_path / "new.json"
    scores.write_text(json.dumps({"acme-3": {"gpqa_diamond": 85, "hle": 35}}))
    result = run("compare", "gpt-5.4", "claude-opus-4.6", "--benchmarks",
                 "gpqa_diamond,hle,swe_bench_verified", "--scores-file", scores,
                 "--method", "published", "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [r["benchmark_id"] for r in doc["rows"]] == ["gpqa_diamond", "hle", "swe_bench_verified"]
    first = doc["rows"][0]
    assert first["acme-3"] == 85 and first["acme-3_src"] == "observed"
    assert first["leader"] in {"gpt-5.4", "claude-opus-4.6", "acme-3"}
    assert all(0.5 <= r["p_ahead"] <= 1.0 for r in doc["rows"] if r["p_ahead"] is not None)
    assert doc["sure_from"].startswith("calibrated")
    # every predicted score carries its 90% interval and trust; observed ones do not
    predicted = [(r, m) for r in doc["rows"] for m in ("gpt-5.4", "claude-opus-4.6", "acme-3")
                 if r[f"{m}_src"] == "predicted"]
    assert any(m == "acme-3" for _, m in predicted)          # folded in from two scores
    for r, m in predicted:
        assert 0 <= r[f"{m}_lower"] <= r[m] <= r[f"{m}_upper"] <= 100
        assert 0 <= r[f"{m}_trust"] <= 1
    assert first["acme-3_lower"] is None and first["acme-3_trust"] is None
    table = run("compare", "gpt-5.4", "claude-opus-4.6", "--benchmarks", "hle,swe_bench_verified",
                "--scores-file", scores, "--method", "published")
    assert table.exit_code == 0 and " * " in table.stdout  # the leader, marked
    assert "│ 35.0 " in table.stdout and re.search(r"\d+\.\d ±\d+\.\d", table.stdout)


def test_compare_errors(run):
    import time

    assert run("compare", "gpt-5.4", "nobody").exit_code == 1
    assert run("compare", "gpt-5.4").exit_code == 1
    bad = run("compare", "gpt-5.4", "claude-opus-4.6", "--benchmarks", "zzz")
    assert bad.exit_code == 1 and bad.stderr == "Error: unknown benchmark 'zzz'\n"
    typo = run("compare", "gpt5", "claude-opus-4.6")
    assert typo.stderr == "Error: unknown model 'gpt5'; did you mean 'gpt-5'?\n"
    start = time.perf_counter()
    late = run("compare", "gpt-5", "claude-opus-4.5", "--benchmarks", "gpqa_diamond,nosuch")
    assert late.exit_code == 1 and "unknown benchmark 'nosuch'" in late.stderr
    assert time.perf_counter() - start < 1.0   # checked before any fit
    ignored = run("compare", "gpt-5", "claude-opus-4.5", "nobody", "--benchmarks",
                  "gpqa_diamond,nosuch", "--ignore-unknown", "--format", "json")
    assert ignored.exit_code == 0, ignored.stderr
    assert [r["benchmark_id"] for r in json.loads(ignored.stdout)["rows"]] == ["gpqa_diamond"]
    assert ignored.stderr.splitlines() == [
        "warning: unknown model(s) ignored (--ignore-unknown): nobody",
        "warning: unknown benchmark(s) ignored (--ignore-unknown): nosuch"]


# -- probes ----------------------------------------------------------------------------
def test_probes_scores_the_paper_sets(run):
    result = run("probes", "--no-search", "--method", "published", "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    ev = doc["evaluated"]
    assert 3.85 <= ev["paper (any benchmark)"]["medae"] <= 4.05
    assert 4.45 <= ev["paper (low-cost allowlist)"]["medae"] <= 4.70
    assert ev["paper (any benchmark)"]["n_cells"] == 2604


@pytest.mark.slow(seconds=10)  # seconds-long end to end: `make test` runs it, test-quick not
def test_probes_paper_design_reproduces_the_papers_figures(run):
    """The paper's refit-per-model design with its method: 3.93 and 4.55."""
    result = run("probes", "--no-search", "--design", "refit", "--method", "published",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    ev = json.loads(result.stdout)["evaluated"]
    assert round(ev["paper (any benchmark)"]["medae"], 2) == 3.93
    assert round(ev["paper (low-cost allowlist)"]["medae"], 2) == 4.55


@pytest.mark.slow(seconds=8)  # seconds-long end to end: `make test` runs it, test-quick not
def test_probes_search_with_allowlist_costs_budget_and_drift(run, tmp_path):
    costs = tmp_path / "costs.csv"
    costs.write_text("benchmark_id,cost\ngpqa_diamond,2\nmmlu_pro,3\nmath_500,1\naime_2026,1\n"
                     "arena_hard,5\nnot_a_bench,1\n")
    out = tmp_path / "probes.json"
    result = run("probes", "--k", "3", "--allowlist", ALLOWLIST, "--costs", costs, "--budget", "6",
                 "--method", "published", "--no-paper-sets", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "greedy probe selection" in result.stdout and "lack a score" in result.stderr
    # a cost this matrix has no benchmark for is said, not dropped without a word
    assert ("note: 1 of 6 benchmarks of --costs are not in this matrix, their costs unused: "
            "'not_a_bench'") in " ".join(result.stderr.split())
    sel = json.loads(out.read_text())["selection"]
    assert "seconds" not in sel and "fit_seconds" not in sel  # a re-run writes the same bytes
    # candidates: the costs file's benchmarks, plus allowlisted ones whose registry cost
    # (schemas/benchmarks.csv) fits the budget
    given = {"gpqa_diamond", "mmlu_pro", "math_500", "aime_2026", "arena_hard"}
    with open(REPO / "schemas" / "benchmarks.csv", encoding="utf-8", newline="") as fh:
        known = {r["benchmark_id"] for r in csv.DictReader(fh) if r["cost"] and float(r["cost"]) <= 6}
    assert sel["cost"] <= 6 and given <= set(sel["candidates"])
    assert set(sel["candidates"]) - given <= known
    assert [len(s["probes"]) for s in sel["steps"]] == list(range(1, len(sel["steps"]) + 1))
    again = run("probes", "--k", "2", "--allowlist", "gpqa_diamond,hle,mmlu_pro", "--method",
                "published", "--no-paper-sets", "--previous", out, "--format", "json")
    drift = json.loads(again.stdout)["drift"]
    assert drift["previous"] == sel["probes"] and drift["current_medae"] > 0


def test_probes_aimed_at_recent_releases(run):
    result = run("probes", "--k", "2", "--recent-months", "4", "--method", "published",
                 "--allowlist", "gpqa_diamond,hle,mmlu_pro,terminal_bench,aime_2025",
                 "--no-paper-sets")
    assert result.exit_code == 0, result.stderr
    assert "months of the newest release" in result.stderr


def test_probes_errors(run):
    # the registry's benchmark costs (schemas/benchmarks.csv, from Artificial Analysis's run
    # costs) make a budget work on real data; only benchmarks of known cost are candidates
    budget = run("probes", "--budget", "3", "--method", "published", "--format", "json")
    assert budget.exit_code == 0, budget.stderr
    sel = json.loads(budget.stdout)["selection"]
    assert 0 < sel["cost"] <= 3 and set(sel["probes"]) <= set(sel["candidates"])
    assert {"gpqa_diamond", "ifbench"} <= set(sel["candidates"]) and "hle" not in sel["candidates"]
    unknown = run("probes", "--no-search", "--evaluate", "gpqa_diamond,zzz", "--method", "published")
    assert unknown.exit_code == 1 and unknown.stderr == "Error: unknown benchmark 'zzz'\n"
    typo = run("probes", "--k", "2", "--allowlist", "gpqa_diamnd,hle", "--method", "published")
    assert typo.stderr == "Error: unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?\n"


@pytest.mark.parametrize("args, content, message", [
    (("probes", "--k", "1", "--allowlist"), b"\x9a\x00\xff", "given.json: not UTF-8 text (byte 0)"),
    (("probes", "--k", "1", "--costs"), b"\x9a\x00\xff", "given.json: not UTF-8 text (byte 0)"),
    (("probes", "--k", "1", "--costs"), b'{"hle": true}', "cost of 'hle' is True, not a number"),
    (("predict", "--scores-file"), b'{"hle": true}', "score of 'hle' is True, not a number"),
    (("predict", "--file"), b'[{"id": "acme", "scores": {"hle": true}}]', "True is not a number"),
    (("compare", "gpt-5", "--scores-file"), b'{"acme": {"hle": true}}', "True is not a number"),
    (("compare", "gpt-5", "--scores-file"), b'{"a": {"hle": 1}, "b": {"hle": 2}, "c": {}}',
     "3 models are more than one call may compare (2; env BENCHPRESS_MAX_MODELS_FILE_ROWS)"),
    (("compare", "gpt-5", "--scores-file"), b'{"a": {"hle": 1}}' + b" " * 200,
     "bytes is more than a scores file may hold (100; env BENCHPRESS_MAX_SCORES_FILE_BYTES)"),
])
def test_files_a_user_names_are_checked_in_one_line(run, tmp_path, monkeypatch, args, content,
                                                     message):
    """Binary text, JSON's `true` where a number belongs (float() reads it as 1), and
    a `compare --scores-file` of too many bytes or models (60,000 models in 1.4 MB ran on
    for minutes): each one line before any fit."""
    monkeypatch.setenv("BENCHPRESS_MAX_MODELS_FILE_ROWS", "2")
    monkeypatch.setenv("BENCHPRESS_MAX_SCORES_FILE_BYTES", "100")
    path = tmp_path / "given.json"
    path.write_bytes(content)
    result = run(*args, path)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr


# -- backtest and ranking ----------------------------------------------------------------
def test_backtest(run):
    result = run("backtest", "--cutoff", "2026-01-01", "--probes",
                 "gpqa_diamond,hle,codeforces_rating,mmlu_pro,arc_agi_1", "--method", "published",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["n_test"] == 16 and doc["probes_chosen_on"] == "given"
    assert doc["medae"] <= doc["medae_hidden"]
    assert run("backtest", "--cutoff", "someday").exit_code == 2
    typo = run("backtest", "--cutoff", "2026-01-01", "--probes", "gpqa_diamond,hle_x")
    assert typo.exit_code == 1 and "unknown benchmark 'hle_x'; did you mean" in typo.stderr


def test_ranking_on_the_published_folds(run):
    result = run("ranking", "--folds", PUBLISHED_FOLDS, "--method", "published", "--format", "json")
    assert result.exit_code == 0, result.stderr
    acc = json.loads(result.stdout)["accuracy"]
    assert [round(a, 1) for a in acc] == [83.8, 86.3, 88.0, 92.1]
    assert run("ranking", "--method", "published").exit_code == 2


# -- predictor parameters from the command line ------------------------------------------
def test_param_overrides_reach_the_predictor_and_are_recorded(run):
    base = ["evaluate", "--make-folds", "3", "--seed", "7", "--method", "published", "--format", "json"]
    plain = json.loads(run(*base).stdout)
    tuned = run(*base, "--param", "rank=1", "--param", "regularization=0.5")
    assert tuned.exit_code == 0, tuned.stderr
    doc = json.loads(tuned.stdout)
    assert doc["params"] == {"rank": 1, "regularization": 0.5} and plain["params"] == {}
    # the figure the library gives for that predictor on the same folds
    bp = BenchPress.from_snapshot(run.home, predictor=make_predictor("published", rank=1,
                                                                     regularization=0.5))
    lib = bp.evaluate(bp.folds(n_folds=3, seed=7)).overall
    assert doc["n_cells"] == plain["n_cells"] == lib.n_cells
    assert doc["medae"] == pytest.approx(lib.medae, abs=1e-9)
    # and without --param, the figure of the method's own defaults
    untuned = BenchPress.from_snapshot(run.home, predictor=make_predictor("published"))
    assert plain["medae"] == pytest.approx(
        untuned.evaluate(untuned.folds(n_folds=3, seed=7)).overall.medae, abs=1e-9)
    bad = run(*base, "--param", "bogus=1")
    assert bad.exit_code == 2 and "bogus" in bad.stderr
    malformed = run(*base, "--param", "rank")
    assert malformed.exit_code == 2 and "KEY=VALUE" in malformed.stderr


@pytest.mark.slow(seconds=7)  # seconds-long end to end: `make test` runs it, test-quick not
def test_rank_measures_the_chosen_predictor_at_each_rank(run, tmp_path):
    # one run: the table on stdout, its JSON document in --out (the output contract)
    args = ("rank", "--method", "side", "--param", "n_starts=2", "--out", tmp_path / "rank.json")
    table = CliRunner(env={"COLUMNS": "80"}).invoke(
        main, [*map(str, args), "--home", run.home]).stdout
    doc = json.loads((tmp_path / "rank.json").read_text())
    errs = doc["rank_errors"]
    assert doc["method"] == "side" and [r["rank"] for r in errs] == list(range(1, 9))
    assert all(r["method_medae"] > 0 for r in errs)
    assert len({r["method_medae"] for r in errs}) > 1  # the rank reached the predictor
    assert "side_medae" in table and "soft_impute_medae" in table
    assert f"side best at {min(errs, key=lambda r: r['method_medae'])['rank']}" in table


def test_predict_takes_a_new_models_metadata_for_side(run):
    base = ["predict", "--scores", "gpqa_diamond=80,hle=20,mmlu_pro=85", "--method", "side",
            "--param", "n_starts=4", "--format", "json"]
    plain = json.loads(run(*base).stdout)
    meta = "model_id=acme-3-mini,provider=OpenAI,release_date=2025-09-01,is_reasoning=true"
    given = run(*base, "--metadata", meta)
    assert given.exit_code == 0 and given.stderr == "", given.stderr
    doc = json.loads(given.stdout)
    assert doc["with_covariates"] is True and doc["metadata"]["provider"] == "OpenAI"
    # the metadata reached the fold-in: the library's predictions with the same metadata
    meta_dict = dict(part.split("=", 1) for part in meta.split(","))
    bp = BenchPress.from_snapshot(run.home, predictor=make_predictor("side", n_starts=4))
    lib = bp.predict({"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 85}, metadata=meta_dict).frame
    want = dict(zip(lib["benchmark_id"], lib["predicted"]))
    got = [(p["benchmark_id"], p["predicted"]) for p in doc["predictions"] if p["kind"] == "predicted"]
    assert len(got) > 100 and all(v == pytest.approx(want[b], abs=1e-9) for b, v in got)
    # and without --metadata, the library's predictions from the scores alone
    bare = bp.predict({"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 85}).frame
    alone = dict(zip(bare["benchmark_id"], bare["predicted"]))
    assert all(p["predicted"] == pytest.approx(alone[p["benchmark_id"]], abs=1e-9)
               for p in plain["predictions"])
    late = run(*base, "--metadata", "release_date=2030-01-01")  # after every model's
    assert json.loads(late.stdout)["with_covariates"] is True  # clipped to the newest date
    assert "release_date 2030-01-01 is after every registered model's" in late.stderr
    assert "clipped" in late.stderr
    # clipped to the training range: any date after it gives these same predictions
    later = bp.predict({"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 85},
                       metadata={"release_date": "2041-06-30"}).frame
    want = dict(zip(later["benchmark_id"], later["predicted"]))
    got = {p["benchmark_id"]: p["predicted"] for p in json.loads(late.stdout)["predictions"]}
    assert got.keys() == want.keys() and all(v == pytest.approx(want[b], abs=1e-9)
                                             for b, v in got.items())
    other = run("predict", "--scores", "gpqa_diamond=80", "--method", "published",
                "--metadata", "provider=OpenAI", "--format", "json")
    assert other.exit_code == 0
    assert "note: the metadata is used by the default and side methods only" in other.stderr


@pytest.mark.parametrize(("metadata", "message", "code"), [
    ("provider", "'provider' is not KEY=VALUE", 2),
    ("provider=a,provider=b", "names 'provider' more than once", 2),
    ("is_reasoning=perhaps", "is_reasoning='perhaps': expected true or false", 1),
    ("colour=red", "unknown metadata field(s) colour", 1),
])
def test_predict_metadata_errors_are_one_line(run, metadata, message, code):
    bad = run("predict", "--scores", "gpqa_diamond=80", "--method", "side", "--param",
              "n_starts=2", "--metadata", metadata)
    assert bad.exit_code == code and message in bad.stderr and bad.stderr.count("\n") == 1
    with_model = run("predict", "--model", "gpt-5", "--metadata", "provider=OpenAI")
    assert with_model.exit_code == 2 and "--model uses the registered" in with_model.stderr


def test_a_huge_scores_file_is_refused_before_it_is_read(run, tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    big.write_text('{"gpqa_diamond": 80, "pad": "' + "x" * 5000 + '"}')
    monkeypatch.setenv("BENCHPRESS_MAX_SCORES_FILE_BYTES", str(4096))
    refused = run("predict", "--scores-file", big)
    assert refused.exit_code == 1 and refused.stderr.count("\n") == 1
    size = f"{big.stat().st_size:,}"
    assert f"{size} bytes is more than a scores file may hold (4,096" in refused.stderr
    monkeypatch.setenv("BENCHPRESS_MAX_SCORES_FILE_BYTES", str(1 << 20))
    cut = run("predict", "--scores-file", big)  # read now: the bad value is cut in the message
    assert cut.exit_code == 1 and "score of 'pad' is 'xxx" in cut.stderr
    assert len(cut.stderr) < 300 and "…" in cut.stderr


def test_a_metadata_typo_gets_the_closest_field(run):
    bad = run("predict", "--scores", "gpqa_diamond=80", "--method", "side", "--param",
              "n_starts=2", "--metadata", "provder=OpenAI")
    assert bad.exit_code == 1
    assert "unknown metadata field(s) provder; did you mean 'provider'?" in bad.stderr


def test_metadata_is_checked_whichever_method_it_goes_to(run):
    """An impossible date or a typo in --metadata is one line with the default method too
    (which does not use metadata), not a note that it was not used."""
    for meta, message in (("release_date=2026-02-30", "is not a date"),
                          ("provder=OpenAI", "did you mean 'provider'?")):
        bad = run("predict", "--scores", "gpqa_diamond=80", "--metadata", meta)
        assert bad.exit_code == 1 and bad.stderr.count("\n") == 1 and message in bad.stderr


# -- predict --file: several new models from one fit -------------------------------------
def _models_csv(path):
    path.write_text("id,provider,release_date,gpqa_diamond,hle,mmlu_pro\n"
                    "acme-3,OpenAI,2026-03-01,80,20,85\n"
                    "acme-3-mini,,,60,,70\n")
    return path


def test_predict_file_answers_each_model_as_its_own_predict(run, tmp_path):
    models = _models_csv(tmp_path / "models.csv")
    res = run("predict", "--file", models, "--format", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [m["id"] for m in doc["models"]] == ["acme-3", "acme-3-mini"]
    first, second = doc["models"]
    assert first["metadata"] == {"provider": "OpenAI", "release_date": "2026-03-01"}
    assert second["metadata"] is None and first["with_covariates"]
    for m, args in ((first, ["--scores", "gpqa_diamond=80,hle=20,mmlu_pro=85", "--metadata",
                             "provider=OpenAI,release_date=2026-03-01"]),
                    (second, ["--scores", "gpqa_diamond=60,mmlu_pro=70"])):
        one = json.loads(run("predict", *args, "--format", "json").stdout)["predictions"]
        many = {p["benchmark_id"]: p for p in m["predictions"]}
        assert len(many) == len(one) == 133
        for p in one:  # the same numbers (a row folded in with others: float rounding)
            q = many[p["benchmark_id"]]
            for key in ("predicted", "lower", "upper"):
                assert (p[key] is None) == (q[key] is None)
                assert p[key] is None or abs(p[key] - q[key]) < 1e-9
    csv_out = run("predict", "--file", models, "--benchmarks", "hle", "--format", "csv")
    rows = list(csv.DictReader(csv_out.stdout.splitlines()))
    assert [(r["id"], r["benchmark_id"], r["kind"]) for r in rows] == [
        ("acme-3", "hle", "given"), ("acme-3-mini", "hle", "predicted")]
    table = CliRunner(env={"COLUMNS": "80"}).invoke(
        main, ["predict", "--file", str(models), "--benchmarks", "hle,ifeval", "--home", run.home])
    assert table.exit_code == 0 and max(map(len, table.stdout.splitlines())) <= 80
    assert "acme-3-mini" in table.stdout and "2 models" in table.stdout


@pytest.mark.parametrize("text, message", [
    ("provider,gpqa_diamond\nOpenAI,80\n", "needs a column 'id'"),
    ("id,gpqa_diamond\na,80\na,70\n", "row 2 ('a'): id 'a' is given twice"),
    ("id,gpqa_diamond\na,eighty\n", "row 1 ('a'), score 'gpqa_diamond': 'eighty' is not a number"),
    ("id,release_date,gpqa_diamond\na,2026-02-30,80\n", "row 1 ('a'): metadata release_date"),
    ("id,gpqa_diamnd\na,80\n", "model 'a' (row 1): unknown benchmark"),
])
def test_predict_file_errors_name_the_row_and_field(run, tmp_path, text, message):
    path = tmp_path / "models.csv"
    path.write_text(text)
    res = run("predict", "--file", path)
    assert res.exit_code == 1 and message in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_predict_file_usage_and_limits(run, tmp_path, monkeypatch):
    models = _models_csv(tmp_path / "models.csv")
    both = run("predict", "--file", models, "--scores", "hle=20")
    assert both.exit_code == 2 and "give one of" in both.stderr
    meta = run("predict", "--file", models, "--metadata", "provider=OpenAI")
    assert meta.exit_code == 2 and "in its row" in meta.stderr
    monkeypatch.setenv("BENCHPRESS_MAX_MODELS_FILE_ROWS", "1")
    many = run("predict", "--file", models)
    assert many.exit_code == 1 and "2 models are more than one call may predict" in many.stderr
    monkeypatch.setenv("BENCHPRESS_MAX_MODELS_FILE_BYTES", "10")
    big = run("predict", "--file", models)
    assert big.exit_code == 1 and "is more than a models file may hold" in big.stderr
    listed = tmp_path / "models.json"
    listed.write_text(json.dumps([{"id": "x", "scores": {"hle": 20, "gpqa_diamond": 70}}]))
    monkeypatch.setenv("BENCHPRESS_MAX_MODELS_FILE_BYTES", str(10**6))
    assert run("predict", "--file", listed, "--format", "json").exit_code == 0


def test_index_folds_follow_the_sources_order(tmp_path):
    """An index-form fold file counts rows and columns in the registry's order, which
    follows the sources' `order:`. In a workspace that added the 2026-02 matrix before the
    2026-05 one, the published folds do not line up: one line says so and what to change;
    after the change and a build they do."""
    from benchpress.store.build import build
    from benchpress.store.ingest import ingest
    from tests.conftest import BP_2026_05, MATRIX_2026_02, make_home

    home = make_home(tmp_path / "ws")
    ingest(home, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    ingest(home, str(BP_2026_05), source_id="benchpress-2026-05")
    args = ["evaluate", "--sources", "benchpress", "--folds", str(PUBLISHED_FOLDS),
            "--home", str(home.root)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert re.fullmatch(r"Error: folds_s10_f3_bs42_ms1\.json: fold 0: \d+ held-out cells are "
                        r"not observed in this matrix; .* give the file's source the lowest "
                        r"and run `benchpress build`", " ".join(result.stderr.split()))
    config = home.sources / "benchpress-2026-05.yaml"
    config.write_text(re.sub(r"(?m)^order: \d+$", "order: 1", config.read_text()))
    build(home)
    folds = BenchPress.from_snapshot(home, sources=["benchpress"]).folds(PUBLISHED_FOLDS)
    assert (len(folds), folds.n_cells, folds.left_out) == (30, 26_040, 0)


def test_published_folds_on_a_registry_with_reviewed_verdicts(tmp_path):
    """The default registry applies the reviewed verdicts, which take some of the 2026-05
    matrix's values out (schemas/cell_reviews.csv). The published folds still hold those
    cells: `evaluate --folds` leaves them out and says how many in one note (it stopped
    with "fold 0: 10 held-out cells are not observed"); the Python API warns."""
    from benchpress.store.ingest import ingest
    from tests.conftest import BP_2026_05, make_home

    with open(REPO / "schemas" / "cell_reviews.csv", newline="", encoding="utf-8") as f:
        out = sum(r["source_id"] == "benchpress-2026-05" and r["verdict"] != "ok"
                  for r in csv.DictReader(f))
    assert out > 0
    home = make_home(tmp_path / "ws", reviews=True)
    ingest(home, str(BP_2026_05), source_id="benchpress-2026-05")
    result = CliRunner().invoke(main, ["evaluate", "--folds", str(PUBLISHED_FOLDS), "--method",
                                       "published", "--format", "json", "--home", str(home.root)])
    assert result.exit_code == 0, result.stderr
    scored = 26_040 - 10 * out  # each cell is held out once in each of the 10 seeds
    assert " ".join(result.stderr.split()) == (
        f"note: {10 * out} held-out cells of {PUBLISHED_FOLDS.name} hold values a reviewed "
        f"verdict took out (schemas/cell_reviews.csv): left out, {scored:,} scored")
    assert json.loads(result.stdout)["n_folds"] == 30
    bp = BenchPress.from_snapshot(home)
    with pytest.warns(UserWarning, match=f"^{10 * out} held-out cells"):
        folds = bp.folds(PUBLISHED_FOLDS)
    assert (folds.left_out, folds.n_cells) == (10 * out, scored)
    # a held-out cell that is missing for any other reason (a file that does not line up
    # with the matrix) is still an error, never scored against another cell
    i, j = (int(v[0]) for v in np.nonzero(np.isnan(bp.matrix.values)))
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps({"folds": [{"test_cells": [
        [bp.matrix.model_ids[i], bp.matrix.benchmark_ids[j]]]}]}))
    with pytest.raises(BadInputError, match=r"^stray\.json: fold 0: 1 held-out cells are not "
                       r"observed in this matrix; an index-form file .* `order:`"):
        bp.folds(stray)
