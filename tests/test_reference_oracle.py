"""The score transform and the pairwise regression against the loop oracle (tests/reference.py),
piece by piece on the real 2026-05 matrix (the ALS engine is compared in test_predict_als.py,
the whole predictor in test_predict_predictor.py)."""

import numpy as np
import pytest
from reference import LoopTransform, loop_pairwise_regression

from benchpress.predict import PairwiseRegression, ScaleTransform


def assert_same(got, want, rtol=1e-8, atol=1e-10):
    """Equal NaN patterns, and equal values to ``rtol`` where both are numbers."""
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("rule", ["percent", "percent_or_0_100", "none"])
def test_scale_transform_equals_loop(paper_matrix, rule):
    Y, _, _, scales = paper_matrix
    # the loop oracle is the paper's space: every column as given (no turn, no log)
    fast = ScaleTransform.from_scales(scales, logit_rule=rule, eps=0.5, as_given=True).fit(Y)
    slow = LoopTransform(scales, logit_rule=rule, eps=0.5).fit(Y)
    assert fast.logit.tolist() == slow.logit
    assert_same(fast.transform(Y), slow.to_z(Y))
    # back to scores from values off the data (far tails included), clipped to each range;
    # a benchmark nobody has a score on stays NaN
    Z = np.random.default_rng(0).normal(0.0, 3.0, Y.shape)
    Y_empty = Y.copy()
    Y_empty[:, 7] = np.nan
    fast.fit(Y_empty)
    slow.fit(Y_empty)
    assert_same(fast.to_scores(Z), slow.to_scores(Z))
    assert np.isnan(slow.to_scores(Z)[:, 7]).all()


def test_pairwise_regression_equals_loop(paper_matrix):
    Y, _, _, scales = paper_matrix
    Z = ScaleTransform.from_scales(scales).fit_transform(Y)
    fast = PairwiseRegression(power=4.0).fit(Z).predict(Z)
    slow = loop_pairwise_regression(Z, power=4.0)
    assert np.isnan(slow).any() and (~np.isnan(slow)).sum() > 0.9 * Z.size
    assert_same(fast, slow)


def test_top_k_regression_in_blocks_equals_one_block(paper_matrix, monkeypatch):
    """The top-k prediction builds (rows, j, l) arrays a block of rows at a time, so that a
    7,000-model registry does not ask for 10 GiB; blocks of one row give the same cells."""
    from benchpress.predict.models import regression

    Y, _, _, scales = paper_matrix
    Z = ScaleTransform.from_scales(scales).fit_transform(Y)
    fitted = PairwiseRegression(k=3, power=4.0).fit(Z)
    whole = fitted.predict(Z)
    monkeypatch.setattr(regression, "_TOPK_BLOCK_CELLS", 1)
    assert_same(fitted.predict(Z), whole, rtol=0, atol=0)
    assert (~np.isnan(whole)).sum() > 0.9 * Z.size
