"""Scales and directions as data (issue 43 item 4): a benchmark where lower is better is
turned, not misread; one without a direction is left out and said so; figures are never
pooled across scales; the speed-ups of the temporal yardstick give the same numbers."""

import numpy as np
import pytest

from benchpress.predict import BenchmarkScales, ScaleTransform, evaluate, make_folds, make_predictor
from benchpress.predict.evaluation.temporal import temporal_evaluation
from benchpress.predict.evaluation.fit_memo import FitMemo
from benchpress.predict.intervals.calibrator import score_bounds
from benchpress.predict.models.covariate_prior import masked_ridge


def _percent_matrix(seed=0, n=40, b=7):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 2)) @ rng.normal(size=(2, b)) + rng.normal(0, 0.2, (n, b))
    Y = 100.0 / (1.0 + np.exp(-logits))
    Y[rng.random(Y.shape) < 0.25] = np.nan
    Y[:, 0] = np.where(np.isnan(Y[:, 0]), Y[:, 1], Y[:, 0])  # every row has a score
    return Y


def _scales(b, direction=None, kind="percent"):
    kinds = np.array([kind] * b) if isinstance(kind, str) else np.asarray(kind)
    return BenchmarkScales(kinds, np.zeros(b), np.full(b, 100.0), direction=direction)


def test_a_lower_is_better_column_is_its_complement_turned():
    """A hallucination rate (100 - accuracy, lower is better) is predicted as exactly 100
    minus the accuracy's prediction: the fit sees the same standardized matrix."""
    Y = _percent_matrix()
    b = Y.shape[1]
    rate = Y.copy()
    rate[:, 2] = 100.0 - Y[:, 2]
    direction = np.ones(b)
    direction[2] = -1
    given = make_predictor("default").fit(Y, _scales(b)).complete()
    turned = make_predictor("default").fit(rate, _scales(b, direction)).complete()
    assert np.allclose(turned[:, 2], 100.0 - given[:, 2], atol=1e-6)
    others = np.arange(b) != 2
    assert np.allclose(turned[:, others], given[:, others], atol=1e-6)
    # read as if higher were better, the same column predicts something else
    misread = make_predictor("default").fit(rate, _scales(b)).complete()
    assert not np.allclose(misread[:, 2], turned[:, 2], atol=1e-3)


def test_interval_bounds_of_a_turned_column_stay_ordered():
    sc = _scales(2, np.array([1.0, -1.0]))
    tr = ScaleTransform.from_scales(sc).fit(_percent_matrix(b=2))
    cols = np.array([0, 1])
    lower, upper = score_bounds(tr, np.array([-0.5, -0.5]), np.array([0.5, 0.5]), cols)
    assert (lower < upper).all()
    mid = tr.inverse_transform(np.zeros(2), cols=cols)
    assert ((lower < mid) & (mid < upper)).all()


def test_a_benchmark_without_direction_is_left_out_and_said_so():
    Y = _percent_matrix()
    b = Y.shape[1]
    j = b - 1                                          # a summary's length in words
    direction = np.ones(b)
    direction[j] = 0
    sc = BenchmarkScales(np.array(["percent"] * (b - 1) + ["words"]), np.zeros(b),
                         np.r_[np.full(b - 1, 100.0), np.nan], direction=direction)
    assert sc.left_out()[j].startswith("no direction") and (sc.left_out()[:j] == "").all()
    assert sc.labels()[j] == "words (no direction)"
    words = Y.copy()
    words[:, j] = np.where(np.isnan(Y[:, j]), np.nan, 350.0)
    noise = words.copy()
    noise[:, j] = np.where(np.isnan(Y[:, j]), np.nan, np.arange(Y.shape[0]) * 97.0)
    a = make_predictor("default").fit(words, sc).complete(keep_observed=False)
    c = make_predictor("default").fit(noise, sc).complete(keep_observed=False)
    assert np.isnan(a[:, j]).all()                     # never predicted
    assert np.allclose(a[:, :j], c[:, :j])             # never read


