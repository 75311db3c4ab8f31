"""The observed-cells (sparse) ALS path equals the dense path on small matrices."""

import numpy as np
import pytest

import benchpress.predict.models.als_predictor as predictor_mod
from benchpress.errors import UsageError
from benchpress.predict import make_predictor
from benchpress.predict.models.als import fit_batched, fold_in_batched, init_factors, reg_diagonal
from benchpress.predict.models.ensemble import ALSEnsemble
from benchpress.predict.models.als import ALSConfig
from benchpress.predict.models.sparse_als import (
    Cells, cell_values, fit_sparse, fold_in_sparse, use_sparse,
)
from benchpress.predict.size_limits import LIMITS, SizeLimits
from benchpress.scales import BenchmarkScales


def _matrix(n=60, m=25, miss=0.6, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, m)) + rng.normal(size=(n, 1))
    Z[rng.random((n, m)) < miss] = np.nan
    Z[5] = np.nan  # a model without scores keeps its start
    return Z


def test_threshold_chooses_the_path():
    assert not use_sparse(100, 100)
    assert use_sparse(LIMITS.cells_solver_min_cells, 1)
    assert use_sparse(2, 2, True) and not use_sparse(10**6, 10**3, False)
    assert use_sparse(100, 100, limits=SizeLimits(cells_solver_min_cells=10_000))  # passed in


@pytest.mark.parametrize("rank", [1, 2, 4])
def test_fit_and_fold_in_equal_dense(rank):
    Z = _matrix()
    W = (~np.isnan(Z)).astype(float)
    U0, V0 = init_factors([3, 4, 5], *Z.shape, rank, 0.1)
    rd = reg_diagonal(rank, 0.1)
    dense = fit_batched(Z, W, U0, V0, reg_diag=rd, n_iter=15)
    r, c = np.nonzero(W)
    sparse = fit_sparse(Cells(r, c, Z[r, c], Z.shape), U0, V0, reg_diag=rd, n_iter=15)
    for x, y in zip(dense, sparse):
        assert x.shape == y.shape
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-8)
    assert np.abs(dense[3] - U0).max() > 1e-3  # the fit moved away from the start
    rng = np.random.default_rng(1)
    Zn = rng.normal(size=(4, Z.shape[1]))
    Zn[rng.random(Zn.shape) < 0.7] = np.nan
    Wn = (~np.isnan(Zn)).astype(float)
    mu, _, cb, _, V = dense
    want = fold_in_batched(Zn, Wn, mu, cb, V, reg_diag=rd)
    rr, cc = np.nonzero(Wn)
    a, U = fold_in_sparse(Cells(rr, cc, Zn[rr, cc], Zn.shape), mu, cb, V, reg_diag=rd)
    ii, jj = (x.ravel() for x in np.indices(Zn.shape))
    got = cell_values(mu, a, cb, U, V, ii, jj, chunk=7).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8)


def test_weighted_ensemble_sparse_equals_dense():
    Z = _matrix(seed=2)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=Z.shape)
    cfg = ALSConfig(rank=2, n_starts=3, n_iter=10)
    d = ALSEnsemble(cfg).fit(Z, w, sparse=False)
    s = ALSEnsemble(cfg).fit(Z, w, sparse=True)
    np.testing.assert_allclose(s.predict(), d.predict(), rtol=0, atol=1e-8)


