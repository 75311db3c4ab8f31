"""Pairwise ranking preservation and the side-by-side comparison."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchpress.errors import BadInputError
from benchpress.api.fold_files import read_folds
from benchpress.predict import evaluate, make_predictor
from benchpress.predict.evaluation.ranking import compare_models, ranking_preservation
from tests.predict_data import PUBLISHED_FOLDS


def reference(Y, fold, ii, jj, pred, margin):
    """Plain-loop version of the paper's definition (per fold and benchmark)."""
    kept, total = {}, {}
    for f in sorted(set(fold.tolist())):
        for j in range(Y.shape[1]):
            held = {int(i): p for ff, i, b, p in zip(fold, ii, jj, pred) if ff == f and b == j}
            if not held:
                continue
            models = [i for i in range(Y.shape[0]) if not np.isnan(Y[i, j])]
            comp = {i: held.get(i, Y[i, j]) for i in models}
            for a, b in itertools.combinations(models, 2):
                if a not in held and b not in held:
                    continue
                if not (np.isfinite(comp[a]) and np.isfinite(comp[b])):
                    continue
                d = Y[a, j] - Y[b, j]
                if d == 0 or abs(d) < margin:
                    continue
                total[j] = total.get(j, 0) + 1
                kept[j] = kept.get(j, 0) + int(np.sign(d) == np.sign(comp[a] - comp[b]))
    accs = [kept[j] / total[j] * 100 for j in total]
    return float(np.median(accs)) if accs else float("nan"), sum(total.values())


def random_case(seed):
    rng = np.random.RandomState(seed)
    Y = np.round(rng.uniform(0, 100, size=(12, 5)), 0)      # rounding makes true ties
    Y[rng.rand(12, 5) < 0.2] = np.nan
    obs = np.argwhere(~np.isnan(Y))
    pick = obs[rng.rand(len(obs)) < 0.4]
    fold = rng.randint(0, 3, size=len(pick))
    pred = Y[pick[:, 0], pick[:, 1]] + rng.normal(0, 15, size=len(pick))
    pred[0] = np.nan                                        # an unpredicted cell
    pred[1] = Y[pick[2, 0], pick[2, 1]] if pick[1, 1] == pick[2, 1] else pred[1]
    return Y, fold, pick[:, 0], pick[:, 1], pred


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_a_plain_loop_reference(seed):
    Y, fold, ii, jj, pred = random_case(seed)
    result = ranking_preservation(Y, fold, ii, jj, pred, margins=(0, 1, 2, 5, 20))
    for k, m in enumerate(result.margins):
        acc, n = reference(Y, fold, ii, jj, pred, m)
        assert result.n_pairs[k] == n
        np.testing.assert_allclose(result.accuracy[k], acc, rtol=1e-12)


def test_perfect_and_reversed_predictions():
    Y, fold, ii, jj, _ = random_case(3)
    truth = Y[ii, jj]
    assert ranking_preservation(Y, fold, ii, jj, truth).accuracy == (100.0,) * 4
    worst = ranking_preservation(Y, np.zeros_like(fold), ii, jj, -1000 - truth, margins=(0,))
    assert worst.accuracy[0] < 100.0
    table = ranking_preservation(Y, fold, ii, jj, truth).per_benchmark
    assert set(table.columns) == {"benchmark_id", "margin", "n_pairs", "n_kept",
                                  "n_predicted_ties", "accuracy"}


def test_bad_input():
    Y, fold, ii, jj, pred = random_case(4)
    with pytest.raises(BadInputError, match="equal length"):
        ranking_preservation(Y, fold[:-1], ii, jj, pred)
    Y2 = Y.copy()
    Y2[ii[0], jj[0]] = np.nan
    with pytest.raises(BadInputError, match="not observed"):
        ranking_preservation(Y2, fold, ii, jj, pred)
    with pytest.raises(BadInputError, match="margins"):
        ranking_preservation(Y, fold, ii, jj, pred, margins=(-1,))


def test_published_method_reproduces_the_papers_table(paper_matrix):
    """Paper: 83.8 / 86.3 / 88.0 / 92.1 percent at margins 0 / 1 / 2 / 5."""
    Y, model_ids, bench_ids, scales = paper_matrix
    folds = read_folds(PUBLISHED_FOLDS, model_ids, bench_ids)
    cells = evaluate(make_predictor("published"), Y, scales, folds).cells
    result = ranking_preservation(Y, cells["fold"].to_numpy(), cells["model_index"].to_numpy(),
                                  cells["benchmark_index"].to_numpy(),
                                  cells["predicted"].fill_null(np.nan).to_numpy())
    np.testing.assert_allclose(result.accuracy, (83.8, 86.3, 88.0, 92.1), atol=0.1)


def test_compare_models_leader_gap_and_certainty():
    V = np.array([[80.0, 10.0, 50.0, np.nan], [70.0, 12.0, 50.5, 3.0]])
    obs = np.array([[True, True, False, False], [True, False, False, True]])
    frame = compare_models(["a", "b"], V, obs, [True, False, True, True],
                           sigma=np.full(V.shape, 1.0), benchmark_ids=list("wxyz"))
    rows = {r["benchmark_id"]: r for r in frame.to_dicts()}
    assert rows["w"]["leader"] == "a" and rows["w"]["gap"] == 10.0 and rows["w"]["p_ahead"] == 1.0
    assert rows["x"]["leader"] == "a"                      # lower is better on x
    assert rows["y"]["leader"] == "b" and 0.5 < rows["y"]["p_ahead"] < 0.7
    assert rows["z"]["leader"] is None and rows["z"]["a"] is None
    assert rows["x"]["b_src"] == "predicted" and rows["x"]["a_src"] == "observed"
    assert "a_lower" not in frame.columns                  # no intervals given, none shown
    bounds = {"lower": V - 2, "upper": V + 3, "trust": np.full(V.shape, 0.8)}
    rows = {r["benchmark_id"]: r for r in compare_models(
        ["a", "b"], V, obs, [True, False, True, True], intervals=bounds,
        benchmark_ids=list("wxyz")).to_dicts()}
    assert (rows["x"]["b_lower"], rows["x"]["b_upper"], rows["x"]["b_trust"]) == (10.0, 15.0, 0.8)
    assert rows["x"]["a_lower"] is None and rows["w"]["a_trust"] is None   # observed: exact
    with pytest.raises(BadInputError):
        compare_models(["a", "a"], V, obs, [True] * 4)
