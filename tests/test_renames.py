"""Renames (`store.renames`): a real Artificial Analysis snapshot rewritten by the test so that
version 2 renames a model under the same AA id and renames a maker under the same creator id."""

from __future__ import annotations

import copy
import json

import polars as pl
import pytest

from benchpress.store.build import build
from benchpress.store.diff import diff_folders
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.sql import query
from benchpress.store.tables import read_table
from tests.conftest import SHARED_DATA

AA = SHARED_DATA / "artificial-analysis"


@pytest.fixture
def renamed(home, tmp_path):
    doc = json.loads((AA / "llms_2026-05-08.json").read_text(encoding="utf-8"))
    models = [m for m in doc["models"] if m["evaluations"].get("gpqa") is not None][:12]
    v1 = {**doc, "models": models}
    v2 = copy.deepcopy(v1)
    v2["models"][0]["name"] = v1["models"][0]["name"] + " Ultra"  # same AA id
    creator = v2["models"][1]["creator"]
    old_maker = creator["name"]
    for m in v2["models"]:  # the maker renamed, same creator id
        if m["creator"]["id"] == creator["id"]:
            m["creator"] = {**m["creator"], "name": "Renamed Labs"}
    p1, p2 = tmp_path / "llms_2026-05-08.json", tmp_path / "llms_2026-05-22.json"
    p1.write_text(json.dumps(v1), encoding="utf-8")
    p2.write_text(json.dumps(v2), encoding="utf-8")
    ingest(home, str(p1), source_id="aa")
    first, _ = create_snapshot(home, tag="v1")
    old_id = read_table(home.registry, "models")["model_id"][0]
    _, report = ingest(home, str(p2), source="aa")
    second, _ = create_snapshot(home, tag="v2")
    new_id = next(m for m in read_table(home.registry, "models")["model_id"]
                  if m.startswith(old_id) and m != old_id)
    return home, first.path, second.path, old_id, new_id, old_maker, report


def test_a_renamed_model_is_an_alias_not_a_new_model(renamed):
    home, _, _, old_id, new_id, _, _ = renamed
    models = read_table(home.registry, "models")["model_id"].to_list()
    assert new_id in models and old_id not in models
    aliases = read_table(home.registry, "aliases").filter(pl.col("origin") == "upstream id")
    assert aliases.select("kind", "alias", "canonical_id").rows() == [("model", old_id, new_id)]
    # one history: both versions' values under the new id
    history = query(home.registry, "SELECT DISTINCT version FROM score_history WHERE model_id = "
                                   "$m ORDER BY 1", {"m": new_id})
    assert history["version"].to_list() == ["2026-05-08", "2026-05-22"]


def test_diff_reports_the_rename(renamed):
    _, a, b, old_id, new_id, _, _ = renamed
    diff = diff_folders(a, b)
    cells = diff.cells
    old_cells = cells.filter(pl.col("model_id") == old_id)
    new_cells = cells.filter(pl.col("model_id") == new_id)
    assert old_cells.height > 0 and set(old_cells["change"]) == {"removed"}
    assert set(old_cells["cause"]) == {"renamed"} and set(new_cells["cause"]) == {"renamed"}
    assert set(new_cells["change"]) == {"added"}
    # the models table: one renamed row (old and new id and name), not added plus removed
    names = dict(read_table(a, "models").select("model_id", "name").rows())
    new_name = dict(read_table(b, "models").select("model_id", "name").rows())[new_id]
    assert diff.models.select("change", "model_id", "name", "old_model_id", "old_name").rows() \
        == [("renamed", new_id, new_name, old_id, names[old_id])]
    assert new_name == names[old_id] + " Ultra"
    assert diff.counts()["models"] == {"a": 12, "b": 12, "added": 0, "removed": 0,
                                             "renamed": 1, "merged": 0}
    assert diff.to_dict()["models"]["renamed"][0]["old_model_id"] == old_id
    assert "new_model" not in diff.causes()["added"]
    # one source, two versions: said apart
    assert diff.counts()["sources"] == {"a": 1, "b": 1, "added": 0, "removed": 0}
    assert diff.counts()["source_versions"] == {"a": 1, "b": 2, "added": 1, "removed": 0}


def test_a_renamed_maker_is_reported_and_merged_by_the_provider_table(renamed):
    home, _, _, _, _, old_maker, report = renamed
    (warning,) = [w for w in report.warnings if "renamed provider" in w]
    assert f"'{old_maker}' to 'Renamed Labs'" in warning and "provider_aliases.csv" in warning
    table = home.schemas / "provider_aliases.csv"
    table.write_text(table.read_text() + f"{old_maker},Renamed Labs,table,test\n")
    report = build(home)
    assert not [w for w in report.warnings if "renamed provider" in w]
    providers = set(read_table(home.registry, "models")["provider"])
    assert "Renamed Labs" in providers and old_maker not in providers


def test_the_shipped_provider_table_merges_a_real_rename(home):
    """AA's creator 'Microsoft Azure' became 'Microsoft' (2026-04-24 -> 05-08): one maker."""
    for day in ("2026-04-24", "2026-05-08"):
        _, report = ingest(home, str(AA / f"llms_{day}.json"), source_id="aa")
    assert not [w for w in report.warnings if "provider" in w]  # no maker under two names
    models = read_table(home.registry, "models")
    assert set(models.filter(pl.col("model_id").str.starts_with("phi-"))["provider"]) == {"Microsoft"}
    assert "Microsoft Azure" not in models["provider"].to_list()


def test_summary_lines_count_sources_and_versions_apart(renamed):
    """One source ingested in two versions: "sources 1 (2 versions)" in `summary`, and the
    snapshot list and `stats` count the two apart."""
    from click.testing import CliRunner

    from benchpress.cli import main

    home = renamed[0]
    go = lambda *a: CliRunner(env={"COLUMNS": "80"}).invoke(  # noqa: E731
        main, [*a, "--home", str(home.root)])
    summary = go("summary")
    assert summary.exit_code == 0, summary.stderr
    assert "sources 1 (2 versions)" in " ".join(summary.stdout.split())
    listed = pl.read_csv(go("snapshot", "list", "--format", "csv").stdout.encode())
    assert listed.select("tags", "sources", "versions").rows() == [("v1", 1, 1), ("v2", 1, 2)]
    stats = json.loads(go("stats", "--format", "json").stdout)
    assert (stats["n_sources"], stats["n_source_versions"]) == (1, 2)
    build = go("build")
    assert "sources 1 (2 versions)" in build.stderr


def test_the_diff_command_shows_a_rename_as_one_row(renamed):
    """At 80 columns: one row (shown a line per column), the new id and name beside the old."""
    from click.testing import CliRunner

    from benchpress.cli import main

    home, _, _, old_id, new_id, _, _ = renamed
    out = CliRunner(env={"COLUMNS": "80"}).invoke(
        main, ["diff", "v1", "v2", "--home", str(home.root)]).stdout
    table = out.split("models added, removed and renamed")[1].split("└")[0]
    rows = dict(tuple(c.strip() for c in line.strip("│").split("│"))
                for line in table.splitlines() if line.startswith("│"))
    assert (rows["change"], rows["model_id"], rows["old_model_id"]) == ("renamed", new_id, old_id)
    assert rows["name"] == rows["old_name"] + " Ultra"
