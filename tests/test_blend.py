"""The blends (benchpress/predict/models/blend.py): a low-rank half and the nearest
models, composed as estimator objects and mixed by a gate. The default is side information
under the nearest models; `blend` is als4 under them."""

import numpy as np
import pytest

from benchpress.errors import BadInputError, UsageError
from benchpress.predict import SPREAD_PRIOR, Z_BOUND, make_predictor
from benchpress.predict.estimator import BasePredictor, clone, flat_params
from benchpress.predict.models import als_predictor as predictor_mod
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.models.blend import MANY_KNOWN, NeighbourBlend, NeighbourMix
from benchpress.predict.models.gate import FEATURES, PARTS, TREND, Gate, gate_features
from benchpress.predict.models.knn import local_regression, nearness
from benchpress.predict.models.side_info import SideInfoPredictor
from benchpress.predict.state import fitted_state, restore_state, storable
from benchpress.scales import BenchmarkScales

FAST = dict(n_starts=3)


def _matrix(seed=0, n_models=80, n_bench=20):
    """Low-rank logit scores with a binary covariate that moves every benchmark, and a
    release date (the covariates' first column)."""
    rng = np.random.default_rng(seed)
    x = (rng.random(n_models) < 0.5).astype(float)
    U, V = rng.normal(size=(n_models, 2)), rng.normal(size=(n_bench, 2))
    logit = 0.5 * U @ V.T + np.outer(x - 0.5, rng.normal(0, 1.5, n_bench))
    Y = 100 / (1 + np.exp(-(logit + rng.normal(0, 0.15, logit.shape))))
    Y[rng.random(Y.shape) < 0.3] = np.nan
    scales = BenchmarkScales(np.array(["percent"] * n_bench), np.zeros(n_bench),
                             np.full(n_bench, 100.0))
    return Y, scales, np.column_stack([np.linspace(0.0, 2.0, n_models), x])


def _leading(part: str) -> Gate:
    """A gate whose every cell goes to ``part`` where it answers (no new-model offset)."""
    coef = np.zeros((len(PARTS), len(FEATURES)))
    coef[PARTS.index(part), 0] = 60.0
    return Gate(tuple(map(tuple, coef)), shift=(0.0,) * len(TREND))


def test_the_blends_are_composed_of_estimator_objects():
    default, blend = make_predictor("default"), make_predictor("blend")
    assert NeighbourBlend.__mro__ == (NeighbourBlend, BasePredictor, object)  # no mixin
    assert type(default.low_rank) is SideInfoPredictor and type(blend.low_rank) is ALSPredictor
    for p in (default, blend):
        assert isinstance(p.neighbours, NeighbourMix) and isinstance(p.gate, Gate)
        assert set(p.get_params()) == {"low_rank", "neighbours", "gate", "method"}
    # a part's parameter by part__name, or by its name where one part has it
    made = make_predictor("default", n_starts=3, neighbours__k=8, date_alpha=None)
    assert (made.low_rank.n_starts, made.neighbours.k, made.neighbours.date_alpha) == (3, 8, None)
    with pytest.raises(UsageError, match="no parameter 'knn_weights'"):
        make_predictor("default", knn_weights=(0.5,) * 5)
    # every value spelled out, and back: the same configuration
    flat = flat_params(made)
    assert flat["low_rank__method"] == "side" and flat["neighbours__k"] == 8
    again = make_predictor("default", **{k: v for k, v in flat.items() if k != "method"})
    assert flat_params(again) == flat
    # a clone copies the parts, it does not share them
    twin = clone(made)
    assert twin.low_rank is not made.low_rank and flat_params(twin) == flat
    twin.set_params(neighbours__k=3)
    assert made.neighbours.k == 8


def test_without_metadata_the_default_is_blend_and_with_it_moves():
    Y, scales, X = _matrix()
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    blend = make_predictor("blend", **FAST).fit(Y, scales, covariates=X)
    new = np.full((2, Y.shape[1]), np.nan)
    new[:, :3] = Y[:2, :3]
    np.testing.assert_array_equal(default.fold_in(new), blend.fold_in(new))
    assert np.abs(default.fold_in(new, covariates=X[:2]) - blend.fold_in(new)).max() > 0.1
    # a fitted model's completion does not use itself as its neighbour
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    D = default.complete(keep_observed=False)
    assert np.isfinite(D).all() and not np.allclose(D, side.complete(keep_observed=False))


