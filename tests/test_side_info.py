"""Side-information predictor (`--method side`): exact fallback to the default, covariate
checks, and a synthetic matrix where a covariate truly drives the scores."""

import numpy as np
import polars as pl
import pytest

from benchpress.api import BenchPress
from benchpress.errors import BadInputError, UsageError
from benchpress.predict import SPREAD_PRIOR, Z_BOUND, evaluate, make_folds, make_predictor
from benchpress.predict.models.side_info import SideInfoPredictor, model_covariates
from benchpress.scales import BenchmarkScales
from benchpress.store.matrix import ScoreMatrix

# about 12 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=12)

FAST = dict(n_starts=4)
#: The rank-4 ALS that side information reduces to without covariates: als4 in side's z space
AS_SIDE = dict(FAST, spread_prior=SPREAD_PRIOR, z_bound=Z_BOUND)


def test_no_covariates_is_exactly_the_default(paper_matrix):
    Y, mids, bids, scales = paper_matrix
    side = make_predictor("side", **FAST)
    assert isinstance(side, SideInfoPredictor) and side.method == "side"
    default = make_predictor("als4", **AS_SIDE).fit(Y, scales)
    for X in (None, np.zeros((Y.shape[0], 0))):
        fitted = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
        assert np.array_equal(fitted.complete(keep_observed=False),
                              default.complete(keep_observed=False))
        rows = np.where(np.arange(Y.shape[1]) < 5, Y[:3], np.nan)
        assert np.array_equal(fitted.fold_in(rows), default.fold_in(rows))
    folds = make_folds(~np.isnan(Y), n_folds=3, seed=1001)
    a = evaluate(side, Y, scales, folds).cells["predicted"].to_numpy()
    b = evaluate(make_predictor("als4", **AS_SIDE), Y, scales, folds).cells["predicted"].to_numpy()
    assert np.array_equal(a, b)
    # a matrix without model metadata (ids only): no covariates reach the fit, same numbers
    bp = BenchPress(ScoreMatrix.from_arrays(Y, mids, bids, scales), side)
    assert model_covariates(bp.matrix.models) is None
    assert np.array_equal(bp.predictor.complete(), default.complete())


def test_fitted_rows_without_covariates_fold_in_like_the_default(paper_matrix):
    Y, _, _, scales = paper_matrix
    X = np.random.RandomState(0).normal(size=(Y.shape[0], 3))
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    default = make_predictor("als4", **AS_SIDE).fit(Y, scales)
    row = np.where(np.arange(Y.shape[1]) < 6, Y[7], np.nan)
    assert np.array_equal(side.fold_in(row), default.fold_in(row))  # no covariates given
    assert not np.array_equal(side.fold_in(row, covariates=X[7]), default.fold_in(row))
    # the refit way and the spread see the covariates too
    refit = side.fold_in(row, covariates=X[7], refit=True)
    assert refit.shape == row.shape and np.isfinite(refit).all()
    assert not np.array_equal(refit, default.fold_in(row, refit=True))
    pred, spread = side.fold_in(row[None], covariates=X[7:8], return_spread=True)
    assert pred.shape == spread.shape == (1, Y.shape[1]) and (spread >= 0).all()
    assert side.complete_spread().shape == Y.shape
    assert not np.array_equal(side.complete_spread(), default.complete_spread())


@pytest.mark.parametrize("X", [np.ones((5, 2)), np.ones(84), np.ones((84, 2, 1))])
def test_wrong_covariate_shape_is_refused_in_one_line(paper_matrix, X):
    Y, _, _, scales = paper_matrix
    with pytest.raises(BadInputError, match=r"covariates must have shape \(84, ") as err:
        make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    assert "\n" not in str(err.value)


def test_fold_in_covariates_must_match_the_fit(paper_matrix):
    Y, _, _, scales = paper_matrix
    fitted = make_predictor("side", **FAST).fit(Y, scales, covariates=np.ones((84, 3)))
    with pytest.raises(BadInputError, match=r"covariates must have shape \(1, 3\), got \(1, 2\)"):
        fitted.fold_in(Y[0], covariates=np.ones(2))
    with pytest.raises(BadInputError, match="infinite"):
        make_predictor("side", **FAST).fit(Y, scales, covariates=np.full((84, 1), np.inf))


