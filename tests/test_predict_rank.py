"""Rank diagnostics."""

import numpy as np
import pytest

from benchpress.predict import complete_submatrices, make_folds, rank_diagnostics

# about 6 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=6)


def test_rank_diagnostics(paper_matrix):
    Y, _, _, scales = paper_matrix
    folds = make_folds(~np.isnan(Y), seed=42)
    diag = rank_diagnostics(Y, scales, folds, ranks=range(1, 5))
    assert diag.rank_errors["rank"].to_list() == [1, 2, 3, 4]
    assert diag.best_rank == int(diag.rank_errors.sort("medae")["rank"][0])
    assert diag.best_rank in (2, 3)
    subs = diag.submatrices
    assert subs.height >= 3
    assert (subs["var2"] >= subs["var1"]).all() and (subs["var2"] <= 1).all()
    largest = subs.row(0, named=True)
    assert largest["n_models"] >= 10 and largest["n_benchmarks"] >= 5
    assert np.median(subs["var2"].to_numpy()) > 0.8
    assert isinstance(diag.to_json()["best_rank"], int)


def test_complete_submatrices_are_complete(paper_matrix):
    obs = ~np.isnan(paper_matrix[0])
    subs = complete_submatrices(obs)
    assert subs
    sizes = [r.size * c.size for r, c in subs]
    assert sizes == sorted(sizes, reverse=True)
    for rows, cols in subs:
        assert obs[np.ix_(rows, cols)].all()
        assert rows.size >= 10 and cols.size >= 5


def test_a_ranked_predictor_is_measured_at_each_rank_on_the_same_folds(paper_matrix):
    from benchpress.predict import evaluate, make_predictor

    Y, _, _, scales = paper_matrix
    folds = make_folds(~np.isnan(Y), seed=42)
    seen = []
    diag = rank_diagnostics(Y, scales, folds, ranks=(1, 3),
                            predictor=make_predictor("default", n_starts=3),
                            progress=lambda k, n, label: seen.append((k, n, label)))
    own = diag.rank_errors["method_medae"].to_list()
    assert own == [evaluate(make_predictor("default", n_starts=3, rank=r), Y, scales,
                            folds).overall.medae for r in (1, 3)]
    assert own[0] != own[1] and [n for _, n, _ in seen] == [4] * 4
    assert [label for *_, label in seen][1] == "default, rank 1"
    plain = rank_diagnostics(Y, scales, folds, ranks=(1,),
                             predictor=make_predictor("benchmark_mean"))
    assert "method_medae" not in plain.rank_errors.columns  # no rank to vary
