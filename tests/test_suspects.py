"""The suspect-cell check (`benchpress.predict.checks.suspects`), its report (`benchpress.api.suspect_report`),
reviewed verdicts (`schemas/cell_reviews.csv`: `validate.reviews`, `store.verdicts`) and the
`suspects` command."""

from __future__ import annotations

import json
import shutil

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import BadRowsError
from benchpress.predict.checks.suspects import SLIPS, SuspectCheck, slip_values
from benchpress.scales import BenchmarkScales
from benchpress.store.build import prepared_folder
from benchpress.store.verdicts import apply_reviews
from benchpress.store.tables import read_table
from benchpress.validate.contracts import load_contracts
from benchpress.validate.normalize import model_alias_map
from benchpress.validate.reviews import REVIEW_COLUMNS, read_reviews
from tests.conftest import REPO, make_home

# about 100 s for the tests `make test-quick` runs (scheduling: long modules start first),
# with the session's build of the default registry (`default_registry`): this module starts
# first and makes it, tests/test_artifact.py (later) copies it
pytestmark = pytest.mark.duration(seconds=100)

N_MODELS, N_BENCH = 80, 24
SLIP_NAMES = [s.name for s in SLIPS]


def synthetic(seed=0, lower_better=()):
    """Percent scores from a bias + rank-2 model in logit space with a little noise (about
    75% observed), plus one Elo column (the last); ``lower_better`` columns hold error
    rates (100 - x): (Y, scales, higher_is_better)."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.0, N_MODELS)
    U, V = rng.normal(0, 0.6, (N_MODELS, 2)), rng.normal(0, 0.6, (N_BENCH, 2))
    L = ability[:, None] + rng.normal(0, 0.8, N_BENCH) + U @ V.T + rng.normal(0, 0.15, (N_MODELS, N_BENCH))
    L[:, list(lower_better)] += 2.5           # rates of a few percent, as hallucination rates
    Y = 100 / (1 + np.exp(-L))
    Y[:, -1] = 1200 + 150 * L[:, -1]
    hib = np.ones(N_BENCH, dtype=bool)
    for j in lower_better:
        Y[:, j] = 100 - Y[:, j]
        hib[j] = False
    Y[rng.random(Y.shape) < 0.25] = np.nan
    kind = np.array(["percent"] * (N_BENCH - 1) + ["elo"])
    lower = np.r_[np.zeros(N_BENCH - 1), np.nan]
    upper = np.r_[np.full(N_BENCH - 1, 100.0), np.nan]
    return Y, BenchmarkScales(kind, lower, upper), hib


def cells_of(Y):
    rows, cols = np.nonzero(~np.isnan(Y))
    return rows, cols, Y[rows, cols]


def test_slip_values_undo_each_slip_inside_the_range():
    undone = slip_values(np.array([91.1, 0.42, 5.0]), np.zeros(3), np.full(3, 100.0))
    assert undone.shape == (len(SLIPS), 3)
    by = dict(zip(SLIP_NAMES, undone))
    np.testing.assert_allclose(by["reversed"], [8.9, 99.58, 95.0])
    np.testing.assert_allclose(by["fraction"], [np.nan, 42.0, np.nan])     # 500 > 100
    np.testing.assert_allclose(by["dropped_digit"], [np.nan, 4.2, 50.0])


def test_a_clean_matrix_has_few_suspects_and_the_same_ones_each_fit():
    Y, scales, hib = synthetic()
    a = SuspectCheck().fit(Y, scales, hib)
    b = SuspectCheck().fit(Y, scales, hib)
    rows, cols, x = cells_of(Y)
    flagged = a.judge(rows, cols, x)["suspect"]
    assert flagged.sum() <= 0.01 * x.size
    np.testing.assert_array_equal(flagged, b.judge(rows, cols, x)["suspect"])
    np.testing.assert_allclose(a.expected_z_, b.expected_z_, rtol=0, atol=0, equal_nan=True)
    assert a.checked_.sum() == (~np.isnan(Y)).sum()       # every model and benchmark is large


@pytest.mark.parametrize("slip, make", [("dropped_digit", lambda x: x / 10),
                                        ("fraction", lambda x: x / 100),
                                        ("reversed", lambda x: 100 - x)])
def test_a_planted_slip_is_flagged_and_named(slip, make):
    Y, scales, hib = synthetic(seed=1)
    rows, cols, x = cells_of(Y)
    # values a slip moves far, of different models and benchmarks
    far = np.flatnonzero((cols < N_BENCH - 1) & (x > 75) & (rows % 5 == 0))
    far = far[np.unique(rows[far], return_index=True)[1]][:8]
    assert far.size == 8 and np.unique(cols[far]).size >= 4
    planted = Y.copy()
    planted[rows[far], cols[far]] = make(x[far])
    check = SuspectCheck().fit(planted, scales, hib)
    judged = check.judge(rows, cols, planted[rows, cols])
    assert judged["suspect"][far].all()
    assert (judged["slip"][far] == SLIP_NAMES.index(slip)).mean() >= 0.75
    np.testing.assert_allclose(judged["fits_as"][far][judged["slip"][far] >= 0],
                               x[far][judged["slip"][far] >= 0], rtol=1e-9)
    clean = np.ones(x.size, dtype=bool)
    clean[far] = False
    assert judged["suspect"][clean].sum() <= 0.01 * clean.sum()


def test_no_slip_is_read_into_a_scale_that_is_not_a_bounded_percent():
    Y, scales, hib = synthetic(seed=2)
    rows, cols, x = cells_of(Y)
    elo = np.flatnonzero(cols == N_BENCH - 1)[:1]
    planted = Y.copy()
    planted[rows[elo], cols[elo]] = x[elo] / 10           # 1300 -> 130: far off, no slip
    judged = SuspectCheck().fit(planted, scales, hib).judge(rows, cols, planted[rows, cols])
    assert judged["suspect"][elo].all()
    assert (judged["slip"][elo] == -1).all() and np.isnan(judged["fits_as"][elo]).all()


def test_a_citation_reversed_as_a_whole_is_named_and_left_out():
    """A lower-is-better rate column where one citation gives the complement (accuracy)
    for six strong models, as the Seed2.0 card does for FActScore."""
    Y, scales, hib = synthetic(seed=3, lower_better=(5,))
    groups = np.where(np.isnan(Y), -1, 0)
    strong = np.flatnonzero(~np.isnan(Y[:, 5]))
    strong = strong[np.argsort(Y[strong, 5])][:6]          # the lowest rates
    groups[strong, 5] = 7
    clean = SuspectCheck().fit(Y, scales, hib, groups)
    assert clean.reversed_groups_.shape[0] == 0
    planted = Y.copy()
    planted[strong, 5] = 100 - Y[strong, 5]
    check = SuspectCheck().fit(planted, scales, hib, groups)
    assert check.reversed_groups_.tolist() == [[7, 5]]
    assert check.left_out_[strong, 5].all() and check.left_out_.sum() == 6
    judged = check.judge(strong, np.full(6, 5), planted[strong, 5])
    assert judged["in_reversed_group"].all() and judged["suspect"].all()
    np.testing.assert_allclose(judged["complement"], Y[strong, 5])
    # predicted from the column without the group: near the true rates, far from 100 - x
    assert np.abs(check.z(strong, np.full(6, 5), Y[strong, 5])).max() < 2


def test_bad_settings_and_shapes_are_refused():
    Y, scales, hib = synthetic()
    with pytest.raises(Exception, match="threshold must be > 0"):
        SuspectCheck(threshold=0).fit(Y, scales, hib)
    with pytest.raises(Exception, match="24 benchmark columns"):
        SuspectCheck().fit(Y[:, :5], scales, hib)
    with pytest.raises(Exception, match="not fitted"):
        SuspectCheck().judge([0], [0], [1.0])


# -- reviewed verdicts -------------------------------------------------------------------
def write_reviews(folder, rows):
    lines = [",".join(REVIEW_COLUMNS)] + [",".join(r) for r in rows]
    (folder / "cell_reviews.csv").write_text("\n".join(lines) + "\n")


def test_malformed_review_rows_are_one_line_each(tmp_path):
    write_reviews(tmp_path, [
        ("gpt-5", "factscore", "benchpress-2026-05", "2.8", "ok", "", "me"),
        ("gpt-5", "factscore", "benchpress-2026-05", "abc", "wrong", "", ""),
        ("Bad Id", "hle", "src", "", "exclude", "", "me"),
        ("gpt-5", "factscore", "benchpress-2026-05", "2.8", "typo", "dropped digit", "me"),
    ])
    with pytest.raises(BadRowsError) as info:
        read_reviews(tmp_path)
    path = tmp_path / "cell_reviews.csv"
    assert info.value.lines == [
        f"{path} row 3: field 'score': 'abc' is not a number (blank: any value)",
        f"{path} row 3: field 'verdict': 'wrong' is not one of ok, wrong_scale, reversed, "
        "typo, exclude",
        f"{path} row 3: field 'reviewer': is empty: say who reviewed the value",
        f"{path} row 4: field 'model_id': 'Bad Id' is not an id (lowercase letters, digits, "
        "'.', '_', '+', '-')",
        f"{path} row 4: field 'note': a 'exclude' verdict needs a note saying what was found",
        f"{path} row 5: field 'row': the same observation as row 2 (one verdict per value)",
    ]


def test_the_repository_reviews_are_valid_and_cover_the_factscore_case():
    reviews = read_reviews(REPO / "schemas")
    opus = reviews.filter((pl.col("model_id") == "claude-opus-4.5")
                          & (pl.col("benchmark_id") == "factscore"))
    assert opus.select("score", "verdict").rows() == [(91.1, "reversed")]


def scores_frame(rows):
    return pl.DataFrame(rows, schema=["model_id", "benchmark_id", "source_id", "score", "row",
                                      "ingest_id"], orient="row")


def test_apply_reviews_moves_judged_values_to_the_quarantine_with_their_verdict():
    scores = scores_frame([("a", "b1", "s1", 91.1, "r0", "i"), ("a", "b1", "s2", 8.0, "r1", "i"),
                           ("c", "b1", "s1", 5.0, "r2", "i")])
    reviews = pl.DataFrame({
        "model_id": ["a", "c", "a"], "benchmark_id": ["b1", "b1", "b1"],
        "source_id": ["s1", "s1", "s2"], "score": [91.1, 6.0, None],
        "verdict": ["reversed", "exclude", "ok"], "note": ["complement", "x", None],
        "reviewer": ["me", "me", "me"], "review_row": [2, 3, 4]})
    kept, out, warnings = apply_reviews(scores, reviews)
    assert kept["row"].to_list() == ["r1", "r2"]          # ok keeps; 6.0 is not the value
    assert out.select("source_id", "row", "field").rows() == [("s1", "r0", "review")]
    assert out["reason"][0] == ("reviewed 'reversed' by me (schemas/cell_reviews.csv row 2): "
                                "complement")
    assert json.loads(out["record"][0])["score"] == 91.1
    assert warnings == ["schemas/cell_reviews.csv row 3: matches no observation (c, b1, s1, "
                        "6); the source may have corrected the value or renamed an id"]


# -- the registry and the command --------------------------------------------------------
@pytest.fixture(scope="module")
def repo_home(default_registry):
    """The repository's sources and contracts built from the mirror (the default registry,
    the session's build: `default_registry`)."""
    home, output = default_registry
    assert "suspects: " in output and "open of" in output.split("suspects: ")[-1]
    return home


