"""What a row is: agent systems and submissions (`entry_kind`, `base_model_id`) through the
adapter columns, the pandera contract, the build, the SQL views, snapshots and the alias
suggestions; never merged into the cells of the model they run."""

from __future__ import annotations

import json

import polars as pl
import pytest

from benchpress.adapters.base import AdapterOutput
from benchpress.store.aliases import suggest_aliases
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.sql import query
from benchpress.store.tables import read_table
from benchpress.validate.contracts import load_contracts
from benchpress.validate.prepare import SourceInfo, prepare_source
from benchpress.validate.schemas import ENTRY_KINDS, Models
from tests import history_data as hd
from tests.conftest import REPO

pytestmark = pytest.mark.duration(seconds=12)

INFO = SourceInfo("t", "https://github.com/o/r/tree/abc/board", "2026-01-01", "ingest1",
                  cites_source=True)


def _prepared(models: list[dict], scores: list[dict]):
    out = AdapterOutput.from_rows(models, [], scores)
    return prepare_source(out, load_contracts(REPO / "schemas"), INFO)


def test_prepare_canonicalizes_the_base_model_and_defaults_the_kind():
    prepared = _prepared(
        [{"model_id": "Acme Agent v2", "name": "Acme Agent v2", "entry_kind": "agent",
          "base_model_id": "GPT-4.1 (2025-04-14)", "row": "r1"},
         {"model_id": "Bare Model", "name": "Bare Model", "row": "r2"}],
        [{"model_id": "Acme Agent v2", "benchmark_id": "swe_bench_lite", "score_raw": "40.1",
          "reference_url": "board.json", "row": "s1"}])
    models = {r["model_id"]: r for r in prepared.models.iter_rows(named=True)}
    # the alias table's id for gpt-4.1-2025-04-14
    assert models["acme-agent-v2"]["base_model_id"] == "gpt-4.1"
    assert models["acme-agent-v2"]["entry_kind"] == "agent"
    assert models["bare-model"]["entry_kind"] == "model" and models["bare-model"]["base_model_id"] is None
    # a member of the folder is cited at the source's address (tree -> blob)
    assert prepared.scores["reference_url"].to_list() == [
        "https://github.com/o/r/blob/abc/board/board.json"]


def test_an_unknown_kind_and_an_entry_running_itself_are_quarantined():
    prepared = _prepared(
        [{"model_id": "x1", "name": "x1", "entry_kind": "robot", "row": "r1"},
         {"model_id": "x2", "name": "x2", "entry_kind": "agent", "base_model_id": "x2", "row": "r2"}],
        [])
    assert prepared.models.height == 0
    reasons = dict(zip(prepared.quarantine["row"], prepared.quarantine["reason"]))
    assert "isin" in reasons["r1"] and "robot" in reasons["r1"]
    assert reasons["r2"] == "an entry cannot run itself: base_model_id is its own id"
    assert set(ENTRY_KINDS) == {"model", "agent", "submission"}


def test_a_registry_built_before_entry_kinds_still_meets_the_contract():
    old = pl.DataFrame({"model_id": ["m"], "name": ["m"], "provider": [None], "release_date": [None],
                        "is_reasoning": [None], "open_weights": [None], "setting": [None],
                        "family": [None], "version_date": [None], "effort": [None],
                        "source_id": ["s"], "ordinal": [0]},
                       schema_overrides={c: pl.String for c in ("provider", "release_date", "setting",
                                                                "family", "version_date", "effort")}
                       | {"is_reasoning": pl.Boolean, "open_weights": pl.Boolean})
    Models.validate(old, lazy=True)


@pytest.fixture(scope="module")
def with_entries(built_2026_05, shared_data):
    """The 2026-05 matrix plus tau2-bench's first version (submissions of the matrix's models),
    SWE-bench's newest (agents) and LMArena's first (bare models under other names)."""
    home = built_2026_05
    ingest(home, str(hd.folder("tau2-bench") / "2025-10-03"), source_id="tau2-bench")
    ingest(home, str(hd.folder("swe-bench") / "2025-12-10"), source_id="swe-bench")
    ingest(home, str(hd.folder("lmarena") / "2024-06-19"), source_id="lmarena")
    return home


def test_entries_keep_their_own_cells(with_entries):
    cells = read_table(with_entries.registry, "cells")
    models = read_table(with_entries.registry, "models")
    gpt41 = models.filter(pl.col("model_id") == "gpt-4-1-openai-2024-06-20").row(0, named=True)
    assert gpt41["entry_kind"] == "submission" and gpt41["base_model_id"] == "gpt-4.1"
    # the bare model's cells come from the matrix only; the submission's are its own
    assert set(cells.filter(pl.col("model_id") == "gpt-4.1")["source_id"]) == {"benchpress-2026-05"}
    mine = cells.filter(pl.col("model_id") == "gpt-4-1-openai-2024-06-20")
    assert set(mine["source_id"]) == {"tau2-bench"} and mine.height >= 3
    kinds = dict(models.group_by("entry_kind").len().iter_rows())
    assert kinds["agent"] > 100 and kinds["submission"] == 11 and kinds["model"] > 80


def test_sql_views_link_entries_to_their_model(with_entries):
    linked = query(with_entries.registry,
                   "SELECT model_id, base_model_id, base_model_name, base_in_registry "
                   "FROM entries WHERE model_id = 'gpt-4-1-openai-2024-06-20'")
    assert linked.to_dicts() == [{"model_id": "gpt-4-1-openai-2024-06-20", "base_model_id": "gpt-4.1",
                                  "base_model_name": "GPT-4.1", "base_in_registry": True}]
    side = query(with_entries.registry,
                 "SELECT entry_id, benchmark_id, entry_score, base_score, difference FROM "
                 "entry_scores WHERE base_score IS NOT NULL ORDER BY entry_id, benchmark_id")
    assert side.height > 0
    assert (side["entry_score"] - side["base_score"] - side["difference"]).abs().max() < 1e-9
    kinds = query(with_entries.registry,
                  "SELECT entry_kind, count(*) AS n FROM models GROUP BY 1 ORDER BY 1")
    assert kinds["entry_kind"].to_list() == ["agent", "model", "submission"]


def test_snapshots_keep_the_kinds(with_entries):
    snap, _ = create_snapshot(with_entries, tag="entries")
    models = read_table(snap.path, "models")
    assert {"entry_kind", "base_model_id"} <= set(models.columns)
    assert models.filter(pl.col("entry_kind") == "agent").height > 100


def test_alias_suggestions_never_propose_an_entry(with_entries):
    table = lambda n: read_table(with_entries.registry, n)  # noqa: E731
    found = suggest_aliases(table("models"), table("cells"), table("scores"), min_score=60)
    entries = set(table("models").filter(pl.col("entry_kind") != "model")["model_id"])
    assert found.height > 0
    assert not (set(found["alias"]) | set(found["canonical_id"])) & entries
    # read as bare models, some entries would be proposed: the kind is what keeps them out
    as_bare = table("models").with_columns(pl.lit("model").alias("entry_kind"))
    unfiltered = suggest_aliases(as_bare, table("cells"), table("scores"), min_score=60)
    assert (set(unfiltered["alias"]) | set(unfiltered["canonical_id"])) & entries


def test_entry_settings_say_how_it_ran(with_entries):
    models = read_table(with_entries.registry, "models")
    gpt5 = models.filter(pl.col("model_id") == "gpt-5-sierra-2025-08-09").row(0, named=True)
    assert json.loads(gpt5["setting"])["user_simulator"] == "gpt-4.1-2025-04-14"
