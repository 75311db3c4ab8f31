"""Calibrated prediction intervals and trust: invariants, real-data coverage, API and CLI."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.api import BenchPress
from benchpress.cli import main
from benchpress.errors import BadInputError, NotFittedError
from benchpress.predict import BenchmarkScales, ScaleTransform, make_folds, make_predictor
from benchpress.predict.intervals.calibration import (
    calibrate, complete_intervals, fold_in_intervals,
)
from benchpress.predict.intervals.calibrator import IntervalCalibrator
from benchpress.predict.intervals.features import point_size
from benchpress.predict.evaluation.coverage import interval_coverage

# about 12 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=12)

ALPHA = 0.1
SLACK = 0.02          # coverage may fall this far below 1 - alpha on one draw


def _hetero(seed: int, n: int):
    """Residuals whose scale is exp(feature 0); feature 1 is noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return rng.normal(size=n) * np.exp(0.7 * X[:, 0]), X


def test_conformal_coverage_across_seeds():
    covs = []
    for seed in range(20):
        r, X = _hetero(seed, 600)
        cal = IntervalCalibrator(ALPHA).fit(r, X)
        r2, X2 = _hetero(1000 + seed, 3000)
        covs.append(np.mean(np.abs(r2) <= cal.q_ * cal.risk(X2)))
    assert min(covs) >= 1 - ALPHA - 2 * SLACK
    assert abs(np.mean(covs) - (1 - ALPHA)) <= SLACK
    # the risk model picked up the scale feature
    assert cal.coef_[1] > 0.4 and abs(cal.coef_[2]) < 0.1


def test_trust_is_calibrated_and_intervals_respect_range():
    # z space = identity on one unbounded column, so 10 points = 10 z units / point size
    tr = ScaleTransform([np.nan], [np.nan], [False]).fit(np.array([[0.0], [1.0]]))
    r, X = _hetero(7, 4000)
    cal = IntervalCalibrator(ALPHA).fit(r, X)
    r2, X2 = _hetero(8, 4000)
    zhat = np.zeros(len(r2)) + 0.5
    cols = np.zeros(len(r2), dtype=int)
    points = np.full(len(r2), 0.05)          # 10 points = 0.5 units of score
    trust = cal.trust(zhat, X2, tr, cols, points)
    hit = np.abs(r2 * tr.std_[0]) <= 0.5
    assert abs(trust.mean() - hit.mean()) < 0.02
    # bounded logit column: intervals stay inside [0, 100] whatever the risk
    pct = ScaleTransform([0.0], [100.0], [True], eps=0.05).fit(np.array([[10.0], [90.0]]))
    lo, up = cal.predict_interval(np.array([-3.0, 0.0, 3.0]), X2[:3] * 10, pct, np.zeros(3, int))
    assert np.all(lo >= 0) and np.all(up <= 100) and np.all(lo <= up)


def _near_floor(seed: int, n: int, zero_share: float):
    """Predictions of 0.3-1 points on a percent benchmark and their truths: a share of
    ``zero_share`` solved nothing (exactly 0), the rest scatter around the prediction."""
    rng = np.random.default_rng(seed)
    pred = rng.uniform(0.3, 1.0, n)
    actual = np.where(rng.random(n) < zero_share, 0.0,
                      np.clip(pred * np.exp(rng.normal(0.0, 0.5, n)), 0.0, 100.0))
    return pred, actual, rng.normal(size=(n, 2))


