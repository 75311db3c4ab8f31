"""Public predictors on the real matrix: complete, fold_in, spread, baselines."""

import numpy as np
import pytest
from reference import loop_predict_scores

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict import PRESETS, available_methods, make_predictor


@pytest.fixture(scope="module")
def fitted_default(paper_matrix):
    Y, _, _, scales = paper_matrix
    return make_predictor("default").fit(Y, scales)


def test_complete_shapes_ranges_and_observed(paper_matrix, fitted_default):
    Y, _, _, scales = paper_matrix
    full = fitted_default.complete()
    assert full.shape == Y.shape and np.isfinite(full).all()
    obs = ~np.isnan(Y)
    assert np.array_equal(full[obs], Y[obs])
    raw = fitted_default.complete(keep_observed=False)
    lo = np.where(np.isnan(scales.lower), -np.inf, scales.lower)
    hi = np.where(np.isnan(scales.upper), np.inf, scales.upper)
    assert ((raw >= lo) & (raw <= hi)).all()
    spread = fitted_default.complete_spread()
    assert spread.shape == Y.shape and (spread >= 0).all() and spread.max() > 0


def test_deterministic(paper_matrix):
    Y, _, _, scales = paper_matrix
    a = make_predictor("published").fit(Y, scales).complete()
    b = make_predictor("published").fit(Y, scales).complete()
    assert np.array_equal(a, b)


def test_predictor_equals_loop_reference(paper_matrix):
    """Whole pipeline (transform + ALS + blend) against the loop oracle, reduced size."""
    Y, _, _, scales = paper_matrix
    params = {**PRESETS["default"], "n_starts": 2, "n_iter": 10}
    fast = make_predictor("default", n_starts=2, n_iter=10).fit(Y, scales)
    slow = loop_predict_scores(Y, scales, **params)
    assert np.nanmax(np.abs(fast.complete(keep_observed=False) - slow)) < 1e-6


def test_fold_in_agrees_with_refit(paper_matrix):
    Y, _, _, scales = paper_matrix
    rng = np.random.default_rng(0)
    diffs, errs_fold, errs_refit = [], [], []
    for i in (3, 40, 77):
        train = np.delete(Y, i, axis=0)
        obs = np.flatnonzero(~np.isnan(Y[i]))
        known = rng.choice(obs, size=max(5, obs.size // 2), replace=False)
        row = np.full(Y.shape[1], np.nan)
        row[known] = Y[i, known]
        pred = make_predictor("default").fit(train, scales)
        fast = pred.fold_in(row)
        slow = pred.fold_in(row, refit=True)
        assert fast.shape == slow.shape == (Y.shape[1],)
        diffs.append(np.abs(fast - slow))
        hidden = np.setdiff1d(obs, known)
        errs_fold.append(np.abs(fast[hidden] - Y[i, hidden]))
        errs_refit.append(np.abs(slow[hidden] - Y[i, hidden]))
    d = np.concatenate(diffs)
    assert np.median(d) < 1.0 and np.percentile(d, 90) < 4.0
    assert abs(np.median(np.concatenate(errs_fold)) - np.median(np.concatenate(errs_refit))) < 1.5
    out, spread = pred.fold_in(np.vstack([row, row]), return_spread=True)
    assert out.shape == spread.shape == (2, Y.shape[1])


@pytest.mark.parametrize("method", ["benchmark_mean", "model_mean", "knn", "soft_impute",
                                    "regression", "published", "als"])
def test_all_methods_run(paper_matrix, method):
    Y, _, _, scales = paper_matrix
    p = make_predictor(method).fit(Y, scales)
    full = p.complete(keep_observed=False)
    assert full.shape == Y.shape and np.isfinite(full).all()
    row = np.where(np.arange(Y.shape[1]) < 40, Y[0], np.nan)
    assert p.fold_in(row).shape == (Y.shape[1],)


def test_method_registry_and_errors(paper_matrix):
    Y, _, _, scales = paper_matrix
    assert {"default", "published", "benchmark_mean", "model_mean", "knn",
            "soft_impute"} <= set(available_methods())
    with pytest.raises(UsageError):
        make_predictor("nope")
    with pytest.raises(UsageError):
        make_predictor("default", not_a_param=1)
    with pytest.raises(NotFittedError):
        make_predictor("default").complete()
    with pytest.raises(BadInputError):
        make_predictor("default").fit(Y[:, :5], scales)


def test_unscored_benchmark_is_nan(paper_matrix):
    Y, _, _, scales = paper_matrix
    Y2 = Y.copy()
    Y2[:, 7] = np.nan
    full = make_predictor("published").fit(Y2, scales).complete()
    assert np.isnan(full[:, 7]).all() and np.isfinite(np.delete(full, 7, axis=1)).all()


def test_edge_cases(paper_matrix):
    Y, _, _, scales = paper_matrix
    Y2 = Y.copy()
    Y2[3] = np.nan                                      # a model without any score
    p = make_predictor("default").fit(Y2, scales)
    assert np.isfinite(p.complete()).all()
    empty = p.fold_in(np.full(Y.shape[1], np.nan))     # no known score -> benchmark-level guess
    assert np.isfinite(empty).all()
    bias_only = make_predictor("als", rank=0, n_starts=1).fit(Y, scales).complete()
    assert np.isfinite(bias_only).all()
