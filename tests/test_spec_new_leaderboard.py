"""A leaderboard the project has never seen, added by a spec file alone: the test writes the
spec into a fresh workspace's `sources/specs/`, three dated copies of the leaderboard's README
(a markdown table under a heading, among other tables) with the `VERSIONS.csv` a mirror
keeps, and replays the history with `benchpress ingest` in date order. No Python is written
for the leaderboard: its values land parsed, cited to the upstream README at each commit,
each copy a version of one source, revisions named as revisions and the change of method the
spec declares as a new benchmark version."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.store.sources import load_configs
from benchpress.store.tables import read_table

SPEC = """\
name: acme-arena
title: Acme Arena
description: A made-up leaderboard, written by this test.
detect:
  - {pattern: "^# Acme Arena"}
model:
  column: Model
  settings_in_name: true
tables:
  - header: [Model, Hallucination]
    heading: Current
    benchmarks:
      - {id: acme_hallucination, column: Hallucination, name: Acme hallucination rate,
         unit: "%", scale: percent, direction: lower}
      - {id: acme_rating, column: [Rating, μ], name: Acme arena rating, unit: TrueSkill mu,
         scale: trueskill, direction: higher}
      - {id: acme_words, column: Words, name: Acme answer length, unit: words, scale: words,
         direction: none}
regimes:
  - {from: 2026-03-01, name: harder documents, benchmarks: [acme_hallucination]}
"""

README = """\
# Acme Arena

Our models, judged.

## Older board

|Model|Hallucination|
|---|---|
|Ancient-1|55.0 %|

## Current leaderboard

Last updated on {day}.

|Rank|Model|Hallucination|Rating|Words|
|---:|---|---:|---:|---:|
{rows}

## Notes

