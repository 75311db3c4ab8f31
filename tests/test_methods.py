"""Benchmark versions and method changes (`store.methods`): a real Artificial Analysis snapshot
rewritten by the test into tmp_path so that version 2 re-bases the Intelligence Index (x0.67)
and marks some of its values estimated, while another source quotes old-scale values."""

from __future__ import annotations

import copy
import json

import polars as pl
import pytest

from benchpress.store.diff import diff_folders
from benchpress.store.ingest import ingest
from benchpress.store.methods import MethodChangeRule, method_starts
from benchpress.store.snapshot import create_snapshot
from benchpress.store.tables import read_table
from tests.conftest import SHARED_DATA
from tests.test_versions import _csv

# about 5 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=5)

AA = SHARED_DATA / "artificial-analysis"
INDEX = "artificial_analysis_intelligence_index"
NEW = "aa_intelligence_index@2026-05-22"
RATIO = 0.67


def _aa_id(name: str) -> str:
    from benchpress.adapters.artificial_analysis import parse_name
    from benchpress.validate.model_identity import canonical_model_id

    return canonical_model_id(parse_name(name)[0])


@pytest.fixture
def rebased(home, tmp_path):
    """AA 2026-05-08 (40 models with a measured index) as version 1; version 2 is the same models with
    the index x0.67, the first 5 of them marked estimated; `card` quotes those 5 on the old
    scale (a third party)."""
    doc = json.loads((AA / "llms_2026-05-08.json").read_text(encoding="utf-8"))
    v1 = {**doc, "models": [m for m in doc["models"]
                            if m["evaluations"].get(INDEX) is not None
                            and not m["evaluations"].get(f"{INDEX}_is_estimated")][:40]}
    v2 = copy.deepcopy(v1)
    for k, m in enumerate(v2["models"]):
        m["evaluations"][INDEX] = m["evaluations"][INDEX] * RATIO
        m["evaluations"][f"{INDEX}_is_estimated"] = k < 5
    path1, path2 = tmp_path / "llms_2026-05-08.json", tmp_path / "llms_2026-05-22.json"
    path1.write_text(json.dumps(v1), encoding="utf-8")
    path2.write_text(json.dumps(v2), encoding="utf-8")
    ingest(home, str(path1), source_id="aa")
    scores = read_table(home.registry, "scores").filter(
        pl.col("benchmark_id") == "aa_intelligence_index")
    old = dict(scores.select("model_id", "score").rows())
    first_five = {_aa_id(m["name"]) for m in v1["models"][:5]}
    estimated = [m for m in old if m in first_five or _aa_id(m) in first_five]
    assert len(old) == 40 and len(estimated) == 5
    card = _csv(tmp_path / "card.csv", [(m, "aa_intelligence_index", round(old[m] + 1, 3),
                                         "third_party", "") for m in estimated])
    ingest(home, str(card), adapter="releases-csv", source_id="card")
    first, _ = create_snapshot(home, tag="v1")
    ingest(home, str(path2), source="aa")
    second, _ = create_snapshot(home, tag="v2")
    return home, old, estimated, first.path, second.path


def test_the_rebased_index_is_a_new_benchmark_version(rebased):
    home, old, estimated, _, _ = rebased
    scores = read_table(home.registry, "scores")
    starts = method_starts(scores.with_columns(pl.col("benchmark_id").str.split("@").list.first()))
    assert starts.rows() == [("aa", "aa_intelligence_index", "2026-05-22")]
    new = scores.filter(pl.col("benchmark_id") == NEW)
    assert set(new["source_version"]) == {"2026-05-22"} and new.height == len(old)
    assert not scores.filter((pl.col("benchmark_id") == "aa_intelligence_index")
                             & (pl.col("source_version") == "2026-05-22")).height
    bench = read_table(home.registry, "benchmarks").filter(pl.col("benchmark_id") == NEW).to_dicts()
    assert len(bench) == 1 and bench[0]["scale"] == "index" and bench[0]["upper"] == 100
    assert "method of 2026-05-22" in bench[0]["name"]


def test_no_cell_mixes_two_scales(rebased):
    home, old, estimated, _, _ = rebased
    cells = read_table(home.registry, "cells")
    new = cells.filter(pl.col("benchmark_id") == NEW)
    # every new-method cell is AA's new value; the estimated ones make no cell at all (never
    # another source's old-scale value)
    assert set(new["source_id"]) == {"aa"} and set(new["source_version"]) == {"2026-05-22"}
    assert set(new["model_id"]) == set(old) - set(estimated)
    for mid, score in new.select("model_id", "score").rows():
        assert score == pytest.approx(old[mid] * RATIO, abs=1e-6)
    # the old method's column stays: AA's last old-method values (the card only where its
    # value wins), all on the old scale
    before = cells.filter(pl.col("benchmark_id") == "aa_intelligence_index")
    assert set(before["model_id"]) == set(old)
    for mid, score, src, version in before.select("model_id", "score", "source_id",
                                                  "source_version").rows():
        assert src == "aa" and version == "2026-05-08"
        assert score == pytest.approx(old[mid], abs=1e-6)


def test_diff_names_the_method_change(rebased):
    _, old, estimated, a, b = rebased
    cells = diff_folders(a, b).cells
    index = cells.filter(pl.col("benchmark_id").str.starts_with("aa_intelligence_index"))
    assert index.filter(pl.col("change") == "added")["cause"].unique().to_list() == ["method_change"]
    assert index.filter(pl.col("change") == "added").height == len(old) - len(estimated)
    assert "revised" not in index["cause"].to_list()
    assert index.filter(pl.col("change") != "added").height == 0  # the old column is untouched


def test_a_declared_method_change(home, tmp_path):
    """A config's `method_changes` starts a benchmark version even where values did not move."""
    import yaml

    from benchpress.store.build import build

    v1 = _csv(tmp_path / "b1.csv", [("m1", "gpqa_diamond", 50, "leaderboard", ""),
                                    ("m1", "hle", 20, "leaderboard", "")])
    v2 = _csv(tmp_path / "b2.csv", [("m1", "gpqa_diamond", 50, "leaderboard", ""),
                                    ("m1", "hle", 20, "leaderboard", "")])
    ingest(home, str(v1), adapter="releases-csv", source_id="board", version="2026-01-08")
    ingest(home, str(v2), adapter="releases-csv", source="board", version="2026-02-01")
    path = home.sources / "board.yaml"
    doc = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**doc, "method_changes": {"hle": ["2026-02-01"]}}))
    build(home)
    cells = read_table(home.registry, "cells").sort("benchmark_id")
    assert cells.select("benchmark_id", "score", "source_version").rows() == [
        ("gpqa_diamond", 50.0, "2026-02-01"), ("hle", 20.0, "2026-01-08"),
        ("hle@2026-02-01", 20.0, "2026-02-01")]


def test_real_snapshots_show_no_method_change(home):
    """The four shared AA snapshots revise values (most by float noise, an Elo column drifts
    by up to 1.6% of its spread) but change no method: no benchmark version appears."""
    for day in ("2026-04-10", "2026-04-24", "2026-05-08", "2026-05-22"):
        ingest(home, str(AA / f"llms_{day}.json"), source_id="aa")
    scores = read_table(home.registry, "scores")
    assert scores["source_version"].n_unique() == 4
    assert not scores["benchmark_id"].str.contains("@", literal=True).any()
    # and the rule has room: a tenth of the threshold would still find nothing
    assert method_starts(scores, rule=MethodChangeRule(min_move=0.02)).height == 0

