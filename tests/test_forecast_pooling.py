"""The replay's pooled forecast figures keep scales apart, as one pair's score does: the
real history's AA cells hold Elo (MedAE in the hundreds) and index scores beside percent."""

from __future__ import annotations

import polars as pl
import pytest

from benchpress.timeline.forecasts import pooled_figures


def scored(scale, actual, predicted, lower, upper, n_model_scores, out_of_reach=None):
    """Scored cells with the columns `score_forecasts` gives them (none out of reach unless
    ``out_of_reach`` says which)."""
    return pl.DataFrame({"scale": scale, "actual": actual, "predicted": predicted,
                         "lower": lower, "upper": upper, "n_model_scores": n_model_scores,
                         "out_of_reach": out_of_reach or [False] * len(scale)})


def test_pooled_figures_are_the_percent_cells_and_each_scale_apart():
    pair_1 = scored(["percent", "percent", "elo"], [50.0, 70.0, 1400.0], [48.0, 60.0, 1130.0],
                    [40.0, 55.0, 1100.0], [60.0, 68.0, 1200.0], [3, 30, 30])
    pair_2 = scored(["percent", "index"], [20.0, 40.0], [21.0, 31.0], [10.0, 35.0],
                    [30.0, 45.0], [30, 30])
    doc = pooled_figures(pl.concat([pair_1, pair_2]), new_max=5)
    assert doc["scale"] == "percent"
    # errors 2, 10, 1; 70 is above its interval [55, 68]: the Elo miss of 270 and the
    # index miss of 9 are not in these figures
    assert doc["n_cells"] == 3 and doc["medae"] == pytest.approx(2.0)
    assert doc["coverage"] == pytest.approx(200 / 3)
    assert doc["new_models"]["n_cells"] == 1 and doc["new_models"]["medae"] == pytest.approx(2.0)
    per_scale = {r["scale"]: r for r in doc["per_scale"]}
    assert set(per_scale) == {"elo", "index", "percent"}
    assert per_scale["elo"]["n_cells"] == 1 and per_scale["elo"]["medae"] == pytest.approx(270.0)
    assert per_scale["elo"]["coverage"] == 0.0 and per_scale["index"]["coverage"] == 100.0
    assert per_scale["percent"]["medae"] == doc["medae"]


def test_nothing_scored_in_percent_is_said_as_nothing():
    doc = pooled_figures(scored(["elo"], [1400.0], [1300.0], [1250.0], [1350.0], [20]))
    assert doc["n_cells"] == 0 and doc["medae"] is None and doc["coverage"] is None
    assert doc["per_scale"][0]["scale"] == "elo"


def test_cells_out_of_the_models_sources_are_found_and_scored_apart():
    """A's missing cells whose benchmark no source of the model's scores reports are the
    ones flagged; the pooled figures give them apart (percent cells only)."""
    import numpy as np

    from benchpress.scales import BenchmarkScales
    from benchpress.store.matrix import ScoreMatrix
    from benchpress.timeline.forecasts import _out_of_reach_cells

    sc = BenchmarkScales(np.array(["percent"] * 3), np.zeros(3), np.full(3, 100.0))
    m = ScoreMatrix.from_arrays(np.array([[50.0, np.nan, np.nan],    # lb only: aa_x is out
                                          [np.nan, 60.0, np.nan],    # aa only: lb_y is out
                                          [np.nan, np.nan, 70.0]]),  # both report gpqa
                                ["m1", "m2", "m3"], ["lb_y", "aa_x", "gpqa"], sc)
    assert _out_of_reach_cells(m).is_empty()  # no source list: nothing flagged
    m = ScoreMatrix(m.values, m.model_ids, m.benchmark_ids, m.benchmarks.with_columns(
        pl.Series("sources", [["lb"], ["aa"], ["aa", "lb"]])), m.models, scales=sc)
    assert m.source_reach().tolist() == [[False, True, True], [True, False, True]]  # aa, lb
    flagged = set(_out_of_reach_cells(m).select("model_id", "benchmark_id").rows())
    assert flagged == {("m1", "aa_x"), ("m2", "lb_y")}  # m3 reaches both through gpqa
    one = ScoreMatrix(m.values, m.model_ids, m.benchmark_ids, m.benchmarks.with_columns(
        pl.Series("sources", [["lb"]] * 3)), m.models, scales=sc)
    assert _out_of_reach_cells(one).is_empty()  # one source: every model reaches it all
    cells = scored(["percent", "percent", "elo"], [50.0, 70.0, 1400.0], [48.0, 60.0, 1130.0],
                   [40.0, 55.0, 1100.0], [60.0, 68.0, 1200.0], [30, 30, 30],
                   out_of_reach=[False, True, True])
    out = pooled_figures(cells)["out_of_reach"]
    assert out["n_cells"] == 1 and out["medae"] == pytest.approx(10.0) and out["coverage"] == 0.0
