"""Every kind of bad input: a clear message naming file, row and field; nothing lost;
a refused file leaves the registry exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from benchpress.errors import BadInputError, FetchError, UnknownFormatError
from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests.conftest import BP_2026_05

# about 7 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=7)


def _snapshot_of(home) -> dict[str, bytes]:
    """Every file of the registry and the source configs, to prove nothing changed."""
    files = list(home.registry.glob("*")) + list(home.sources.glob("*"))
    return {str(p): p.read_bytes() for p in files if p.is_file()}


@pytest.fixture
def seeded(home):
    ingest(home, str(BP_2026_05), source_id="bp")
    return home


def _scores_json(tmp_path: Path, scores: list[dict], benchmarks=None, name="m.json") -> Path:
    doc = {
        "models": [{"id": "new-model", "name": "New Model", "provider": "X"}],
        "benchmarks": benchmarks or [{"id": "gpqa_diamond", "name": "GPQA Diamond",
                                      "metric": "% correct"}],
        "scores": scores,
    }
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


GOOD = {"model_id": "new-model", "benchmark_id": "gpqa_diamond", "score": 71.2,
        "reference_url": "https://example.com/blog"}


@pytest.mark.parametrize("content, message", [
    (b'{"models": [}', "malformed JSON at line 1, column 13"),
    (b'{"models": [], "scores": [{"score": "\xe9"}]}', "not UTF-8 text"),
])
def test_refused_files_leave_the_registry_untouched(seeded, tmp_path, content, message):
    before = _snapshot_of(seeded)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(BadInputError, match=message) as err:
        ingest(seeded, str(bad), adapter="benchpress-json")
    assert str(bad.name) in str(err.value)
    assert _snapshot_of(seeded) == before


def test_unknown_format_lists_the_adapters(seeded, tmp_path):
    before = _snapshot_of(seeded)
    odd = tmp_path / "notes.txt"
    odd.write_text("just some text\n")
    with pytest.raises(UnknownFormatError, match="benchpress-page, benchpress-json"):
        ingest(seeded, str(odd))
    assert _snapshot_of(seeded) == before


def test_file_over_the_size_cap_is_refused(tmp_path):
    from benchpress.adapters.fetch import fetch

    big = tmp_path / "big.json"
    big.write_bytes(b" " * 5000)
    with pytest.raises(FetchError, match="larger than the 1,000-byte cap"):
        fetch(str(big), tmp_path / "cache", max_bytes=1000)
    assert not any((tmp_path / "cache").glob("[0-9a-f]*"))


@pytest.mark.parametrize("bad_row, field, reason", [
    ({"score": "n/a"}, "score", "not_nullable"),
    ({"score": 140}, "score", "score outside the benchmark's range (score 140, allowed 0.0 to 100.0)"),
    ({"model_id": None}, "model_id", "not_nullable"),
    ({"benchmark_id": None}, "benchmark_id", "not_nullable"),
    ({"reference_url": "see the paper"}, "reference_url", "str_matches"),
    ({"reference_url": "ftp://example.com/x"}, "reference_url", "str_matches"),
])
def test_bad_rows_are_quarantined_with_field_and_reason(seeded, tmp_path, bad_row, field, reason):
    path = _scores_json(tmp_path, [GOOD, {**GOOD, "benchmark_id": "hle", **bad_row}])
    _, report = ingest(seeded, str(path), source_id="vendor")
    summary = next(s for s in report.sources if s.source_id == "vendor")
    assert (summary.rows_read, summary.rows_accepted, summary.rows_quarantined) == (2, 1, 1)
    assert summary.reasons[0].startswith(f"vendor scores[1]: field '{field}'")
    assert reason in summary.reasons[0]

    quarantine = read_table(seeded.registry, "quarantine")
    assert quarantine.height == 1
    row = quarantine.row(0, named=True)
    assert (row["source_id"], row["row"], row["field"]) == ("vendor", "scores[1]", field)
    assert json.loads(row["record"])["benchmark_id"] == {**GOOD, "benchmark_id": "hle", **bad_row}["benchmark_id"]
    # the good row landed
    cells = read_table(seeded.registry, "cells")
    assert cells.filter((pl.col("model_id") == "new-model")).height == 1


def test_unknown_scale_is_quarantined(seeded, tmp_path):
    path = _scores_json(
        tmp_path,
        [GOOD, {**GOOD, "benchmark_id": "furlong_bench", "score": 3.0}],
        benchmarks=[{"id": "furlong_bench", "name": "Furlong Bench", "metric": "furlongs"}],
    )
    _, report = ingest(seeded, str(path), source_id="vendor")
    reasons = next(s for s in report.sources if s.source_id == "vendor").reasons
    assert reasons == ["vendor scores[1]: field 'benchmark_id': benchmark has no known scale"]
    assert "furlong_bench" not in set(read_table(seeded.registry, "benchmarks")["benchmark_id"])


def test_new_benchmark_with_a_declared_scale_is_accepted(seeded, tmp_path):
    path = _scores_json(
        tmp_path, [{**GOOD, "benchmark_id": "brand_new_bench", "score": 1234.0}],
        benchmarks=[{"id": "brand_new_bench", "name": "Brand New", "metric": "Elo rating"}])
    ingest(seeded, str(path), source_id="vendor")
    bench = read_table(seeded.registry, "benchmarks").filter(pl.col("benchmark_id") == "brand_new_bench")
    assert bench["scale"].item() == "elo"


def test_exact_duplicate_rows_are_quarantined_not_lost(seeded, tmp_path):
    path = _scores_json(tmp_path, [GOOD, GOOD])
    _, report = ingest(seeded, str(path), source_id="vendor")
    summary = next(s for s in report.sources if s.source_id == "vendor")
    assert summary.reasons == ["vendor scores[1]: field 'row': duplicate of an earlier row (scores[0])"]


def test_value_checks_really_run_on_polars_frames():
    """pandera checks only the schema of a LazyFrame; make sure values are checked."""
    from benchpress.validate.prepare import validate_rows
    from benchpress.validate.schemas import Aliases

    frame = pl.DataFrame({"kind": ["model", "planet"], "alias": ["a", "b"],
                          "canonical_id": ["x", "Not An Id"], "origin": ["t", "t"], "note": [None, None]},
                         schema={"kind": pl.String, "alias": pl.String, "canonical_id": pl.String,
                                 "origin": pl.String, "note": pl.String})
    failures = validate_rows(Aliases, frame)
    assert failures["index"].to_list() == [1]
    assert set(failures["field"].to_list()) <= {"kind", "canonical_id"}


def test_bad_contract_file_is_named(home):
    (home.schemas / "benchmarks.csv").write_text(
        "benchmark_id,name,category,scale,lower,upper,higher_is_better,cost\nx,X,,parsecs,,,true,\n")
    from benchpress.validate.contracts import load_contracts

    with pytest.raises(BadInputError, match=r"benchmarks.csv row 2: field 'scale': unknown scale 'parsecs'"):
        load_contracts(home.schemas)


@pytest.mark.parametrize("text, message", [
    ("id: bp2\nadapter: benchpress_json\nretrieved_at: 2026-13-45\n",
     "month must be in 1..12 (a value written as a date must be a real date; quote it"),
    ("- id: bp2\n", "a source config is a mapping of fields"),
    ("id: bp2\nadaptr: benchpress_json\n", "unknown field 'adaptr'; did you mean 'adapter'?"),
    ("id: bp2\nlicence: [oops\n", "did not find expected ',' or ']'"),
    (b"id: bp2\nlicence: \xff\n", "not UTF-8 text (byte 17)"),
    ("id: bp2\nnotes: |\n" + "  x\n" * 3000, "12,017 bytes is more than a YAML settings file "
     "may hold (10,000; env BENCHPRESS_MAX_CONFIG_BYTES)"),
], ids=["wrong date", "a list", "a typo", "not YAML", "not UTF-8", "too large"])
def test_a_bad_source_config_is_one_line_naming_it(seeded, monkeypatch, text, message):
    """A source config that is not one, however it fails, is refused in one line naming the
    file (never an internal error), read no further than its size allows, and the build
    leaves the registry as it was."""
    from benchpress.store.build import build

    monkeypatch.setenv("BENCHPRESS_MAX_CONFIG_BYTES", str(10_000))
    before = _snapshot_of(seeded)
    config = seeded.sources / "bp2.yaml"
    (config.write_bytes if isinstance(text, bytes) else config.write_text)(text)
    with pytest.raises(BadInputError) as info:
        build(seeded)
    said = str(info.value)
    assert said.startswith(f"{config}: ") and message in said and "\n" not in said
    config.unlink()
    assert _snapshot_of(seeded) == before


def test_malformed_release_csv_is_refused(seeded, tmp_path):
    before = _snapshot_of(seeded)
    bad = tmp_path / "releases.csv"
    bad.write_text("model,bench,value\nacme,gpqa_diamond,70\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"header lacks column\(s\) \['benchmark_id', 'model_id', 'score'\]"):
        ingest(seeded, str(bad), adapter="releases-csv")
    assert _snapshot_of(seeded) == before


def test_release_csv_rows_are_named_by_the_line_they_start_on(seeded, tmp_path):
    """A quoted note spanning two lines shifts the next record to line 4."""
    csv_file = tmp_path / "releases.csv"
    csv_file.write_text(
        "model_id,benchmark_id,score,reference_url,notes\n"
        'acme-9,gpqa_diamond,70,https://a.example,"first line\nsecond line"\n'
        "acme-9,hle,140,https://a.example,\n", encoding="utf-8")
    _, report = ingest(seeded, str(csv_file), source_id="hand", adapter="releases-csv")
    reasons = next(s for s in report.sources if s.source_id == "hand").reasons
    assert len(reasons) == 1 and reasons[0].startswith("hand line 4: field 'score'")


def test_quarantine_fields_are_keyed_by_check_name_not_wording():
    """Every named check the contracts define has an entry in CHECK_MESSAGES, and the field a
    failure blames comes from that entry (changing a message's words cannot move it)."""
    from benchpress.validate.prepare import validate_rows
    from benchpress.validate.schemas import CHECK_MESSAGES, TABLES, ScoreCheck

    named = {check.name for schema in [*TABLES.values(), ScoreCheck]
             for check in schema.to_schema().checks}
    named |= {check.name for schema in [*TABLES.values(), ScoreCheck]
              for column in schema.to_schema().columns.values() for check in column.checks
              if not check.name.startswith(("str_", "is_in", "isin", "greater", "less", "in_range"))}
    assert named - {"bounds_ordered"} <= set(CHECK_MESSAGES), named - set(CHECK_MESSAGES)
    frame = pl.DataFrame({c: [None] for c in ScoreCheck.to_schema().columns},
                         schema={c: (pl.Float64 if c in ("score", "lower", "upper") else
                                     pl.Boolean if c == "derived" else pl.String)
                                 for c in ScoreCheck.to_schema().columns})
    frame = frame.with_columns(model_id=pl.lit("m"), benchmark_id=pl.lit("b"), score=pl.lit(5.0),
                               score_raw=pl.lit("5"), source_id=pl.lit("s"), source_type=pl.lit("t"),
                               derived=pl.lit(False), raw_model_id=pl.lit("m"),
                               raw_benchmark_id=pl.lit("b"), row=pl.lit("1"),
                               retrieved_at=pl.lit(""), ingest_id=pl.lit("i"),
                               id_problem=pl.lit("contains x"))
    failures = validate_rows(ScoreCheck, frame)
    # the first failing check names the field; every reason is kept
    assert failures.rows() == [(0, "model_id", f"{CHECK_MESSAGES['clean_model_id'][1]}; "
                                               f"{CHECK_MESSAGES['known_scale'][1]}")]