def test_model_covariates_from_metadata():
    models = pl.DataFrame({"model_id": ["a", "b", "c", "d"],
                           "release_date": ["2025-01-01", "2025-07", None, "2024"],
                           "is_reasoning": [True, False, None, True],
                           "open_weights": [False, True, True, None],
                           "provider": ["P", "P", "P", "Q"],
                           "effort": ["high", None, None, "max"]})
    X = model_covariates(models, min_provider=3)
    # date, date squared, reasoning, open weights, effort, provider P (Q has one model),
    # then from the ids: small tier, log10 parameters (no family has 3 models)
    assert X.shape == (4, 8)
    assert X[0, 0] == pytest.approx(366 / 365.25) and np.isnan(X[2, 0])
    assert X[3, 0] == pytest.approx(182 / 365.25)  # a bare year: mid-year (2024 is leap)
    assert X[0, 1] == pytest.approx((366 - 456) ** 2 / 365.25 ** 2)  # about 2025-04-01
    assert np.isnan(X[2, 2]) and np.isnan(X[3, 3])
    assert X[:, 4].tolist() == [1.0, 0.0, 0.0, 1.0]
    assert X[:, 5].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert X[:, 6].tolist() == [0.0] * 4 and np.isnan(X[:, 7]).all()
    assert model_covariates(models).shape == (4, 7)  # no provider has 5 models
    assert model_covariates(models, identity=False).shape == (4, 5)
    assert model_covariates(models.select("model_id")) is None


def _synthetic(seed=0, n_models=90, n_bench=24):
    """Low-rank logit scores plus a strong binary-covariate x benchmark effect."""
    rng = np.random.RandomState(seed)
    x = (rng.rand(n_models) < 0.5).astype(float)          # e.g. "reasoning"
    U, V = rng.normal(size=(n_models, 2)), rng.normal(size=(n_bench, 2))
    effect = rng.normal(0.0, 2.0, size=n_bench)            # what the covariate does per benchmark
    logit = 0.5 * U @ V.T + np.outer(x - 0.5, effect) + rng.normal(0, 0.15, (n_models, n_bench))
    Y = 100 / (1 + np.exp(-logit))
    Y[rng.rand(n_models, n_bench) < 0.35] = np.nan
    scales = BenchmarkScales(np.array(["percent"] * n_bench), np.zeros(n_bench),
                             np.full(n_bench, 100.0))
    return Y, scales, x[:, None]


def test_side_beats_default_when_a_covariate_drives_the_scores():
    Y, scales, X = _synthetic()
    # whole models held out, folded in from 3 scores: where the scores say least
    rng = np.random.RandomState(1)
    held = rng.permutation(len(Y))[:30]
    keep = np.setdiff1d(np.arange(len(Y)), held)
    side = make_predictor("side", **FAST).fit(Y[keep], scales, covariates=X[keep])
    default = make_predictor("als4", **AS_SIDE).fit(Y[keep], scales)
    S = np.full((len(held), Y.shape[1]), np.nan)
    rest = np.zeros_like(S, dtype=bool)
    for r, i in enumerate(held):
        order = rng.permutation(np.flatnonzero(~np.isnan(Y[i])))
        S[r, order[:3]] = Y[i, order[:3]]
        rest[r, order[3:]] = True
    truth = Y[held]
    err_side = np.median(np.abs(side.fold_in(S, covariates=X[held]) - truth)[rest])
    err_default = np.median(np.abs(default.fold_in(S) - truth)[rest])
    assert err_side < 0.9 * err_default


def _paper_with_metadata(paper_matrix) -> ScoreMatrix:
    """The 2026-05 matrix with its model rows' provider, date, reasoning and open weights."""
    import json

    from tests.predict_data import DATA_JSON

    Y, mids, bids, scales = paper_matrix
    meta = {m["id"]: m for m in json.loads(DATA_JSON.read_text())["models"]}
    models = pl.DataFrame({"model_id": mids,
                           "provider": [meta[m]["provider"] for m in mids],
                           "release_date": [meta[m]["release_date"] for m in mids],
                           "is_reasoning": [meta[m]["reasoning"] for m in mids],
                           "open_weights": [meta[m].get("open_weights") for m in mids]})
    plain = ScoreMatrix.from_arrays(Y, mids, bids, scales)
    return ScoreMatrix(Y, mids, bids, plain.benchmarks, models, scales=scales)


