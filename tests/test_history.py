"""The registry through time (`store.history`) on real histories: the four Artificial
Analysis snapshots and three NYT Connections copies as versions of their sources, beside
hand-entered releases, frozen month by month. Each month's snapshot is the registry a
from-scratch build of the versions known then makes; a rerun reuses every month; two
workspaces make the same bytes; a later version ingests as the newest month, every change
with a cause."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import RegistryError
from benchpress.home import Home
from benchpress.store.build import build
from benchpress.store.diff import CAUSES, diff_folders
from benchpress.store.history import is_month_tag, plan_months, snapshot_months
from benchpress.store.snapshot import create_snapshot, get_snapshot, list_snapshots
from benchpress.store.sources import config_versions, load_configs, save_config, with_versions
from tests.conftest import REPO, SHARED_DATA, make_home

# builds of real histories, several workspaces: `make test` runs them, test-quick the plan's
pytestmark = pytest.mark.slow(seconds=15)

NYT = ("2026-03-05", "2026-04-03", "2026-05-19")  # the copies kept of NYT Connections' 65
RELEASE = ("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,reference_url,"
           "source_type,reported_setting,notes\n"
           "acme-2,Acme 2,Acme,2026-11-01,false,gpqa_diamond,71.2,"
           "https://acme.example/blog/acme-2,official_blog,,\n")


def _workspace(root, nyt=NYT) -> Home:
    """AA's four versions, the NYT copies `nyt`, and a hand-entered release, built."""
    home = make_home(root)
    for sid in ("artificial-analysis", "nyt-connections", "releases"):
        shutil.copy(REPO / "sources" / f"{sid}.yaml", home.sources)
    (home.sources / "releases.csv").write_text(RELEASE)
    config = next(c for c in load_configs(home.sources) if c.id == "nyt-connections")
    save_config(home.sources, with_versions(config, [v for v in config_versions(config)
                                                      if v.version in nyt]))
    build(home, mirror=SHARED_DATA)
    return home


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    """(home, the months `snapshot_months` froze) of one workspace."""
    home = _workspace(tmp_path_factory.mktemp("history") / "ws")
    return home, snapshot_months(home, mirror=SHARED_DATA)


def test_months_run_from_the_oldest_version_to_the_newest(frozen):
    home, done = frozen
    months = plan_months(load_configs(home.sources))
    assert [m.month for m in months] == ["2026-03", "2026-04", "2026-05"]
    assert [m.month for m in done] == ["2026-03", "2026-04", "2026-05"]
    march, april, may = months
    assert {c.id for c in march.configs} == {"nyt-connections"}
    assert march.added == ["nyt-connections@2026-03-05"] and march.day == "2026-03-05"
    aa = next(c for c in april.configs if c.id == "artificial-analysis")
    assert [v.version for v in config_versions(aa)] == ["2026-04-10", "2026-04-24"]
    # the hand-entered releases carry no date: they describe the present, the newest month
    assert "releases" not in {c.id for c in april.configs}
    assert "releases" in may.added and may.day == "2026-05-22"


def test_each_month_is_what_a_build_of_the_versions_known_then_makes(frozen, tmp_path):
    home, done = frozen
    for month, made in zip(plan_months(load_configs(home.sources)), done):
        alone = make_home(tmp_path / month.month)
        for config in month.configs:
            save_config(alone.sources, config)
        if any(c.id == "releases" for c in month.configs):
            shutil.copy(home.sources / "releases.csv", alone.sources)
        build(alone, mirror=SHARED_DATA)
        snap, _ = create_snapshot(alone)
        assert snap.id == made.snapshot.id, month.month


def test_snapshots_are_tagged_by_month_and_dated_by_their_data(frozen):
    home, done = frozen
    for m in done:
        assert m.snapshot.tags == [m.month] and is_month_tag(m.month)
        assert datetime.fromisoformat(m.snapshot.created_at) == \
            datetime.fromisoformat(m.day).replace(tzinfo=timezone.utc)
    assert get_snapshot(home, "latest").id == done[-1].snapshot.id
    assert get_snapshot(home, "2026-04").id == done[1].snapshot.id
    # the newest month is the registry itself
    assert create_snapshot(home)[0].id == done[-1].snapshot.id


def test_a_rerun_reuses_every_month(frozen):
    home, done = frozen
    before = _tree(home.snapshots)
    again = snapshot_months(home, mirror=SHARED_DATA)
    assert [m.snapshot.id for m in again] == [m.snapshot.id for m in done]
    assert not any(m.created or m.assembled for m in again)
    assert _tree(home.snapshots) == before


def test_two_workspaces_make_the_same_bytes(frozen, tmp_path):
    home, done = frozen
    other = _workspace(tmp_path / "other")
    snapshot_months(other, mirror=SHARED_DATA)
    assert _tree(other.snapshots) == _tree(home.snapshots)