@pytest.mark.parametrize("eps", [None, 0.05])
def test_a_model_that_solved_nothing_is_inside_an_interval_near_the_floor(eps):
    """Calibrated where few models score 0, used where many do (a hard new benchmark's
    later releases): the truth 0 lies within the shipped margin of every lower bound near
    the floor, so it is covered; with a margin of 0.05 it lay outside every one."""
    from benchpress.predict.intervals.calibrator import score_bounds
    from benchpress.predict.intervals.features import EPS

    tr = ScaleTransform([0.0], [100.0], [True], eps=EPS if eps is None else eps)
    tr.fit(np.array([[0.0], [2.0], [40.0], [90.0]]))
    cols = lambda n: np.zeros(n, dtype=int)  # noqa: E731
    pred, actual, X = _near_floor(1, 2000, 0.02)
    r = tr.transform(actual, cols=cols(2000)) - tr.transform(pred, cols=cols(2000))
    cal = IntervalCalibrator(ALPHA).fit(r, X)
    pred, actual, X = _near_floor(2, 2000, 0.3)
    lo, up = cal.predict_interval(tr.transform(pred, cols=cols(2000)), X, tr, cols(2000))
    zero = actual == 0.0
    covered = (actual >= lo) & (actual <= up)
    if eps is None:  # the shipped margin: a bound within it is the floor itself
        assert EPS == 0.5 and (lo[lo < EPS] == 0.0).all() and (lo == 0.0).mean() > 0.5
        assert covered[zero].mean() >= 0.85 and covered[~zero].mean() >= 0.85
    else:
        assert covered[zero].mean() <= 0.1
    # a bound just inside the margin maps to the end; one just outside it stays
    lower = score_bounds(tr, *(tr.transform(np.array([0.49, 0.51]), cols=cols(2)),) * 2,
                         cols(2))[0]
    assert lower == pytest.approx([0.0 if eps is None else 0.49, 0.51])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_trust_near_an_end_counts_the_scores_read_as_that_end(sign):
    """A prediction within the margin of an end (0.2 or 99.8 on a percent benchmark, higher
    or lower better): every truth the interval space reads as that end lies within 10
    points of it, so an interval a few points wide is trusted as it is mid-range (the
    window stopped at the margin and kept half the ratios out: trust 0.43 for arc_agi_1
    predicted 0.2 [0.0, 3.1] on the whole registry)."""
    from benchpress.predict.intervals.features import EPS

    tr = ScaleTransform([0.0], [100.0], [True], eps=EPS, sign=[sign])
    tr.fit(np.array([[0.0], [2.0], [40.0], [90.0], [100.0]]))
    r, X = _hetero(7, 4000)
    cal = IntervalCalibrator(ALPHA).fit(0.01 * r, X)
    cols, pts = np.zeros(3, dtype=int), np.ones(3)
    zhat = tr.transform(np.array([0.2, 50.0, 99.8]), cols=cols)
    lo, up = cal.predict_interval(zhat, X[:3] * 0, tr, cols)
    assert (up - lo < 5.0).all() and lo[0] == 0.0 and up[2] == 100.0
    trust = cal.trust(zhat, X[:3] * 0, tr, cols, pts)
    assert (trust > 0.99).all(), trust


def test_calibrator_errors():
    with pytest.raises(NotFittedError):
        IntervalCalibrator().risk(np.zeros((1, 2)))
    with pytest.raises(BadInputError, match="at least 20"):
        IntervalCalibrator().fit(np.ones(5), np.ones((5, 2)))


@pytest.fixture(scope="module")
def bp05(built_2026_05):
    return BenchPress.from_snapshot(built_2026_05)


@pytest.fixture(scope="module")
def calibrated(bp05):
    m = bp05.matrix
    cal = calibrate(make_predictor("default"), m.values, bp05.scales, seed=1001, n_seeds=2)
    assert cal.regime == "cells"
    return cal


def test_real_coverage_on_unseen_partitions(bp05, calibrated):
    """Calibrated on seeds 1001-1002, measured on seeds 3001-3002 it never saw."""
    m = bp05.matrix
    folds = make_folds(~np.isnan(m.values), n_folds=3, seed=3001, n_seeds=2)
    res = interval_coverage(make_predictor("default"), m.values, bp05.scales, folds, calibrated,
                            benchmark_ids=m.benchmark_ids)
    head = res["overall"].filter(pl.col("cells") == "percent").row(0, named=True)
    assert 0.87 <= head["coverage"] <= 0.93
    assert head["median_width"] < 27.2          # narrower than the published method
    # trust is calibrated: mean trust close to the share actually within 10 points
    assert abs(head["mean_trust"] - head["within10"]) < 0.03
    cells = res["cells"]
    assert (cells["lower"] <= cells["predicted"] + 1e-9).all()
    assert set(res["per_model_count"]["model_count_bin"]) <= {"1-4", "5-9", "10-19", "20-39", "40+"}


