"""The two blends (benchpress/predict/models/blend.py): the default, side information under the
nearest models, and `blend`, als4 under them."""

import numpy as np
import pytest

from benchpress.errors import UsageError
from benchpress.predict import SPREAD_PRIOR, Z_BOUND, make_predictor
from benchpress.predict.models import als_predictor as predictor_mod
from benchpress.predict.state import fitted_state, restore_state, storable
from benchpress.predict.models.blend import BlendPredictor, NeighbourMix, SideBlendPredictor
from benchpress.predict.models.knn import local_regression
from benchpress.scales import BenchmarkScales

FAST = dict(n_starts=3)


def _matrix(seed=0, n_models=80, n_bench=20):
    """Low-rank logit scores with a binary covariate that moves every benchmark."""
    rng = np.random.default_rng(seed)
    x = (rng.random(n_models) < 0.5).astype(float)
    U, V = rng.normal(size=(n_models, 2)), rng.normal(size=(n_bench, 2))
    logit = 0.5 * U @ V.T + np.outer(x - 0.5, rng.normal(0, 1.5, n_bench))
    Y = 100 / (1 + np.exp(-(logit + rng.normal(0, 0.15, logit.shape))))
    Y[rng.random(Y.shape) < 0.3] = np.nan
    scales = BenchmarkScales(np.array(["percent"] * n_bench), np.zeros(n_bench),
                             np.full(n_bench, 100.0))
    return Y, scales, x[:, None]


def test_the_default_is_side_information_under_the_nearest_models():
    assert type(make_predictor("default")) is SideBlendPredictor
    assert type(make_predictor("blend")) is BlendPredictor
    # each blend takes its low-rank half's parameters and the nearest models' ones
    for blended, low_rank in (("blend", "als4"), ("default", "side")):
        params = set(make_predictor(blended).get_params())
        assert params == set(make_predictor(low_rank).get_params()) | {
            "knn_weights", "knn_k", "knn_min_shared", "reg_weights", "reg_alpha",
            "reg_bandwidth", "reg_noise"}, blended
    Y, scales, X = _matrix()
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    blend = make_predictor("blend", **FAST).fit(Y, scales)
    new = np.full((2, Y.shape[1]), np.nan)
    new[:, :3] = Y[:2, :3]
    # without covariates a new row is blend's, to the bit; with them it moves
    np.testing.assert_array_equal(default.fold_in(new), blend.fold_in(new))
    with_x = default.fold_in(new, covariates=X[:2])
    assert np.abs(with_x - blend.fold_in(new)).max() > 0.1
    # the nearest models are mixed into the side half's rows by known-score count
    P_side, spread = side.fold_in(new, covariates=X[:2], return_spread=True)
    want, gap = default.knn_.mix(P_side, default.transform_.transform(new))
    np.testing.assert_allclose(with_x, want, rtol=0, atol=1e-12)
    _, got_spread = default.fold_in(new, covariates=X[:2], return_spread=True)
    np.testing.assert_allclose(got_spread, np.sqrt(spread ** 2 + 0.25 * gap ** 2), atol=1e-12)
    # a fitted model's completion does not use itself as its neighbour
    D = default.complete(keep_observed=False)
    assert np.isfinite(D).all() and not np.allclose(D, side.complete(keep_observed=False))


def test_weights_are_checked_when_fitted():
    Y, scales, X = _matrix()
    with pytest.raises(UsageError, match=r"knn_weights must be 5 numbers in \[0, 1\]"):
        make_predictor("default", knn_weights=(0.9, 1.5, 0.8, 0.6, 0.35), **FAST).fit(Y, scales)
    with pytest.raises(UsageError, match=r"reg_weights must be 5 numbers in \[0, 1\]"):
        make_predictor("blend", reg_weights=(0.5, 0.5), **FAST).fit(Y, scales)
    with pytest.raises(UsageError, match="reg_bandwidth > 0"):
        make_predictor("blend", reg_bandwidth=0.0, **FAST).fit(Y, scales)
    # weight 0 everywhere: the side half alone
    none = make_predictor("default", knn_weights=(0, 0, 0, 0, 0), reg_weights=(0, 0, 0, 0, 0),
                          **FAST).fit(Y, scales, covariates=X)
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    np.testing.assert_allclose(none.complete(), side.complete(), rtol=0, atol=1e-12)


def test_the_default_on_the_cells_solver_is_als4_and_stores(monkeypatch):
    """Side information has no cells solver: on a matrix that takes it, the default drops
    the covariates and the nearest models, and is the rank-4 ALS on the cells (in the
    default's z space)."""
    Y, scales, X = _matrix(n_models=120)
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)  # as if large
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    als4 = make_predictor("als4", spread_prior=SPREAD_PRIOR, z_bound=Z_BOUND,
                          **FAST).fit(Y, scales)
    assert default.solver_ == als4.solver_ == "cells"
    assert default.covariates_ is None and default.knn_.models_ is None
    np.testing.assert_array_equal(default.complete(), als4.complete())
    np.testing.assert_array_equal(default.complete_spread(), als4.complete_spread())
    assert storable(default)
    arrays, meta = fitted_state(default)
    twin = restore_state(arrays, meta, Y, scales)["predictor"]
    new = np.full(Y.shape[1], np.nan)
    new[:4] = Y[0, :4]
    np.testing.assert_array_equal(twin.fold_in(new), default.fold_in(new))


