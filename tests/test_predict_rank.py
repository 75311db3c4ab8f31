"""Rank diagnostics."""

import numpy as np

from benchpress.predict import complete_submatrices, make_folds, rank_diagnostics


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
