"""The two blends (benchpress/predict/blend.py): the default, side information under the
nearest models, and `blend`, als4 under them."""

import numpy as np
import pytest

from benchpress.errors import UsageError
from benchpress.predict import make_predictor
from benchpress.predict import predictor as predictor_mod
from benchpress.predict.artifact import fitted_state, restore_state, storable
from benchpress.predict.blend import BlendPredictor, NeighbourMix, SideBlendPredictor
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
    # weight 0 everywhere: the side half alone
    none = make_predictor("default", knn_weights=(0, 0, 0, 0, 0), **FAST).fit(Y, scales,
                                                                               covariates=X)
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    np.testing.assert_allclose(none.complete(), side.complete(), rtol=0, atol=1e-12)


def test_the_default_on_the_cells_solver_is_als4_and_stores(monkeypatch):
    """Side information has no cells solver: on a matrix that takes it, the default drops
    the covariates and the nearest models, and is the rank-4 ALS on the cells."""
    Y, scales, X = _matrix(n_models=120)
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)  # as if large
    default = make_predictor("default", **FAST).fit(Y, scales, covariates=X)
    als4 = make_predictor("als4", **FAST).fit(Y, scales)
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