def test_benchpress_passes_the_model_metadata(paper_matrix):
    """`BenchPress` builds covariates from the matrix's model rows for `--method side`:
    held-out error on our own partition drops below the default's."""
    Y, mids, _, _ = paper_matrix
    matrix = _paper_with_metadata(paper_matrix)
    models = matrix.models
    side = BenchPress(matrix, make_predictor("side", **FAST))
    assert side.predictor.covariates_.shape == model_covariates(models).shape
    assert side.matrix.without_model(mids[0]).models.height == len(mids) - 1
    folds = make_folds(~np.isnan(Y), n_folds=3, seed=1001)
    default = BenchPress(matrix, make_predictor("als4", **AS_SIDE))
    assert side.evaluate(folds).overall.medae < default.evaluate(folds).overall.medae


def test_side_intervals_are_narrower_at_the_same_coverage(paper_matrix):
    """Intervals through the front door on the real matrix, calibrated on seeds 1001-1002
    and measured on seed 1003: side information (and its interval space) narrows the 90%
    intervals at a coverage that stays near 90%, and its trust follows its errors."""
    matrix = _paper_with_metadata(paper_matrix)
    folds = make_folds(~np.isnan(matrix.values), n_folds=3, seed=1003)
    out = {}
    for method in ("als4", "side"):
        res = BenchPress(matrix, make_predictor(method, **FAST)).interval_coverage(folds)
        out[method] = res["overall"].filter(pl.col("cells") == "percent").to_dicts()[0]
    side, default = out["side"], out["als4"]
    assert 0.86 <= side["coverage"] <= 0.94 and 0.86 <= default["coverage"] <= 0.94
    assert side["median_width"] < 0.95 * default["median_width"]
    assert abs(side["mean_trust"] - side["within10"]) < 0.03


def _meta_matrix(Y, X, n_bench):
    """A ScoreMatrix of the synthetic scores whose model rows carry the covariate as a
    release date (years since 2024-01-01) and nothing else."""
    from datetime import date, timedelta

    mids = [f"m{i}" for i in range(len(Y))]
    bids = [f"b{j}" for j in range(n_bench)]
    scales = BenchmarkScales(np.array(["percent"] * n_bench), np.zeros(n_bench),
                             np.full(n_bench, 100.0))
    days = [(date(2024, 1, 1) + timedelta(days=int(365.25 * x))).isoformat() for x in X[:, 0]]
    plain = ScoreMatrix.from_arrays(Y, mids, bids, scales)
    models = pl.DataFrame({"model_id": mids, "release_date": days})
    bench = plain.benchmarks
    if "name" not in bench.columns:
        bench = bench.with_columns(pl.col("benchmark_id").alias("name"))
    if "higher_is_better" not in bench.columns:
        bench = bench.with_columns(pl.lit(True).alias("higher_is_better"))
    return ScoreMatrix(Y, mids, bids, bench, models, scales=scales)


def test_covariates_reach_interval_records_and_only_side_uses_them():
    """new_model_records: each group's fit gets the kept rows' covariates and each fold-in
    the held-out models' own: lower error than without; the default ignores them."""
    from benchpress.predict.intervals.calibration import heldout_records, new_model_records

    Y, scales, X = _synthetic()
    side = make_predictor("side", **FAST)
    with_x = new_model_records(side, Y, scales, given=(3,), covariates=X)
    without = new_model_records(side, Y, scales, given=(3,))
    err = {k: np.median(np.abs(r["actual"] - r["predicted"])) for k, r in
           (("with", with_x), ("without", without))}
    assert err["with"] < 0.9 * err["without"]
    default = make_predictor("als4", **AS_SIDE)
    folds = make_folds(~np.isnan(Y), n_folds=3, seed=1001)
    a = heldout_records(default, Y, scales, folds, covariates=X)
    b = heldout_records(default, Y, scales, folds)
    assert np.array_equal(a["predicted"], b["predicted"]) and np.array_equal(a["X"], b["X"])
    c = heldout_records(side, Y, scales, folds, covariates=X)
    assert not np.array_equal(c["predicted"], b["predicted"])