def test_a_stored_default_restores_bit_identical_with_its_neighbours():
    Y, scales, X = _matrix()
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    arrays, meta = fitted_state(default)
    assert meta["class"] == "SideBlendPredictor" and meta["side_arrays"]
    twin = restore_state(arrays, meta, Y, scales)["predictor"]
    assert isinstance(twin.knn_, NeighbourMix) and twin.knn_.models_ is not None
    new = np.full((3, Y.shape[1]), np.nan)
    new[:, 2:6] = Y[3:6, 2:6]
    np.testing.assert_array_equal(twin.fold_in(new, covariates=X[3:6]),
                                  default.fold_in(new, covariates=X[3:6]))
    np.testing.assert_array_equal(twin.complete(), default.complete())
    np.testing.assert_array_equal(twin.complete_spread(), default.complete_spread())
    # stored before the regression's weight followed its fit and before the z space had a
    # spread prior and a bound (no reg_noise, spread_prior, z_bound): restored as it
    # predicted then, not with today's defaults
    then_fit = make_predictor("default", reg_noise=0.0, spread_prior=0.0, z_bound=0.0,
                              **FAST).fit(Y, scales, covariates=X)
    arrays0, meta0 = fitted_state(then_fit)
    old = {k: v for k, v in meta0["params"].items()
           if k not in ("reg_noise", "spread_prior", "z_bound")}
    then = restore_state(arrays0, {**meta0, "params": old}, Y, scales)["predictor"]
    assert (then.reg_noise, then.spread_prior, then.z_bound) == (0.0, 0.0, 0.0)
    assert min(default.reg_noise, default.spread_prior, default.z_bound) > 0
    far = new.copy()
    far[0, 2] = 1e4  # far outside: today's bound would clip it, the old fit does not
    for rows in (new, far):
        np.testing.assert_array_equal(then.fold_in(rows, covariates=X[3:6]),
                                      then_fit.fold_in(rows, covariates=X[3:6]))


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


def test_the_local_regression_is_mixed_in_by_known_count():
    """With the nearest models' weight 0 and the regression's 1 up to 5 scores (not shrunk
    by its fit: ``reg_noise=0``), a new row with 3 scores is the regression wherever it
    answers, the low-rank half elsewhere; with more than 8 scores (weight 0) the regression
    is not asked."""
    Y, scales, _ = _matrix()
    only_reg = make_predictor("blend", knn_weights=(0, 0, 0, 0, 0),
                              reg_weights=(1, 1, 1, 0, 0), reg_noise=0, **FAST).fit(Y, scales)
    als = make_predictor("blend", knn_weights=(0, 0, 0, 0, 0), reg_weights=(0, 0, 0, 0, 0),
                         **FAST).fit(Y, scales)
    tf = only_reg.transform_
    new = np.full((2, Y.shape[1]), np.nan)
    new[:, :3] = Y[:2, :3]
    Zr, _ = local_regression(tf.transform(new), only_reg.knn_.models_.Z_,
                             alpha=only_reg.reg_alpha)
    assert np.isfinite(Zr).sum() > 20
    got, base = only_reg.fold_in(new), als.fold_in(new)
    np.testing.assert_allclose(got[np.isfinite(Zr)], tf.to_scores(Zr)[np.isfinite(Zr)], atol=1e-9)
    np.testing.assert_array_equal(got[~np.isfinite(Zr)], base[~np.isfinite(Zr)])
    many = np.full(Y.shape[1], np.nan)
    many[:10] = Y[0, :10]
    np.testing.assert_array_equal(only_reg.fold_in(many), als.fold_in(many))


def test_the_regression_weighs_less_where_it_fits_the_near_models_loosely():
    """With ``reg_noise`` v0 a cell's regression weight is v0 / (v0 + v), v its residual
    variance near the row: between the low-rank half and the regression, nearer the
    regression where its line fits tightly; a larger v0 trusts it more everywhere."""
    Y, scales, _ = _matrix()
    kw = dict(knn_weights=(0, 0, 0, 0, 0), reg_weights=(1, 1, 1, 0, 0), **FAST)
    full = make_predictor("blend", reg_noise=0, **kw).fit(Y, scales)
    als = make_predictor("blend", **{**kw, "reg_weights": (0, 0, 0, 0, 0)}).fit(Y, scales)
    tf = full.transform_
    new = np.full((2, Y.shape[1]), np.nan)
    new[:, :3] = Y[:2, :3]
    Zr, noise = local_regression(tf.transform(new), full.knn_.models_.Z_,
                                 alpha=full.reg_alpha)
    cells = np.isfinite(Zr)
    assert cells.sum() > 20 and (noise[cells] > 0).all()
    z_als, z_reg = tf.transform(als.fold_in(new)), tf.transform(full.fold_in(new))
    for v0 in (0.05, 0.5):
        shrunk = make_predictor("blend", reg_noise=v0, **kw).fit(Y, scales)
        a = v0 / (v0 + noise[cells])
        np.testing.assert_allclose(tf.transform(shrunk.fold_in(new))[cells],
                                   (1 - a) * z_als[cells] + a * z_reg[cells], atol=1e-9)
    gap = lambda v0: np.abs(tf.transform(make_predictor("blend", reg_noise=v0, **kw)
                                         .fit(Y, scales).fold_in(new)) - z_reg)[cells]
    assert (gap(0.5) <= gap(0.05) + 1e-12).all() and gap(0.5).sum() < gap(0.05).sum()
    with pytest.raises(UsageError, match="reg_noise must be >= 0"):
        make_predictor("blend", reg_noise=-1, **FAST).fit(Y, scales)
