"""The sparse path of :class:`~benchpress.predict.intervals.calibration.MatrixSupport`: risk features
of a predictor fitted on its observed cells (a large registry), without (n_models,
n_benchmarks) arrays.

Per-model and per-benchmark features come from the observed cells; a cell's prediction,
start spread and nearest-model feature are computed on demand (:meth:`CellsSupport.cells`);
the nearest-model feature searches a fixed seeded sample of at most
:data:`SPARSE_CANDIDATES` training models, kept as dense z rows (so a stored fit predicts a
new model without the training matrix).
"""

from __future__ import annotations

import numpy as np

from benchpress.blas_threads import single_blas_thread
from benchpress.predict.transform import BenchmarkScales, ScaleTransform
from benchpress.predict.size_limits import LIMITS

__all__ = ["CellsSupport", "SPARSE_CANDIDATES", "pair_corr_moments"]

#: The nearest-model feature's candidates of a cells-solver fit (see
#: :mod:`benchpress.predict.size_limits`).
SPARSE_CANDIDATES = LIMITS.support_cells_candidates


def points_of_cells(scales: BenchmarkScales, y, cols, n_benchmarks: int) -> np.ndarray:
    """:func:`~benchpress.predict.intervals.calibration.point_size` from observed cells ``y`` (n_cells,) in columns ``cols``."""
    lo, hi = np.full(n_benchmarks, np.inf), np.full(n_benchmarks, -np.inf)
    order = np.argsort(cols, kind="stable")
    c, v = cols[order], y[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if c.size else np.zeros(0, int)
    if c.size:
        lo[c[starts]] = np.minimum.reduceat(v, starts)
        hi[c[starts]] = np.maximum.reduceat(v, starts)
    seen = np.isfinite(lo)
    span = scales.upper - scales.lower
    span = np.where(np.isfinite(span), span, np.where(seen & (hi > lo), hi - lo, 100.0))
    return np.where(np.isfinite(span) & (span > 0), span / 100.0, 1.0)


def pair_corr_moments(A, Mb, B0, B2, *, min_overlap: int = 3) -> np.ndarray:
    """Pearson r between rows of ``A`` (n_a, p; NaN = missing) and rows of a matrix B given
    by its moments: mask ``Mb``, values with 0 where missing ``B0`` and their squares
    ``B2``, each (n_b, p). Computed on shared entries only; pairs with fewer than
    ``min_overlap`` shared entries get 0. Returns (n_a, n_b)."""
    Ma = (~np.isnan(A)).astype(float)
    A0 = np.nan_to_num(A)
    n = Ma @ Mb.T
    sa, sb = A0 @ Mb.T, Ma @ B0.T
    saa, sbb = (A0 * A0) @ Mb.T, Ma @ B2.T
    sab = A0 @ B0.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = n * sab - sa * sb
        var = (n * saa - sa * sa) * (n * sbb - sb * sb)
        r = cov / np.sqrt(var)
    return np.where((n >= min_overlap) & (var > 1e-12), np.nan_to_num(r), 0.0)


class CellsSupport:
    """Mixin of :class:`~benchpress.predict.intervals.calibration.MatrixSupport`: its sparse path
    (``self.sparse``), see the module doc. Uses the host's ``predictor``,
    ``block_rows`` and ``_features``."""

    def _init_cells(self, logit_rule: str, eps: float) -> None:
        """Sparse path (a predictor fitted on its observed cells): the per-model and
        per-benchmark features from the observed cells, a seeded sample of at most
        ``SPARSE_CANDIDATES`` candidate rows (z, dense) for the nearest-model feature;
        the predictions, spread and nearest-model feature of a cell are made on demand
        (:meth:`cells`), never as (n_models, n_benchmarks) arrays."""
        import scipy.sparse as sp  # here, not at the top: slow to import (a predict needs none)

        pred = self.predictor
        Y = pred.Y_
        n_m, n_b = Y.shape
        r, c = np.nonzero(~np.isnan(Y))
        y = Y[r, c]
        self.transform = ScaleTransform.from_scales(pred.scales_, logit_rule=logit_rule,
                                                    eps=eps).fit_cells(y, c, n_b)
        z = self.transform.transform(y, cols=c)
        zhat = self.transform.transform(pred.predict_cells(r, c), cols=c)
        res2 = np.nan_to_num((z - zhat) ** 2)
        self.row_count = np.bincount(r, minlength=n_m)
        self.col_count = np.bincount(c, minlength=n_b)
        self.row_rms = np.sqrt(np.bincount(r, res2, minlength=n_m) / np.maximum(self.row_count, 1))
        self.col_rms = np.sqrt(np.bincount(c, res2, minlength=n_b) / np.maximum(self.col_count, 1))
        self.train_z = sp.csr_matrix((z, (r, c)), shape=Y.shape)
        self.points = points_of_cells(pred.scales_, y, c, n_b)
        n_cand = min(n_m, SPARSE_CANDIDATES)
        self.cand = np.sort(np.random.default_rng(0).choice(n_m, n_cand, replace=False))
        self.Zc = self._dense_rows(self.cand)

    def _dense_rows(self, rows) -> np.ndarray:
        """Sparse path: training rows ``rows`` in z units, NaN where missing."""
        block = self.train_z[np.asarray(rows, dtype=np.int64)]
        out = np.full(block.shape, np.nan)
        ri = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
        out[ri, block.indices] = block.data
        return out

    def _near_cells(self, i, j) -> np.ndarray:
        """Sparse path: nearest-model feature of training cells (i, j), shape (n_cells,),
        from the candidate sample, ``block_rows`` models at a time."""
        out = np.zeros(i.size)
        order = np.argsort(i, kind="stable")
        u = np.unique(i)
        for start in range(0, u.size, self.block_rows):
            rows = u[start:start + self.block_rows]
            lo, hi = np.searchsorted(i[order], [rows[0], rows[-1] + 1])
            sel = order[lo:hi]
            near = self._near_of(self._dense_rows(rows), exclude_rows=rows)
            out[sel] = near[np.searchsorted(rows, i[sel]), j[sel]]
        return out

    def _near_sample(self, Zr, exclude_rows=None) -> np.ndarray:
        """Sparse path of :meth:`_near_of`: candidates are the stored sample ``Zc``;
        ``exclude_rows`` (training indices of the rows ``Zr``) are not their own neighbour."""
        with single_blas_thread():  # small products: BLAS threads cost more than they give
            C = self._cand_corr(Zr)
        if exclude_rows is not None:
            pos = np.searchsorted(self.cand, exclude_rows)
            pos = np.minimum(pos, self.cand.size - 1)
            hit = self.cand[pos] == exclude_rows
            C[np.flatnonzero(hit), pos[hit]] = 0.0
        obs = self._cand_moments()[0]
        if Zr.shape[0] * obs.size <= 4_000_000:  # a few rows (a new model): one product
            return np.max(np.maximum(C, 0.0)[:, :, None] * obs[None], axis=1, initial=0.0)
        out = np.zeros((Zr.shape[0], obs.shape[1]))
        keep = obs > 0
        for j in range(obs.shape[1]):
            out[:, j] = np.max(C[:, keep[:, j]], axis=1, initial=0.0)
        return out

    def _cand_moments(self):
        """Sparse path: the candidates' mask, values (0 where missing) and squares, each
        (n_candidates, n_benchmarks), made once."""
        if getattr(self, "_moments", None) is None:
            M = (~np.isnan(self.Zc)).astype(float)
            B0 = np.nan_to_num(self.Zc)
            self._moments = (M, B0, B0 * B0)
        return self._moments

    def _cand_corr(self, A, min_overlap: int = 3) -> np.ndarray:
        """:func:`_pair_corr` of rows ``A`` with the candidates, their moments reused."""
        return pair_corr_moments(A, *self._cand_moments(), min_overlap=min_overlap)

    def _cells_sparse(self, i, j) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`MatrixSupport.cells` on the sparse path: z predictions (n_cells,) and
        features (n_cells, n_features) of training cells (i, j)."""
        P, spread = self.predictor.predict_cells(i, j, return_spread=True)
        zhat = self.transform.transform(P, cols=j)
        hi = self.transform.transform(P + np.nan_to_num(spread), cols=j)
        lo = self.transform.transform(P - np.nan_to_num(spread), cols=j)
        spread_z = np.nan_to_num(np.abs(hi - lo) / 2.0)
        X = self._features(spread_z, self.row_count[i], self.col_count[j],
                           self.row_rms[i], self.col_rms[j], self._near_cells(i, j), zhat)
        return zhat, X
