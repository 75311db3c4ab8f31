"""The cross-source identity report (`store.identity`, `benchpress identity`): counts of models
by number of sources recomputed here from the scores table, entries counted for the model they
run, suggestions that join sources, and the command's table (80 columns), CSV and JSON."""

from __future__ import annotations

import json

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.store.identity import BUCKETS, identity_report
from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests import history_data as hd
from tests.conftest import make_home

pytestmark = pytest.mark.duration(seconds=15)


@pytest.fixture(scope="module")
def registry(built_2026_05, shared_data):
    """The 2026-05 matrix, LMArena's 2025-08-04 boards, tau2-bench's first version."""
    ingest(built_2026_05, str(hd.folder("lmarena") / "2025-08-04"), source_id="lmarena")
    ingest(built_2026_05, str(hd.folder("tau2-bench") / "2025-10-03"), source_id="tau2-bench")
    return built_2026_05


@pytest.fixture(scope="module")
def report(registry):
    table = lambda n: read_table(registry.registry, n)  # noqa: E731
    return identity_report(table("models"), table("cells"), table("scores"), limit=50)


def test_counts_match_a_recount_of_the_scores(registry, report):
    scores = read_table(registry.registry, "scores")
    models = read_table(registry.registry, "models")
    bare = models.filter(pl.col("entry_kind") == "model")["model_id"]
    per = (scores.filter(pl.col("model_id").is_in(bare.implode()))
           .group_by("model_id").agg(pl.col("source_id").n_unique().alias("n")))
    recount = {b: per.filter((pl.col("n") >= 5) if b == "5+" else (pl.col("n") == int(b))).height
               for b in BUCKETS}
    assert dict(zip(report.by_sources["sources"], report.by_sources["models"])) == recount
    assert report.n_models == per.height
    assert recount["2"] > 20  # the matrix's models that LMArena names the same way


def test_entries_count_for_the_model_they_run(registry, report):
    # gpt-4.1 is in the matrix and LMArena; a tau2-bench submission runs it
    scores = read_table(registry.registry, "scores")
    own = set(scores.filter(pl.col("model_id") == "gpt-4.1")["source_id"])
    assert own == {"benchpress-2026-05", "lmarena"}
    with_entries = report.by_sources["with_entries"].to_list()
    models = report.by_sources["models"].to_list()
    assert with_entries[2] > models[2]  # some models reach 3 sources through submissions
    assert sum(with_entries) == sum(models)  # every model the entries run has scores of its own


def test_suggestions_join_sources_and_never_name_an_entry(registry, report):
    entries = set(read_table(registry.registry, "models")
                  .filter(pl.col("entry_kind") != "model")["model_id"])
    found = report.suggestions
    assert found.height > 0
    assert (found["sources_joined"] > found["sources_now"]).all()
    assert not (set(found["alias"]) | set(found["canonical_id"])) & entries
    # the same parsed family comes first
    first_fuzzy = found["match"].to_list().index("fuzzy") if "fuzzy" in found["match"] else found.height
    assert set(found["match"][:first_fuzzy]) <= {"identity"}
    assert sum(report.by_sources["if_accepted"]) <= sum(report.by_sources["with_entries"])


def test_models_the_entries_run_but_the_registry_lacks(report):
    unlinked = report.unlinked
    assert "kimi-k2" not in set(unlinked["base_model_id"])  # the matrix has it
    assert set(unlinked.columns) == {"base_model_id", "entries", "candidate", "similarity", "match"}


def run(home, *args, columns="80"):
    return CliRunner(env={"COLUMNS": columns}).invoke(
        main, ["identity", *args, "--home", str(home.root)])


def test_command_table_csv_and_json(registry, report):
    table = run(registry)
    assert table.exit_code == 0, table.output
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    assert f"{report.n_models:,} models by number of sources" in " ".join(table.stdout.split())
    for line in table.stdout.splitlines():
        if line.startswith("│ 5+"):
            assert line.split("│")[2].strip() == str(report.by_sources["models"][4])
    csv = run(registry, "--format", "csv")
    assert csv.stdout.splitlines()[0] == "sources,models,with_entries,if_accepted"
    assert len(csv.stdout.splitlines()) == 1 + len(BUCKETS)
    doc = json.loads(run(registry, "--format", "json", "--limit", "3").stdout)
    assert doc["n_models"] == report.n_models and len(doc["suggestions"]) <= 3
    assert [b["sources"] for b in doc["by_sources"]] == list(BUCKETS)


def test_command_without_a_registry_is_one_line(tmp_path):
    home = make_home(tmp_path / "ws")
    result = run(home)
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1
