"""ScaleTransform / BenchmarkScales: round trip, clipping, logit rules."""

import numpy as np
import pytest

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict import BenchmarkScales, ScaleTransform

SCALES = BenchmarkScales(
    kind=np.array(["percent", "index", "elo", "dollars", "score"]),
    lower=np.array([0.0, 0.0, 800.0, 0.0, np.nan]),
    upper=np.array([100.0, 100.0, 1600.0, np.nan, np.nan]),
)


def _matrix(rng, n=30):
    Y = np.column_stack([
        rng.uniform(2, 98, n), rng.uniform(10, 90, n), rng.uniform(900, 1500, n),
        rng.uniform(100, 1e5, n), rng.normal(0, 3, n),
    ])
    Y[rng.random(Y.shape) < 0.2] = np.nan
    return Y


def test_logit_rules_follow_metadata():
    assert SCALES.logit_mask("percent").tolist() == [True, False, False, False, False]
    assert SCALES.logit_mask("percent_or_0_100").tolist() == [True, True, False, False, False]
    assert not SCALES.logit_mask("none").any()
    with pytest.raises(UsageError):
        SCALES.logit_mask("bogus")


def test_round_trip_and_standardization():
    rng = np.random.default_rng(0)
    Y = _matrix(rng)
    for rule in ("percent", "percent_or_0_100", "none"):
        tr = ScaleTransform.from_scales(SCALES, logit_rule=rule).fit(Y)
        Z = tr.transform(Y)
        assert np.array_equal(np.isnan(Z), np.isnan(Y))
        assert np.allclose(np.nanmean(Z, axis=0), 0.0, atol=1e-12)
        assert np.allclose(np.nanstd(Z, axis=0), 1.0, atol=1e-12)
        back = tr.inverse_transform(Z)
        assert np.allclose(back[~np.isnan(Y)], Y[~np.isnan(Y)], rtol=1e-10, atol=1e-9)


def test_cols_transform_single_cells_like_the_full_matrix():
    rng = np.random.default_rng(2)
    Y = _matrix(rng)
    tr = ScaleTransform.from_scales(SCALES, logit_rule="percent_or_0_100").fit(Y)
    i, j = np.nonzero(~np.isnan(Y))
    z = tr.transform(Y[i, j], cols=j)
    assert np.array_equal(z, tr.transform(Y)[i, j])
    Z = 3.0 * rng.normal(size=Y.shape)
    assert np.array_equal(tr.inverse_transform(Z[i, j], cols=j), tr.inverse_transform(Z)[i, j])
    with pytest.raises(BadInputError):
        tr.transform(Y[i, j], cols=j[:-1])

def test_inverse_clips_to_bounds_and_logit_eps():
    rng = np.random.default_rng(1)
    tr = ScaleTransform.from_scales(SCALES, logit_rule="percent").fit(_matrix(rng))
    huge = np.full((2, 5), 50.0)
    huge[1] = -50.0
    out = tr.inverse_transform(huge)
    assert out[0, 0] <= 100 and out[1, 0] >= 0          # percent via logit stays inside
    assert out[0, 1] == 100 and out[1, 1] == 0          # index clipped to [0, 100]
    assert out[0, 2] == 1600 and out[1, 2] == 800       # elo clipped to its metadata range
    assert out[1, 3] == 0 and out[0, 3] > 1e5           # dollars: only the lower bound
    assert np.isfinite(out[:, 4]).all() and out[1, 4] < -50  # unbounded score untouched
    # 0 and 100 go to the eps-clipped logit (eps = 0.5 points)
    lat = tr.to_latent(np.array([[0.0, 50, 1000, 1, 0], [100.0, 50, 1000, 1, 0]]))
    assert lat[0, 0] == pytest.approx(np.log(0.005 / 0.995))
    assert lat[1, 0] == pytest.approx(-lat[0, 0])


def test_constant_and_empty_columns():
    Y = np.full((4, 5), np.nan)
    Y[:, 0] = 40.0
    tr = ScaleTransform.from_scales(SCALES).fit(Y)
    assert tr.std_[0] == 1.0 and tr.std_[1] == 1.0 and tr.mean_[1] == 0.0
    assert tr.n_observed_.tolist() == [4, 0, 0, 0, 0]


def test_errors():
    tr = ScaleTransform.from_scales(SCALES)
    with pytest.raises(NotFittedError):
        tr.transform(np.zeros((1, 5)))
    with pytest.raises(BadInputError):
        tr.fit(np.zeros((2, 3)))
    with pytest.raises(BadInputError):
        ScaleTransform([0.0], [np.nan], [True])           # logit needs finite bounds
    with pytest.raises(BadInputError):
        BenchmarkScales(np.array(["percent"]), np.array([5.0]), np.array([1.0]))
    with pytest.raises(BadInputError):
        BenchmarkScales.from_records([], ["x"])


def test_from_records_blank_upper_is_unbounded():
    rows = [{"benchmark_id": "a", "scale": "dollars", "lower": "0", "upper": ""},
            {"benchmark_id": "b", "scale": "percent", "lower": "0", "upper": "100"}]
    sc = BenchmarkScales.from_records(rows, ["b", "a"])
    assert sc.kind.tolist() == ["percent", "dollars"]
    assert np.isnan(sc.upper[1]) and sc.upper[0] == 100
