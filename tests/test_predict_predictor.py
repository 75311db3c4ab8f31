"""Public predictors on the real matrix: complete, fold_in, spread, baselines."""

import numpy as np
import pytest
from reference import loop_predict_scores

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict import (
    PRESETS, available_methods, clone, make_folds, make_predictor, param_overrides,
)

# about 5 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=5)


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
    # the loop oracle reads every column as given (the paper's space)
    fast = make_predictor("als4", n_starts=2, n_iter=10, directions=False).fit(Y, scales)
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
    """Every method predicts held-out cells within range and far better than one constant
    guess, keeps its name and parameters through `clone`, and folds a new row in."""
    Y, _, _, scales = paper_matrix
    cells = make_folds(~np.isnan(Y), n_folds=3, seed=0).test_cells[0]
    i, j = cells[:, 0], cells[:, 1]
    train = Y.copy()
    train[i, j] = np.nan
    p = make_predictor(method)
    twin = clone(p)
    assert twin.method == method and twin.get_params() == p.get_params() and twin is not p
    full = p.fit(train, scales).complete(keep_observed=False)
    assert full.shape == Y.shape and np.isfinite(full).all()
    lo = np.where(np.isnan(scales.lower), -np.inf, scales.lower)
    hi = np.where(np.isnan(scales.upper), np.inf, scales.upper)
    assert ((full >= lo - 1e-9) & (full <= hi + 1e-9)).all()
    err = np.median(np.abs(full[i, j] - Y[i, j]))
    constant = np.median(np.abs(np.nanmean(train) - Y[i, j]))
    assert err < 0.5 * constant, (method, err, constant)
    row = np.where(np.arange(Y.shape[1]) < 40, Y[0], np.nan)
    folded = p.fold_in(row)
    assert folded.shape == (Y.shape[1],) and np.isfinite(folded).all()
    assert not np.array_equal(folded, p.fold_in(np.where(np.arange(Y.shape[1]) < 40, Y[1], np.nan)))


def test_params_clone_and_overrides():
    # the default's parameters are its parts' (part__name), a name one part holds alone
    # reaching that part
    p = make_predictor("default", n_starts=60)
    assert p.method == "default" and p.low_rank.get_params()["n_starts"] == 60
    assert param_overrides(p) == {"low_rank__n_starts": 60}
    assert p.set_params(rank=3) is p
    assert param_overrides(p) == {"low_rank__n_starts": 60, "low_rank__rank": 3}
    twin = clone(p)
    assert (twin.method, twin.low_rank.rank, twin.low_rank.n_starts) == ("default", 3, 60)
    assert twin.low_rank is not p.low_rank
    with pytest.raises(UsageError, match="no parameter"):
        p.set_params(n_startz=1)
    with pytest.raises(UsageError, match="not a parameter"):
        make_predictor("default", method="published")
    with pytest.raises(UsageError, match="predictor object"):
        clone("default")
    knn = make_predictor("knn", k=2)
    assert clone(knn).method == "knn" and param_overrides(knn) == {"k": 2}


def test_fold_in_default_is_the_cheapest_way_on_every_predictor(paper_matrix):
    """refit=None: a solve for ALS (equal to refit=False), a refit for a baseline (equal
    to refit=True, which has no solve and refuses refit=False)."""
    Y, _, _, scales = paper_matrix
    row = np.where(np.arange(Y.shape[1]) < 30, Y[5], np.nan)
    als = make_predictor("published", n_starts=2, n_iter=10).fit(Y, scales)
    np.testing.assert_array_equal(als.fold_in(row), als.fold_in(row, refit=False))
    mean = make_predictor("model_mean").fit(Y, scales)
    np.testing.assert_array_equal(mean.fold_in(row), mean.fold_in(row, refit=True))
    with pytest.raises(UsageError, match="without a refit"):
        mean.fold_in(row, refit=False)
    # kNN has a solve of its own: the new row's nearest fitted models, no refit
    knn = make_predictor("knn").fit(Y, scales)
    np.testing.assert_array_equal(knn.fold_in(row), knn.fold_in(row, refit=False))


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


def test_predictor_and_side_do_not_import_each_other():
    """Issue 25: predictor.py (now models/als_predictor.py) imported side.py at its bottom to
    register "side"; the registry (predict/factory.py) imports every method's module now, so
    the import goes one way (side builds on the ALS predictor)."""
    import ast
    import subprocess
    import sys

    from benchpress.predict import factory
    from benchpress.predict.models import als_predictor as predictor
    from benchpress.predict.models import side_info as side

    def imported(module) -> set:
        tree = ast.parse(open(module.__file__, encoding="utf-8").read())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}

    assert "benchpress.predict.models.als_predictor" in imported(side)
    assert "benchpress.predict.models.side_info" not in imported(predictor)
    assert not {m for m in imported(predictor) | imported(side) if m.endswith(".factory")}
    assert "benchpress.predict.models.side_info" in imported(factory)
    # whichever module a program imports first, "side" is a method
    for first in ("benchpress.predict.models.als_predictor", "benchpress.predict.models.side_info"):
        code = (f"import {first}; "
                "from benchpress.predict.factory import make_predictor; "
                "print(type(make_predictor('side')).__name__)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        assert out.stdout.strip() == "SideInfoPredictor"