@pytest.fixture(scope="module")
def unreviewed(repo_home, tmp_path_factory):
    """The same sources built without the verdicts (built once for the module, with a
    snapshot tagged "before"; read only).
    The versions prepared for the default registry are kept (what a workspace keeps in
    .cache/prepared): the verdicts act after the preparation, so none is prepared again.
    Built by `store.build.build`, not the command: the command's suspect check after the
    build is what the tests below run themselves (the repository's build runs it)."""
    from benchpress.store.build import build

    home = make_home(tmp_path_factory.mktemp("unreviewed") / "ws")
    assert not (home.schemas / "cell_reviews.csv").exists()
    shutil.rmtree(home.sources)
    shutil.copytree(repo_home.sources, home.sources)
    shutil.copytree(repo_home.cache, home.cache)
    shutil.copytree(prepared_folder(repo_home), prepared_folder(home))
    build(home)
    result = CliRunner().invoke(main, ["snapshot", "create", "--tag", "before", "--home",
                                       str(home.root)])
    assert result.exit_code == 0, result.output
    return home


def test_reviewed_values_leave_the_cells_and_the_report_lists_them(repo_home):
    cells = read_table(repo_home.registry, "cells").filter(pl.col("benchmark_id") == "factscore")
    assert "claude-opus-4.5" not in cells["model_id"].to_list()
    assert cells["score"].max() < 40                     # OpenAI's rates only
    q = read_table(repo_home.registry, "quarantine").filter(pl.col("field") == "review")
    # every excluding review took its value out, of every version of the source that had it
    # (a source with a history lists a value once per version)
    reviewed = q["reason"].str.extract(r"row (\d+)\)").unique()
    assert reviewed.len() == read_reviews(repo_home.schemas).filter(pl.col("verdict") != "ok").height
    assert q.height >= reviewed.len()
    result = CliRunner().invoke(main, ["suspects", "--format", "json", "--home",
                                       str(repo_home.root)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    rows = pl.DataFrame(doc["suspects"], infer_schema_length=None)
    opus = rows.filter((pl.col("model_id") == "claude-opus-4.5")
                       & (pl.col("benchmark_id") == "factscore")).row(0, named=True)
    assert opus["status"] == "excluded" and opus["verdict"] == "reversed"
    assert opus["expected"] < 30 and opus["z"] > 2          # judged against the cells without it
    assert opus["reference_url"].endswith("Seed2.0%20Model%20Card.pdf")
    assert doc["n_open"] == rows.filter(pl.col("status") == "open").height
    ok = rows.filter(pl.col("status") == "reviewed")
    assert set(ok["verdict"]) == {"ok"} and ok.height >= 1


def test_without_reviews_the_check_names_the_seed_card_complements(unreviewed):
    from benchpress.api.suspect_report import find_suspects

    home = unreviewed
    report = find_suspects(home.registry, schemas_dir=home.schemas)
    named = {(g["benchmark_id"], g["n_cells"]) for g in report.reversed_groups}
    assert ("factscore", 5) in named
    opus = report.frame.filter((pl.col("model_id") == "claude-opus-4.5")
                               & (pl.col("benchmark_id") == "factscore"))
    assert opus["status"].to_list() == ["open"] and opus["slip"].to_list() == ["reversed_group"]
    assert opus["fits_as"].round(1).to_list() == [8.9]


def test_suspects_command_formats_and_errors(repo_home, tmp_path):
    runner = CliRunner()
    out = tmp_path / "report.json"
    table = runner.invoke(main, ["suspects", "--open", "--out", str(out), "--home",
                                 str(repo_home.root)])
    assert table.exit_code == 0, table.output
    assert "open of" in table.output.split("suspects: ")[-1]
    doc = json.loads(out.read_text())
    assert {r["status"] for r in doc["suspects"]} <= {"open"}
    csv = runner.invoke(main, ["suspects", "--format", "csv", "--home", str(repo_home.root)])
    assert csv.exit_code == 0 and csv.output.startswith("model_id,benchmark_id,score,expected,z,")
    bad = runner.invoke(main, ["suspects", "--threshold", "0", "--home", str(repo_home.root)])
    assert bad.exit_code == 2
    assert bad.output.strip() == "Error: --threshold must be > 0 standard deviations, got 0"


def test_build_refuses_malformed_reviews_one_line_per_row(repo_home, tmp_path):
    home = make_home(tmp_path / "ws")
    shutil.rmtree(home.sources)
    shutil.copytree(repo_home.sources, home.sources)
    shutil.copytree(repo_home.cache, home.cache)
    write_reviews(home.schemas, [("gpt-5", "factscore", "benchpress-2026-05", "", "bad", "", "me"),
                                 ("gpt-5", "hle", "benchpress-2026-05", "", "exclude", "", "me")])
    result = CliRunner().invoke(main, ["build", "--home", str(home.root)])
    assert result.exit_code == 1
    path = home.schemas / "cell_reviews.csv"
    assert result.output.splitlines() == [
        f"Error: {path} row 2: field 'verdict': 'bad' is not one of ok, wrong_scale, "
        "reversed, typo, exclude",
        f"Error: {path} row 3: field 'note': a 'exclude' verdict needs a note saying what "
        "was found"]
    assert not home.registry.exists()


def test_diff_names_a_review_as_the_cause(unreviewed, repo_home):
    """A snapshot before the verdicts and the registry after them (the same sources built
    with the repository's verdicts): each cell a verdict emptied is `removed` with the
    cause `reviewed`, one another source now fills is `changed` so."""
    from benchpress.store.diff import diff_folders
    from benchpress.store.snapshot import resolve_snapshot

    assert (repo_home.schemas / "cell_reviews.csv").read_bytes() == \
        (REPO / "schemas" / "cell_reviews.csv").read_bytes()
    cells = diff_folders(resolve_snapshot(unreviewed, "before"), repo_home.registry).cells
    reviewed = cells.filter(pl.col("cause") == "reviewed")
    excluded = read_reviews(REPO / "schemas").filter(pl.col("verdict") != "ok")
    # two sources' values of one cell (a model reviewed under an id an alias joins) are one
    aliases = model_alias_map(load_contracts(REPO / "schemas"))
    excluded_cells = excluded.with_columns(pl.col("model_id").replace(aliases)).unique(
        ["model_id", "benchmark_id"])
    assert excluded_cells.height < excluded.height                 # gpt-3.5-turbo(-0125)
    assert reviewed.height == cells.height == excluded_cells.height   # one cell each, nothing else
    assert ("claude-opus-4.5", "factscore") in set(reviewed.select("model_id", "benchmark_id").rows())