|Term|Meaning|
|---|---|
|Rating|TrueSkill mu|
"""

# day -> [(model, hallucination, rating, words)]
HISTORY = {
    "2026-01-05": [("Acme-1 (high reasoning)", "1.8 %", "25.10", "91.5"),
                   ("Bolt-2", "3.2 %", "22.00", "120.0"),
                   ("**Comet-3**", "4.0 %", "20.40", "-")],
    "2026-02-02": [("Acme-1 (high reasoning)", "1.7 %", "25.30", "91.5"),
                   ("Bolt-2", "3.2 %", "21.80", "120.0"),
                   ("**Comet-3**", "4.0 %", "20.40", "77.0"),
                   ("[Delta-4](https://example.org/delta)", "2.5%", "23.90", "101.2")],
    "2026-03-01": [("Acme-1 (high reasoning)", "3.9 %", "25.40", "92.0"),
                   ("Bolt-2", "6.6 %", "21.70", "118.0"),
                   ("**Comet-3**", "8.1 %", "20.50", "77.0"),
                   ("[Delta-4](https://example.org/delta)", "5.0%", "23.80", "101.0")],
}
COMMITS = {day: f"{k + 1:x}" * 40 for k, day in enumerate(HISTORY)}


@pytest.fixture
def mirror(tmp_path):
    """The leaderboard's history as a mirror keeps it: dated folders and VERSIONS.csv."""
    root = tmp_path / "acme-arena-history"
    lines = ["date,upstream_repo,commit,commit_time,paths,n_files,bytes,subject"]
    for day, rows in HISTORY.items():
        table = "\n".join(f"|{k + 1}|{m}|{h}|{r}|{w}|" for k, (m, h, r, w) in enumerate(rows))
        (root / day).mkdir(parents=True)
        (root / day / "README.md").write_text(README.format(day=day, rows=table),
                                              encoding="utf-8")
        lines.append(f"{day},acme/arena,{COMMITS[day]},{day}T10:00:00Z,README.md,1,1,update")
    (root / "VERSIONS.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _cli(home, *args):
    return CliRunner().invoke(main, [*map(str, args), "--home", str(home.root)])


def _diff(home, a, b):
    res = _cli(home, "diff", a, b, "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    return {(change, c["model_id"], c["benchmark_id"]): c["cause"]
            for change in ("added", "changed", "removed") for c in doc["cells"][change]}


def test_a_spec_file_alone_adds_a_leaderboard_with_its_history(home, mirror):
    home.specs.mkdir(parents=True)
    (home.specs / "acme-arena.yaml").write_text(SPEC, encoding="utf-8")
    for day in HISTORY:  # the history replayed: each copy ingested in date order
        res = _cli(home, "ingest", mirror / day / "README.md")
        assert res.exit_code == 0, res.output
        assert res.stdout.strip().splitlines()[-1] == "acme-arena"
        assert _cli(home, "snapshot", "create", "--tag", day).exit_code == 0

    # one source, three versions, each citing the upstream README at its commit
    (config,) = load_configs(home.sources)
    assert (config.id, config.adapter, config.version) == ("acme-arena", "acme-arena", "2026-03-01")
    assert [v["version"] for v in config.versions] == ["2026-01-05", "2026-02-02"]
    scores = read_table(home.registry, "scores")
    cited = dict(scores.select("source_version", "reference_url").unique().rows())
    assert cited == {day: f"https://github.com/acme/arena/blob/{COMMITS[day]}/README.md"
                     for day in HISTORY}

    # values parsed as written ("1.8 %", "2.5%"), the other tables left alone, "-" not a value
    first = scores.filter(pl.col("source_version") == "2026-01-05")
    got = {(m, b): s for m, b, s in first.select("model_id", "benchmark_id", "score").rows()}
    assert got == {("acme-1-high", "acme_hallucination"): 1.8, ("acme-1-high", "acme_rating"): 25.1,
                   ("acme-1-high", "acme_words"): 91.5, ("bolt-2", "acme_hallucination"): 3.2,
                   ("bolt-2", "acme_rating"): 22.0, ("bolt-2", "acme_words"): 120.0,
                   ("comet-3", "acme_hallucination"): 4.0, ("comet-3", "acme_rating"): 20.4}
    models = {r["model_id"]: r for r in read_table(home.registry, "models").to_dicts()}
    assert set(models) == {"acme-1-high", "bolt-2", "comet-3", "delta-4"}  # no "ancient-1"
    assert models["acme-1-high"]["name"] == "Acme-1 (high reasoning)"
    assert json.loads(models["acme-1-high"]["setting"]) == {"effort": "high", "reasoning": True}

    # the declared scales, units and directions; the regime is a benchmark version
    bench = {r["benchmark_id"]: r for r in read_table(home.registry, "benchmarks").to_dicts()}
    assert set(bench) == {"acme_hallucination", "acme_rating", "acme_words",
                          "acme_hallucination@2026-03-01"}
    assert [bench["acme_hallucination"][k] for k in ("scale", "unit", "higher_is_better")] == \
        ["percent", "%", False]
    assert [bench["acme_rating"][k] for k in ("scale", "unit", "higher_is_better")] == \
        ["trueskill", "TrueSkill mu", True]
    assert bench["acme_words"]["higher_is_better"] is None
    assert bench["acme_hallucination@2026-03-01"]["name"] == \
        "Acme hallucination rate (harder documents, from 2026-03-01)"

    # a revision is a revision; a new model is new
    second = _diff(home, "2026-01-05", "2026-02-02")
    assert second[("changed", "acme-1-high", "acme_hallucination")] == "revised"
    assert second[("added", "delta-4", "acme_hallucination")] == "new_model"
    assert second[("added", "comet-3", "acme_words")] == "first_value"
    # the change of method: new cells of the new benchmark version, no revision of the old
    third = _diff(home, "2026-02-02", "2026-03-01")
    halluc = {k: v for k, v in third.items() if k[2].startswith("acme_hallucination")}
    assert set(halluc.values()) == {"method_change"} and len(halluc) == 4
    assert all(k[0] == "added" and k[2] == "acme_hallucination@2026-03-01" for k in halluc)
    assert third[("changed", "bolt-2", "acme_rating")] == "revised"
    cells = read_table(home.registry, "cells")
    kept = dict(cells.filter(pl.col("benchmark_id") == "acme_hallucination")
                .select("model_id", "score").rows())
    assert kept == {"acme-1-high": 1.7, "bolt-2": 3.2, "comet-3": 4.0, "delta-4": 2.5}


def test_adapter_forces_a_spec_on_a_file_it_would_not_recognise(home, tmp_path):
    home.specs.mkdir(parents=True)
    (home.specs / "acme-arena.yaml").write_text(SPEC, encoding="utf-8")
    renamed = tmp_path / "board.md"
    rows = "|1|Bolt-2|3.2 %|22.0|120|"
    renamed.write_text(README.format(day="x", rows=rows).replace("# Acme Arena", "# Board"),
                       encoding="utf-8")
    res = _cli(home, "ingest", renamed, "--source-url", "https://example.org/board.md")
    assert res.exit_code in (0, 3) and "acme-arena" not in res.stdout  # a model card, unforced
    res = _cli(home, "ingest", renamed, "--adapter", "acme-arena", "--id", "board",
               "--version", "2026-01-10", "--source-url", "https://example.org/board.md")
    assert res.exit_code == 0, res.output
    (config,) = [c for c in load_configs(home.sources) if c.id == "board"]
    assert config.adapter == "acme-arena"
    scores = read_table(home.registry, "scores").filter(pl.col("source_id") == "board")
    # labelled before the regime's start: the first method's benchmark
    assert sorted(scores["benchmark_id"]) == ["acme_hallucination", "acme_rating", "acme_words"]
    assert set(scores["reference_url"]) == {"https://example.org/board.md"}
    res = _cli(home, "ingest", renamed, "--adapter", "no-such-board")
    assert res.exit_code == 2 and "unknown adapter 'no-such-board'" in res.stderr
    assert "acme-arena" in res.stderr  # the known adapters listed, the spec among them
    assert yaml.safe_load(SPEC)["name"] == "acme-arena"