def test_the_mix_is_the_gates_weighted_average_of_the_parts():
    Y, scales, X = _matrix()
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    low, tf = default.low_rank_, default.transform_
    new = np.full((3, Y.shape[1]), np.nan)
    new[:, :3] = Y[:3, :3]
    P_low, spread = low.fold_in(new, covariates=X[:3], return_spread=True)
    P_plain = low.fold_in(new)
    ans = default.neighbours_.answers(tf.transform(new), query_dates=X[:3, 0])
    parts = np.stack([tf.transform(P_low), tf.transform(P_plain), ans["neighbours"],
                      ans["regression"]], axis=2)
    F = gate_features(np.full(3, 3), ans["nearest"], ans["near"][:, 0], ans["near"][:, 1],
                      Y.shape[0], np.ones(3, bool), ans["noise"],
                      (~np.isnan(Y)).sum(axis=0))
    W = default.gate.weights(F, np.isfinite(parts))
    np.testing.assert_allclose(W.sum(axis=2), 1.0)
    want = tf.to_scores((W * np.nan_to_num(parts)).sum(axis=2))
    got, got_spread = default.fold_in(new, covariates=X[:3], return_spread=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert (got_spread >= spread - 1e-12).all() and (got_spread > spread + 1e-6).any()
    # a gate that hands every cell to one part gives that part's numbers
    only_low = make_predictor("default", gate=_leading("low_rank"), **FAST).fit(
        Y, scales, covariates=X)
    np.testing.assert_allclose(only_low.fold_in(new, covariates=X[:3]), P_low, atol=1e-9)
    only_knn = make_predictor("default", gate=_leading("neighbours"), **FAST).fit(
        Y, scales, covariates=X)
    Zk = ans["neighbours"]
    np.testing.assert_allclose(only_knn.fold_in(new, covariates=X[:3])[np.isfinite(Zk)],
                               tf.to_scores(Zk)[np.isfinite(Zk)], atol=1e-9)
    # rows with many known scores are mixed as before the gate, whatever the gate says
    many = np.full(Y.shape[1], np.nan)
    seen = np.flatnonzero(~np.isnan(Y[0]))[:MANY_KNOWN + 2]
    many[seen] = Y[0, seen]
    np.testing.assert_array_equal(only_low.fold_in(many), default.fold_in(many))
    assert np.abs(only_low.fold_in(many) - low.fold_in(many)).max() > 0.1
    with pytest.raises(UsageError, match="gate coef must be 4 rows"):
        make_predictor("default", gate=Gate(((0.0,),)), **FAST).fit(Y, scales)


def test_the_default_on_the_cells_solver_completes_as_als4_and_mixes_new_models(monkeypatch):
    """Side information has no cells solver: on a matrix that takes it, the default drops
    the covariates, and the registered models' completions are the rank-4 ALS on the cells
    (in the default's z space); a new model is still mixed with its nearest registered
    models, and a stored fit restores both."""
    Y, scales, X = _matrix(n_models=120)
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)  # as if large
    monkeypatch.setattr("benchpress.predict.models.blend.use_sparse", lambda *a, **k: True)
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    als4 = make_predictor("als4", spread_prior=SPREAD_PRIOR, z_bound=Z_BOUND,
                          **FAST).fit(Y, scales)
    assert default.solver_ == als4.solver_ == "cells"
    assert type(default.low_rank_) is ALSPredictor and not default.mixes_registered_
    np.testing.assert_array_equal(default.complete(), als4.complete())
    np.testing.assert_array_equal(default.complete_spread(), als4.complete_spread())
    new = np.full((2, Y.shape[1]), np.nan)
    new[:, :4] = Y[:2, :4] + 1.0  # near the first two registered models
    mixed = default.fold_in(new)
    assert np.abs(mixed - als4.fold_in(new)).max() > 0.1  # the neighbours had a say
    only_low = make_predictor("default", gate=_leading("low_rank"), **FAST).fit(
        Y, scales, covariates=X)
    np.testing.assert_allclose(only_low.fold_in(new), als4.fold_in(new), atol=1e-9)
    assert storable(default)
    arrays, meta = fitted_state(default)
    assert meta["low_rank_class"] == "ALSPredictor"
    twin = restore_state(arrays, meta, Y, scales)["predictor"]
    np.testing.assert_array_equal(twin.fold_in(new), mixed)
    np.testing.assert_array_equal(twin.complete(), default.complete())


def test_a_stored_default_restores_bit_identical_with_its_neighbours():
    Y, scales, X = _matrix()
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    arrays, meta = fitted_state(default)
    assert meta["class"] == "NeighbourBlend" and meta["side_arrays"]
    assert meta["params"]["low_rank__n_starts"] == 3  # every value, spelled out
    twin = restore_state(arrays, meta, Y, scales)["predictor"]
    assert twin.neighbours_.models_ is not None
    np.testing.assert_array_equal(twin.neighbours_.dates_, X[:, 0])
    new = np.full((3, Y.shape[1]), np.nan)
    new[:, 2:6] = Y[3:6, 2:6]
    np.testing.assert_array_equal(twin.fold_in(new, covariates=X[3:6]),
                                  default.fold_in(new, covariates=X[3:6]))
    np.testing.assert_array_equal(twin.complete(), default.complete())
    np.testing.assert_array_equal(twin.complete_spread(), default.complete_spread())
    # a default stored before it was a blend of parts names its old class: refit it
    with pytest.raises(BadInputError, match="SideBlendPredictor fit of method 'default'"):
        restore_state(arrays, {**meta, "class": "SideBlendPredictor"}, Y, scales)