def test_new_model_regime_coverage(bp05):
    """Whole models held out and folded in from 3-12 scores, on a draw never calibrated on."""
    res = bp05.interval_coverage(None, regime="new_models", calibration_seed=1001, seed=4001)
    head = res["overall"].filter(pl.col("cells") == "percent").row(0, named=True)
    assert 0.87 <= head["coverage"] <= 0.94
    assert abs(head["mean_trust"] - head["within10"]) < 0.04
    assert res["per_model_count"]["model_count_bin"].to_list() == ["1-4", "5-9", "10-19"]


def test_complete_and_fold_in_intervals(bp05, calibrated):
    pred = make_predictor("default").fit(bp05.matrix.values, bp05.scales)
    ci = complete_intervals(pred, calibrated)
    sc: BenchmarkScales = bp05.scales
    lo_b = np.where(np.isnan(sc.lower), -np.inf, sc.lower)
    hi_b = np.where(np.isnan(sc.upper), np.inf, sc.upper)
    ok = np.isfinite(ci["predicted"])
    assert np.all(ci["lower"][ok] <= ci["predicted"][ok] + 1e-9)
    assert np.all(ci["upper"][ok] >= ci["predicted"][ok] - 1e-9)
    assert np.all(ci["lower"][ok] >= np.broadcast_to(lo_b, ci["lower"].shape)[ok])
    assert np.all(ci["upper"][ok] <= np.broadcast_to(hi_b, ci["upper"].shape)[ok])
    assert np.all((ci["trust"][ok] >= 0) & (ci["trust"][ok] <= 1))
    row = bp05.matrix.values[0]
    a = fold_in_intervals(pred, calibrated, row)
    b = fold_in_intervals(pred, calibrated, row)
    assert a["lower"].shape == row.shape
    np.testing.assert_array_equal(a["upper"], b["upper"])   # deterministic
    assert point_size(sc)[bp05.matrix.benchmark_ids.index("gpqa_diamond")] == 1.0


def test_api_predict_and_complete_carry_intervals(bp05):
    frame = bp05.predict({"gpqa_diamond": 70.1, "hle": 21.0}).frame
    assert {"predicted", "lower", "upper", "trust"} <= set(frame.columns)
    pct = frame.filter(pl.col("scale") == "percent")
    assert (pct["lower"] >= 0).all() and (pct["upper"] <= 100).all()
    assert (frame["lower"] <= frame["predicted"] + 1e-9).all()
    long = bp05.complete(intervals=True)
    n_m, n_b = bp05.matrix.values.shape
    assert long.height == n_m * n_b
    assert long.columns == ["model_id", "benchmark_id", "observed", "predicted", "lower",
                            "upper", "trust"]


