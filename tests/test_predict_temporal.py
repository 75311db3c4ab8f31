"""The nearest-models predictor, the blend, and the temporal yardstick."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from benchpress.errors import BadInputError, UsageError
from benchpress.predict import SPREAD_PRIOR, Z_BOUND, BenchmarkScales, make_predictor
from benchpress.predict.state import fitted_state, restore_state
from benchpress.predict.models.knn import neighbour_average
from benchpress.predict.evaluation.temporal import (TemporalResult, monthly_cutoffs,
                                                    single_benchmarks, temporal_evaluation)

# about 12 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=12)


def _by_hand(Zq, Z, k, offset):
    """The k nearest models per benchmark, one query and one benchmark at a time."""
    out = np.full(Zq.shape, np.nan)
    for r, q in enumerate(Zq):
        known = ~np.isnan(q)
        dists, gaps = [], []
        for z in Z:
            both = known & ~np.isnan(z)
            if both.sum() < min(3, known.sum()) or not both.any():
                dists.append(np.inf), gaps.append(0.0)
                continue
            dists.append(np.sqrt(np.mean((q[both] - z[both]) ** 2)))
            gaps.append(np.mean(q[both] - z[both]))
        order = np.argsort(dists, kind="stable")
        for j in range(Z.shape[1]):
            vals = [Z[i, j] + (gaps[i] if offset else 0.0) for i in order
                    if np.isfinite(dists[i]) and not np.isnan(Z[i, j])][:k]
            if vals:
                out[r, j] = np.mean(vals)
    return out


@pytest.mark.parametrize("offset", [False, True])
def test_neighbour_average_matches_a_loop_written_by_hand(offset):
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(40, 9))
    Z[rng.random(Z.shape) < 0.3] = np.nan
    Zq = rng.normal(size=(5, 9))
    Zq[:, 4:] = np.nan
    got = neighbour_average(Zq, Z, k=4, offset=offset)
    np.testing.assert_allclose(got, _by_hand(Zq, Z, 4, offset), atol=1e-12)
    # a candidate cap of all the models is the same search
    np.testing.assert_allclose(neighbour_average(Zq, Z, k=4, offset=offset, candidates=40), got,
                               atol=1e-12)


def test_knn_fold_in_is_a_search_of_the_fitted_models(paper_matrix):
    Y, _, _, scales = paper_matrix
    knn = make_predictor("knn", offset=True).fit(Y[1:], scales)
    row = np.where(~np.isnan(Y[0]) & (np.arange(Y.shape[1]) < 40), Y[0], np.nan)
    folded = knn.fold_in(row)
    # the same search by hand, in the predictor's own z space
    z = _by_hand(knn.transform_.transform(row[None]), knn.Z_, 5, True)
    expected = knn.transform_.to_scores(np.where(np.isnan(z), np.nan, z))[0]
    ok = ~np.isnan(expected)
    np.testing.assert_allclose(folded[ok], expected[ok], atol=1e-9)
    with pytest.raises(UsageError, match="weighting"):
        make_predictor("knn", weighting="nearest").fit(Y, scales)


def test_blend_is_als_or_the_neighbours_where_its_gate_says_so(paper_matrix):
    from tests.test_blend import _leading

    Y, _, _, scales = paper_matrix
    als = make_predictor("als4", n_starts=3, spread_prior=SPREAD_PRIOR,
                         z_bound=Z_BOUND).fit(Y, scales)
    low = make_predictor("default", n_starts=3, gate=_leading("low_rank")).fit(Y, scales)
    seen = np.flatnonzero(~np.isnan(Y[7]))[:5]
    row = np.full(Y.shape[1], np.nan)
    row[seen] = Y[7, seen]
    np.testing.assert_allclose(low.fold_in(row), als.fold_in(row), atol=1e-9)
    near = make_predictor("default", n_starts=3, gate=_leading("neighbours")).fit(Y, scales)
    # the same search in the default's z space (its spread prior and bound)
    knn = make_predictor("knn", k=5, offset=True, weighting="distance", candidates=100
                         ).fit(Y, scales, transform=near.transform_)
    z = knn.predict_z(knn.transform_.transform(row[None]), fallback=False)[0]
    has = ~np.isnan(z)
    assert has.sum() > 50
    np.testing.assert_allclose(near.fold_in(row)[has], knn.transform_.to_scores(z[None])[0][has],
                               atol=1e-9)


def test_blend_artifact_restores_the_same_predictions(paper_matrix):
    Y, _, _, scales = paper_matrix
    pred = make_predictor("default", n_starts=3).fit(Y, scales)
    arrays, meta = fitted_state(pred)
    twin = restore_state(arrays, meta, Y, scales)["predictor"]
    row = np.where(np.arange(Y.shape[1]) < 25, Y[11], np.nan)
    np.testing.assert_array_equal(twin.fold_in(row), pred.fold_in(row))
    np.testing.assert_array_equal(twin.complete(), pred.complete())


def _dated_matrix(n=120, b=12, seed=0):
    """A rank-1 matrix whose models improve with their release month (2025-01 .. 2025-12)."""
    rng = np.random.default_rng(seed)
    month = np.sort(rng.integers(1, 13, size=n))
    skill = month / 6.0 + rng.normal(scale=0.5, size=n)
    Y = 100 / (1 + np.exp(-(skill[:, None] - rng.normal(size=b)[None, :])))
    Y = np.clip(Y + rng.normal(scale=1.0, size=Y.shape), 1, 99)
    Y[rng.random(Y.shape) < 0.2] = np.nan
    dates = [f"2025-{m:02d}-15" for m in month]
    scales = BenchmarkScales(np.array(["percent"] * (b - 1) + ["index"]), np.zeros(b),
                             np.full(b, 100.0))
    return Y, dates, scales


def test_temporal_fits_only_the_past_and_never_pools_scales():
    Y, dates, scales = _dated_matrix()
    kw = dict(benchmark_ids=[f"b{j}" for j in range(Y.shape[1])],
              model_ids=[f"m{i}" for i in range(Y.shape[0])], known=(1, 3),
              cutoffs=["2025-10-01", "2025-11-01", "2025-12-01"], intervals=False)
    ests = {"default": make_predictor("default", n_starts=3), "knn": make_predictor("knn")}
    assert type(ests["default"]).__name__ == "NeighbourBlend"  # (fitted without covariates here)
    res = temporal_evaluation(ests, Y, scales, dates, **kw)
    cells = res.cells
    assert set(cells["cutoff"]) == {"2025-10-01", "2025-11-01", "2025-12-01"}
    # later models are those of the month from each cutoff; training counts what came before
    month = np.array([int(d[5:7]) for d in dates])
    assert res.n_train["2025-11-01"] == int((month < 11).sum())
    assert res.n_test["2025-11-01"] == int(((month == 11) & ((~np.isnan(Y)).sum(1) >= 6)).sum())
    # the percent summary leaves the index column out; per_scale keeps it apart
    summary = res.summary()
    pct = cells.filter(cells["scale"] == "percent")
    assert summary["n_cells"].sum() == pct.height < cells.height
    assert set(res.per_scale()["scale"]) == {"percent", "index"}
    # nothing after a cutoff is seen: changing the December models moves no October figure
    Y2 = Y.copy()
    Y2[month == 12] = np.clip(Y2[month == 12] - 30, 0, 100)
    again = temporal_evaluation(ests, Y2, scales, dates, **kw).cells
    oct_ = lambda c: c.filter(c["cutoff"] == "2025-10-01").sort(["method", "k", "order",
                                                                   "model_id", "benchmark_id"])
    np.testing.assert_array_equal(oct_(again)["predicted"].to_numpy(),
                                  oct_(cells)["predicted"].to_numpy())
    # a model that improves on its neighbours is under-predicted by ALS fold-in, less so
    # by the shifted neighbours
    assert monthly_cutoffs(dates, 3) == ["2025-10-01", "2025-11-01", "2025-12-01"]


def test_temporal_intervals_are_reported_per_k(paper_matrix):
    Y, _, bids, scales = paper_matrix
    rng = np.random.default_rng(0)
    dates = [f"2025-{m:02d}-01" for m in rng.integers(1, 13, size=Y.shape[0])]
    res = temporal_evaluation({"default": make_predictor("default", n_starts=3)}, Y, scales,
                              dates, benchmark_ids=bids,
                              model_ids=[f"m{i}" for i in range(Y.shape[0])], known=(3,),
                              cutoffs=["2025-11-01", "2025-12-01"], orders=("popular",))
    s = res.summary().row(0, named=True)
    assert s["k"] == 3 and 50.0 < s["coverage90"] <= 100.0 and s["n_cells"] > 100
    doc = res.to_json()
    assert doc["default_k3_coverage90"] == s["coverage90"]
    json.dumps(doc)  # JSON-ready
    with pytest.raises(UsageError, match="reveal order"):
        temporal_evaluation({"d": make_predictor("knn")}, Y, scales, dates, benchmark_ids=bids,
                            model_ids=list(range(Y.shape[0])), orders=("alphabetical",))


def test_cli_temporal_and_the_snapshot_to_snapshot_form(built_2026_05):
    """`evaluate --temporal` on the paper matrix, and `--later`: a snapshot of the 2026-05
    matrix alone, then the 2026-02 matrix ingested; its models are the later ones."""
    from click.testing import CliRunner

    from benchpress.cli import main
    from benchpress.store.ingest import ingest
    from tests.conftest import MATRIX_2026_02

    home = str(built_2026_05.root)

    def run(*args):
        res = CliRunner().invoke(main, [*args, "--home", home])
        return res

    res = run("evaluate", "--temporal", "--known", "1,3", "--format", "json",
              "--cutoffs", "2025-10-01,2026-01-01", "--baselines", "knn")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["method"] == "default" and doc["cutoffs"] == ["2025-10-01", "2026-01-01"]
    assert {"default_k1_medae", "default_k3_medae", "knn_k3_medae",
            "default_k3_coverage90"} <= set(doc)
    assert doc["default_k3_n_cells"] > 50 and 0 < doc["default_k3_medae"] < 15
    # the default over knn per k, its interval around it, and the same figures flat
    vs = {r["k"]: r for r in doc["vs_baselines"] if r["metadata"] == "given"}
    assert set(vs) == {1, 3} and {r["baseline"] for r in vs.values()} == {"knn"}
    # folded in without the registry's metadata too: its own keys (knn takes none)
    assert "default_none_k3_medae" in doc and "knn_none_k3_medae" not in doc
    assert doc["vs_knn_none_k3_ratio"] == pytest.approx(
        doc["default_none_k3_medae"] / doc["knn_k3_medae"])
    # per order (single benchmarks among them), the default over the best other method
    best = {(r["order"], r["k"], r["metadata"]) for r in doc["vs_best"]}
    assert {("single", 3, "given"), ("single", 3, "none"), ("random", 1, "none")} <= best
    assert vs[3]["ratio"] == pytest.approx(doc["default_k3_medae"] / doc["knn_k3_medae"])
    assert vs[3]["lo"] <= vs[3]["ratio"] <= vs[3]["hi"] and vs[3]["hi"] > vs[3]["lo"]
    assert doc["vs_knn_k3_hi"] == vs[3]["hi"] and vs[3]["n_cells"] == doc["default_k3_n_cells"]
    table = run("evaluate", "--temporal", "--known", "3", "--cutoffs", "2026-01-01",
                "--baselines", "knn")
    assert table.exit_code == 0 and "MedAE / each baseline's" in table.stdout
    # --months: the newest months of release dates, as the default 12 are
    from benchpress.predict.evaluation.temporal import monthly_cutoffs
    from benchpress.store.matrix import load_matrix

    dates = [str(d)[:10] if d else "" for d in
             load_matrix(built_2026_05.registry).models["release_date"].to_list()]
    res = run("evaluate", "--temporal", "--months", "2", "--known", "3", "--no-intervals",
              "--baselines", "", "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["cutoffs"] == monthly_cutoffs(dates, 12)[-2:]
    bad = run("evaluate", "--temporal", "--months", "0")
    assert bad.exit_code == 2
    bad = run("evaluate", "--temporal", "--cutoffs", "2026-13-01")
    assert bad.exit_code == 2 and "ISO date" in bad.stderr
    bad = run("evaluate", "--temporal", "--baselines", "nearest")
    assert bad.exit_code == 2 and "unknown method" in bad.stderr
    bad = run("evaluate", "--temporal", "--baselines", "knn,knnn")
    assert bad.exit_code == 2 and "'knnn' (did you mean 'knn'?)" in bad.stderr

    assert run("snapshot", "create", "--tag", "early").exit_code == 0
    ingest(built_2026_05, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    res = run("evaluate", "--temporal", "--snapshot", "early", "--later", "current",
              "--known", "3", "--no-intervals", "--baselines", "", "--format", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    orders = {r["order"] for r in doc["per_order"]}
    assert orders == {"reported", "random", "single"} and doc["cutoffs"] == ["current"]
    assert doc["n_test"]["current"] > 0 and doc["default_k3_n_cells"] > 0


def test_single_order_reveals_what_a_user_runs_and_metadata_runs_apart():
    """The "single" order reveals the popular benchmarks a user runs (no index, no derived
    aggregate); a predictor that takes covariates is folded in with and without them, one
    that takes none once for both runs."""
    Y, dates, scales = _dated_matrix()
    b = Y.shape[1]
    single = single_benchmarks(scales.kind, [j == 0 for j in range(b)])  # b0: an aggregate
    assert not single[0] and not single[-1] and single[1:-1].all()
    X = np.column_stack([np.arange(Y.shape[0]) % 3 == 0, np.linspace(0, 1, Y.shape[0])])
    kw = dict(benchmark_ids=[f"b{j}" for j in range(b)],
              model_ids=[f"m{i}" for i in range(Y.shape[0])], known=(3,),
              cutoffs=["2025-11-01", "2025-12-01"], intervals=False, single=single,
              covariates=X.astype(float))
    ests = {"side": make_predictor("side", n_starts=3), "knn": make_predictor("knn")}
    res = temporal_evaluation(ests, Y, scales, dates, orders=("single", "popular"), **kw)
    cells = res.cells
    # the revealed benchmarks of a single reveal are never b0 nor the index: each later
    # model's single reveal predicts b0 (hidden), its popular reveal may not
    sing = cells.filter((pl.col("order") == "single") & (pl.col("method") == "knn")
                        & (pl.col("metadata") == "given"))
    hidden_b0 = sing.filter(pl.col("benchmark_id") == "b0")["model_id"].n_unique()
    has_b0 = int((~np.isnan(Y[[int(m[1:]) for m in sing["model_id"].unique()], 0])).sum())
    assert hidden_b0 == has_b0 > 0
    pop = cells.filter((pl.col("order") == "popular") & (pl.col("method") == "knn")
                       & (pl.col("metadata") == "given"))
    assert pop.filter(pl.col("benchmark_id") == "b0")["model_id"].n_unique() < hidden_b0
    # knn: the same cells under both runs; side: other numbers with its covariates
    for name, same in (("knn", True), ("side", False)):
        runs = [cells.filter((pl.col("method") == name) & (pl.col("metadata") == m))
                .sort("cutoff", "order", "model_id", "benchmark_id")["predicted"].to_numpy()
                for m in ("given", "none")]
        assert runs[0].shape == runs[1].shape
        assert np.array_equal(runs[0], runs[1]) == same
    only = temporal_evaluation(ests, Y, scales, dates, metadata=("none",), **kw)
    assert set(only.cells["metadata"]) == {"none"}
    with pytest.raises(UsageError, match="metadata runs"):
        temporal_evaluation(ests, Y, scales, dates, metadata=("maybe",), **kw)


def test_versus_best_picks_the_best_other_method_per_group():
    models = [f"m{i}" for i in range(40)]
    truth = np.zeros(40 * 5)
    def method(name, err, order):
        return pl.DataFrame({"method": name, "cutoff": "c", "order": order, "k": 3,
                             "metadata": "given", "model_id": np.repeat(models, 5),
                             "benchmark_id": np.tile([f"b{j}" for j in range(5)], 40),
                             "scale": "percent", "actual": truth, "predicted": truth + err,
                             "abs_error": np.abs(err), "covered": None})
    rng = np.random.default_rng(0)
    e = np.abs(rng.normal(size=200))
    cells = pl.concat([method("default", e, "random"), method("a", 2 * e, "random"),
                       method("b", 1.5 * e, "random"), method("default", e, "single"),
                       method("a", 1.2 * e, "single"), method("b", 3 * e, "single")])
    best = TemporalResult(cells, []).versus_best("default", n_boot=200)
    rows = {r["order"]: r for r in best.iter_rows(named=True)}
    assert rows["random"]["baseline"] == "b" and rows["single"]["baseline"] == "a"
    assert rows["random"]["ratio"] == pytest.approx(1 / 1.5)
    assert rows["single"]["ratio"] == pytest.approx(1 / 1.2)
    # every cell the same multiple: the interval is the ratio itself, whichever models
    assert (rows["single"]["lo"], rows["single"]["hi"]) == pytest.approx((1 / 1.2, 1 / 1.2))


def test_cutoffs_with_nothing_to_fit_or_score_say_which():
    Y, dates, scales = _dated_matrix()
    kw = dict(benchmark_ids=[f"b{j}" for j in range(Y.shape[1])],
              model_ids=[f"m{i}" for i in range(Y.shape[0])], intervals=False)
    ests = {"knn": make_predictor("knn")}
    with pytest.raises(BadInputError, match="nothing to fit on"):
        temporal_evaluation(ests, Y, scales, dates, cutoffs=["1990-01-01"], **kw)
    with pytest.raises(BadInputError, match="more than 50 scores"):
        temporal_evaluation(ests, Y, scales, dates, cutoffs=["2025-11-01"], known=(50,), **kw)


def test_new_model_calibration_holds_out_undated_models_beside_the_dated_months():
    """A leaderboard without release dates (LiveBench) must be calibrated too: its models
    are held out at random beside the temporal groups, once they are a fifth of the models
    (without them, its later models' 90% intervals covered 51-76%)."""
    from benchpress.predict.intervals.calibration import UNDATED_SHARE, new_model_records

    Y, dates, scales = _dated_matrix(n=150)
    est = make_predictor("als4", n_starts=2)
    dated_only = new_model_records(est, Y, scales, release_dates=dates)
    assert dated_only["fold"].max() < 5  # the temporal groups alone
    undated = np.arange(Y.shape[0]) % 3 == 0  # a third of the models, from every month
    some = [None if u else d for u, d in zip(undated, dates)]
    rec = new_model_records(est, Y, scales, release_dates=some)
    held = np.unique(rec["i"])
    assert undated[held].any() and (~undated[held]).any()
    # each undated model held out is in a group of its own kind (random groups come last)
    first_random = rec["fold"][undated[rec["i"]]].min()
    assert not undated[rec["i"][rec["fold"] < first_random]].any()
    # below the share, undated models stay out of the calibration
    few = [None if (i % 10 == 0) else d for i, d in enumerate(dates)]
    assert sum(d is None for d in few) < UNDATED_SHARE * len(few)
    rec_few = new_model_records(est, Y, scales, release_dates=few)
    assert not any(few[i] is None for i in np.unique(rec_few["i"]))


def test_regression_folds_in_from_its_fitted_lines_without_a_refit(paper_matrix):
    """`--method regression` (benchmark-wise regression) answers a new model from the
    fitted lines: a registered model's own row folds in to its completion, exactly, and
    no refit happens (fit is never called again)."""
    Y, _, _, scales = paper_matrix
    reg = make_predictor("regression").fit(Y, scales)
    full = reg.complete(keep_observed=False)
    np.testing.assert_allclose(reg.fold_in(Y[:7]), full[:7], rtol=0, atol=1e-9)
    np.testing.assert_allclose(reg.fold_in(Y[3]), full[3], rtol=0, atol=1e-9)
    calls = []
    reg._fit = lambda *a: calls.append(a)
    row = np.full(Y.shape[1], np.nan)
    row[np.flatnonzero(~np.isnan(Y[0]))[:3]] = Y[0][~np.isnan(Y[0])][:3]
    assert np.isfinite(reg.fold_in(row)).all() and calls == []
    assert not np.allclose(reg.fold_in(row, refit=True), reg.fold_in(row))  # a refit differs


def _aa_history(tmp_path, first: str, then: str):
    """A workspace of Artificial Analysis as of ``first`` (snapshot tagged v1), then the
    version of ``then`` ingested as the same source's next version."""
    from click.testing import CliRunner

    from benchpress.cli import main
    from tests.conftest import SHARED_DATA

    root, aa = tmp_path / "ws", SHARED_DATA / "artificial-analysis"

    def go(*args):
        res = CliRunner().invoke(main, [*map(str, args), "--home", str(root)])
        assert res.exit_code == 0, res.stderr

    assert CliRunner().invoke(main, ["init", str(root), "--no-git"]).exit_code == 0
    go("ingest", aa / f"llms_{first}.json", "--id", "aa", "--version", first)
    go("snapshot", "create", "--tag", "v1")
    go("ingest", aa / f"llms_{then}.json", "--source", "aa", "--version", then)
    return root


@pytest.mark.usefixtures("shared_data")
def test_as_published_takes_each_source_history_as_published_before_the_date(tmp_path):
    """A source with versions is seen as it stood before a cutoff: the values of its newest
    version before the date, NaN for what it had not published; the temporal yardstick
    fits on those (`values_at`)."""
    from benchpress.home import Home
    from benchpress.store.matrix import as_published, load_matrix
    from benchpress.store.snapshot import resolve_snapshot

    root = _aa_history(tmp_path, "2026-04-10", "2026-05-22")
    now = load_matrix(root / "registry")
    then = load_matrix(resolve_snapshot(Home(root), "v1"))
    values_at = as_published(root / "registry", now)
    V = values_at("2026-05-01")
    np.testing.assert_array_equal(values_at("2026-06-01"), now.values)
    rows = {m: i for i, m in enumerate(now.model_ids)}
    cols = {b: j for j, b in enumerate(now.benchmark_ids)}
    ii = [rows[m] for m in then.model_ids]
    jj = [cols[b] for b in then.benchmark_ids]
    np.testing.assert_array_equal(V[np.ix_(ii, jj)], then.values)  # as v1 had them
    revised = ~np.isclose(now.values[np.ix_(ii, jj)], then.values, equal_nan=True)
    assert revised.sum() > 100  # AA revised many values in six weeks: a real difference
    new_rows = [i for m, i in rows.items() if m not in set(then.model_ids)]
    assert new_rows and np.isnan(V[new_rows]).all()  # models v1 did not have
    # a source with two versions is one source where a prediction says what made it
    from benchpress.api import BenchPress

    assert BenchPress.from_snapshot(root).source_ids == ["aa"]


def test_temporal_fits_on_the_values_known_at_each_cutoff():
    """With `values_at`, each fit trains on the scores as they stood before its cutoff
    and the later models are still scored against the newest values."""
    Y, dates, scales = _dated_matrix()
    asked = []

    def older(cutoff):
        asked.append(cutoff)
        return np.clip(Y - 10, 0, 100)  # every value was published 10 points lower

    kw = dict(benchmark_ids=[f"b{j}" for j in range(Y.shape[1])],
              model_ids=[f"m{i}" for i in range(Y.shape[0])], known=(3,),
              cutoffs=["2025-11-01", "2025-12-01"], intervals=False)
    est = {"knn": make_predictor("knn")}
    plain = temporal_evaluation(est, Y, scales, dates, **kw).cells
    then = temporal_evaluation(est, Y, scales, dates, values_at=older, **kw).cells
    assert asked == ["2025-11-01", "2025-12-01"]
    np.testing.assert_array_equal(then["actual"].to_numpy(), plain["actual"].to_numpy())
    # plain kNN (no shift) predicts from the neighbours' values: 10 lower where unclipped
    gap = (plain["predicted"] - then["predicted"]).to_numpy()
    assert np.median(gap) > 5


def test_later_models_reveal_what_their_leaderboard_shows_first(tmp_path):
    """`--later`'s `reported` order is the source's own: Artificial Analysis lists its
    three indices first. It used to sort the `row` text, which put `breakdowns.gdpval.elo`,
    `evaluations.aa_lcr` and `evaluations.aa_omniscience` first."""
    import polars as pl

    from benchpress.api import BenchPress
    from benchpress.home import Home
    from benchpress.predict import make_predictor
    from benchpress.store.matrix import load_matrix
    from benchpress.store.snapshot import resolve_snapshot
    from benchpress.store.tables import read_table

    root = _aa_history(tmp_path, "2026-04-24", "2026-05-22")
    later = (load_matrix(root / "registry"), read_table(root / "registry", "scores"))
    bp = BenchPress.from_snapshot(root, "v1", predictor=make_predictor("knn"))
    res = bp.evaluate_later(later, known=(3,), orders=("reported",), intervals=False)
    cells = res.cells
    indices = {"aa_intelligence_index", "aa_coding_index", "aa_agentic_index"}
    new = set(later[0].model_ids) - set(load_matrix(resolve_snapshot(Home(root), "v1")).model_ids)
    had = later[1].filter(pl.col("model_id").is_in(list(new)))
    with_all = {mid for (mid,), g in had.group_by("model_id") if indices <= set(g["benchmark_id"])}
    scored = cells.filter(pl.col("model_id").is_in(list(with_all)))
    assert len(with_all) >= 10 and scored.height > 0
    assert not set(scored["benchmark_id"]) & indices  # revealed, so never scored
    assert "gdpval_aa_elo" in set(scored["benchmark_id"])  # scored, not revealed


def _cells(errors_a, errors_b, models, scale="percent"):
    """A TemporalResult's cells for two methods, one row per (model, benchmark) pair."""
    import polars as pl

    n = len(models)
    common = {"cutoff": ["c"] * n, "order": ["random"] * n, "k": [3] * n,
              "metadata": ["given"] * n, "model_id": models,
              "benchmark_id": [f"b{i}" for i in range(n)], "scale": [scale] * n}
    return pl.concat([pl.DataFrame({**common, "method": [m] * n, "abs_error": e})
                      for m, e in (("new", errors_a), ("old", errors_b))])


def test_ratio_to_a_baseline_is_paired_and_its_interval_follows_the_models():
    import polars as pl

    from benchpress.predict.evaluation.temporal import TemporalResult

    rng = np.random.default_rng(0)
    models = [f"m{i // 10}" for i in range(300)]  # 30 models, 10 cells each
    old = rng.gamma(2.0, 2.0, size=300)
    # half the error on every cell: the ratio is 0.5 whichever models are drawn
    same = TemporalResult(_cells(old / 2, old, models), []).ratio("new", ["old"], n_boot=200)
    assert same.row(0, named=True) == pytest.approx(
        {"baseline": "old", "metadata": "given", "k": 3, "n_models": 30, "n_cells": 300, "ratio": 0.5, "lo": 0.5,
         "hi": 0.5})
    # better on half the models, worse on the rest: the interval is wide and holds the ratio
    factor = np.where(np.arange(300) < 150, 0.5, 1.5)
    mixed = TemporalResult(_cells(old * factor, old, models), [])
    r = mixed.ratio("new", ["old"], n_boot=500).row(0, named=True)
    assert r["lo"] < r["ratio"] < r["hi"] and r["hi"] - r["lo"] > 0.2
    # Elo cells and cells only one method has are left out
    elo = _cells(old[:10] * 100, old[:10], models[:10], scale="elo")
    extra = _cells(old[:5], old[:5], [f"x{i}" for i in range(5)]).filter(pl.col("method") == "new")
    both = TemporalResult(pl.concat([_cells(old / 2, old, models), elo, extra]), [])
    assert both.ratio("new", ["old"], n_boot=50).row(0, named=True)["n_cells"] == 300


def test_coverage_interval_follows_the_models():
    import polars as pl

    from benchpress.predict.evaluation.temporal import TemporalResult

    models = [f"m{i // 10}" for i in range(300)]  # 30 models, 10 cells each
    cells = _cells(np.ones(300), np.ones(300), models)

    def covered(flags):
        return TemporalResult(cells.with_columns(
            pl.Series("covered", np.concatenate([flags, np.zeros(300, bool)]))), [])

    # every model's intervals hold 9 of its 10 cells: 90% whichever models are drawn
    even = covered(np.arange(300) % 10 != 0).coverage("new", n_boot=200).row(0, named=True)
    assert even == pytest.approx({"metadata": "given", "k": 3, "n_models": 30, "n_cells": 300,
                                  "coverage90": 90.0, "lo": 90.0, "hi": 90.0})
    # the same 90% overall, but 27 models held everything and 3 nothing: a wide interval
    lumpy = covered(np.arange(300) < 270).coverage("new", n_boot=500).row(0, named=True)
    assert lumpy["coverage90"] == pytest.approx(90.0)
    assert lumpy["lo"] < 85.0 and lumpy["hi"] > 95.0
    # a method that made no intervals has no rows
    none = TemporalResult(cells.with_columns(pl.lit(None, dtype=pl.Boolean).alias("covered")), [])
    assert none.coverage("new").height == 0