def test_probe_search_and_backtest_use_covariates():
    from benchpress.predict.evaluation.backtest import backtest
    from benchpress.predict.probes.search import ProbeSearch

    Y, scales, X = _synthetic()
    Y, X = Y[:60], X[:60]
    side = make_predictor("side", **FAST)
    plain = ProbeSearch(side).fit(Y, scales)
    cov = ProbeSearch(side).fit(Y, scales, covariates=X)
    assert all(p.covariates_ is not None for p in cov.predictors_ if p is not None)
    assert all(p.covariates_ is None for p in plain.predictors_ if p is not None)
    masks = np.zeros((1, Y.shape[1]), dtype=bool)
    masks[0, :2] = True
    assert cov.objective_values(masks)[0] < plain.objective_values(masks)[0]
    dates = [f"2025-{1 + i % 12:02d}-01" for i in range(len(Y))]
    bids = [str(j) for j in range(Y.shape[1])]
    a = backtest(side, Y, scales, dates, "2025-10-01", probes=bids[:3], covariates=X)
    b = backtest(side, Y, scales, dates, "2025-10-01", probes=bids[:3])
    assert a.medae < b.medae  # the covariate drives the scores: knowing it helps


def test_predict_model_and_compare_use_the_models_own_metadata():
    Y, scales, X = _synthetic()
    m = _meta_matrix(Y, X, Y.shape[1])
    side = BenchPress(m, make_predictor("side", **FAST))
    mid = m.model_ids[3]
    row = m.values[3]
    given = {b: float(v) for b, v in zip(m.benchmark_ids, row) if not np.isnan(v)}
    own = side.predict_model(mid).frame["predicted"].to_numpy()
    typed = side.predict(given).frame["predicted"].to_numpy()
    assert not np.allclose(own, typed)  # metadata moves the registered model's row
    fitted = side.predictor
    cov = model_covariates(m.models)[3:4]
    expect = np.where(np.isnan(row), fitted.fold_in(row[None], covariates=cov)[0], row)
    assert np.allclose(own, expect)
    meta = {"release_date": m.models["release_date"][3]}
    assert np.allclose(side.predict(given, metadata=meta).frame["predicted"].to_numpy(), own)
    assert side.predict(given, metadata=meta).with_covariates
    assert not side.predict(given).with_covariates
    with pytest.raises(BadInputError, match="unknown metadata"):
        side.predict(given, metadata={"colour": "red"})
    with pytest.raises(BadInputError, match="release_date='2025-02-30' is not a date"):
        side.predict(given, metadata={"release_date": "2025-02-30"})
    cmp = side.compare([mid, m.model_ids[4]], new_models={"newbie": dict(list(given.items())[:3])})
    # the registered model's row in compare is its predict_model row (its own metadata)
    assert np.allclose(cmp.frame[mid].to_numpy(), own)
    assert np.allclose(cmp.frame["newbie"].to_numpy(), side.predict(
        dict(list(given.items())[:3])).frame["predicted"].to_numpy())
    default = BenchPress(m, make_predictor("als4", **AS_SIDE))
    assert np.array_equal(default.predict_model(mid).frame["predicted"].to_numpy(),
                          default.predict(given).frame["predicted"].to_numpy())


def test_drift_profile_fits_side_with_the_versions_metadata():
    from benchpress.predict.drift import DriftThresholds, profile

    Y, scales, X = _synthetic(n_models=40, n_bench=12)
    m = _meta_matrix(Y, X, Y.shape[1])
    cfg = DriftThresholds(method="side")
    side = profile(m, cfg, predictor=make_predictor("side", **FAST),
                   probe_predictor=make_predictor("als4", **AS_SIDE))
    default = profile(m, cfg, predictor=make_predictor("als4", **AS_SIDE),
                      probe_predictor=make_predictor("als4", **AS_SIDE))
    # date and its square, then from the ids: small tier and log10 parameters
    assert side.predictor_.covariates_.shape == (len(Y), 4)
    # the tracked error is side's, with the version's covariates (on 40 synthetic models it
    # ties als4's within 2%, either way: the figure is checked, not which is lower)
    folds = make_folds(~np.isnan(m.values), n_folds=3, seed=cfg.seed, min_scores=3)
    want = evaluate(make_predictor("side", **FAST), m.values, m.scales, folds,
                    covariates=side.predictor_._raw_covariates).overall.medae
    assert side.medae == pytest.approx(want, abs=1e-9)
    assert abs(side.medae - default.medae) > 1e-3