def test_cli_predict_complete_intervals(built_2026_05, tmp_path):
    runner = CliRunner()
    home = str(built_2026_05.root)
    r = runner.invoke(main, ["predict", "--home", home, "--scores", "gpqa_diamond=70.1,hle=21",
                             "--format", "json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)["predictions"][0]
    assert {"lower", "upper", "trust"} <= set(row)
    r = runner.invoke(main, ["complete", "--home", home, "--intervals", "--format", "csv"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0] == "model_id,benchmark_id,observed,predicted,lower,upper,trust"
    r = runner.invoke(main, ["intervals", "--home", home, "--method", "published", "--seed", "5",
                             "--calibration-seeds", "1", "--format", "json",
                             "--out", str(tmp_path / "m.json")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert 0.8 < doc["coverage"] < 1.0 and doc["per_model_count"] and doc["per_benchmark"]
    assert doc["regime"] == "cells" and doc["all_cells"]["n_cells"] >= doc["n_cells"]
    assert "per_benchmark" not in json.loads((tmp_path / "m.json").read_text())
    r = runner.invoke(main, ["intervals", "--home", home, "--folds", str(tmp_path / "nope.json")])
    assert r.exit_code == 2
    (tmp_path / "f.json").write_text('{"folds": []}')
    r = runner.invoke(main, ["intervals", "--home", home, "--regime", "new_models",
                             "--folds", str(tmp_path / "f.json")])
    assert r.exit_code == 2 and "Error: --folds applies to --regime cells only" in r.output


def test_cli_intervals_by_source_on_a_registry_of_two_sources(built_both):
    """`intervals --by-source` holds out whole sources of models and reports the cells out
    of their model's source reach apart, in the table and the JSON."""
    args = ["intervals", "--home", str(built_both.root), "--by-source", "--method", "als4",
            "--param", "n_starts=2", "--calibration-seeds", "1"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    reach = {row["out_of_reach"]: row for row in doc["out_of_reach"]}
    assert reach[True]["n_cells"] > 0 and 0.5 < reach[True]["coverage"] <= 1.0
    assert sum(row["n_cells"] for row in reach.values()) == doc["n_cells"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0 and "percent cells out of reach" in r.stdout


def test_complete_intervals_in_row_blocks_equal_one_block(bp05, calibrated):
    """The row blocks that bound memory on a large registry change no number."""
    import dataclasses

    from benchpress.predict.intervals.support import MatrixSupport
    from benchpress.predict.size_limits import LIMITS

    one = complete_intervals(bp05.predictor, calibrated)  # 84 models: one block
    ten = dataclasses.replace(LIMITS, support_block_rows=10)
    blocks = complete_intervals(bp05.predictor, calibrated,
                                MatrixSupport(bp05.predictor, limits=ten))
    for k in ("predicted", "lower", "upper", "trust"):
        np.testing.assert_allclose(blocks[k], one[k], rtol=1e-12, atol=0, equal_nan=True)
    rows = complete_intervals(bp05.predictor, calibrated, rows=[3, 50, 7])
    np.testing.assert_allclose(rows["upper"], one["upper"][[3, 50, 7]], rtol=1e-12, equal_nan=True)


def test_sparse_support_features_equal_the_dense_ones_on_a_small_matrix(monkeypatch):
    """With at most `support_cells_candidates` models the candidate sample is every model, so the
    sparse path's on-demand features equal the dense path's arrays (up to float sums)."""
    import benchpress.predict.models.als_predictor as predictor_mod
    from benchpress.predict import make_predictor
    from benchpress.predict.intervals.support import MatrixSupport
    from benchpress.scales import BenchmarkScales

    rng = np.random.default_rng(5)
    n, m = 150, 20
    Y = np.clip(50 + 15 * rng.normal(size=(n, 1)) + 10 * rng.normal(size=(1, m))
                + 5 * rng.normal(size=(n, m)), 0, 100)
    Y[rng.random((n, m)) < 0.6] = np.nan
    scales = BenchmarkScales(np.array(["percent"] * m), np.zeros(m), np.full(m, 100.0))
    dense = MatrixSupport(make_predictor("als4", n_starts=3).fit(Y, scales))
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)
    sparse = MatrixSupport(make_predictor("als4", n_starts=3).fit(Y, scales))
    assert sparse.sparse and not dense.sparse and not hasattr(sparse, "near")
    i, j = rng.integers(0, n, 400), rng.integers(0, m, 400)
    zd, Xd = dense.cells(i, j)
    zs, Xs = sparse.cells(i, j)
    np.testing.assert_allclose(zs, zd, rtol=0, atol=1e-8)
    np.testing.assert_allclose(Xs, Xd, rtol=0, atol=1e-8)
    assert (Xd[:, 5] > 0).any()  # the nearest-model feature is really compared
    S = np.where(rng.random((3, m)) < 0.3, Y[:3], np.nan)
    P, spread = dense.predictor.fold_in(S, return_spread=True)
    for a, b in zip(dense.new_rows(S, P, spread), sparse.new_rows(S, P, spread)):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-8)


def test_new_model_intervals_give_each_benchmark_its_own_factor(paper_matrix):
    """Mondrian by benchmark: a benchmark whose errors run three times wider than the rest
    gets a factor near 3 times theirs and covers ~90% of fresh cells (one shared quantile covered far
    less there and more elsewhere); a benchmark without calibration cells keeps 1; the
    factors survive an artifact."""
    from benchpress.predict.state import fitted_state, restore_state
    from benchpress.predict.intervals.features import FEATURES

    def draw(seed, n):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, len(FEATURES)))
        X[:, FEATURES.index("log_model_count")] = np.log1p(5)
        cols = rng.integers(0, 4, size=n)  # benchmark 4 is never seen
        r = rng.normal(size=n) * np.where(cols == 0, 3.0, 1.0)
        return r, X, cols

    r, X, cols = draw(0, 4000)
    cal = IntervalCalibrator(ALPHA, regime="new_models").fit(r, X, cols=cols, n_benchmarks=5)
    assert 2.5 < cal.col_factor_[0] / cal.col_factor_[1] < 3.5 and cal.col_factor_[4] == 1.0
    assert np.all(np.abs(cal.col_factor_[1:4] - cal.col_factor_[1:4].mean()) < 0.1)
    r2, X2, cols2 = draw(1, 8000)
    covered = np.abs(r2) <= cal.half_width_scale(X2, cols2) * cal.risk(X2)
    shared = np.abs(r2) <= cal.half_width_scale(X2) * cal.risk(X2)
    for j in range(4):
        assert abs(covered[cols2 == j].mean() - (1 - ALPHA)) < 0.03
    assert shared[cols2 == 0].mean() < 0.75  # what one quantile gave the wide benchmark
    # through an artifact, on a real fit
    Y, _, _, scales = paper_matrix
    pred = make_predictor("als4", n_starts=2).fit(Y, scales)
    cal_real = calibrate(make_predictor("als4", n_starts=2), Y, scales, regime="new_models")
    assert cal_real.col_factor_.shape == (Y.shape[1],)
    arrays, meta = fitted_state(pred, calibrators={"new_models": cal_real})
    back = restore_state(arrays, meta, Y, scales)["calibrators"]["new_models"]
    np.testing.assert_array_equal(back.col_factor_, cal_real.col_factor_)


# -- cells out of a model's source reach ---------------------------------------------------
def _two_sources(seed: int, n: int = 150, per: int = 8):
    """A logit rank-3 matrix of two sources of ``per`` benchmarks each, every model scored
    by source A and 70% also by B, whose benchmarks read a factor A's never show: a model
    known from A alone is harder to predict on B. Returns ``(Y, scales, reach)``."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 3))
    VA = rng.normal(size=(per, 3)) * [1.0, 0.3, 0.0]
    VB = rng.normal(size=(per, 3)) * [1.0, 0.3, 0.8]
    Z = np.hstack([u @ VA.T, u @ VB.T]) + 0.15 * rng.normal(size=(n, 2 * per))
    obs = rng.random(Z.shape) < 0.85
    obs[rng.random(n) >= 0.7, per:] = False
    reach = np.zeros((2, 2 * per), dtype=bool)
    reach[0, :per] = reach[1, per:] = True
    scales = BenchmarkScales(np.array(["percent"] * 2 * per), np.zeros(2 * per),
                             np.full(2 * per, 100.0))
    return np.where(obs, 100 / (1 + np.exp(-Z)), np.nan), scales, reach


def test_source_block_folds_hide_one_whole_source_of_each_model_scored_in_two():
    from benchpress.predict.intervals.calibration import source_block_folds
    from benchpress.predict.intervals.calibrator import out_of_reach

    Y, _, reach = _two_sources(0)
    reach[0, 8] = True  # benchmark 8 reported by both sources
    obs = ~np.isnan(Y)
    folds = source_block_folds(obs, reach, seed=7, min_left=3)
    assert len(folds) == 2
    hidden = np.zeros_like(obs)
    for cells in folds:
        assert not hidden[cells[:, 0], cells[:, 1]].any()  # the folds are disjoint
        hidden[cells[:, 0], cells[:, 1]] = True
    for i in range(obs.shape[0]):
        blocks = [s for s in range(2) if (obs[i] & reach[s]).any()
                  and (obs[i] & ~reach[s]).sum() >= 3]
        if not blocks:
            assert not hidden[i].any()
            continue
        # exactly the model's scores on one source's benchmarks, three or more kept
        assert any(np.array_equal(hidden[i], obs[i] & reach[s]) for s in blocks)
        left = obs[i] & ~hidden[i]
        assert left.sum() >= 3 and out_of_reach(left[None], reach)[0, hidden[i]].any()
    assert hidden.any(axis=1).sum() > 80  # most of the ~105 models B scores
    one = source_block_folds(obs, reach[:1], seed=7)
    assert len(one) == 0  # one source: nothing to hold out


def test_cells_out_of_source_reach_get_their_own_quantile_and_are_covered():
    """Calibrated with whole sources held out (seed 1001), measured on other source
    blocks (seed 2001): the cells of a source the model has no score in cover ~90%, where
    one shared quantile covered clearly less; the quantile survives an artifact."""
    from benchpress.predict.state import fitted_state, restore_state
    from benchpress.predict.intervals.calibration import source_block_folds

    pred = make_predictor("als4", n_starts=2)
    own, shared = [], []
    for seed in range(5):
        Y, scales, reach = _two_sources(seed)
        cal = calibrate(pred, Y, scales, reach=reach)
        one = calibrate(pred, Y, scales)
        assert cal.q_out_ > cal.q_ and cal.n_out_ >= 300 and one.q_ == cal.q_
        folds = source_block_folds(~np.isnan(Y), reach, seed=2001)
        res = [interval_coverage(pred, Y, scales, folds, c, reach=reach) for c in (cal, one)]
        assert res[0]["cells"]["out_of_reach"].mean() > 0.9
        own.append(res[0]["per_reach"].filter(pl.col("out_of_reach"))["coverage"][0])
        shared.append(res[1]["per_reach"].filter(pl.col("out_of_reach"))["coverage"][0])
    assert 0.85 <= np.mean(own) <= 0.94 and np.mean(own) > np.mean(shared) + 0.04, (own, shared)
    # applied where a model has no score of a source; the rest as before
    fitted = make_predictor("als4", n_starts=2).fit(Y, scales)
    with_out, without = (complete_intervals(fitted, c) for c in (cal, one))
    out = np.isnan(Y).all(axis=1, keepdims=True) | (np.isnan(Y[:, 8:]).all(axis=1)[:, None]
                                                     & reach[1][None, :])
    width = lambda r: r["upper"] - r["lower"]  # noqa: E731
    gap = out & np.isnan(Y)
    assert gap.sum() > 100 and np.all(width(with_out)[gap] >= width(without)[gap] - 1e-9)
    assert np.mean(width(with_out)[gap]) > 1.02 * np.mean(width(without)[gap])
    np.testing.assert_array_equal(width(with_out)[~out], width(without)[~out])
    arrays, meta = fitted_state(fitted, calibrators={"cells": cal})
    meta = json.loads(json.dumps(meta))
    back = restore_state(arrays, meta, Y, scales)["calibrators"]["cells"]
    assert back.q_out_ == cal.q_out_ and np.array_equal(back.reach_, reach)
    for k in ("lower", "upper", "trust"):
        np.testing.assert_array_equal(complete_intervals(fitted, back)[k], with_out[k])
    bad = {**arrays, "calibrator_cells_reach": reach[:, :3]}
    with pytest.raises(BadInputError, match="calibrator_cells_reach"):
        restore_state(bad, meta, Y, scales)
