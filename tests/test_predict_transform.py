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
    # dollars: on a log scale, so never below 0 however far down, unbounded above
    assert 0 <= out[1, 3] < 1e-6 and out[0, 3] > 1e5
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



def test_spread_prior_shrinks_a_thin_logit_column_toward_the_pooled_spread():
    """Two models at 42.0 and 42.6 do not make a benchmark whose spread is 0.3 points: with
    ``spread_prior`` its variance counts the well-observed logit columns' median variance
    as n0 more models, and a new model's 29.5 there is a few standard deviations off, not
    45. Native columns and columns of many models keep (nearly) their own spread."""
    rng = np.random.default_rng(4)
    scales = BenchmarkScales(kind=np.array(["percent"] * 4 + ["elo"]),
                             lower=np.array([0.0] * 4 + [800.0]),
                             upper=np.array([100.0] * 4 + [1600.0]))
    Y = np.column_stack([rng.uniform(20, 80, 40), rng.uniform(10, 90, 40),
                         rng.uniform(30, 70, 40), np.full(40, np.nan),
                         np.r_[1000.0, 1001.0, np.full(38, np.nan)]])
    Y[:2, 3] = [42.0, 42.6]
    own = ScaleTransform.from_scales(scales).fit(Y)
    for n0 in (1.0, 3.0, 10.0):
        tr = ScaleTransform.from_scales(scales, spread_prior=n0).fit(Y)
        pooled = np.median(own.std_[:3] ** 2)
        assert tr.std_[3] ** 2 == pytest.approx((2 * own.std_[3] ** 2 + n0 * pooled) / (2 + n0))
        assert abs(tr.transform(np.array([[50, 50, 50, 29.5, 1000]]))[0, 3]) < 5
        assert abs(own.transform(np.array([[50, 50, 50, 29.5, 1000]]))[0, 3]) > 40
        # every logit column by the same rule; with 40 models and n0 <= 3 the spread moves
        # by under a tenth
        n = own.n_observed_[:4]
        np.testing.assert_allclose(tr.std_[:4] ** 2,
                                   (n * own.std_[:4] ** 2 + n0 * pooled) / (n + n0), rtol=1e-12)
        if n0 <= 3:
            np.testing.assert_allclose(tr.std_[:3], own.std_[:3], rtol=0.1)
        assert tr.std_[4] == own.std_[4]                  # Elo: its own units, its own spread
        np.testing.assert_array_equal(tr.mean_, own.mean_)
        # the cells path gives the same figures
        i, j = np.nonzero(~np.isnan(Y))
        cells = ScaleTransform.from_scales(scales, spread_prior=n0).fit_cells(Y[i, j], j, 5)
        np.testing.assert_allclose(cells.std_, tr.std_, rtol=1e-12)
    with pytest.raises(UsageError, match="spread_prior"):
        ScaleTransform.from_scales(scales, spread_prior=-1)


def test_z_bound_clips_standardized_values_and_nothing_else():
    rng = np.random.default_rng(6)
    Y = _matrix(rng)
    own = ScaleTransform.from_scales(SCALES, logit_rule="percent").fit(Y)
    tr = ScaleTransform.from_scales(SCALES, logit_rule="percent", z_bound=2.0).fit(Y)
    np.testing.assert_array_equal(tr.std_, own.std_)      # the spread is not touched
    Z, Z0 = tr.transform(Y), own.transform(Y)
    assert np.nanmax(np.abs(Z)) <= 2.0 and np.nanmax(np.abs(Z0)) > 2.0
    np.testing.assert_array_equal(Z, np.clip(Z0, -2, 2))  # NaN stays NaN
    i, j = np.nonzero(~np.isnan(Y))
    np.testing.assert_array_equal(tr.transform(Y[i, j], cols=j), Z[i, j])
    with pytest.raises(UsageError, match="z_bound"):
        ScaleTransform.from_scales(SCALES, z_bound=-1)

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