def _held_rows(Y, held, k, seed=1):
    rng = np.random.RandomState(seed)
    S = np.full((len(held), Y.shape[1]), np.nan)
    for r, i in enumerate(held):
        order = rng.permutation(np.flatnonzero(~np.isnan(Y[i])))
        S[r, order[:k]] = Y[i, order[:k]]
    return S


def test_gaussian_prior_weighs_covariates_against_scores():
    """The fold-in prior's covariance scale moves a new row between its covariates'
    prediction (scale -> 0: the scores no longer matter) and its scores (scale -> inf:
    the covariates no longer matter once the scores determine bias and factors); ALS part
    alone (no blend, no effects)."""
    Y, scales, X = _synthetic()
    keep, held = np.arange(80), np.arange(80, 84)
    S = _held_rows(Y, held, 4)
    S_other = _held_rows(Y, held, 4, seed=2)
    only_als = dict(FAST, covariate_regression_weight=0.0, effect_alpha=None)

    def fitted(scale):
        return make_predictor("side", prior_cov_scale=scale, **only_als).fit(
            Y[keep], scales, covariates=X[keep])

    tight, loose = fitted(1e-8), fitted(1e8)
    assert np.allclose(tight.fold_in(S, covariates=X[held]),
                       tight.fold_in(S_other, covariates=X[held]), atol=1e-3)
    assert not np.allclose(loose.fold_in(S, covariates=X[held]),
                           loose.fold_in(S_other, covariates=X[held]), atol=1e-3)
    many = _held_rows(Y, held, 12)  # more scores than bias + factors: the scores decide
    assert np.allclose(loose.fold_in(many, covariates=X[held]),
                       loose.fold_in(many, covariates=1.0 - X[held]), atol=1e-3)
    assert not np.allclose(tight.fold_in(S, covariates=X[held]),
                           tight.fold_in(S, covariates=1.0 - X[held]), atol=1e-3)


def test_rows_outside_the_training_range_fold_in_like_the_default():
    Y, scales, X = _synthetic()
    keep = np.flatnonzero(X[:, 0] < 0.8)  # the fit sees covariates below 0.8 only
    held = np.setdiff1d(np.arange(len(Y)), keep)[:3]
    S = _held_rows(Y, held, 3)
    side = make_predictor("side", outside_range="default", **FAST).fit(Y[keep], scales,
                                                                       covariates=X[keep])
    default = make_predictor("als4", **AS_SIDE).fit(Y[keep], scales)
    inside = X[keep][:3]
    X_new = np.vstack([X[held], inside])  # 3 rows outside the range, then 3 inside
    S_new = np.vstack([S, S])
    assert side.covariates_apply(X_new).tolist() == [False] * 3 + [True] * 3
    both, spread = side.fold_in(S_new, covariates=X_new, return_spread=True)
    assert np.array_equal(both[:3], default.fold_in(S))
    # their spread is read as for rows with covariates (one calibrator serves both): the
    # same as without covariates, and the default's when it adds nothing to the starts'
    alone, alone_spread = side.fold_in(S, return_spread=True)
    assert np.array_equal(alone, both[:3]) and np.array_equal(alone_spread, spread[:3])
    assert not np.allclose(spread[:3], default.fold_in(S, return_spread=True)[1])
    bare = make_predictor("side", spread_disagreement=0.0, spread_posterior=0.0,
                          outside_range="default", **FAST).fit(Y[keep], scales,
                                                               covariates=X[keep])
    assert np.array_equal(bare.fold_in(S_new, covariates=X_new, return_spread=True)[1][:3],
                          default.fold_in(S, return_spread=True)[1])
    assert np.array_equal(side.fold_in(S), default.fold_in(S))
    # the rows inside: as folded in alone (a batch of another size: float rounding at most)
    assert np.allclose(both[3:], side.fold_in(S, covariates=inside), rtol=1e-12, atol=1e-9)
    clip = make_predictor("side", **FAST).fit(Y[keep], scales, covariates=X[keep])
    assert clip.outside_range == "clip"  # the default since 2026-12: a new release keeps them
    assert clip.covariates_apply(X[held]).all()
    assert not np.array_equal(clip.fold_in(S, covariates=X[held]), default.fold_in(S))
    with pytest.raises(Exception, match="outside_range"):
        make_predictor("side", outside_range="extrapolate")