def test_the_regression_reads_its_line_at_the_models_release_date():
    """Benchmark 2 rises by 1 z a year at fixed known scores: a line with a date term gives
    a model released a year after the others 1 z more than one without; where the query
    leaves the models' dates the line's leverage widens its residual variance."""
    rng = np.random.default_rng(4)
    n = 120
    dates = rng.uniform(0.0, 2.0, n)
    known = rng.normal(0, 0.3, size=(n, 2))
    Z = np.column_stack([known, 0.5 * known[:, 0] + (dates - 1.0)
                         + rng.normal(0, 0.02, n)])
    q = np.array([[0.1, 0.0, np.nan]])
    flat, _ = local_regression(q, Z, alpha=1e-3, bandwidth=1.0)
    at = {t: local_regression(q, Z, alpha=1e-3, bandwidth=1.0, dates=dates,
                              query_dates=np.array([t]), date_alpha=1e-3)
          for t in (1.0, 3.0, 5.0)}
    assert at[1.0][0][0, 2] == pytest.approx(0.05, abs=0.05)
    assert at[3.0][0][0, 2] - at[1.0][0][0, 2] == pytest.approx(2.0, abs=0.1)
    assert abs(flat[0, 2] - 0.05) < 0.2  # without the date: the models' average date
    # extrapolated: less sure, the further the less
    assert at[1.0][1][0, 2] < at[3.0][1][0, 2] < at[5.0][1][0, 2]
    # a query without a date (NaN) has no date term: as without dates
    nodate = local_regression(q, Z, alpha=1e-3, bandwidth=1.0, dates=dates,
                              query_dates=np.array([np.nan]))[0]
    np.testing.assert_array_equal(nodate, flat)


def test_nearness_counts_the_models_near_a_row():
    Z = np.array([[0.0, 0.0, 0.0], [0.1, 0.1, 0.1], [0.5, 0.5, 0.5], [3.0, 3.0, np.nan]])
    nearest, near = nearness(np.array([[0.0, 0.0, np.nan]]), Z, radii=(0.3, 0.6))
    assert nearest[0] == pytest.approx(0.0) and near.tolist() == [[2, 3]]
    nearest, near = nearness(Z[:1], Z, radii=(0.3, 0.6), exclude=np.array([0]))
    assert nearest[0] == pytest.approx(0.1) and near.tolist() == [[1, 2]]


def test_local_regression_follows_a_linear_relation_near_the_query():
    """Benchmark 2 is 0.5 + 2 z0 - z1 among the models near the query and something else far
    from it: the kernel-weighted regression gives the near line's value."""
    rng = np.random.default_rng(3)
    near = rng.normal(0, 0.2, size=(40, 2))
    far = rng.normal(3, 0.2, size=(40, 2))
    Z = np.column_stack([np.r_[near[:, 0], far[:, 0]], np.r_[near[:, 1], far[:, 1]],
                         np.r_[0.5 + 2 * near[:, 0] - near[:, 1], -far[:, 0]],
                         rng.normal(size=80)])
    Z[5, 3] = np.nan
    q = np.array([[0.1, -0.2, np.nan, np.nan]])
    got, noise = local_regression(q, Z, alpha=1e-4, bandwidth=0.5)
    assert got[0, 2] == pytest.approx(0.5 + 2 * 0.1 + 0.2, abs=0.02)
    assert np.isnan(got[0, :2]).all()  # the known cells are not predicted
    # too few models with the query's benchmarks and the target: no answer
    Z_few = Z.copy()
    Z_few[9:, 2] = np.nan
    assert np.isnan(local_regression(q, Z_few)[0][0, 2])
    # a model far from every fitted one gets too little kernel weight: no answer
    assert np.isnan(local_regression(np.array([[9.0, 9.0, np.nan, np.nan]]), Z)[0][0, 2])
    # a fitted row asked without itself: its own value does not count
    own = Z[:1].copy()
    own[0, 2:] = np.nan
    Z_out = Z.copy()
    Z_out[0, 2] = 50.0
    with_it = local_regression(own, Z_out, alpha=1e-4)[0][0, 2]
    without = local_regression(own, Z_out, alpha=1e-4, exclude=np.array([0]))[0][0, 2]
    assert without == pytest.approx(0.5 + 2 * Z[0, 0] - Z[0, 1], abs=0.02) and with_it > without + 1
    # how loosely each line fits near the query: benchmark 2 exactly, benchmark 3 (noise of
    # variance 1, unrelated to the known ones) not at all
    assert noise[0, 2] < 1e-3 and 0.5 < noise[0, 3] < 2.0 and np.isnan(noise[0, :2]).all()
    np.testing.assert_array_equal(np.isnan(noise), np.isnan(got))  # a variance where a line