def test_a_later_version_is_the_newest_month_with_a_cause_for_every_change(tmp_path):
    home = _workspace(tmp_path / "ws", nyt=NYT[:2])
    first = snapshot_months(home, mirror=SHARED_DATA)
    assert [m.month for m in first] == ["2026-03", "2026-04", "2026-05"]
    res = CliRunner().invoke(main, ["ingest", str(SHARED_DATA / "nyt-connections-history" / NYT[2]),
                                    "--source", "nyt-connections", "--home", str(home.root),
                                    "--mirror", str(SHARED_DATA)])
    assert res.exit_code == 0, res.output
    nyt = next(c for c in load_configs(home.sources) if c.id == "nyt-connections")
    assert nyt.version == NYT[2] and nyt.published == NYT[2]
    again = snapshot_months(home, mirror=SHARED_DATA)
    # earlier months are reused; May is made again with the new version, and its tag moves
    assert [m.snapshot.id for m in again[:2]] == [m.snapshot.id for m in first[:2]]
    assert again[2].created and again[2].snapshot.id != first[2].snapshot.id
    assert get_snapshot(home, "2026-05").id == again[2].snapshot.id
    assert "2026-05" not in get_snapshot(home, first[2].snapshot.id).tags
    cells = diff_folders(again[1].snapshot.path, again[2].snapshot.path).cells
    assert cells.height > 0 and cells["cause"].null_count() == 0
    for change, cause in cells.select("change", "cause").unique().rows():
        assert cause in CAUSES[change]
    nyt_cells = cells.filter(cells["benchmark_id"].str.starts_with("nyt_connections"))
    assert nyt_cells.height > 0  # the new copy's values came in


def test_a_registry_built_from_other_sources_is_refused(tmp_path):
    home = _workspace(tmp_path / "ws")
    config = next(c for c in load_configs(home.sources) if c.id == "nyt-connections")
    save_config(home.sources, with_versions(config, config_versions(config)[:2]))
    with pytest.raises(RegistryError, match="built from other sources.*benchpress build"):
        snapshot_months(home, mirror=SHARED_DATA)
    assert list_snapshots(home) == []


def test_cli_says_a_line_per_month(tmp_path):
    home = _workspace(tmp_path / "ws")
    res = CliRunner().invoke(main, ["snapshot", "create", "--monthly", "--home", str(home.root),
                                    "--mirror", str(SHARED_DATA)])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if line[:8] in
             ("2026-03 ", "2026-04 ", "2026-05 ")]
    assert len(lines) == 3 and "3 version(s) added" in lines[1]
    assert res.stdout.strip() == get_snapshot(home, "latest").id
    bad = CliRunner().invoke(main, ["snapshot", "create", "--monthly", "--tag", "x",
                                    "--home", str(home.root)])
    assert bad.exit_code == 2 and "--monthly" in bad.stderr


def test_undated_sources_alone_make_one_snapshot(tmp_path):
    home = make_home(tmp_path / "ws")
    shutil.copy(REPO / "sources" / "releases.yaml", home.sources)
    (home.sources / "releases.csv").write_text(RELEASE)
    build(home)
    (only,) = snapshot_months(home)
    assert only.month == "" and only.snapshot.tags == []
    assert replace(only, snapshot=None).added == ["releases"]


def test_drift_and_the_ledger_follow_the_months_that_hold_their_sources(frozen):
    """`drift --monthly` and `forecasts score --monthly` on AA: April and May (March holds
    only NYT Connections); the ledger's pair is `forecasts score --from --to`'s answer."""
    import json

    home, _ = frozen
    h = ["--home", str(home.root), "--sources", "artificial-analysis"]
    drift = CliRunner().invoke(main, ["drift", "--monthly", *h, "--method", "als4",
                                      "--probe-method", "als4", "--n-boot", "2", "--max-rank",
                                      "2", "--probes-k", "1", "--probe-max-models", "20",
                                      "--format", "json"])
    assert drift.exit_code == 0, drift.output
    doc = json.loads(drift.stdout)
    assert [s["label"] for s in doc["snapshots"]] == ["2026-04", "2026-05"]
    assert [(t["from_label"], t["to_label"]) for t in doc["transitions"]] == [("2026-04", "2026-05")]
    months = CliRunner().invoke(main, ["forecasts", "score", "--monthly", *h, "--method", "als4",
                                       "--format", "json"])
    assert months.exit_code == 0, months.output
    ledger = json.loads(months.stdout)
    assert ledger["months"] == ["2026-04", "2026-05"] and ledger["n_pairs"] == 1
    pair = CliRunner().invoke(main, ["forecasts", "score", "--from", "2026-04", "--to", "2026-05",
                                     *h, "--method", "als4", "--no-heldout", "--format", "json"])
    assert pair.exit_code == 0, pair.output
    one = json.loads(pair.stdout)
    assert ledger["per_pair"]["2026-04>2026-05"]["n_cells"] == one["n_cells"] == ledger["n_cells"]
    assert ledger["per_pair"]["2026-04>2026-05"]["medae"] == one["medae"] == ledger["medae"]
    assert one["n_cells"] > 0
    none = CliRunner().invoke(main, ["drift", "--monthly", "--home", str(home.root),
                                     "--sources", "nosuch"])
    # one line naming the sources the newest month holds, each once
    assert none.exit_code == 2 and none.stderr == (
        "Error: --sources: no source matches 'nosuch'; known: releases, artificial-analysis, "
        "nyt-connections\n")
