"""Identifiers and values from `add-model` and from source files (issue 14 item 5): refused
or normalised with a message, never silently merged, dropped or duplicated; and the exit
codes of an ingest that lands with rejects (item 9)."""

from __future__ import annotations

import json

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.store.releases import add_model
from benchpress.store.sql import query
from benchpress.store.tables import read_table
from benchpress.validate.text import MAX_ID_LENGTH, check_identifier, csv_safe, date_problem

# about 8 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=8)


URL = "https://acme.example/blog"
HEADER = "model_id,name,provider,release_date,benchmark_id,score,reference_url,source_type\n"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _files(home) -> dict[str, bytes]:
    files = [*home.registry.glob("*"), *home.sources.glob("*")]
    return {str(p): p.read_bytes() for p in files if p.is_file()}


@pytest.fixture
def seeded(home):
    add_model(home, "acme-1", {"hle": 20.0}, source_url=URL, provider="Acme",
              release_date="2026-10-01")
    return home


@pytest.mark.parametrize("model_id, message", [
    ("acme/2", "contains a path separator '/'"),
    ("../../etc/acme", "contains a path separator '/'"),
    ("acme\\2", "contains a path separator '\\'"),
    ("acme..2", "contains '..' (path traversal)"),
    ("\u043e3-mini-high", "non-ASCII character 'о' (U+043E, CYRILLIC SMALL LETTER O)"),
    ("o3-mini\u200bhigh", "invisible character U+200B (ZERO WIDTH SPACE)"),
    ("o3-mini\u2060high", "invisible character U+2060 (WORD JOINER)"),
    ("acme\x07bell", "invisible character U+0007"),
    ("a" * 10_000, f"is 10000 characters long (at most {MAX_ID_LENGTH})"),
    ("   ", "is empty"),
])
def test_add_model_refuses_bad_ids_in_one_line(seeded, model_id, message):
    before = _files(seeded)
    result = run("add-model", model_id, "--scores", "hle=25", "--source", URL, "--home", seeded.root)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: model id ")
    assert message in result.stderr
    assert _files(seeded) == before  # nothing written, no model '2' or 'acme' or '3-mini-high'


def test_full_width_letters_are_normalised_not_refused():
    assert check_identifier("ｏ３-mini", "model id") == "o3-mini"


@pytest.mark.parametrize("date", ["2026-13-45", "11/01/2026", "2026-02-30", "2026-1-5", "soon"])
def test_add_model_refuses_bad_dates(seeded, date):
    before = _files(seeded)
    result = run("add-model", "acme-6", "--scores", "hle=25", "--release-date", date,
                 "--source", "https://x.example", "--home", seeded.root)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"--release-date: '{date}' is not" in result.stderr
    assert "expected format YYYY-MM-DD" in result.stderr
    assert _files(seeded) == before


def test_dates_accepted_at_every_precision():
    assert [date_problem(d) for d in ("2026", "2026-02", "2024-02-29")] == [None] * 3
    assert "calendar" in date_problem("2025-02-29")


def test_a_benchmark_twice_in_scores_is_an_error(seeded):
    result = run("add-model", "acme-7", "--scores", "gpqa_diamond=50,gpqa_diamond=60",
                 "--source", URL, "--home", seeded.root)
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: --scores names benchmark 'gpqa_diamond' more than "
                                     "once; give each benchmark once")
    # two spellings of one benchmark are caught after resolution
    with pytest.raises(BadInputError, match="names benchmark 'gpqa_diamond' twice"):
        add_model(seeded, "acme-7", {"gpqa_diamond": 50, "GPQA-Diamond": 60}, source_url=URL)


def _release_lines(home, model_id):
    return [line for line in home.releases_csv.read_text().splitlines()
            if line.startswith(model_id + ",")]


def test_the_same_citation_again_changes_nothing(seeded):
    result = run("add-model", "acme-1", "--scores", "hle=20", "--source", URL, "--home", seeded.root)
    assert result.exit_code == 0, result.stderr
    assert f"hle: 20 from {URL} is already recorded; unchanged" in result.stderr
    assert len(_release_lines(seeded, "acme-1")) == 1
    assert read_table(seeded.registry, "quarantine").height == 0


