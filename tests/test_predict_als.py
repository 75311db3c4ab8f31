"""BiasALS / ALSEnsemble: recovery, determinism, equality with the loop oracle."""

import numpy as np
import pytest
from reference import loop_als_fit, loop_ensemble_predict, loop_fold_in

from benchpress.errors import NotFittedError
from benchpress.predict import ALSEnsemble, BiasALS
from benchpress.predict.models.als import ALSConfig, spd_solve


def _low_rank(seed=0, n_m=40, n_b=30, rank=2, frac=0.6):
    rng = np.random.default_rng(seed)
    full = (0.3 + rng.normal(0, 1, n_m)[:, None] + rng.normal(0, 1, n_b)[None, :]
            + rng.normal(0, 1, (n_m, rank)) @ rng.normal(0, 1, (n_b, rank)).T)
    mask = rng.random(full.shape) < frac
    mask[np.arange(n_m), rng.integers(0, n_b, n_m)] = True
    return full, np.where(mask, full, np.nan)


def test_noiseless_rank2_plus_bias_recovered():
    full, Z = _low_rank()
    model = BiasALS(ALSConfig(2, regularization=1e-6, n_iter=300, init_scale=0.1, random_state=0)).fit(Z)
    pred = model.predict()
    held = np.isnan(Z)
    assert np.abs(pred - full)[~held].max() < 1e-3
    assert np.median(np.abs(pred - full)[held]) < 1e-2
    assert model.U_.shape == (40, 2) and model.V_.shape == (30, 2)
    assert model.model_bias_.shape == (40,) and model.benchmark_bias_.shape == (30,)


def test_fixed_seed_identical_and_seed_matters():
    _, Z = _low_rank(1)
    a = ALSEnsemble(ALSConfig(3, n_starts=5, random_state=7)).fit(Z).predict()
    b = ALSEnsemble(ALSConfig(3, n_starts=5, random_state=7)).fit(Z).predict()
    c = ALSEnsemble(ALSConfig(3, n_starts=5, random_state=8)).fit(Z).predict()
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("params", [
    dict(rank=2, regularization=0.1, n_iter=40, init_scale=0.01),            # published
    dict(rank=4, regularization=0.1, n_iter=30, init_scale=0.1),             # default
    dict(rank=3, regularization=0.5, bias_regularization=0.05, n_iter=15, init_scale=0.1),
])
def test_vectorized_equals_loop_oracle(params):
    rng = np.random.default_rng(3)
    _, Z = _low_rank(3, n_m=25, n_b=20)
    Z = Z + np.where(np.isnan(Z), 0, rng.normal(0, 0.3, Z.shape))   # noisy, not exactly low rank
    Z[:, 5] = np.nan                                             # an empty benchmark column
    fast = ALSEnsemble(ALSConfig(n_starts=3, random_state=11, **params)).fit(Z)
    slow = loop_ensemble_predict(Z, n_starts=3, random_state=11, **params)
    assert np.max(np.abs(fast.predict() - slow)) < 1e-6
    mu, a, c, U, V = loop_als_fit(Z, seed=11, **params)
    assert abs(fast.mu_[0] - mu) < 1e-6
    assert np.max(np.abs(fast.U_[0] - U)) < 1e-6 and np.max(np.abs(fast.V_[0] - V)) < 1e-6
    # fold-in of a new row against start 0
    row = Z[0].copy()
    row[np.isnan(row)] = np.nan
    reg = {k: params[k] for k in ("regularization", "bias_regularization") if k in params}
    want = loop_fold_in(row, mu, c, V, **reg)
    got = fast.fold_in_starts(row[None])[0, 0]
    assert np.max(np.abs(got - want)) < 1e-6


def test_spd_solve_matches_numpy():
    rng = np.random.default_rng(4)
    M = rng.normal(size=(50, 5, 5))
    A = M @ M.transpose(0, 2, 1) + 0.1 * np.eye(5)
    b = rng.normal(size=(50, 5))
    assert np.allclose(spd_solve(A, b), np.linalg.solve(A, b[..., None])[..., 0], atol=1e-10)


def test_fold_in_single_model():
    full, Z = _low_rank(5)
    model = BiasALS(ALSConfig(2, regularization=1e-6, n_iter=300, init_scale=0.1, random_state=0)).fit(Z[1:])
    known = np.where(np.arange(30) % 2 == 0, full[0], np.nan)
    row = model.fold_in(known)
    assert row.shape == (30,)
    assert np.median(np.abs(row - full[0])) < 0.05
    assert model.fold_in(known[None]).shape == (1, 30)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        BiasALS().predict()
    with pytest.raises(NotFittedError):
        ALSEnsemble().predict()
