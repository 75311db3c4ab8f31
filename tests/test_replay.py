"""Replay on the real LiveBench history: a short plan of three dated versions (one of them
LiveBench's in-place corrections of 2026-06-19), rebuilt in the replay's own workspace, a
snapshot per date, and a rerun that reuses everything."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchpress.adapters.fetch import tree_sha256
from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.store.snapshot import list_snapshots
from benchpress.timeline.replay import load_plan, replay

pytestmark = pytest.mark.slow  # replays real history: seconds per test; `make test` runs them

VERSIONS = ("2026-06-17T0855", "2026-06-19T0954", "2026-07-01T0157")


def write_plan(path, shared_data, versions=VERSIONS, name="short", probes=2, method="default"):
    """A replay plan of LiveBench `versions`; `probes`: the probe set's size at each date
    (a probe search costs seconds a date: the tests that do not read the set choose 1);
    `method`: the predictor fitted at each date (a test of the replay's machinery rather than
    of the default's figures may take a cheaper one)."""
    lines = [f"name: {name}", f"fit: {{sources: [livebench], method: {method}, probes: {probes}}}",
             "versions:"]
    for v in versions:
        digest = tree_sha256(shared_data / "livebench-history" / v)
        lines.append(f'  - {{date: "{v[:10]}", source: livebench, version: "{v}", adapter: livebench,'
                     f' url: "https://livebench.ai/", mirror_path: "livebench-history/{v}",'
                     f" sha256: {digest}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, shared_data):
    """(home, plan, the timeline of its first replay, that replay's fits as `count_fits`).
    The plan fits kNN at each date: this module checks the replay's machinery (snapshots,
    causes, reuse, the CLI), which is the same for every method, and the default's probe
    searches cost 5x more (37 of the fixture's 40 CPU-seconds); tests/test_forecasts.py
    replays with the default."""
    from tests.conftest import fits_counted, make_home

    home = make_home(tmp_path_factory.mktemp("replay") / "ws")
    plan = write_plan(home.root / "plan.yaml", shared_data, method="knn")
    with pytest.MonkeyPatch.context() as mp:
        fits = fits_counted(mp)
        timeline = replay(home, plan, mirror=shared_data)
    return home, plan, timeline, fits


@pytest.mark.slow(seconds=10)  # the module's replay is made here (three dates)
def test_one_snapshot_per_date_in_its_own_workspace(replayed):
    home, _, timeline, _ = replayed
    assert [r["date"] for r in timeline.rows] == [v[:10] for v in VERSIONS]
    assert not home.registry.exists()  # the user's registry is never touched
    rhome = home.root / "replay" / "short"
    assert timeline.folder == rhome and (rhome / "timeline.json").is_file()
    from benchpress.home import Home

    tags = {t: s.id for s in list_snapshots(Home(rhome)) for t in s.tags}
    assert [tags[r["date"]] for r in timeline.rows] == [r["snapshot"] for r in timeline.rows]
    for row in timeline.rows:  # the forecast ledger sits beside each snapshot, not inside it
        assert (rhome / row["forecasts_file"]).is_file()
        assert row["forecasts_file"].startswith(f"forecasts/{row['snapshot']}/")
        assert row["var2"] is not None and len(row["probes"]) == 2
        assert row["heldout_medae"] > 0


def test_revisions_are_counted_as_revised(replayed):
    _, _, timeline, _ = replayed
    corrected = timeline.rows[1]  # 2026-06-19: LiveBench corrected values in place
    assert corrected["revised"] > 0 and set(corrected["causes"]) == {"revised"}
    assert timeline.rows[2]["new_models"] >= 1  # 2026-07-01 lists one more model


def test_a_rerun_reuses_snapshots_and_analyses(replayed, shared_data):
    home, plan, first, _ = replayed
    analysis = sorted((first.folder / "analysis").iterdir())
    stamps = {p: p.stat().st_mtime_ns for p in analysis}
    again = replay(home, plan, mirror=shared_data)
    assert again.built == 0 and first.built == 3
    assert again.rows == json.loads(json.dumps(first.rows, default=str))
    assert {p: p.stat().st_mtime_ns for p in analysis} == stamps  # nothing recomputed


def test_cli_prints_the_timeline_as_json(replayed, shared_data):
    home, plan, first, _ = replayed
    result = CliRunner().invoke(main, ["replay", str(plan), "--mirror", str(shared_data),
                                       "--home", str(home.root), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["snapshot"] for r in doc["timeline"]] == [r["snapshot"] for r in first.rows]
    assert doc["dates_built"] == 0


def test_a_bad_plan_is_one_line(home, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversions:\n  - {date: 2026-13, source: livebench}\n")
    with pytest.raises(BadInputError, match=r"versions\[0\]: field 'date'"):
        load_plan(bad, home)
    result = CliRunner().invoke(main, ["replay", str(bad), "--home", str(home.root)])
    assert result.exit_code == 1 and result.output.startswith("Error: ")


def test_the_shipped_plan_covers_the_whole_history(shared_data):
    """The shipped plan names the repository's sources, whose configs list every shared
    version (one description of each history): 125 dated versions on 55 dates."""
    from pathlib import Path

    from benchpress.home import Home

    repo = Path(__file__).resolve().parents[1]
    plan = load_plan(repo / "sources" / "replay" / "history.yaml", Home(repo))
    versioned = [c for _, c in plan.entries if c.version]
    assert len(versioned) == 120 and len(plan.entries) == 125 and len(plan.dates()) == 55
    for sid, folder in (("livebench-2026-01-08", "livebench-history"),
                        ("nyt-connections", "nyt-connections-history")):
        assert {c.mirror_path for c in versioned if c.id == sid} == {
            f"{folder}/{p.name}" for p in (shared_data / folder).iterdir()}
    # versions dated before the plan's start are placed there; the others at their own day
    assert min(plan.dates()) == "2026-01-08"
    assert ("2026-02-02", "2026-02-02") in {(d, c.version) for d, c in plan.entries
                                            if c.id == "nyt-connections"}
    for c in versioned[:3] + versioned[-4:]:  # the pins match the shared files
        target = shared_data / c.mirror_path
        from benchpress.digest import sha256_of

        assert (tree_sha256(target) if target.is_dir() else sha256_of(target)) == c.sha256


def test_a_plan_names_sources_the_home_has(home, tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: x\nsources: [nosuch]\n")
    with pytest.raises(BadInputError, match=r"field 'sources': no source config 'nosuch'"):
        load_plan(plan, home)
    plan.write_text("name: x\nsorces: [nosuch]\n")
    with pytest.raises(BadInputError, match=r"did you mean 'sources'"):
        load_plan(plan, home)


def test_a_replay_date_raises_drifts_alarms_by_drifts_own_rule():
    """One rule (issue 25): replay used to re-code drift's alarms and missed a fall of the
    two-factor variance whenever either date had no probe set."""
    from benchpress.predict.drift import DriftThresholds, alarm_rule
    from benchpress.timeline.replay import row_alarms

    cfg = DriftThresholds()
    fell = alarm_rule(cfg, var2=0.83, var2_change=0.83 - 0.95)
    assert fell == ["two-factor variance fell by 0.120 > 0.1"]
    assert row_alarms({"var2": 0.83, "probes": ["hle"]}, {"var2": 0.95, "probes": None},
                      cfg) == fell
    before, row = {"var2": 0.9, "probes": list("abcde")}, {"var2": 0.9, "probes": list("afghi")}
    assert row_alarms(row, before, cfg) == alarm_rule(cfg, var2=0.9, var2_change=0.0,
                                                      probes_changed=4) == ["4 probes changed > 2"]
    assert row["probes_changed"] == 4
    assert row_alarms({"var2": 0.95}, None, cfg) == []


def test_a_replay_fits_each_snapshot_once(replayed):
    """Its analysis and its forecasts share one fit of the snapshot (they used to fit twice)."""
    _, _, timeline, fits = replayed
    assert len(timeline.rows) == 3 and all(r["forecasts_file"] for r in timeline.rows)
    assert len(fits) == 3 and len(set(fits)) == 3  # one fit per snapshot
