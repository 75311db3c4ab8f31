"""Probe-set search: LOMO fold-in scoring, greedy + swap selection, costs and budgets."""

from __future__ import annotations

import numpy as np
import pytest

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict import BenchmarkScales, make_predictor
from benchpress.predict.probes.select import Candidates, greedy_add, swap_pass
from benchpress.predict.probes.search import PAPER_SETS, ProbeSearch, probe_set_change, refit_transcripts

# about 6 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=6)

PAPER_ANY = PAPER_SETS["paper (any benchmark)"]
PAPER_LOW_COST = PAPER_SETS["paper (low-cost allowlist)"]
FAST = dict(n_starts=2, n_iter=15)  # published configuration, fewer starts: quick tests


def synthetic(seed=0, n_models=24, n_bench=10, missing=0.25):
    """Noiseless rank-2 + bias matrix on an unbounded 'score' scale, some cells missing."""
    rng = np.random.RandomState(seed)
    U, V = rng.normal(size=(n_models, 2)), rng.normal(size=(n_bench, 2))
    Y = 50 + 5 * rng.normal(size=(n_models, 1)) + 3 * rng.normal(size=(1, n_bench)) + 4 * U @ V.T
    Y[rng.rand(n_models, n_bench) < missing] = np.nan
    scales = BenchmarkScales(kind=np.array(["score"] * n_bench),
                             lower=np.full(n_bench, np.nan), upper=np.full(n_bench, np.nan))
    return Y, scales, [f"b{j}" for j in range(n_bench)]


@pytest.fixture(scope="module")
def small():
    Y, scales, ids = synthetic()
    return Y, scales, ids, ProbeSearch(make_predictor("published", **FAST)).fit(Y, scales, benchmark_ids=ids)


def test_cell_predictions_are_fold_ins_against_a_fit_without_the_model(small):
    Y, scales, ids, search = small
    probes = [0, 3, 7]
    mask = np.isin(np.arange(Y.shape[1]), probes)
    pred = search.predict_cells(mask[None])[0]
    for i in (0, 5, 11):  # independent computation for a few models
        other = make_predictor("published", **FAST).fit(np.delete(Y, i, axis=0), scales)
        row = other.fold_in(np.where(mask, Y[i], np.nan))
        sel = search.cell_model_ == i
        js = search.cell_bench_[sel]
        expected = np.where(mask[js], Y[i, js], row[js])
        np.testing.assert_allclose(pred[sel], expected, rtol=1e-10)


def test_batched_scoring_equals_one_set_at_a_time(small):
    Y, scales, ids, search = small
    masks = np.zeros((3, Y.shape[1]), dtype=bool)
    masks[0, [1, 2]] = masks[1, [1, 4]] = masks[2, [5]] = True
    both = search.predict_cells(masks)
    for k in range(3):
        np.testing.assert_allclose(both[k], search.predict_cells(masks[k:k + 1])[0], rtol=1e-12)


def test_probe_cells_count_as_exact(small):
    Y, scales, ids, search = small
    every = search.score(ids)
    assert every.medae == 0.0 and every.n_probe_cells == every.n_cells
    assert np.isnan(every.medae_hidden) and every.to_json()["medae_hidden"] is None
    some = search.score(["b0", "b1"])
    assert some.medae < some.medae_hidden          # zeros pull the pooled median down
    assert some.n_cells == int((~np.isnan(Y)).sum())


def test_greedy_first_step_is_the_best_single_probe(small):
    Y, scales, ids, search = small
    sel = search.select(3, swap="none")
    singles = [search.score([b]).medae for b in ids]
    assert sel.steps[0].probes == (ids[int(np.argmin(singles))],)
    assert [len(s.probes) for s in sel.steps] == [1, 2, 3]
    assert sel.steps[1].probes[0] == sel.steps[0].probes[0]   # greedy prefixes nest


def test_swap_pass_never_hurts(small):
    Y, scales, ids, search = small
    plain = search.select(3, swap="none").final.medae
    swapped = search.select(3, swap="each")
    assert swapped.final.medae <= plain + 1e-12
    for s in swapped.swaps:
        assert s["after"] < s["before"]


def test_greedy_and_swap_steps_return_what_they_scored(small):
    """The two halves of `select`, called by hand: each returns its count of scored sets,
    and `select` reports their sum plus one summary set per step."""
    Y, scales, ids, search = small
    n_b = Y.shape[1]
    cand = Candidates(np.arange(n_b), np.zeros(n_b), None)
    one, v1, n1 = greedy_add(search, [], cand)
    assert n1 == n_b and v1 == pytest.approx(min(search.score([b]).medae for b in ids), abs=1e-12)
    two, v2, n2 = greedy_add(search, one, cand)
    assert n2 == n_b - 1 and two[0] == one[0] and v2 <= v1
    swapped, v3, swaps, n3 = swap_pass(search, two, v2, cand, max_rounds=1)
    assert n3 == 2 * (n_b - 2) and v3 <= v2 and len(swaps) <= 1
    sel = search.select(2, swap="each", max_swap_rounds=1)
    assert list(sel.final.probes) == [ids[j] for j in swapped]
    assert sel.n_sets_scored == n1 + 1 + n2 + n3 + 1
    assert greedy_add(search, list(range(n_b)), cand)[0] is None   # nothing left to add


