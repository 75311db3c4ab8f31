"""Each benchmark's measurement noise (`store.noise`), and `compare`'s p_ahead counting it for
observed scores: two observed scores 0.6 points apart are not 100% sure."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from benchpress.predict.evaluation.ranking import compare_models
from benchpress.store.matrix import load_matrix
from benchpress.store.noise import PRIOR_CELLS, SPREAD_TO_SIGMA, measurement_noise
from benchpress.store.tables import read_table


def _cells(spreads: dict[str, list[float]], copies: int = 0) -> pl.DataFrame:
    """Cells whose two observations differ by each given spread, plus `copies` agreeing
    cells per benchmark."""
    rows = [{"benchmark_id": b, "n_disagreeing": 1, "min_score": 50.0, "max_score": 50.0 + d}
            for b, ds in spreads.items() for d in ds]
    rows += [{"benchmark_id": b, "n_disagreeing": 0, "min_score": 50.0, "max_score": 50.0}
             for b in spreads for _ in range(copies)]
    return pl.DataFrame(rows)


def test_many_disagreements_recover_the_noise_whatever_the_copies():
    """Two independent measurements of N(0, 2^2) each: the median spread gives sigma back;
    cells that agree (copies of one number) change nothing."""
    rng = np.random.default_rng(7)
    spreads = np.abs(rng.normal(0, 2.0, 4000) - rng.normal(0, 2.0, 4000)).tolist()
    bench = pl.DataFrame({"benchmark_id": ["a"], "lower": [0.0], "upper": [100.0]})
    alone = measurement_noise(_cells({"a": spreads}), bench)
    copied = measurement_noise(_cells({"a": spreads}, copies=3000), bench)
    assert alone["noise"][0] == pytest.approx(2.0, rel=0.05)
    assert copied.rows() == alone.rows() and alone["noise_cells"][0] == 4000


def test_few_disagreements_lean_on_the_pool_and_unbounded_ones_have_their_own():
    bench = pl.DataFrame({"benchmark_id": ["many", "one", "none", "elo", "elo_quiet"],
                          "lower": [0.0, 0.0, 0.0, None, None],
                          "upper": [100.0, 50.0, 10.0, None, None]})
    cells = _cells({"many": [2.0] * 40, "one": [10.0], "elo": [30.0, 50.0]})
    got = {r["benchmark_id"]: r for r in measurement_noise(cells, bench).to_dicts()}
    pooled = 0.02 * SPREAD_TO_SIGMA  # the median spread over the bounded benchmarks' ranges
    own_one, prior_one = 10.0 * SPREAD_TO_SIGMA, 50 * pooled
    assert got["one"]["noise"] == pytest.approx(math.sqrt(
        (own_one ** 2 + PRIOR_CELLS * prior_one ** 2) / (1 + PRIOR_CELLS)))
    assert prior_one < got["one"]["noise"] < own_one
    assert got["none"]["noise"] == pytest.approx(10 * pooled) and got["none"]["noise_cells"] == 0
    assert got["elo"]["noise"] == pytest.approx(40.0 * SPREAD_TO_SIGMA)  # its own, no range
    assert got["elo_quiet"]["noise"] is None


def test_two_observed_scores_apart_by_less_than_the_noise_are_not_sure():
    """0.6 points between two observed scores: p_ahead is the normal chance of the gap under
    two measurements' noise (here about 0.58), not 1; no noise given, 1 as before."""
    values, observed = np.array([[75.6], [75.0]]), np.ones((2, 1), dtype=bool)
    noisy = compare_models(["a", "b"], values, observed, [True], noise=[1.0])
    exact = compare_models(["a", "b"], values, observed, [True], sigma=np.zeros((2, 1)))
    want = 0.5 * (1 + math.erf(0.6 / math.sqrt(2.0) / math.sqrt(2.0)))
    assert noisy["p_ahead"][0] == pytest.approx(want) and 0.5 < want < 0.7
    assert exact["p_ahead"][0] == 1.0 and noisy["leader"][0] == "a"
    # a predicted score adds its own uncertainty to the other's noise
    mixed = compare_models(["a", "b"], values, np.array([[True], [False]]), [True],
                           sigma=np.array([[0.0], [2.0]]), noise=[1.0])
    assert mixed["p_ahead"][0] == pytest.approx(0.5 * (1 + math.erf(0.6 / math.sqrt(5.0)
                                                                     / math.sqrt(2.0))))


def test_a_registrys_matrix_carries_the_noise_of_its_disagreements(built_both):
    """The 2026-05 and 2026-02 matrices disagree on shared cells: the loaded matrix's
    benchmarks carry the noise of every source, whichever sources it is loaded from, and a
    registry-wide compare of two observed scores less than a noise apart is not sure."""
    everything = load_matrix(built_both.registry)
    one_source = load_matrix(built_both.registry, sources=["benchpress"])
    want = measurement_noise(read_table(built_both.registry, "cells"),
                             read_table(built_both.registry, "benchmarks"))
    noise = dict(zip(want["benchmark_id"], want["noise"]))
    assert noise["gpqa_diamond"] > 0
    for m in (everything, one_source):
        got = dict(zip(m.benchmarks["benchmark_id"], m.benchmarks["noise"]))
        assert got == {b: noise[b] for b in m.benchmark_ids}