def test_backtest_of_releases_after_every_training_model_is_the_defaults():
    """The release date as a covariate: every new release lies after the training range,
    so side with outside_range="default" folds them in as als4 does and chooses its probes
    so too; with "clip" (its default) it does not."""
    from benchpress.predict.evaluation.backtest import backtest

    Y, scales, _ = _synthetic()
    Y = Y[:60]
    dates = [f"2025-{1 + i % 12:02d}-01" for i in range(len(Y))]
    X = np.array([[float(d[5:7])] for d in dates])  # the month: later releases, larger
    a = backtest(make_predictor("side", outside_range="default", **FAST), Y, scales, dates,
                 "2025-10-01", probes=2, covariates=X)
    b = backtest(make_predictor("als4", **AS_SIDE), Y, scales, dates, "2025-10-01", probes=2)
    assert a.probes == b.probes and a.medae == b.medae and a.n_test == b.n_test > 0
    clip = backtest(make_predictor("side", outside_range="clip", **FAST), Y, scales, dates,
                    "2025-10-01", probes=list(a.probes), covariates=X)
    # clip: each new release's date is taken as the newest training model's (month 9), so
    # it is the backtest of those clipped dates, which lie inside the range
    clipped = backtest(make_predictor("side", outside_range="default", **FAST), Y, scales,
                       dates, "2025-10-01", probes=list(a.probes), covariates=np.minimum(X, 9.0))
    assert clip.medae == clipped.medae and clip.n_test == a.n_test


def test_spread_grows_with_the_disagreement_weight():
    Y, scales, X = _synthetic()
    spreads = [make_predictor("side", spread_disagreement=k, **FAST).fit(
        Y, scales, covariates=X).complete_spread() for k in (0.5, 2.0)]
    assert (spreads[1] >= spreads[0] - 1e-12).all() and (spreads[1] > spreads[0]).mean() > 0.5


def test_family_and_tier_come_from_the_id_alone():
    from benchpress.predict.models.side_info import FAMILY_LEVEL, metadata_covariates, model_family, name_tier

    assert model_family("claude-opus-4.5") == "claude-opus-4"
    assert model_family("gpt-5.1") == model_family("gpt-5-mini") == "gpt5"
    assert model_family("qwen-2.5-7b") == model_family("qwen2.5-72b-instruct") == "qwen2"
    assert model_family("deepseek-r1-0528") == model_family("deepseek-r1") == "deepseek-r1"
    assert name_tier("o4-mini-high") == (1.0, name_tier("o4-mini-high")[1])
    assert np.isnan(name_tier("gpt-5.1")[1]) and name_tier("gpt-5.1")[0] == 0.0
    assert name_tier("qwen3-235b")[1] == pytest.approx(np.log10(235))
    assert name_tier("Gemma 3 27B")[1] == pytest.approx(np.log10(27))
    assert all(np.isnan(v) for v in name_tier(None))
    ids = ["gpt-5", "gpt-5.1", "gpt-5-mini", "qwen3-8b", "qwen3-32b", "o3-high"]
    models = pl.DataFrame({"model_id": ids, "provider": ["OpenAI"] * 3 + ["Alibaba"] * 2
                           + ["OpenAI"], "release_date": ["2025-08-01"] * 6})
    X = model_covariates(models, min_provider=2, min_family=2)
    # date, date squared, providers Alibaba and OpenAI, small, log10 size, families gpt5, qwen3
    assert X.shape == (6, 8)
    assert X[:, 6].tolist() == [FAMILY_LEVEL] * 3 + [0.0] * 3
    assert X[:, 7].tolist() == [0.0] * 3 + [FAMILY_LEVEL] * 2 + [0.0]
    assert X[:, 4].tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    # defaults (providers with 5 models, families with 3): date, date squared, small,
    # log10 size, family gpt5; a new model's metadata gives its row the same columns
    X = model_covariates(models)
    assert X.shape == (6, 5) and X[:, 4].tolist() == [FAMILY_LEVEL] * 3 + [0.0] * 3
    one = metadata_covariates({"model_id": "qwen3-32b", "provider": "Alibaba",
                               "release_date": "2025-08-01"}, models)
    assert np.array_equal(one, X[4:5], equal_nan=True)
    sibling = metadata_covariates({"model_id": "gpt-5.2", "release_date": "2025-08-01"}, models)
    assert np.array_equal(sibling, X[1:2], equal_nan=True)
    no_id = metadata_covariates({"provider": "Alibaba"}, models)
    assert np.isnan(no_id[0, 2:4]).all() and no_id[0, 4] == 0


