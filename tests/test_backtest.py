"""Temporal stress test: fit before a cutoff, predict later releases from their probes."""

from __future__ import annotations

import numpy as np
import pytest

from benchpress.errors import BadInputError, UsageError
from benchpress.predict import make_predictor
from benchpress.predict.evaluation.backtest import backtest
from tests.test_probes import FAST, synthetic

PUB = make_predictor("published", **FAST)


def dates_for(n, n_new):
    old = [f"2025-{1 + k % 12:02d}-15" for k in range(n - n_new)]
    return old + [f"2026-0{1 + k % 5}-10" for k in range(n_new)]


def test_given_probes_train_only_on_earlier_models():
    Y, scales, ids = synthetic(seed=3)
    dates = dates_for(Y.shape[0], 5)
    dates[0] = None                                   # undated: left out
    res = backtest(PUB, Y, scales, dates, "2026-01-01", probes=["b0", "b1", "b2"],
                   benchmark_ids=ids)
    assert (res.n_train, res.n_test, res.n_undated) == (Y.shape[0] - 6, 5, 1)
    assert res.probes_chosen_on == "given"
    probe_cells = res.cells.filter(res.cells["is_probe"])
    np.testing.assert_array_equal(probe_cells["predicted"].to_numpy(), probe_cells["actual"].to_numpy())
    # the same numbers by hand: fit on the training rows, fold in each new row's probes
    pred = make_predictor("published", **FAST).fit(Y[1:-5], scales)
    rows = np.where(np.isin(ids, ["b0", "b1", "b2"]), Y[-5:], np.nan)
    P = pred.fold_in(rows)
    hidden = res.cells.filter(~res.cells["is_probe"])
    expect = P[~np.isnan(Y[-5:]) & ~np.isin(ids, ["b0", "b1", "b2"])]
    np.testing.assert_allclose(hidden["predicted"].to_numpy(), expect, rtol=1e-10)
    assert res.overall.n_cells == hidden.height
    assert res.medae <= res.overall.medae                # probe zeros lower the pooled median


def test_probe_count_chooses_on_training_models_only():
    Y, scales, ids = synthetic(seed=4)
    dates = dates_for(Y.shape[0], 6)
    Y_poisoned = Y.copy()
    Y_poisoned[-6:] = 1e6 * np.sign(np.nan_to_num(Y[-6:]))   # later models cannot steer the choice
    a = backtest(PUB, Y, scales, dates, "2026-01-01", probes=2, benchmark_ids=ids)
    b = backtest(PUB, Y_poisoned, scales, dates, "2026-01-01", probes=2,
                 benchmark_ids=ids)
    assert a.probes == b.probes and a.probes_chosen_on.startswith("training models released since")
    assert a.per_model.height == 6 and "medae_hidden" in a.per_model.columns
    every = backtest(PUB, Y, scales, dates, "2026-01-01", probes=2,
                     benchmark_ids=ids, recent_months=0)
    assert every.probes_chosen_on == "training models"


def test_recent_window_is_the_selection_objective():
    """The greedy choice with a window equals ProbeSearch.select on those models' cells."""
    from benchpress.predict.probes.search import ProbeSearch

    Y, scales, ids = synthetic(seed=6, n_models=30)
    dates = dates_for(Y.shape[0], 4)
    res = backtest(PUB, Y, scales, dates, "2026-01-01", probes=3,
                   benchmark_ids=ids, recent_months=3)
    train = Y[:-4]
    recent = np.array([d >= "2025-10-02" for d in dates[:-4]])
    search = ProbeSearch(PUB).fit(train, scales, benchmark_ids=ids)
    assert res.probes == search.select(3, swap="none", models=recent).final.probes
    with pytest.raises(BadInputError, match="non-empty boolean mask"):
        search.select(2, models=np.zeros(train.shape[0], bool))


def test_bad_input():
    Y, scales, ids = synthetic(seed=5)
    dates = dates_for(Y.shape[0], 4)
    with pytest.raises(UsageError, match="ISO date"):
        backtest(PUB, Y, scales, dates, "soon", probes=["b0"])
    with pytest.raises(BadInputError, match="released before"):
        backtest(PUB, Y, scales, dates, "2020-01-01", probes=["b0"])
    with pytest.raises(BadInputError, match="no model"):
        backtest(PUB, Y, scales, dates, "2030-01-01", probes=["b0"])
    with pytest.raises(BadInputError, match="unknown probe"):
        backtest(PUB, Y, scales, dates, "2026-01-01", probes=["zz"], benchmark_ids=ids)


def test_newest_releases_of_the_real_matrix(paper_matrix):
    """The 16 models released in 2026, from the paper's five probes (paper: about 5.0)."""
    Y, model_ids, bench_ids, scales = paper_matrix
    import json

    from tests.predict_data import DATA_JSON
    dates = [m.get("release_date") for m in json.loads(DATA_JSON.read_text())["models"]]
    res = backtest(make_predictor("published"), Y, scales, dates, "2026-01-01", model_ids=model_ids,
                   benchmark_ids=bench_ids,
                   probes=["gpqa_diamond", "hle", "codeforces_rating", "mmlu_pro", "arc_agi_1"])
    assert res.n_test == 16 and res.n_train == 66
    assert 3.0 < res.medae < 6.0 and 4.0 < res.overall.medae < 7.0