def test_allowlist_costs_and_budget(small):
    Y, scales, ids, search = small
    costs = np.arange(1.0, Y.shape[1] + 1)         # b0 costs 1, b9 costs 10
    costs[2] = np.nan                              # unknown cost: not allowed under a budget
    sel = search.select(3, candidates=["b1", "b2", "b3", "b6", "b9"], costs=costs, budget=9.0)
    chosen = set(sel.final.probes)
    assert chosen <= {"b1", "b3", "b6"} and sel.final.cost <= 9.0
    assert "b2" not in sel.candidates and "b9" not in sel.candidates
    with pytest.raises(UsageError, match="needs benchmark costs"):
        search.select(2, budget=3.0)
    with pytest.raises(BadInputError, match="unknown benchmark ids: nope"):
        search.select(2, candidates=["b1", "nope"])
    with pytest.raises(UsageError, match="no candidate"):
        search.select(2, candidates=["b9"], costs=costs, budget=1.0)


def test_objectives_scopes_and_errors():
    Y, scales, ids = synthetic(seed=1)
    with pytest.raises(NotFittedError):
        ProbeSearch(make_predictor("published")).score(["b0"])
    with pytest.raises(UsageError, match="objective"):
        ProbeSearch(make_predictor("published"), objective="rmse").fit(Y, scales)
    search = ProbeSearch(make_predictor("published", **FAST), objective="medape", scope="hidden").fit(Y, scales)
    sel = search.select(2, swap="none")
    assert sel.objective == "medape" and sel.scope == "hidden"
    assert set(sel.curve().columns) >= {"k", "probes", "cost", "medae", "medae_hidden"}


def test_fold_in_design_is_close_to_the_refit_design_on_noiseless_data():
    Y, scales, ids = synthetic(seed=2, missing=0.1)
    probes = np.isin(np.arange(Y.shape[1]), [0, 1, 2, 3])
    search = ProbeSearch(make_predictor("published", **FAST)).fit(Y, scales)
    fold_in = search.predict_cells(probes[None])[0]
    refit = refit_transcripts(make_predictor("published", **FAST), Y, scales, probes)
    ref = refit[search.cell_model_, search.cell_bench_]
    hidden = ~probes[search.cell_bench_]
    err_f = np.median(np.abs(fold_in - search.actual_)[hidden])
    err_r = np.median(np.abs(ref - search.actual_)[hidden])
    assert abs(err_f - err_r) < 0.5 * max(err_f, err_r) + 0.5


def test_published_method_reproduces_the_papers_probe_figures(paper_matrix):
    """Paper: 3.93 (3.955 after its metric-aware update) and 4.55, probe cells exact."""
    Y, model_ids, bench_ids, scales = paper_matrix
    search = ProbeSearch(make_predictor("published")).fit(Y, scales, benchmark_ids=bench_ids)
    any_set, low_cost = search.score(PAPER_ANY), search.score(PAPER_LOW_COST)
    assert any_set.n_cells == 2604 and any_set.n_models == 84
    assert 3.85 <= any_set.medae <= 4.05
    assert 4.45 <= low_cost.medae <= 4.70
    assert any_set.medae_hidden > any_set.medae
    assert any_set.n_models_missing_probe == 71 and any_set.n_models_without_probes == 0


def test_a_benchmark_only_one_model_has_cannot_be_recovered_and_is_counted():
    Y, scales, ids = synthetic(seed=7)
    Y[:, 9] = np.nan
    Y[4, 9] = 55.0                                 # only model 4 has b9
    search = ProbeSearch(make_predictor("published", **FAST)).fit(Y, scales, benchmark_ids=ids)
    s = search.score(["b0"])
    assert s.n_unpredicted == 1 and np.isfinite(s.medae)
    assert search.score(["b0", "b9"]).n_unpredicted == 0   # as a probe it is exact


def test_probe_set_change_keeps_each_sets_order():
    change = probe_set_change(["hle", "gpqa", "mmlu"], ["gpqa", "aime", "hle", "arc"])
    assert change == {"kept": ["gpqa", "hle"], "added": ["aime", "arc"], "dropped": ["mmlu"]}
    assert probe_set_change([], ["a"]) == {"kept": [], "added": ["a"], "dropped": []}
