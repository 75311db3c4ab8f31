"""Bias-ALS on the observed cells only: memory grows with observed cells x rank x starts.

The same model, updates and solver as :func:`benchpress.predict.models.als.fit_batched` (see
:mod:`benchpress.predict.models.als`), but the normal equations of every line come from sparse
(CSR) products of the observed cells with the stacked factor features of the other side,
``(n_lines, n_other) @ (n_other, k * n_starts)``, instead of dense mask products. No
(n_models, n_benchmarks) array is built: the cost of a sweep is about
``n_observed * n_starts * (rank + 1) * (rank + 4) / 2`` multiply-adds, the memory about
``(n_models + n_benchmarks) * n_starts * (rank + 1) * (rank + 4) / 2`` floats.

The results equal the dense path's up to the order of floating-point sums (about 1e-12
relative; ``tests/test_sparse_als.py``). ``SizeLimits.cells_solver_min_cells`` decides which
path a fit takes (:func:`use_sparse`): fits of matrices with at least that many cells
(n_models * n_benchmarks, observed or not) run on the observed cells (:func:`fit_sparse`)
when their solver is "auto"; smaller ones keep the dense path
(:func:`~benchpress.predict.models.als.fit_batched`), so every figure of the 2026-05
matrices (at most 1124 x 208 = 233,792 cells with every source) stays bit-identical.
"""

from __future__ import annotations

import numpy as np

from benchpress.predict.models.als import _cholesky_solve, _triu
from benchpress.predict.size_limits import LIMITS, SizeLimits

__all__ = ["use_sparse", "Cells", "fit_sparse", "fold_in_sparse", "cell_values"]


def use_sparse(n_models: int, n_benchmarks: int, sparse: bool | None = None, *,
               limits: SizeLimits = LIMITS) -> bool:
    """Whether a fit of an (n_models, n_benchmarks) matrix takes the sparse path:
    ``sparse`` when given (True/False forces it), else ``n_models * n_benchmarks >=
    limits.cells_solver_min_cells``."""
    if sparse is not None:
        return bool(sparse)
    return int(n_models) * int(n_benchmarks) >= limits.cells_solver_min_cells


class Cells:
    """Observed cells of an (n_rows, n_cols) matrix in both CSR orientations.

    Parameters
    ----------
    rows, cols : ndarray of int, shape (n_cells,)
    z : ndarray, shape (n_cells,)
        Values (z units).
    w : ndarray, shape (n_cells,), optional
        Cell weights (default 1).
    shape : (n_rows, n_cols)
    """

    def __init__(self, rows, cols, z, shape, w=None):
        import scipy.sparse as sp  # here, not at the top: slow to import (a predict needs none)
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        z = np.asarray(z, dtype=float)
        w = np.ones(z.shape) if w is None else np.asarray(w, dtype=float)
        self.shape = (int(shape[0]), int(shape[1]))
        self.W = sp.csr_matrix((w, (rows, cols)), shape=self.shape)
        self.WZ = sp.csr_matrix((w * z, (rows, cols)), shape=self.shape)
        # the transposes stay CSC views: their products stream through the large
        # (n_models, k) operand once instead of once per benchmark (about 4x faster)
        self.WT, self.WZT = self.W.T, self.WZ.T
        self.row_w = np.asarray(self.W.sum(axis=1)).ravel()
        self.col_w = np.asarray(self.W.sum(axis=0)).ravel()
        self.row_wz = np.asarray(self.WZ.sum(axis=1)).ravel()
        self.col_wz = np.asarray(self.WZ.sum(axis=0)).ravel()
        self.wsum, self.wz_sum = float(w.sum()), float((w * z).sum())


def _ridge_side_sparse(Wl, WZl, w_line, wz_line, offset, F, old_bias, old_F, reg_diag):
    """Sparse twin of :func:`benchpress.predict.models.als._ridge_side`.

    ``Wl``, ``WZl``: sparse (n_lines, n_other) weights and weights * z; ``offset`` (n_other,
    S); ``F`` (n_other, rank, S); ``old_bias`` (n_lines, S), ``old_F`` (n_lines, rank, S).
    Returns ``bias`` (n_lines, S) and ``factors`` (n_lines, rank, S).
    """
    n_other, rank, S = F.shape
    n_lines = Wl.shape[0]
    iu, ju = _triu(rank)
    n_up = len(iu)
    k = 2 * rank + n_up + 1
    P = np.empty((n_other, k, S))             # [F, F_u*F_v (u<=v), offset, offset*F]
    P[:, :rank] = F
    for t, (u, v) in enumerate(zip(iu, ju)):
        np.multiply(F[:, u], F[:, v], out=P[:, rank + t])
    P[:, rank + n_up] = offset
    np.multiply(offset[:, None, :], F, out=P[:, rank + n_up + 1:])
    G = (Wl @ P.reshape(n_other, k * S)).reshape(n_lines, k, S)
    del P
    H = (WZl @ F.reshape(n_other, rank * S)).reshape(n_lines, rank, S)
    q = rank + 1
    A = [[None] * q for _ in range(q)]
    A[0][0] = np.broadcast_to((w_line + reg_diag[0])[:, None], (n_lines, S))
    for m in range(rank):
        A[0][m + 1] = A[m + 1][0] = G[:, m]
    for t, (u, v) in enumerate(zip(iu, ju)):
        entry = G[:, rank + t]
        if u == v:
            entry = entry + reg_diag[1 + u]
        A[1 + u][1 + v] = A[1 + v][1 + u] = entry
    b = [wz_line[:, None] - G[:, rank + n_up]]
    b += [H[:, m] - G[:, rank + n_up + 1 + m] for m in range(rank)]
    x = _cholesky_solve(A, b)
    fac = np.stack(x[1:], axis=1) if rank else np.zeros((n_lines, 0, S))
    has = w_line > 0
    if has.all():
        return x[0], fac
    return np.where(has[:, None], x[0], old_bias), np.where(has[:, None, None], fac, old_F)