def test_predictor_sparse_path_equals_dense(monkeypatch):
    rng = np.random.default_rng(0)
    n, m = 200, 30
    Y = np.clip(50 + 20 * rng.normal(size=(n, 1)) + 10 * rng.normal(size=(1, m))
                + 5 * rng.normal(size=(n, m)), 0, 100)
    Y[rng.random((n, m)) < 0.7] = np.nan
    scales = BenchmarkScales(np.array(["percent"] * m), np.zeros(m), np.full(m, 100.0))
    dense = make_predictor("als4", n_starts=5).fit(Y, scales)
    chosen = make_predictor("als4", n_starts=5, solver="cells").fit(Y, scales)
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)  # "auto": as if large
    sparse = make_predictor("als4", n_starts=5).fit(Y, scales)
    assert sparse.solver_ == chosen.solver_ == "cells" and dense.solver_ == "dense"
    assert make_predictor("als4", n_starts=5, solver="dense").fit(Y, scales).solver_ == "dense"
    np.testing.assert_array_equal(chosen.complete(), sparse.complete())  # one rule, chosen once
    assert sparse.uses_cells() and not dense.uses_cells()
    assert not make_predictor("als4").uses_cells() and not make_predictor("knn").uses_cells()
    # the side-information subclass reads dense per-start completions: it stays dense
    assert make_predictor("side", n_starts=2).fit(Y, scales).solver_ == "dense"
    with pytest.raises(UsageError, match="method 'side' has no cells solver"):
        make_predictor("side", n_starts=2, solver="cells").fit(Y, scales)
    with pytest.raises(UsageError, match="solver must be one of auto, dense, cells, got 'sparse'"):
        make_predictor("als4", solver="sparse").fit(Y, scales)
    np.testing.assert_allclose(sparse.complete(), dense.complete(), rtol=0, atol=1e-8)
    np.testing.assert_allclose(sparse.complete_spread(), dense.complete_spread(), rtol=0, atol=1e-8)
    i, j = rng.integers(0, n, 300), rng.integers(0, m, 300)
    got, spread = sparse.predict_cells(i, j, return_spread=True)
    np.testing.assert_allclose(got, dense.complete(keep_observed=False)[i, j], rtol=0, atol=1e-8)
    np.testing.assert_allclose(spread, dense.complete_spread()[i, j], rtol=0, atol=1e-8)
    rows = np.array([3, 0, 7])
    np.testing.assert_allclose(sparse.complete_rows(rows), dense.complete()[rows], rtol=0, atol=1e-8)
    np.testing.assert_allclose(sparse.fold_in(Y[:4]), dense.fold_in(Y[:4]), rtol=0, atol=1e-8)


def test_complete_writes_parquet_in_row_blocks_equal_to_the_dense_completion(
        built_2026_05, tmp_path, monkeypatch):
    import polars as pl
    from click.testing import CliRunner

    import benchpress.api as api_mod
    from benchpress.cli import main

    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", "")

    def complete(out):
        # the ALS alone: the default's nearest models take part on the dense path only
        res = CliRunner().invoke(main, ["complete", "--out", str(out), "--method", "als4",
                                        "--param", "n_starts=3",
                                        "--home", str(built_2026_05.root)],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.stderr
        return pl.read_parquet(out)

    dense = complete(tmp_path / "dense.parquet")
    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)
    blocks = []
    original = api_mod.BenchPress.complete_blocks

    def small_blocks(self, **kw):  # several row blocks even on a small matrix
        for frame in original(self, cells_per_block=1000):
            blocks.append(frame.height)
            yield frame

    monkeypatch.setattr(api_mod.BenchPress, "complete_blocks", small_blocks)
    sparse = complete(tmp_path / "sparse.parquet")
    assert len(blocks) > 3 and sum(blocks) == dense.height
    assert sparse.columns == dense.columns and sparse["model_id"].equals(dense["model_id"])
    a, b = dense.drop("model_id").to_numpy(), sparse.drop("model_id").to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-8)
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, nothing left behind


def test_nothing_outside_predict_tests_which_solver_a_predictor_uses():
    """Issue 25: which solver a fit used (`solver_`, `uses_cells()`, the old `sparse_`) is
    asked inside benchpress.predict only."""
    import re
    from pathlib import Path

    import benchpress

    root = Path(benchpress.__file__).parent
    readers = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if "predict" not in p.relative_to(root).parts
               and re.search(r"""\.sparse_\b|["']sparse_["']|\.solver_\b|uses_cells""",
                             p.read_text(encoding="utf-8"))]
    assert readers == []
