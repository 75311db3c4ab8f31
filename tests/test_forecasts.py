"""The forecast ledger on the real LiveBench history.

A new release as users meet it: LiveBench's version of 2026-06-17 is rewritten (by the test,
in a temporary mirror) so that its last listed model appears with three task scores; the
next snapshot (the real 2026-06-19 version) has its whole row.
The forecasts made at the first snapshot cover that model's whole row, and
`forecasts score` scores them against the values that arrived.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.home import Home
from benchpress.store.matrix import load_matrix
from benchpress.store.snapshot import get_snapshot
from benchpress.timeline.forecasts import forecasts_at, score_forecasts
from benchpress.timeline.replay import replay
from tests.test_replay import write_plan

pytestmark = pytest.mark.slow  # replays real history: seconds per test; `make test` runs them

FIRST, NEXT = "2026-06-17T0855", "2026-06-19T0954"
KEPT = 3


@pytest.fixture(scope="module")
def release(tmp_path_factory, shared_data):
    """(replay home, the model released with three scores, its benchmark count at NEXT)."""
    from tests.conftest import make_home

    root = tmp_path_factory.mktemp("ledger")
    mirror = root / "mirror" / "livebench-history"
    for v in (FIRST, NEXT):
        shutil.copytree(shared_data / "livebench-history" / v, mirror / v)
    (table,) = (mirror / FIRST).glob("table_*.csv")
    frame = pl.read_csv(table, infer_schema_length=0)
    model = frame["model"][-1]
    tasks = frame.columns[1:]
    # the model arrives with its first three task scores; the rest come with the next version
    frame = frame.with_columns(
        pl.when(pl.col("model") == model).then(None).otherwise(pl.col(t)).alias(t)
        for t in tasks[KEPT:])
    frame.write_csv(table)
    home = make_home(root / "ws")
    # no probe set (fit.probes: 0): the ledger reads none, and the default's search was 13
    # of the replay's 16 CPU-seconds
    plan = write_plan(home.root / "plan.yaml", root / "mirror", (FIRST, NEXT), name="release",
                      probes=0)
    timeline = replay(home, plan, mirror=root / "mirror")
    return Home(timeline.folder), model, timeline


@pytest.mark.slow(seconds=4)  # the module's replay is made here (two dates)
def test_the_next_snapshot_forecasts_the_new_models_whole_row(release):
    rhome, model, timeline = release
    # fit.probes: 0 chose no probe set and measured the rest
    assert all("probes" not in r and "note" not in r and r["heldout_medae"] > 0
               for r in timeline.rows)
    a = timeline.rows[0]["snapshot"]
    matrix = load_matrix(get_snapshot(rhome, a).path)
    row = matrix.values[matrix.model_ids.index(model)]
    observed = int((~np.isnan(row)).sum())
    # three tasks, plus the mean of a category those complete (LiveBench's derived rows)
    assert KEPT <= observed <= 5
    forecasts, path = forecasts_at(rhome, a, sources=["livebench"])
    mine = forecasts.filter(pl.col("model_id") == model)
    assert mine.height == len(matrix.benchmark_ids) - observed  # every missing cell of its row
    assert set(mine["n_model_scores"]) == {observed}
    assert mine["lower"].null_count() == 0 and (mine["lower"] <= mine["upper"]).all()
    assert set(mine["method"]) == {"default"}
    assert path.parent.name == a and path.parent.parent.name == "forecasts"


def test_the_ledger_scores_them_when_the_values_arrive(release):
    rhome, model, timeline = release
    a, b = (r["snapshot"] for r in timeline.rows)
    result = score_forecasts(rhome, a, b, sources=["livebench"])
    mine = result.cells.filter(pl.col("model_id") == model)
    later = load_matrix(get_snapshot(rhome, b).path)
    before = load_matrix(get_snapshot(rhome, a).path)
    arrived = int((~np.isnan(later.values[later.model_ids.index(model)])).sum()) - int(
        (~np.isnan(before.values[before.model_ids.index(model)])).sum())
    assert mine.height == arrived > 20
    # the new model's cells are exactly the "new models" rows (no other model had <= 5 scores)
    assert result.new_models["n_cells"] == mine.height == result.overall["n_cells"]
    errors = (mine["actual"] - mine["predicted"]).abs()
    assert result.overall["medae"] == pytest.approx(float(errors.median()))
    inside = ((mine["actual"] >= mine["lower"]) & (mine["actual"] <= mine["upper"])).mean() * 100
    assert result.overall["coverage"] == pytest.approx(inside)
    assert 0 < result.overall["medae"] < 30
    assert result.per_n_scores["n_scores_bin"].to_list() == ["1-5"]
    # the replay printed the same figures for the pair
    assert timeline.rows[1]["forecast_n"] == mine.height
    assert timeline.rows[1]["new_model_medae"] == pytest.approx(result.new_models["medae"])


def test_cli_scores_any_two_snapshots_computing_missing_forecasts(release):
    rhome, model, timeline = release
    a, b = (r["snapshot"] for r in timeline.rows)
    shutil.rmtree(rhome.root / "forecasts" / a)  # none stored: computed on demand
    result = CliRunner().invoke(main, ["forecasts", "score", "--from", timeline.rows[0]["date"],
                                       "--to", b, "--sources", "livebench", "--format", "json",
                                       "--home", str(rhome.root)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["from"] == a and doc["to"] == b and doc["n_cells"] == timeline.rows[1]["forecast_n"]
    assert {"medae", "coverage", "within5", "per_benchmark", "per_n_scores", "new_models"} <= set(doc)
    assert (rhome.root / "forecasts" / a).is_dir()
    # backwards: nothing is newly observed
    back = score_forecasts(rhome, b, a, sources=["livebench"])
    assert back.overall["n_cells"] == 0 and back.overall["medae"] is None


def test_the_ledger_says_what_it_skipped_and_keeps_scales_apart(release):
    rhome, model, timeline = release
    a, b = (r["snapshot"] for r in timeline.rows)
    forecasts, _ = forecasts_at(rhome, a, sources=["livebench"])
    result = score_forecasts(rhome, a, b, sources=["livebench"], heldout=True)
    skipped = result.skipped
    # every forecast is either scored or counted as not observed yet / without a prediction
    assert skipped["not_observed_yet"] + skipped["no_prediction"] + result.cells.height \
        == forecasts.height
    assert skipped["not_observed_yet"] > 0
    # the headline is the percent cells'; each scale has its own row
    pct = result.per_scale.filter(pl.col("scale") == "percent")
    assert result.overall["n_cells"] == pct["n_cells"].item() == result.cells.filter(
        pl.col("scale") == "percent").height
    assert result.per_source["n_cells"].sum() == result.overall["n_cells"]
    # one source: no cell is out of the model's sources
    assert result.per_reach["out_of_reach"].to_list() == [False]
    assert result.per_reach["n_cells"].item() == result.overall["n_cells"]
    held = result.heldout
    assert held["n_cells"] > 100 and 0 < held["medae"] < 30
    doc = result.to_dict()
    assert doc["scale"] == "percent" and doc["skipped"] == skipped and doc["heldout"] == held
    res = CliRunner().invoke(main, ["forecasts", "score", "--from", a, "--to", b, "--sources",
                                    "livebench", "--no-heldout", "--home", str(rhome.root)])
    assert res.exit_code == 0, res.output
    assert f"{skipped['not_observed_yet']} not observed yet" in res.stderr
    assert "held-out at" not in res.stderr
