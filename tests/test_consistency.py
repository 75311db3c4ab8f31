"""The given-score check (`benchpress.predict.checks.consistency`): each given score predicted
from the others; the one most at odds with its prediction is named past the threshold."""

from __future__ import annotations

import numpy as np
import pytest

from benchpress.errors import NotFittedError
from benchpress.predict import make_predictor
from benchpress.predict.checks.consistency import (CONTRADICTION_Z, MIN_GIVEN, check_space,
                                            leave_one_out, most_contradicted)
from benchpress.scales import BenchmarkScales


@pytest.fixture(scope="module")
def fitted():
    """80 models of one skill each on 10 percent benchmarks (plus a little noise)."""
    rng = np.random.default_rng(3)
    skill = rng.normal(size=(80, 1))
    Y = np.clip(55 + 15 * skill + 3 * rng.normal(size=(80, 10)), 2, 98)
    scales = BenchmarkScales(np.array(["percent"] * 10), np.zeros(10), np.full(10, 100.0))
    pred = make_predictor("als4", n_starts=3).fit(Y, scales)
    return pred, check_space(Y, scales), Y


def new_row(Y, given):
    """A new model as strong as the registry's 75th percentile, its scores at `given`."""
    row = np.full(Y.shape[1], np.nan)
    row[given] = np.percentile(Y, 75, axis=0)[given]
    return row


def test_consistent_scores_are_not_named(fitted):
    pred, space, Y = fitted
    expected, z = leave_one_out(pred, space, new_row(Y, [0, 1, 2, 3]))
    assert np.isfinite(z[:4]).all() and np.isnan(z[4:]).all() and np.isnan(expected[4:]).all()
    assert np.nanmax(np.abs(z)) < 1.5
    assert most_contradicted(z) is None


def test_a_dropped_digit_is_named_with_its_prediction_from_the_others(fitted):
    pred, space, Y = fitted
    row = new_row(Y, [0, 1, 2, 3])
    typed = row.copy()
    typed[2] = row[2] / 10  # 7.1 for 71
    expected, z = leave_one_out(pred, space, typed)
    assert most_contradicted(z) == 2
    assert z[2] < -CONTRADICTION_Z                      # far below what the others imply
    assert expected[2] == pytest.approx(row[2], abs=6)  # which is about the true score
    # the check never changes the row: the fold-in of the typed row is the predictor's own
    np.testing.assert_array_equal(pred.fold_in(typed), pred.fold_in(typed.copy()))


def test_too_few_scores_are_not_checked(fitted):
    pred, space, Y = fitted
    row = new_row(Y, [0, 1])
    row[1] /= 10
    assert MIN_GIVEN == 3
    expected, z = leave_one_out(pred, space, row)
    assert np.isnan(expected).all() and np.isnan(z).all() and most_contradicted(z) is None


def test_threshold_is_strict_and_nan_safe():
    z = np.array([np.nan, 2.0, -3.5, np.nan])
    assert most_contradicted(z) == 2
    assert most_contradicted(z, threshold=3.5) is None
    assert most_contradicted(np.full(3, np.nan)) is None


def test_a_fit_without_rows_measures_in_the_predictors_space_unbounded(fitted):
    pred, space, Y = fitted
    scales = pred.scales_
    bounded = make_predictor("default", n_starts=2).fit(Y, scales).transform_
    assert bounded.z_bound > 0
    empty = np.zeros((0, Y.shape[1]))
    unbounded = check_space(empty, scales, bounded)
    assert unbounded.z_bound == 0 and bounded.z_bound > 0   # a copy: the predictor's kept
    far = np.full((1, Y.shape[1]), 1.0)                     # 1% everywhere: far below all
    assert np.abs(unbounded.transform(far)).max() > np.abs(bounded.transform(far)).max()
    with pytest.raises(NotFittedError):
        check_space(empty, scales)