def fit_sparse(cells: Cells, U, V, *, reg_diag, n_iter: int = 40):
    """Run ``n_iter`` ALS sweeps of S starts on observed ``cells`` (:class:`Cells`).

    ``U`` (S, n_models, rank) and ``V`` (S, n_benchmarks, rank) are the initial factors.
    Returns ``mu`` (S,), ``a`` (S, n_models), ``c`` (S, n_benchmarks), ``U`` (S, n_models,
    rank), ``V`` (S, n_benchmarks, rank), as :func:`~benchpress.predict.models.als.fit_batched`.
    """
    S, n_models, rank = U.shape
    n_bench = V.shape[1]
    Ut = np.ascontiguousarray(U.transpose(1, 2, 0))   # (n_models, rank, S)
    Vt = np.ascontiguousarray(V.transpose(1, 2, 0))   # (n_bench, rank, S)
    mu = np.full(S, cells.wz_sum / cells.wsum if cells.wsum > 0 else 0.0)
    a = np.zeros((n_models, S))
    c = np.zeros((n_bench, S))
    for _ in range(n_iter):
        a, Ut = _ridge_side_sparse(cells.W, cells.WZ, cells.row_w, cells.row_wz,
                                   mu[None, :] + c, Vt, a, Ut, reg_diag)
        c, Vt = _ridge_side_sparse(cells.WT, cells.WZT, cells.col_w, cells.col_wz,
                                   mu[None, :] + a, Ut, c, Vt, reg_diag)
        if cells.wsum > 0:
            WV = (cells.W @ Vt.reshape(n_bench, rank * S)).reshape(n_models, rank, S)
            uv = (Ut * WV).sum(axis=(0, 1))
            mu = (cells.wz_sum - cells.row_w @ a - cells.col_w @ c - uv) / cells.wsum
    return (mu, a.T.copy(), c.T.copy(), Ut.transpose(2, 0, 1).copy(),
            Vt.transpose(2, 0, 1).copy())


def fold_in_sparse(cells: Cells, mu, c, V, *, reg_diag):
    """Bias and factors of new rows (``cells`` of shape (n_rows, n_benchmarks)) against
    fixed benchmark parameters ``mu`` (S,), ``c`` (S, n_benchmarks), ``V`` (S,
    n_benchmarks, rank). Returns ``a`` (S, n_rows) and ``U`` (S, n_rows, rank)."""
    S, n_bench, rank = V.shape
    n_rows = cells.shape[0]
    Vt = np.ascontiguousarray(V.transpose(1, 2, 0))
    a, Ut = _ridge_side_sparse(cells.W, cells.WZ, cells.row_w, cells.row_wz,
                               mu[None, :] + c.T, Vt, np.zeros((n_rows, S)),
                               np.zeros((n_rows, rank, S)), reg_diag)
    return a.T.copy(), Ut.transpose(2, 0, 1).copy()


def cell_values(mu, a, c, U, V, rows, cols, *, chunk: int = 200_000) -> np.ndarray:
    """Per-start predictions ``mu + a_i + c_j + U_i . V_j`` at cells ``(rows, cols)``,
    shape (S, n_cells), computed ``chunk`` cells at a time (memory ~ chunk * S * rank)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    out = np.empty((mu.shape[0], rows.size))
    for s in range(0, rows.size, chunk):
        i, j = rows[s:s + chunk], cols[s:s + chunk]
        out[:, s:s + chunk] = (mu[:, None] + a[:, i] + c[:, j]
                               + np.einsum("sir,sir->si", U[:, i], V[:, j]))
    return out


def fit_cells(rows, cols, z, shape, seeds, reg_diag, *, n_iter: int, init_scale: float,
              w=None):
    """Draw one random start per seed (as :func:`~benchpress.predict.models.als.fit_starts`)
    and fit them all on the observed cells ``(rows, cols)`` (n_cells,) with values ``z``
    and optional weights ``w`` of a ``shape`` (n_models, n_benchmarks) matrix: returns
    ``mu, a, c, U, V`` with a leading (n_starts,) axis."""
    from benchpress.blas_threads import single_blas_thread
    from benchpress.predict.models.als import init_factors

    rank = len(reg_diag) - 1
    U0, V0 = init_factors(seeds, shape[0], shape[1], rank, init_scale)
    cells = Cells(rows, cols, z, shape, w)
    with single_blas_thread():
        return fit_sparse(cells, U0, V0, reg_diag=reg_diag, n_iter=int(n_iter))
