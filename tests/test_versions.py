"""Source versions: a publisher's later copy is a version of the same source, `cells` takes the
newest, every version stays queryable, a revision is never a conflict, and `diff` names the
cause of each changed value. Small synthetic versions the tests write themselves, plus two
real LiveBench history folders."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.store.diff import diff_folders
from benchpress.store.ingest import infer_version, ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.sources import load_configs
from benchpress.store.sql import execute
from benchpress.store.tables import read_table

# about 7 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=7)

HEADER = ("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,reference_url,"
          "source_type,reported_setting,notes\n")


def _csv(path, rows):
    """rows: (model, benchmark, score, source_type, setting)."""
    lines = [f"{m},{m},Acme,2026-01-01,false,{b},{s},https://example.org/{m},{t},{st},"
             for m, b, s, t, st in rows]
    path.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def _sql(home, query):
    return execute(home.registry, query).frame


@pytest.fixture
def two_versions(home, tmp_path):
    """Source `board` in two versions: v2 revises m1/gpqa, adds m3; `cards` is another source."""
    v1 = _csv(tmp_path / "board-v1.csv", [("m1", "gpqa_diamond", 50, "leaderboard", ""),
                                          ("m2", "gpqa_diamond", 60, "leaderboard", "")])
    v2 = _csv(tmp_path / "board-v2.csv", [("m1", "gpqa_diamond", 55, "leaderboard", ""),
                                          ("m2", "gpqa_diamond", 60, "leaderboard", ""),
                                          ("m3", "gpqa_diamond", 70, "leaderboard", "")])
    ingest(home, str(v1), adapter="releases-csv", source_id="board", version="2026-01-08")
    create_snapshot(home, tag="v1")
    ingest(home, str(v2), adapter="releases-csv", source_id="board", version="2026-02-01")
    create_snapshot(home, tag="v2")
    return home


def test_cells_take_the_newest_version_and_history_keeps_both(two_versions):
    home = two_versions
    cells = read_table(home.registry, "cells").sort("model_id")
    assert cells["score"].to_list() == [55.0, 60.0, 70.0]
    assert set(cells["source_version"]) == {"2026-02-01"}
    scores = read_table(home.registry, "scores")
    assert sorted(scores["source_version"].unique().to_list()) == ["2026-01-08", "2026-02-01"]
    history = _sql(home, "SELECT version, score, revised FROM score_history "
                         "WHERE model_id = 'm1' ORDER BY version")
    assert history.rows() == [("2026-01-08", 50.0, False), ("2026-02-01", 55.0, True)]
    sources = read_table(home.registry, "sources")
    assert sources.height == 2 and set(sources["source_id"]) == {"board"}
    (config,) = load_configs(home.sources)
    assert config.version == "2026-02-01" and [v["version"] for v in config.versions] == ["2026-01-08"]


def test_a_revised_value_is_not_a_conflict_but_another_source_is(two_versions, tmp_path):
    home = two_versions
    assert _sql(home, "SELECT count(*) AS n FROM conflicts")["n"][0] == 0
    assert read_table(home.registry, "cells")["n_disagreeing"].sum() == 0
    cards = _csv(tmp_path / "cards.csv", [("m1", "gpqa_diamond", 58, "third_party", "")])
    ingest(home, str(cards), adapter="releases-csv", source_id="cards")
    conflicts = _sql(home, "SELECT other_score, resolved_score FROM conflicts")
    # the leaderboard's newest value (55) wins over the third party's 58; the old 50 is history
    assert conflicts.rows() == [(58.0, 55.0)]


def test_diff_names_each_cause(two_versions, tmp_path):
    home = two_versions
    by_tag = {t: s for s in (home.snapshots.iterdir()) if (s / "manifest.json").is_file()
              for t in json.loads((s / "manifest.json").read_text())["tags"]}
    cells = diff_folders(by_tag["v1"], by_tag["v2"]).cells
    causes = {(r["change"], r["model_id"]): r["cause"] for r in cells.to_dicts()}
    assert causes == {("changed", "m1"): "revised", ("added", "m3"): "new_model"}
    # an official figure from a new source takes m2's cell over the leaderboard: new_source
    blog = _csv(tmp_path / "blog.csv", [("m2", "gpqa_diamond", 62, "official_blog", "")])
    ingest(home, str(blog), adapter="releases-csv", source_id="blog")
    v3, _ = create_snapshot(home, tag="v3")
    cells = diff_folders(by_tag["v2"], v3.path).cells
    assert cells.filter(change="changed").select("model_id", "cause").rows() == [("m2", "new_source")]


def _two_sources_then_a_newer(home, tmp_path, setting_b: str):
    """Sources a and b (b newer, so it wins m1), then a republished later (a wins): the diff."""
    from benchpress.store.build import build

    a = _csv(tmp_path / "a.csv", [("m1", "gpqa_diamond", 50, "third_party", "")])
    b = _csv(tmp_path / "b.csv", [("m1", "gpqa_diamond", 52, "third_party", setting_b)])
    ingest(home, str(a), adapter="releases-csv", source_id="a")
    ingest(home, str(b), adapter="releases-csv", source_id="b")
    first, _ = create_snapshot(home)
    doc = yaml.safe_load((home.sources / "a.yaml").read_text())
    (home.sources / "a.yaml").write_text(yaml.safe_dump({**doc, "published": "2099-01-01"}))
    build(home)
    second, _ = create_snapshot(home)
    (row,) = diff_folders(first.path, second.path).cells.to_dicts()
    assert (row["source_id_a"], row["source_id_b"]) == ("b", "a")
    return row


def test_priority_cause(home, tmp_path):
    assert _two_sources_then_a_newer(home, tmp_path, "")["cause"] == "priority"


def test_setting_cause(home, tmp_path):
    # b measured the model thinking; a (the model's non-thinking default) wins now
    row = _two_sources_then_a_newer(home, tmp_path, '"{""mode"": ""thinking""}"')
    assert row["setting_changed"] and row["cause"] == "setting"


def test_ingest_version_needs_a_source_and_a_date_label(home, tmp_path):
    v1 = _csv(tmp_path / "v1.csv", [("m1", "gpqa_diamond", 50, "leaderboard", "")])
    with pytest.raises(BadInputError, match="--source"):
        ingest(home, str(v1), adapter="releases-csv", version="2026-01-08")
    with pytest.raises(BadInputError, match="date label"):
        ingest(home, str(v1), adapter="releases-csv", source_id="board", version="latest")
    with pytest.raises(BadInputError, match="a real date"):  # the shape of a date, no such day
        ingest(home, str(v1), adapter="releases-csv", source_id="board", version="2026-02-30")
    ingest(home, str(v1), adapter="releases-csv", source_id="board", version="2026-01-08")
    undated = _csv(tmp_path / "undated.csv", [("m1", "gpqa_diamond", 51, "leaderboard", "")])
    with pytest.raises(BadInputError, match="give --version"):
        ingest(home, str(undated), adapter="releases-csv", source_id="board")
    assert read_table(home.registry, "cells")["score"].to_list() == [50.0]  # nothing changed


def test_real_livebench_versions_inferred_from_their_folders(home, shared_data):
    hist = shared_data / "livebench-history"
    runner = CliRunner()
    first = runner.invoke(main, ["ingest", str(hist / "2026-06-17T0855"), "--id", "livebench",
                                 "--version", "2026-06-17T0855", "--home", str(home.root)])
    assert first.exit_code == 0, first.output
    # no --version: the folder's name is the version
    second = runner.invoke(main, ["ingest", str(hist / "2026-06-19T0954"), "--source", "livebench",
                                  "--home", str(home.root)])
    assert second.exit_code == 0, second.output
    assert infer_version(shared_data / "artificial-analysis" / "llms_2026-04-10.json") == "2026-04-10"
    revised = _sql(home, "SELECT count(*) AS n FROM score_history WHERE revised")["n"][0]
    assert revised > 0  # LiveBench corrected values in place on 2026-06-19
    assert _sql(home, "SELECT count(*) AS n FROM conflicts")["n"][0] == 0
    cells = read_table(home.registry, "cells")
    assert set(cells["source_version"]) == {"2026-06-19T0954"}
    newest = _sql(home, "SELECT count(*) AS n FROM latest_scores")["n"][0]
    assert newest == cells.height


def test_an_undated_aa_file_is_dated_by_its_fetch_time(shared_data, tmp_path):
    copy = tmp_path / "llms.json"
    copy.write_bytes((shared_data / "artificial-analysis" / "llms_2026-04-24.json").read_bytes())
    assert infer_version(copy) == "2026-04-24"  # meta.fetched_at
    assert infer_version(copy, "llms_2026-05-08.json") == "2026-05-08"  # the given name first
    (tmp_path / "plain.json").write_text("[]")
    assert infer_version(tmp_path / "plain.json") is None


def test_diff_json_counts_causes(two_versions):
    home = two_versions
    tags = {t: s for s in home.snapshots.iterdir() if (s / "manifest.json").is_file()
            for t in json.loads((s / "manifest.json").read_text())["tags"]}
    result = CliRunner().invoke(main, ["diff", "v1", "v2", "--format", "json",
                                       "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["causes"] == {"changed": {"revised": 1}, "added": {"new_model": 1}, "removed": {}}
    assert {r["cause"] for r in doc["cells"]["changed"]} == {"revised"}
    assert set(tags) == {"v1", "v2"}


def test_a_saved_source_is_never_replaced_by_other_content(home, tmp_path, shared_data):
    """An existing unversioned source (a config with a `published` date, like the repo's
    LiveBench) gains a dated input as a new version, its own copy kept as the older one;
    undated other content under its id is refused, and the same content again is a no-op."""
    v1 = _csv(tmp_path / "board.csv", [("m1", "gpqa_diamond", 50, "leaderboard", "")])
    ingest(home, str(v1), adapter="releases-csv", source_id="board")
    ingest(home, str(v1), adapter="releases-csv", source_id="board")  # same content: fine
    config = home.sources / "board.yaml"
    doc = yaml.safe_load(config.read_text())
    assert doc["version"]  # a first ingest is labelled like any version (here: today)
    doc = {k: v for k, v in doc.items() if k != "version"}  # unversioned, as the repo's configs
    config.write_text(yaml.safe_dump({**doc, "published": "2026-01-08"}))
    (saved,) = [c for c in load_configs(home.sources) if c.id == "board"]
    other = _csv(tmp_path / "other.csv", [("m1", "gpqa_diamond", 51, "leaderboard", "")])
    with pytest.raises(BadInputError, match="exists .* give --version"):
        ingest(home, str(other), adapter="releases-csv", source_id="board")
    dated = _csv(tmp_path / "board_2026-06-19.csv", [("m1", "gpqa_diamond", 52, "leaderboard", "")])
    ingest(home, str(dated), adapter="releases-csv", source_id="board")
    (now,) = [c for c in load_configs(home.sources) if c.id == "board"]
    assert now.version == "2026-06-19" and now.versions[0]["sha256"] == saved.sha256
    assert now.versions[0]["version"] == saved.published
    history = _sql(home, "SELECT version, score FROM score_history ORDER BY 1")
    assert history["score"].to_list() == [50.0, 52.0]