def test_a_correction_from_the_same_citation_replaces_the_value(seeded):
    result = run("add-model", "acme-1", "--scores", "hle=25", "--source", URL, "--home", seeded.root)
    assert result.exit_code == 0, result.stderr
    assert f"hle: 20.0 -> 25 (a correction from the same citation {URL}" in result.stderr
    assert len(_release_lines(seeded, "acme-1")) == 1
    cells = query(seeded.registry, "SELECT score FROM cells WHERE model_id = 'acme-1'")
    assert cells["score"].to_list() == [25.0]


def test_a_newer_citation_supersedes_and_both_are_kept(seeded):
    new = "https://acme.example/blog2"
    result = run("add-model", "acme-1", "--scores", "hle=25", "--source", new, "--home", seeded.root)
    assert result.exit_code == 0, result.stderr
    assert "model 'acme-1' is already recorded (1 score(s) in releases.csv)" in result.stderr
    assert f"hle: 20.0 -> 25: {new} supersedes {URL} (both citations kept" in result.stderr
    cells = query(seeded.registry, "SELECT score, reference_url FROM cells WHERE model_id = 'acme-1'")
    assert cells.rows() == [(25.0, new)]
    # the superseded value is kept for audit, and is no live conflict
    conflicts = query(seeded.registry, "SELECT other_score FROM conflicts WHERE model_id = 'acme-1'")
    assert conflicts.rows() == []
    kept = query(seeded.registry, "SELECT score, reference_url, audit_status FROM scores "
                                  "WHERE model_id = 'acme-1' ORDER BY score")
    assert kept.rows() == [(20.0, URL, "superseded"), (25.0, new, None)]
    lines = _release_lines(seeded, "acme-1")
    assert len(lines) == 2 and all(",Acme,2026-10-01," in line for line in lines)
    assert lines[0].endswith(f",{new},official_blog,,,")
    assert lines[1].endswith(f",superseded by {new},superseded")
    assert read_table(seeded.registry, "quarantine").height == 0


def test_a_contradicting_provider_is_refused(seeded):
    before = _files(seeded)
    result = run("add-model", "acme-1", "--provider", "Other", "--scores", "gpqa_diamond=50",
                 "--source", URL, "--home", seeded.root)
    assert result.exit_code == 1
    assert "model 'acme-1' already has provider 'Acme'" in result.stderr
    assert _files(seeded) == before


def test_a_normalised_id_is_reported(seeded):
    result = run("add-model", "Acme 8 (High)", "--scores", "hle=30", "--source", URL,
                 "--home", seeded.root)
    assert result.exit_code == 0, result.stderr
    assert "model id 'Acme 8 (High)' is recorded as 'acme-8-high'" in result.stderr
    names = read_table(seeded.registry, "models").filter(pl.col("model_id") == "acme-8-high")["name"]
    assert names.to_list() == ["Acme 8 (High)"]


def test_issue_13_bad_date_is_one_line_not_a_keyerror(home):
    result = run("add-model", "acme-6", "--scores", "hle=25", "--release-date", "11/01/2026",
                 "--source", "https://x.example", "--home", home.root)
    assert result.exit_code == 1
    assert "KeyError" not in result.stderr and result.stderr.count("\n") == 1


