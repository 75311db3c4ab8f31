"""The Python API over a registry: matrix loading, source selection, predict, folds."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from benchpress import BenchPress
from benchpress.errors import BadInputError, UsageError
from benchpress.predict import make_predictor
from benchpress.predict.evaluation.ranking import NORMAL_Q95
from benchpress.store.matrix import load_matrix
from tests.conftest import BP_2026_05
from tests.predict_data import PUBLISHED_FOLDS
from tests.reference import loop_heldout_predictions



def test_matrix_follows_the_file_order(built_2026_05):
    raw = json.loads(BP_2026_05.read_text())
    m = load_matrix(built_2026_05.registry)
    assert m.model_ids == [x["id"] for x in raw["models"]]
    assert m.benchmark_ids == [x["id"] for x in raw["benchmarks"]]
    observed = np.array([[np.nan if v is None else v for v in row] for row in raw["observed"]])
    np.testing.assert_array_equal(m.values, observed)


def test_source_selection_and_first_named_priority(built_both):
    only_05 = load_matrix(built_both.registry, sources=["benchpress"])
    assert only_05.values.shape == (84, 133)
    both = load_matrix(built_both.registry, sources=["benchpress", "llm-benchmark-matrix"])
    reverse = load_matrix(built_both.registry, sources=["llm-benchmark-matrix", "benchpress"])
    assert both.values.shape == reverse.values.shape and both.values.shape[0] > 84
    # wherever 2026-05 has a value (not dropped by its own audit), naming it first keeps it
    i = [both.model_ids.index(m) for m in only_05.model_ids]
    j = [both.benchmark_ids.index(b) for b in only_05.benchmark_ids]
    sub = both.values[np.ix_(i, j)]
    raw = json.loads(BP_2026_05.read_text())
    dropped = np.array([[(c or {}).get("audit_status") == "dropped" for c in row] for row in raw["sources"]])
    seen = ~np.isnan(only_05.values) & ~dropped
    np.testing.assert_array_equal(sub[seen], only_05.values[seen])
    assert (reverse.values[np.ix_(i, j)][seen] != only_05.values[seen]).sum() > 100


def test_unknown_source_is_a_usage_error(built_2026_05):
    with pytest.raises(UsageError, match="no source matches"):
        load_matrix(built_2026_05.registry, sources=["epoch"])


def test_sources_as_text_or_a_list_pick_the_same_matrix(built_both):
    """"benchpress,llm-benchmark-matrix" (as --sources takes them) is the list, never read
    letter by letter; a value that is neither is one line."""
    listed = BenchPress.from_snapshot(built_both, sources=["benchpress", "llm-benchmark-matrix"])
    text = BenchPress.from_snapshot(built_both, sources=" benchpress, llm-benchmark-matrix ")
    assert text.sources == listed.sources == ["benchpress", "llm-benchmark-matrix"]
    np.testing.assert_array_equal(text.matrix.values, listed.matrix.values)
    assert BenchPress.from_snapshot(built_both, sources="").sources is None
    with pytest.raises(UsageError, match=r"^sources: expected 'a,b' or a list of source names, got int$"):
        BenchPress.from_snapshot(built_both, sources=5)
    with pytest.raises(UsageError, match=r"^sources: every source name must be text, got int$"):
        load_matrix(built_both.registry, sources=["benchpress", 3])


def test_predict_returns_every_benchmark_and_refuses_unknown_ids(built_2026_05):
    bp = BenchPress.from_snapshot(built_2026_05)
    with pytest.raises(BadInputError, match="unknown benchmark 'no_such_bench'$"):
        bp.predict({"GPQA Diamond": 71.2, "hle": 20.1, "no_such_bench": 3})
    with pytest.raises(BadInputError, match="unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'[?]"):
        bp.predict({"gpqa_diamnd": 71.2})
    with pytest.warns(UserWarning, match="unknown benchmarks ignored: no_such_bench$"):
        asked = bp.predict({"GPQA Diamond": 71.2, "no_such_bench": 3}, ignore_unknown=True)
    assert asked.unknown == ["no_such_bench"]  # per call, or for the object:
    told = []
    bp = BenchPress(bp.matrix, contracts_dir=bp.contracts_dir, store=bp.store,
                    ignore_unknown=True, on_unknown=lambda kind, names: told.append((kind, names)))
    result = bp.predict({"GPQA Diamond": 71.2, "hle": 20.1, "no_such_bench": 3})
    assert result.unknown == ["no_such_bench"] and told[-1] == ("benchmark", ["no_such_bench"])
    assert result.resolved == {"GPQA Diamond": "gpqa_diamond", "hle": "hle"}
    frame = result.frame
    assert frame.height == 133 and frame["predicted"].null_count() == 0
    percent = frame.filter(frame["scale"] == "percent")["predicted"]
    assert percent.min() >= 0 and percent.max() <= 100
    # given scores are shown as given: no re-prediction, no interval
    given = frame.filter(pl.col("kind") == "given")
    assert given["benchmark_id"].sort().to_list() == ["gpqa_diamond", "hle"]
    assert given["predicted"].to_list() == given["given"].to_list()
    assert given["lower"].null_count() == given["trust"].null_count() == 2
    assert frame.filter(pl.col("kind") == "predicted")["lower"].null_count() == 0
    with pytest.raises(BadInputError, match="twice"):
        bp.predict({"GPQA Diamond": 71.2, "gpqa_diamond": 70})


def test_one_answer_per_question(built_2026_05):
    """predict_model(X), predict(<X's scores>, metadata=<X's registry row>) and compare (X
    registered) give the same number for every cell; so do predict(<X's scores>) and
    compare of the same scores typed in as a new model without metadata."""
    from benchpress.predict.models.covariates import METADATA_FIELDS

    bp = BenchPress.from_snapshot(built_2026_05)
    m = bp.matrix
    model = "claude-opus-4.5"
    row = m.values[m.model_ids.index(model)]
    scores = {b: float(v) for b, v in zip(m.benchmark_ids, row) if not np.isnan(v)}
    known = m.models.row(m.model_ids.index(model), named=True)
    metadata = {k: str(known[k]) if k == "release_date" else known[k]
                for k in METADATA_FIELDS if known.get(k) is not None}
    assert {"model_id", "provider", "release_date"} <= metadata.keys()
    by_model = bp.predict_model(model).frame
    assert by_model.equals(bp.predict(scores, metadata=metadata).frame)
    typed = bp.predict(scores).frame  # no metadata: side information has nothing to add
    assert not typed.equals(by_model)
    cmp = bp.compare([model, "gpt-5", "acme-3"], new_models={"acme-3": scores}).frame
    assert cmp.columns[1:3] == [model, f"{model}_src"] and "acme-3_src" in cmp.columns
    for col, want in ((model, by_model), ("acme-3", typed)):
        mine = dict(zip(want["benchmark_id"], want["predicted"]))
        lower = {b: v for b, v in zip(want["benchmark_id"], want["lower"]) if v is not None}
        # several rows folded in at once: equal up to float rounding
        assert dict(zip(cmp["benchmark_id"], cmp[col])) == pytest.approx(mine, rel=1e-12, abs=1e-9)
        got = {b: v for b, v in zip(cmp["benchmark_id"], cmp[f"{col}_lower"]) if v is not None}
        # a bound goes through the risk model's exp and the logit's inverse, which magnify
        # the batch's rounding (measured up to 2e-9 relative since the nearest models'
        # regression); a printed bound has one decimal
        assert got == pytest.approx(lower, rel=1e-8, abs=1e-9)
        # an observed score is the observed value, in every command
        assert mine["gpqa_diamond"] == scores["gpqa_diamond"]


def test_names_are_resolved_before_any_fit_with_suggestions(built_2026_05):
    bp = BenchPress.from_snapshot(built_2026_05)
    with pytest.raises(BadInputError, match=r"^unknown model 'gpt5'; did you mean 'gpt-5'\?$"):
        bp.compare(["gpt5", "claude-opus-4.5"])
    with pytest.raises(BadInputError, match=r"^unknown benchmark 'nosuch'$"):
        bp.compare(["gpt-5", "claude-opus-4.5"], benchmarks=["gpqa_diamond", "nosuch"])
    with pytest.raises(BadInputError, match="unknown benchmark 'zzz'"):
        bp.probes(2, candidates=["gpqa_diamond", "zzz"])
    with pytest.raises(BadInputError, match="did you mean 'gpqa_diamond'"):
        bp.backtest("2026-01-01", probes=["gpqa_diamnd", "hle"])
    assert bp.store.n_fits == 0  # nothing fitted
    assert bp.resolve_models(["Claude Opus 4.5", "gpt-5"]).ids == ["claude-opus-4.5", "gpt-5"]
    with pytest.warns(UserWarning, match="unknown benchmarks ignored: nosuch"):
        found = bp.resolve_benchmarks(["GPQA Diamond", "nosuch"], ignore_unknown=True)
    assert found.ids == ["gpqa_diamond"] and found.unknown == ["nosuch"]
    # costs by id or alias; one for a benchmark the matrix lacks is named, never applied
    costs = {"GPQA Diamond": 4.0, "hle": 2.0, "nosuch": 1.0}
    assert bp.unused_costs(costs) == ["nosuch"]
    cost = bp.benchmark_costs(costs)
    ids = bp.matrix.benchmark_ids
    assert cost[ids.index("gpqa_diamond")] == 4.0 and cost[ids.index("hle")] == 2.0
    with pytest.raises(UsageError, match=r"^unknown method 'defualt' \(did you mean 'default'\?\); "
                                         r"choose from published, default"):
        bp.evaluate_temporal(methods=["defualt"])


def test_predict_refuses_out_of_range_scores(built_2026_05):
    bp = BenchPress.from_snapshot(built_2026_05)
    with pytest.raises(BadInputError, match="'gpqa_diamond' is 140, outside gpqa_diamond's percent range"):
        bp.predict({"gpqa_diamond": 140})


@pytest.mark.slow(seconds=6)  # seconds-long end to end: `make test` runs it, test-quick not
def test_more_scores_predict_a_held_out_model_better(built_2026_05):
    """Fold-in from a model's own scores: twenty known scores beat two."""
    bp = BenchPress.from_snapshot(built_2026_05)
    m = bp.matrix
    rows = np.argsort((~np.isnan(m.values)).sum(axis=1))[-6:]  # the best-covered models
    err2, err20 = [], []
    for i in rows:
        model = m.model_ids[i]
        known = [(b, v) for b, v in zip(m.benchmark_ids, m.values[i]) if not np.isnan(v)]
        rest = m.without_model(model)
        assert model not in rest.model_ids and rest.values.shape == (m.values.shape[0] - 1,
                                                                       m.values.shape[1])
        np.testing.assert_array_equal(rest.values, np.delete(m.values, i, axis=0))
        assert rest.models.height == m.models.height - 1 and rest.scales is m.scales
        others = BenchPress(rest, contracts_dir=None)
        truth = dict(known[20:])
        for k, errs in ((2, err2), (20, err20)):
            pred = others.predict(dict(known[:k])).frame
            got = dict(zip(pred["benchmark_id"], pred["predicted"]))
            errs += [abs(got[b] - v) for b, v in truth.items() if m.benchmarks.filter(
                m.benchmarks["benchmark_id"] == b)["scale"].item() == "percent"]
    assert np.median(err20) < np.median(err2)
    # predict_model folds in all the model's own scores
    model = m.model_ids[rows[-1]]
    own = bp.predict_model(model).frame
    assert own["given"].drop_nulls().len() == int((~np.isnan(m.values[rows[-1]])).sum())


def test_published_folds_apply_to_a_matrix_with_more_sources(built_both):
    ref = BenchPress.from_snapshot(built_both, sources=["benchpress"])
    wide = BenchPress.from_snapshot(built_both, sources=["benchpress", "llm-benchmark-matrix"])
    direct = ref.folds(PUBLISHED_FOLDS)
    mapped = wide.folds(PUBLISHED_FOLDS, folds_sources=["benchpress"])
    assert len(direct.test_cells) == len(mapped.test_cells) == 30
    for a, b in zip(direct.test_cells, mapped.test_cells):
        names_a = {(ref.matrix.model_ids[i], ref.matrix.benchmark_ids[j]) for i, j in a}
        names_b = {(wide.matrix.model_ids[i], wide.matrix.benchmark_ids[j]) for i, j in b}
        assert names_a == names_b


def test_compare_on_a_small_matrix_falls_back_to_the_ensemble_spread():
    """Too few held-out cells to calibrate intervals: `compare` still answers, and says how."""
    import polars as pl

    from benchpress.store.matrix import ScoreMatrix

    rng = np.random.default_rng(0)
    Y = np.clip(rng.normal(60, 15, size=(4, 3)), 1, 99)
    Y[0, 1] = Y[2, 2] = Y[3, 0] = np.nan
    bench = pl.DataFrame({"benchmark_id": [f"b{j}" for j in range(3)], "scale": ["percent"] * 3,
                          "lower": [0.0] * 3, "upper": [100.0] * 3, "higher_is_better": [True] * 3})
    m = ScoreMatrix(Y, [f"m{i}" for i in range(4)], bench["benchmark_id"].to_list(), bench,
                    pl.DataFrame({"model_id": [f"m{i}" for i in range(4)]}))
    result = BenchPress(m, make_predictor("published")).compare(["m0", "m1"])
    frame = result.frame
    assert result.uncertainty_source == "ensemble spread (not calibrated)"
    assert frame.height == 3 and "m0_lower" not in frame.columns
    assert frame["p_ahead"].drop_nulls().len() > 0
    # a typed-in model's three scores are checked against each other without a calibrator
    typed = BenchPress(m, make_predictor("published")).compare(
        ["m0"], new_models={"acme": {"b0": 60.0, "b1": 61.0, "b2": 59.0}})
    assert typed.contradicted == {} and "acme" in typed.frame.columns


def test_normal_quantile_of_the_90_percent_interval():
    from scipy.stats import norm

    assert NORMAL_Q95 == norm.ppf(0.95)     # bit for bit: compare's sigma is unchanged
    assert norm.cdf(NORMAL_Q95) - norm.cdf(-NORMAL_Q95) == pytest.approx(0.90, abs=1e-12)


def test_one_predictor_object_reaches_every_fit(built_2026_05):
    """The object given to BenchPress is never fitted itself; its parameters reach the
    fitted predictor, the held-out refits and the probe search."""
    pred = make_predictor("published", n_starts=2, n_iter=5)
    bp = BenchPress.from_snapshot(built_2026_05, predictor=pred)
    assert bp.method == "published" and bp.params == {"n_starts": 2, "n_iter": 5}
    assert bp.predictor.get_params() == pred.get_params() and not hasattr(pred, "Y_")
    assert bp.predictor.ensemble_.U_.shape[0] == 2          # two starts were fitted
    assert bp.probe_search().predictors_[0].n_starts == 2
    folds = bp.folds(n_folds=3, seed=1)
    fast = bp.evaluate(folds)
    # the held-out refits are the two-start, five-sweep fits, as fitted by hand
    by_hand = loop_heldout_predictions(lambda: make_predictor("published", n_starts=2, n_iter=5),
                                       bp.matrix.values, bp.scales, folds.test_cells)
    np.testing.assert_allclose(fast.cells["predicted"].to_numpy(), by_hand, rtol=1e-12)
    # and an object left at its defaults gives the default fits' figures
    slow = BenchPress(bp.matrix, make_predictor("published")).evaluate(folds)
    by_hand = loop_heldout_predictions(lambda: make_predictor("published"), bp.matrix.values,
                                       bp.scales, folds.test_cells)
    np.testing.assert_allclose(slow.cells["predicted"].to_numpy(), by_hand, rtol=1e-12)


def test_predict_many_is_predict_one_at_a_time(built_2026_05):
    """Several new models from one fit give each model what `predict` gives it alone."""
    from benchpress.api.models_file import NewModel

    bp = BenchPress.from_snapshot(built_2026_05.root)
    models = [NewModel("a", {"gpqa_diamond": 80, "hle": 20, "mmlu_pro": 85},
                       {"provider": "OpenAI", "release_date": "2026-03-01"}),
              {"id": "b", "scores": {"gpqa_diamond": 60, "livecodebench": 50}},
              {"id": "c", "scores": {"gpqa_diamond": 70, "hle": 10, "ifeval": 85},
               "metadata": {"model_id": "acme-3-mini"}}]
    many = bp.predict_many(models)
    assert many.frame["id"].unique(maintain_order=True).to_list() == ["a", "b", "c"]
    for m in models:
        ident = m.id if isinstance(m, NewModel) else m["id"]
        scores = m.scores if isinstance(m, NewModel) else m["scores"]
        meta = m.metadata if isinstance(m, NewModel) else m.get("metadata")
        one, got = bp.predict(scores, metadata=meta), many.prediction(ident)
        assert one.with_covariates == got.with_covariates == (meta is not None)
        for col in ("predicted", "lower", "upper", "trust"):
            a = one.frame[col].fill_null(np.nan).to_numpy()
            b = got.frame[col].fill_null(np.nan).to_numpy()
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    with pytest.raises(BadInputError, match="no model 'z'"):
        many.prediction("z")
    with pytest.raises(BadInputError, match=r"model 'x' \(row 1\): score for 'hle' is 200"):
        bp.predict_many([{"id": "x", "scores": {"hle": 200}}])
