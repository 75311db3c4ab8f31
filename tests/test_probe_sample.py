"""The probe search's bounded work: the sample of left-out models (`max_models`), the group
fits (`n_groups`), the bounded training sample (`max_train`), slim fits, chunked scoring
and the executor."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import UsageError
from benchpress.executor import Executor
from benchpress.predict import make_predictor
from benchpress.predict.probes.fits import slim, split_groups, train_sample
from benchpress.predict.probes.search import ProbeSearch
from benchpress.predict.size_limits import LIMITS
from tests.test_probes import FAST, synthetic


def _search(Y, scales, ids, calls=None, **kw):
    report = None if calls is None else (lambda k, n, label: calls.append((k, n)))
    return ProbeSearch(make_predictor("published", **FAST), **kw).fit(
        Y, scales, benchmark_ids=ids, progress=report)


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=1, n_models=16, n_bench=8)


def test_exact_when_the_models_fit_under_the_cap(data):
    Y, scales, ids = data
    exact = _search(Y, scales, ids, max_models=None)
    assert not exact.sampled_ and exact.scored_.tolist() == list(range(Y.shape[0]))
    masks = np.eye(Y.shape[1], dtype=bool)
    for cap in (Y.shape[0], Y.shape[0] + 50):
        capped = _search(Y, scales, ids, max_models=cap)
        assert not capped.sampled_
        np.testing.assert_array_equal(capped.predict_cells(masks), exact.predict_cells(masks))
        a, b = capped.select(3), exact.select(3)
        assert [s.to_json() for s in a.steps] == [s.to_json() for s in b.steps]
        assert a.swaps == b.swaps and a.n_sets_scored == b.n_sets_scored


def test_sampled_search_is_deterministic_and_fits_exactly_max_models(data):
    Y, scales, ids = data
    calls = []
    one = _search(Y, scales, ids, calls, max_models=6, seed=3)
    two = _search(Y, scales, ids, max_models=6, seed=3)
    assert one.sampled_ and one.scored_.size == 6 and len(set(one.scored_.tolist())) == 6
    assert calls == [(k, 6) for k in range(1, 7)]                 # six fits, no more
    assert sum(p is not None for p in one.predictors_) == 6
    np.testing.assert_array_equal(one.scored_, two.scored_)
    a, b = one.select(3), two.select(3)
    assert [s.to_json() for s in a.steps] == [s.to_json() for s in b.steps]
    assert a.final.n_models == 6                                  # only the sample is scored
    assert set(np.unique(one.cell_model_).tolist()) == set(one.scored_.tolist())
    # each sampled model's fit saw every other model, sampled or not
    i = int(one.scored_[0])
    row = np.where(one.mask([0, 1]), Y[i], np.nan)
    full = _search(Y, scales, ids, max_models=None)
    np.testing.assert_allclose(one.predictors_[i].fold_in(row[None]),
                               full.predictors_[i].fold_in(row[None]))
    other = _search(Y, scales, ids, max_models=6, seed=4)
    # another seed, another sample: seed 4's draw of 6 of the models with scores, ascending
    active = np.flatnonzero(~np.isnan(Y).all(axis=1))
    want = np.sort(np.random.default_rng(4).choice(active, 6, replace=False))
    assert other.scored_.tolist() == want.tolist() != one.scored_.tolist()


def test_max_models_below_three_is_refused(data):
    Y, scales, ids = data
    with pytest.raises(UsageError):
        _search(Y, scales, ids, max_models=2)


@pytest.mark.slow(seconds=9)  # seconds-long end to end: `make test` runs it, test-quick not
def test_cli_json_records_the_sample_size(built_2026_05):
    # the sizes are the search's, whatever the predictor: the published one keeps the two
    # exact searches (84 held-out fits each) short
    def run(*extra):
        result = CliRunner().invoke(main, ["probes", "--k", "1", "--no-paper-sets", "--swap",
                                           "none", "--method", "published", *extra,
                                           "--home", str(built_2026_05.root)],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        return result

    doc = json.loads(run("--max-models", "10", "--format", "json").stdout)
    assert doc["sample_size"] == 10 and doc["models_scored"] == 10
    assert doc["n_models_with_scores"] == doc["n_models"] == 84
    assert doc["selection"]["n_models"] == 10
    # 10 scored models in LIMITS.probe_groups=10 groups: one per model, each fit on the other 83
    assert doc["fits"] == 10 and doc["train_models"] == 83 and not doc["train_bounded"]
    exact = json.loads(run("--format", "json").stdout)
    assert exact["sample_size"] is None and exact["models_scored"] == 84
    assert exact["selection"]["n_models"] == 84
    assert exact["fits"] == 84 and exact["train_models"] == 83
    table = run("--max-models", "10")
    assert "sampled: 10 of 84 models" in table.stderr
    assert "in 10 held-out fits, each on at most 83 models" in table.stderr
    assert "sampled:" not in run("--max-models", "0").stderr


def test_objective_models_outside_the_sample_are_refused(data):
    from benchpress.errors import BadInputError

    Y, scales, ids = data
    search = _search(Y, scales, ids, max_models=6)
    outside = ~np.isin(np.arange(Y.shape[0]), search.scored_)
    with pytest.raises(BadInputError, match="sample"):
        search.select(2, models=outside)
    assert search.select(1, models=~outside).final.n_models == 6


# ---------------------------------------------------------------------- group fits
def test_group_fits_leave_each_group_out_of_one_fit(data):
    Y, scales, ids = data
    calls = []
    search = _search(Y, scales, ids, calls, max_models=9, n_groups=3, seed=5)
    assert search.sampled_ and len(search.fits_) == 3 and calls == [(1, 3), (2, 3), (3, 3)]
    groups = [np.flatnonzero(search.group_of_ == g) for g in range(3)]
    assert sorted(np.concatenate(groups).tolist()) == search.scored_.tolist()
    assert [g.size for g in groups] == [3, 3, 3]
    assert search.sample_fields["fits"] == 3
    assert search.sample_fields["train_models"] == Y.shape[0] - 3
    mask = search.mask([0, 2])
    pred = search.predict_cells(mask[None])[0]
    for g in groups:  # independent fit without the group's rows, fold-in of each member
        other = make_predictor("published", **FAST).fit(np.delete(Y, g, axis=0), scales)
        for i in g:
            sel = search.cell_model_ == i
            js = search.cell_bench_[sel]
            row = other.fold_in(np.where(mask, Y[i], np.nan))
            np.testing.assert_allclose(pred[sel], np.where(mask[js], Y[i, js], row[js]),
                                       rtol=1e-10)
    # default groups: LIMITS.probe_groups for a sampled search, one per model for an exact one
    assert len(split_groups(np.arange(40), None, 0)) == 40
    cut = split_groups(np.arange(40), LIMITS.probe_groups, 0)
    assert len(cut) == LIMITS.probe_groups and sorted(np.concatenate(cut)) == list(range(40))
    assert all(np.all(np.diff(g) > 0) for g in cut)


def test_n_groups_below_one_is_refused(data):
    Y, scales, ids = data
    with pytest.raises(UsageError, match="n_groups"):
        _search(Y, scales, ids, max_models=6, n_groups=0)


def test_training_sample_is_bounded_and_keeps_every_benchmark():
    rng = np.random.default_rng(0)
    obs = rng.random((500, 30)) < 0.1
    obs[:, 7] = False
    obs[[3, 90, 400], 7] = True                      # a rare benchmark: three observers
    active = np.flatnonzero(obs.any(axis=1))
    scored = active[:20]
    train = train_sample(obs, active, scored, 60, seed=1)
    assert train is not None and np.all(np.diff(train) > 0) and np.isin(train, active).all()
    counts = obs[train].sum(axis=0)
    assert np.all(counts >= np.minimum(LIMITS.probe_min_benchmark_scores, obs.sum(axis=0)))
    assert counts[7] == 3
    assert train.size >= 60 and train.size < active.size
    np.testing.assert_array_equal(train, train_sample(obs, active, scored, 60, seed=1))
    assert not np.array_equal(train, train_sample(obs, active, scored, 60, seed=2))
    few = train_sample(obs, active, scored, 60, seed=1, min_scores=1)
    assert few.size < train.size and np.all(obs[few].sum(axis=0) >= np.minimum(1, obs.sum(axis=0)))
    assert train_sample(obs, active, scored, None, seed=1) is None
    assert train_sample(obs, active, scored, active.size, seed=1) is None


def test_bounded_fits_train_on_the_sample_without_the_group():
    from tests.test_probes import synthetic

    Y, scales, ids = synthetic(seed=3, n_models=40, n_bench=6, missing=0.2)
    search = ProbeSearch(make_predictor("published", **FAST), max_models=8, n_groups=2,
                         max_train=12).fit(Y, scales, benchmark_ids=ids)
    assert search.train_bounded_ and len(search.fits_) == 2
    obs = ~np.isnan(Y)
    active = np.flatnonzero(obs.any(axis=1))
    train = train_sample(obs, active, search.scored_, 12, search.seed)
    assert search.train_models_ <= train.size < Y.shape[0] - 4
    g = np.flatnonzero(search.group_of_ == 0)
    rows = np.setdiff1d(train, g)
    other = make_predictor("published", **FAST).fit(Y[rows], scales)
    i = int(g[0])
    row = np.where(search.mask([1]), Y[i], np.nan)
    np.testing.assert_allclose(search.predictors_[i].fold_in(row[None]), other.fold_in(row[None]),
                               rtol=1e-10)


@pytest.mark.parametrize("method", ["published", "default"])
def test_slim_fits_fold_in_the_same_and_drop_the_model_arrays(data, method):
    Y, scales, ids = data
    full = make_predictor(method, n_starts=2, n_iter=15).fit(Y, scales)
    thin = slim(full)
    rows = np.where(np.eye(Y.shape[1], dtype=bool)[:3], Y[:3], np.nan)
    np.testing.assert_array_equal(thin.fold_in(rows), full.fold_in(rows))
    # the default is a blend: the model arrays are its low-rank part's
    thin_lr, full_lr = (getattr(p, "low_rank_", p) for p in (thin, full))
    assert thin_lr.Y_.shape[0] == 0 and thin_lr.ensemble_.U_.shape[1] == 0
    assert full_lr.Y_.shape[0] == Y.shape[0] and full_lr.ensemble_.U_.shape[1] == Y.shape[0]


class _Reversed(Executor):
    """Runs the items last to first (as a cluster might), returns them in input order."""

    name = "reversed"

    def __init__(self):
        self.n_items = 0

    def map(self, fn, items, *, progress=None, **common):
        items = list(items)
        self.n_items += len(items)
        return [fn(x, **common) for x in items[::-1]][::-1]


def test_executor_and_chunking_leave_the_numbers_unchanged(data):
    Y, scales, ids = data
    ex = _Reversed()
    local = _search(Y, scales, ids, max_models=9, n_groups=3)
    remote = _search(Y, scales, ids, max_models=9, n_groups=3, executor=ex)
    assert ex.n_items == 3                                   # the three group fits
    a, b = local.select(3), remote.select(3)
    assert ex.n_items > 3                                    # candidate chunks went through it
    assert [s.to_json() for s in a.steps] == [s.to_json() for s in b.steps]
    masks = np.eye(Y.shape[1], dtype=bool)
    whole = local.objective_values(masks)
    # 2 sets a chunk (`limits` is a constructor parameter of the search)
    remote.limits = dataclasses.replace(LIMITS, probe_chunk_cells=local.actual_.size * 2)
    seen = ex.n_items
    np.testing.assert_array_equal(remote.objective_values(masks), whole)
    assert ex.n_items - seen == (Y.shape[1] + 1) // 2


def test_unique_rows_matches_numpy_unique_in_order():
    from benchpress.predict.probes.fits import unique_rows

    rng = np.random.default_rng(4)
    for m in (0, 3, 8, 63, 64, 65, 140):          # one word, a word's edge, several words
        seen = rng.random((300, m)) < 0.2
        seen[150:] = seen[:150]                    # repeated rows
        uniq, inv = unique_rows(seen)
        ref, ref_inv = np.unique(seen, axis=0, return_inverse=True)
        np.testing.assert_array_equal(uniq, ref)
        np.testing.assert_array_equal(inv, ref_inv.reshape(-1))
        np.testing.assert_array_equal(uniq[inv], seen)


def test_benchpress_probes_runs_its_fits_and_scoring_on_the_given_executor(built_2026_05):
    from benchpress.api import BenchPress

    ex = _Reversed()
    here = BenchPress.from_snapshot(built_2026_05).probes(2, swap="none", max_models=10)
    bp = BenchPress.from_snapshot(built_2026_05)
    there = bp.probes(2, swap="none", max_models=10, executor=ex)
    assert ex.n_items == 10 + 2                          # ten fits, one chunk per greedy step
    assert [s.to_json() for s in there.steps] == [s.to_json() for s in here.steps]
    n = ex.n_items
    bp.score_probes([list(there.final.probes)], executor=ex)   # the fits are reused
    assert ex.n_items == n