def _source(tmp_path, rows: list[str], name="src.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_source_file_bad_dates_and_ids_are_quarantined_with_reasons(seeded, tmp_path):
    path = _source(tmp_path, [
        f"good-1,Good,Acme,2026-01-02,hle,30,{URL},official_blog",
        f"bad-date,Bad,Acme,2026-13-45,hle,31,{URL},official_blog",
        f"\u043e3-mini-high,Cyr,OpenAI,2025-01-31,hle,32,{URL},official_blog",
        f"o3-mini\u200bhigh,ZW,OpenAI,2025-01-31,hle,33,{URL},official_blog",
    ])
    result = run("ingest", path, "--id", "src", "--adapter", "releases-csv", "--home", seeded.root)
    assert result.exit_code == 3  # landed with rejects
    q = read_table(seeded.registry, "quarantine").filter(pl.col("source_id") == "src")
    reasons = dict(zip(q["row"] + "/" + q["kind"], q["reason"]))
    assert reasons["line 3/model"] == ("release_date: not a date; expected format YYYY-MM-DD "
                                       "(value: 2026-13-45)")
    assert "non-ASCII character 'о'" in reasons["line 4/model"]
    assert "non-ASCII character 'о'" in reasons["line 4/score"]
    assert "invisible character U+200B" in reasons["line 5/score"]
    models = set(read_table(seeded.registry, "models")["model_id"])
    assert {"good-1", "bad-date"} <= models
    assert not {"3-mini-high", "o3-minihigh"} & models
    # the refused ids' scores did not merge into another model
    scores = read_table(seeded.registry, "scores").filter(pl.col("source_id") == "src")
    assert sorted(scores["model_id"]) == ["bad-date", "good-1"]
    dates = read_table(seeded.registry, "models").filter(pl.col("model_id") == "bad-date")
    assert dates["release_date"].to_list() == [None]


def test_two_sources_giving_different_providers_are_reported(seeded, tmp_path):
    path = _source(tmp_path, [f"acme-1,Acme 1,Zenith,,gpqa_diamond,50,{URL}/2,official_blog"])
    result = run("ingest", path, "--id", "other", "--adapter", "releases-csv", "--home", seeded.root)
    assert result.exit_code == 0, result.stderr
    line = ("model 'acme-1': sources disagree on the provider; kept 'Acme' (releases, the first "
            "to describe it), not 'Zenith' (other)")
    assert f"warning: {line}" in result.stderr
    assert json.loads((seeded.registry / "build.json").read_text())["warnings"] == [line]


def test_ingest_exit_codes_tell_refused_from_landed_with_rejects(seeded, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("model_id,score\nx,1\n", encoding="utf-8")
    refused = run("ingest", bad, "--adapter", "releases-csv", "--home", seeded.root)
    assert refused.exit_code == 1
    mixed = _source(tmp_path, [f"m-1,M,,,hle,30,{URL},official_blog",
                               f"m-2,M,,,hle,300,{URL},official_blog"])
    landed = run("ingest", mixed, "--id", "mixed", "--adapter", "releases-csv", "--home", seeded.root)
    assert landed.exit_code == 3
    assert "1 row(s) were rejected" in landed.stderr and "exit 3" in landed.stderr
    allowed = run("ingest", mixed, "--id", "mixed2", "--adapter", "releases-csv", "--allow-rejects",
                  "--home", seeded.root)
    assert allowed.exit_code == 0


@pytest.mark.parametrize("value, safe", [
    ("=cmd|'/c calc'!A1", "'=cmd|'/c calc'!A1"),
    ("+1", "'+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("gpt-5", "gpt-5"), ("", ""), (-3.5, -3.5), (None, None),
])
def test_csv_safe_defuses_formulas(value, safe):
    assert csv_safe(value) == safe


def test_csv_safe_frame_matches_csv_safe_cell_by_cell():
    from benchpress.validate.text import csv_safe_frame

    cells = ["=cmd|'/c calc'!A1", "ok", None, "-1", "\tz", "@x", "a=b", "+"]
    frame = pl.DataFrame({"name": cells, "n": list(range(len(cells)))})
    safe = csv_safe_frame(frame)
    assert safe["name"].to_list() == [csv_safe(v) for v in cells]
    assert safe["n"].to_list() == frame["n"].to_list()


def test_aliases_accept_refuses_invisible_and_look_alike_ids(seeded):
    before = (seeded.schemas / "aliases.csv").read_bytes()
    for alias in ("o3\u200bmini", "\u043e3-mini"):
        result = run("aliases", "accept", alias, "o3-mini", "--home", seeded.root)
        assert result.exit_code == 1 and result.stderr.startswith("Error: model alias ")
    assert (seeded.schemas / "aliases.csv").read_bytes() == before
    assert run("aliases", "accept", "acme-one", "acme-1", "--home", seeded.root).exit_code == 0
    added = (seeded.schemas / "aliases.csv").read_text().splitlines()[-1]
    assert added == "model,acme-one,acme-1,accepted suggestion,"
    assert not list(seeded.schemas.glob(".*.tmp"))