def test_family_effects_shrink_towards_the_provider():
    """Family indicators are marked (coded FAMILY_LEVEL): their standardised columns are
    scaled by family_scale, so 0 leaves what the other covariates give (the provider's
    effect) and larger values let the family move the prediction."""
    Y, scales, X = _synthetic()
    from benchpress.predict.models.side_info import FAMILY_LEVEL

    fam = (np.arange(len(Y)) % 3 == 0) * FAMILY_LEVEL
    Xf = np.column_stack([X, fam])
    keep, held = np.arange(80), np.arange(80, 84)
    S = _held_rows(Y, held, 3)

    def fold(scale, cov):
        return make_predictor("side", family_scale=scale, **FAST).fit(
            Y[keep], scales, covariates=cov[keep]).fold_in(S, covariates=cov[held])

    fitted = make_predictor("side", **FAST).fit(Y[keep], scales, covariates=Xf[keep])
    assert fitted.x_weight_.tolist() == [1.0, 0.3]
    assert np.allclose(fold(0.0, Xf), fold(0.3, X), rtol=1e-9, atol=1e-6)
    assert not np.allclose(fold(0.3, Xf), fold(1.0, Xf), atol=1e-3)


def test_spread_grows_with_the_posterior_variance_weight():
    Y, scales, X = _synthetic()
    fits = [make_predictor("side", spread_posterior=w, **FAST).fit(Y, scales, covariates=X)
            for w in (0.0, 1.0)]
    a, b = (f.complete_spread() for f in fits)
    assert (b >= a - 1e-12).all() and (b > a).mean() > 0.5
    assert fits[1].base_postvar_.shape == Y.shape and (fits[1].base_postvar_ > 0).all()
    S = _held_rows(Y, np.arange(3), 3)
    sa, sb = (f.fold_in(S, covariates=X[:3], return_spread=True)[1] for f in fits)
    assert (sb >= sa - 1e-12).all() and (sb > sa).mean() > 0.5


def test_interval_space_is_the_predictors_own_only_with_covariates():
    from benchpress.predict.intervals.calibration import complete_intervals
    from benchpress.predict.intervals.calibrator import IntervalCalibrator
    from benchpress.predict.intervals.features import EPS, LOGIT_RULE
    from benchpress.predict.intervals.support import MatrixSupport

    Y, scales, X = _synthetic()
    logit = dict(interval_logit_rule=LOGIT_RULE)
    default = make_predictor("als4", **AS_SIDE).fit(Y, scales)
    bare = make_predictor("side", **FAST).fit(Y, scales)
    side = make_predictor("side", **FAST).fit(Y, scales, covariates=X)
    wide = make_predictor("side", **logit, **FAST).fit(Y, scales, covariates=X)
    narrow = make_predictor("side", interval_eps=0.05, **logit, **FAST).fit(Y, scales,
                                                                          covariates=X)
    assert bare.interval_eps_ is None and bare.interval_logit_rule_ is None
    assert side.interval_logit_rule_ == "none" and wide.interval_eps_ == 0.5 and EPS == 0.5
    # the default's space: a logit on percent scales, margin 0.5
    assert MatrixSupport(default).transform.eps == MatrixSupport(bare).transform.eps == EPS
    pct = scales.kind == "percent"
    assert pct.any() and MatrixSupport(bare).transform.logit[pct].all()
    # a fit with covariates: no logit by default; with a logit rule, its own margin
    assert not MatrixSupport(side).transform.logit.any()
    assert MatrixSupport(side, logit_rule=LOGIT_RULE).transform.logit[pct].all()  # explicit wins
    assert MatrixSupport(wide).transform.logit[pct].all()
    assert MatrixSupport(wide).transform.eps == 0.5 and MatrixSupport(narrow).transform.eps == 0.05
    assert MatrixSupport(wide, eps=0.2).transform.eps == 0.2  # an explicit margin wins
    # the margin moves the risk features of cells near the ends of the range
    assert not np.array_equal(MatrixSupport(wide).spread_z, MatrixSupport(narrow).spread_z)
    # the space is the calibrator's too: intervals stay inside the range without a logit
    rng = np.random.RandomState(3)
    cal = IntervalCalibrator(0.1).fit(rng.normal(size=200), rng.normal(size=(200, 7)))
    out = complete_intervals(side, cal)
    lo = np.broadcast_to(np.nan_to_num(scales.lower, nan=-np.inf), Y.shape)
    up = np.broadcast_to(np.nan_to_num(scales.upper, nan=np.inf), Y.shape)
    ok = ~np.isnan(out["lower"])
    assert ok[:, pct].any()
    assert (out["lower"][ok] >= lo[ok]).all() and (out["upper"][ok] <= up[ok]).all()
    # and some cells reach an end of the range (clipped there, not squeezed by a logit)
    assert ((out["lower"] == lo) | (out["upper"] == up))[ok].any()
    # without covariates the intervals are the default's, to the bit
    a, b = complete_intervals(bare, cal), complete_intervals(default, cal)
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in ("lower", "upper", "trust"))