def test_heldout_figures_are_never_pooled_across_scales():
    Y = _percent_matrix(seed=3)
    b = Y.shape[1]
    direction = np.ones(b)
    direction[1] = -1
    kinds = np.array(["percent"] * b)
    kinds[3] = "elo"
    Y[:, 3] = 1000.0 + 30.0 * Y[:, 3]                 # Elo points, errors of tens
    sc = BenchmarkScales(kinds, np.r_[0.0, 0, 0, np.nan, 0, 0, 0],
                         np.r_[100.0, 100, 100, np.nan, 100, 100, 100], direction=direction)
    res = evaluate(make_predictor("default"), Y, sc, make_folds(~np.isnan(Y), n_folds=3, seed=1))
    assert set(res.per_scale["scale"]) == {"percent", "percent (lower is better)", "elo"}
    head = res.cells.filter(res.cells["scale"] == "percent")
    assert res.overall.n_cells == head.height < res.cells.height
    assert res.overall.medae == pytest.approx(head["abs_error"].median())
    elo = res.per_scale.filter(res.per_scale["scale"] == "elo")["medae"][0]
    assert elo > 3 * res.overall.medae              # pooled, it would have moved the median


def test_temporal_cells_label_each_scale_and_the_headline_is_percent_only():
    rng = np.random.default_rng(5)
    Y = _percent_matrix(seed=5, n=150)
    b = Y.shape[1]
    direction = np.ones(b)
    direction[2] = -1
    sc = _scales(b, direction)
    months = np.array([f"2025-{m:02d}-15" for m in rng.integers(1, 13, Y.shape[0])], dtype=object)
    kw = dict(cutoffs=["2025-10-01", "2025-11-01", "2025-12-01"], known=(1, 3))
    res = temporal_evaluation({"default": make_predictor("default")}, Y, sc, months,
                              benchmark_ids=[f"b{j}" for j in range(b)],
                              model_ids=[f"m{i}" for i in range(Y.shape[0])], min_scores=3, **kw)
    labels = set(res.cells["scale"])
    assert labels == {"percent", "percent (lower is better)"}
    assert res.summary()["n_cells"].sum() < res.cells.filter(res.cells["k"].is_in([1, 3])).height


def test_fit_memo_hands_out_the_same_fit_for_the_same_content():
    Y = _percent_matrix()
    sc = _scales(Y.shape[1])
    memo = FitMemo(max_fits=2)
    a = memo.fit(make_predictor("default"), Y, sc)
    b = memo.fit(make_predictor("default"), Y.copy(), sc)
    turned = memo.fit(make_predictor("default"), Y, _scales(Y.shape[1], -np.ones(Y.shape[1])))
    assert a is b and turned is not a and (memo.hits, memo.misses) == (1, 2)
    fresh = make_predictor("default").fit(Y, sc)
    assert np.array_equal(a.complete(), fresh.complete(), equal_nan=True)


def test_masked_ridge_equals_the_dense_per_column_solve():
    rng = np.random.default_rng(0)
    n, p, b = 120, 30, 12
    X = rng.normal(size=(n, p))
    X[:, ::3] = 0.0                               # covariates absent from every row
    X[rng.random((n, p)) < 0.5] = 0.0
    obs = rng.random((n, b)) < 0.3
    obs[:10] = False
    R = np.where(obs, rng.normal(size=(n, b)), 0.0)
    A = np.einsum("ij,ik,il->jkl", obs.astype(float), X, X) + 0.7 * np.eye(p)
    dense = np.linalg.solve(A, (X.T @ R).T[..., None])[..., 0].T
    assert np.allclose(masked_ridge(obs, X, R, 0.7), dense, atol=1e-10)
    assert not masked_ridge(np.zeros_like(obs), X, R * 0, 0.7).any()
