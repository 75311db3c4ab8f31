"""Versions that just work, as a user runs them: `ingest FILE --source ID` adds a version of a
saved source (label from --version or the file's date), a name that is no source is refused with
the list of ids, a first ingest is labelled, and ingest prints what the version changed."""

from __future__ import annotations

import json
import re
import shutil

import yaml
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.store.build import build
from benchpress.store.sources import load_configs
from tests.conftest import REPO, SHARED_DATA

AA = SHARED_DATA / "artificial-analysis"


def _ingest(home, *args):
    return CliRunner().invoke(main, ["ingest", *map(str, args), "--allow-rejects",
                                     "--home", str(home.root)])


def test_a_first_ingest_is_labelled_and_later_ones_are_versions(home):
    first = _ingest(home, AA / "llms_2026-04-10.json", "--id", "aa")
    assert first.exit_code == 0, first.output
    (config,) = load_configs(home.sources)
    assert config.version == "2026-04-10"  # the file's date, without --version
    second = _ingest(home, AA / "llms_2026-05-08.json", "--source", "aa")
    assert second.exit_code == 0, second.output
    (config,) = load_configs(home.sources)
    assert config.version == "2026-05-08" and [v["version"] for v in config.versions] == ["2026-04-10"]
    # what the version changed, by cause, on one line of stderr
    line = next(x for x in second.stderr.splitlines() if x.startswith("aa@2026-05-08 changed"))
    counts = {k: int(n) for k, n in re.findall(r"(\w+) (\d+)", line.split("changed", 1)[1])}
    assert counts["new_model"] == counts["added"] > 0 and counts["revised"] == counts["changed"] > 0
    assert "first_value" not in counts or counts["first_value"] < counts["added"]
    doc = json.loads(CliRunner().invoke(main, ["sql", "SELECT count(*) AS n FROM sources",
                                              "--format", "json", "--home", str(home.root)]).stdout)
    assert doc == [{"n": 2}]  # two versions of one source, never a second source


def test_an_unknown_source_name_is_refused_with_the_ids(home):
    assert _ingest(home, AA / "llms_2026-04-10.json", "--id", "artificial-analysis").exit_code == 0
    before = sorted(p.name for p in home.sources.iterdir())
    res = _ingest(home, AA / "llms_2026-05-08.json", "--source", "artificial")
    assert res.exit_code == 2
    (line,) = res.stderr.strip().splitlines()
    assert "'artificial' is not a source" in line and "artificial-analysis" in line
    assert "--id" in line and "Traceback" not in res.output
    assert sorted(p.name for p in home.sources.iterdir()) == before  # no new source


def test_a_version_without_a_date_is_refused_in_one_line(home, tmp_path):
    assert _ingest(home, AA / "llms_2026-04-10.json", "--id", "aa").exit_code == 0
    undated = tmp_path / "llms.json"
    doc = json.loads((AA / "llms_2026-05-08.json").read_text(encoding="utf-8"))
    undated.write_text(json.dumps({**doc, "meta": {}}), encoding="utf-8")
    res = _ingest(home, undated, "--source", "aa")
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert "carries no date" in line and "--version" in line
    ok = _ingest(home, undated, "--source", "aa", "--version", "2026-05-08")
    assert ok.exit_code == 0, ok.output
    saved = yaml.safe_load((home.sources / "aa.yaml").read_text())
    assert saved["version"] == "2026-05-08"


def test_the_docs_example_adds_a_later_version_of_the_repos_livebench(tmp_path):
    """The docs' `ingest <history folder> --source livebench-2026-01-08` (guide/versions.md)
    on a workspace holding the repo's LiveBench config as it stood before its last commits: the next commit
    is a new, newest version of it (not a 12th source), and every changed cell names its
    cause."""
    from benchpress.store.sources import config_versions, save_config, with_versions
    from tests.conftest import make_home

    home = make_home(tmp_path / "ws")
    shutil.copy(REPO / "sources" / "livebench-2026-01-08.yaml", home.sources)
    (config,) = load_configs(home.sources)
    known = [v for v in config_versions(config) if v.version < "2026-06-19"]
    save_config(home.sources, with_versions(config, known[-3:]))
    build(home, mirror=SHARED_DATA)
    guide = (REPO / "docs" / "guide" / "versions.md").read_text(encoding="utf-8")
    assert "2026-07-15T0900 --source livebench-2026-01-08" in guide
    assert "--source livebench --version" not in guide
    res = _ingest(home, SHARED_DATA / "livebench-history" / "2026-06-19T0954",
                  "--source", "livebench-2026-01-08", "--mirror", SHARED_DATA)
    assert res.exit_code == 0, res.output
    (config,) = load_configs(home.sources)
    assert config.version == "2026-06-19T0954" and len(config.versions) == 3
    assert config.published == "2026-06-19"  # dated, so the monthly snapshots place it
    changed = next(line for line in res.stderr.splitlines() if "changed cells" in line)
    assert "revised" in changed  # LiveBench's in-place corrections of that day
    wrong = _ingest(home, SHARED_DATA / "livebench-history" / "2026-06-17T0855",
                    "--source", "livebench", "--version", "2026-06-17T0855")
    assert wrong.exit_code == 2 and "did you mean livebench-2026-01-08" in wrong.stderr
    assert len(load_configs(home.sources)) == 1


def test_a_large_registry_is_not_read_twice_for_the_summary(home, monkeypatch):
    monkeypatch.setenv("BENCHPRESS_MAX_INGEST_DIFF_SCORES", str(100))
    res = _ingest(home, AA / "llms_2026-04-10.json", "--id", "aa")
    assert res.exit_code == 0 and "changed cells" not in res.stderr
    assert "benchpress diff" in res.stderr