def test_interval_logit_rule_is_checked():
    with pytest.raises(UsageError, match="interval_logit_rule"):
        make_predictor("side", interval_logit_rule="logit")


def test_extra_ranks_average_fits_with_covariates_only():
    Y, scales, X = _synthetic()
    avg = make_predictor("side", extra_ranks=(2, 3), **FAST).fit(Y, scales, covariates=X)
    fits = [make_predictor("side", rank=r, **FAST).fit(Y, scales, covariates=X)
            for r in (4, 2, 3)]
    assert [m.rank for m in avg.members_] == [2, 3]
    P = np.stack([f.complete(keep_observed=False) for f in fits])
    assert np.allclose(avg.complete(keep_observed=False), P.mean(axis=0), rtol=0, atol=1e-9)
    spreads = np.stack([f.complete_spread() for f in fits])
    assert np.allclose(avg.complete_spread(), np.sqrt((spreads ** 2).mean(axis=0) + P.var(axis=0)))
    S = _held_rows(Y, np.arange(3), 3)
    rows = np.stack([f.fold_in(S, covariates=X[:3]) for f in fits])
    assert np.allclose(avg.fold_in(S, covariates=X[:3]), rows.mean(axis=0), atol=1e-9)
    # rows without covariates, and fits without them, are this rank's alone: the default's
    assert np.array_equal(avg.fold_in(S), fits[0].fold_in(S))
    bare = make_predictor("side", extra_ranks=(2, 3), **FAST).fit(Y, scales)
    assert bare.members_ == [] and np.array_equal(
        bare.complete(), make_predictor("als4", **AS_SIDE).fit(Y, scales).complete())


@pytest.mark.parametrize("block", [1 << 22, 50])  # one block, and many blocks of 2 rows
def test_masked_grams_equal_the_per_benchmark_sums(block):
    from benchpress.predict.models.covariate_prior import masked_grams

    rng = np.random.default_rng(3)
    X, obs = rng.normal(size=(37, 5)), rng.random((37, 11)) < 0.4
    expected = np.stack([X[obs[:, j]].T @ X[obs[:, j]] for j in range(obs.shape[1])])
    assert np.allclose(masked_grams(obs, X, block=block), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), ("false", False), ("No", False), ("0", False),
    ("true", True), (" YES ", True), ("1", True), (None, None)])
def test_metadata_booleans_are_read_as_words_not_truthiness(value, expected):
    from benchpress.predict.models.covariates import _metadata_value

    assert _metadata_value("is_reasoning", value) is expected


def test_a_metadata_boolean_of_another_kind_is_refused():
    from benchpress.predict.models.covariates import _metadata_value

    with pytest.raises(BadInputError, match=r"open_weights='maybe': expected true or false"):
        _metadata_value("open_weights", "maybe")
