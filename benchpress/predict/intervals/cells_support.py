"""The risk features of a predictor fitted on its observed cells (a large registry), without
(n_models, n_benchmarks) arrays: the sparse path of
:class:`~benchpress.predict.intervals.support.MatrixSupport`, which holds one
:class:`CellsSupport` and hands it its cells.

Per-model and per-benchmark features come from the observed cells; a cell's prediction,
start spread and nearest-model feature are computed on demand (:meth:`CellsSupport.cells`);
the nearest-model feature searches a fixed seeded sample of at most
``SizeLimits.support_cells_candidates`` training models, kept as dense z rows (so a stored
fit predicts a new model without the training matrix).
"""

from __future__ import annotations

import numpy as np

from benchpress.blas_threads import single_blas_thread
from benchpress.predict.intervals.features import (pair_corr_moments, points_of_cells,
                                                   risk_features)
from benchpress.predict.size_limits import LIMITS, SizeLimits
from benchpress.predict.transform import ScaleTransform

__all__ = ["CellsSupport", "STATE_ARRAYS"]

#: The arrays of a :class:`CellsSupport` that a stored fit keeps (bounded size: per model,
#: per benchmark and the candidate sample), as :meth:`CellsSupport.state` names them.
STATE_ARRAYS = ("row_count", "col_count", "row_rms", "col_rms", "cand", "Zc", "points")


class CellsSupport:
    """Risk features of the cells of a ``predictor`` fitted on its observed cells.

    Parameters
    ----------
    predictor : fitted predictor of the cells solver
        Its ``Y_``, ``scales_``, ``predict_cells`` are read.
    transform : ScaleTransform
        The interval space, fitted on the observed cells.
    row_count, col_count : ndarray of int, shapes (n_models,) and (n_benchmarks,)
        Observed scores per model and per benchmark.
    row_rms, col_rms : ndarray, shapes (n_models,) and (n_benchmarks,)
        In-sample RMS residual (z units) per model and per benchmark.
    points : ndarray, shape (n_benchmarks,)
        One point per benchmark in score units.
    cand : ndarray of int, shape (n_candidates,)
        The training models the nearest-model feature searches (a seeded sample).
    Zc : ndarray, shape (n_candidates, n_benchmarks)
        Their z rows, NaN where missing.
    train_z : scipy.sparse matrix (n_models, n_benchmarks) or None
        The training cells in z units (None: a fit restored without its training rows,
        which folds in new models only).
    limits : SizeLimits
        ``support_block_rows``: training models per block of the nearest-model search.

    :meth:`compute` makes one from a fitted predictor; :meth:`from_state` restores one.
    """

    def __init__(self, predictor, transform: ScaleTransform, *, row_count, col_count, row_rms,
                 col_rms, points, cand, Zc, train_z=None, limits: SizeLimits = LIMITS):
        self.predictor = predictor
        self.transform = transform
        self.row_count, self.col_count = np.asarray(row_count), np.asarray(col_count)
        self.row_rms, self.col_rms = np.asarray(row_rms), np.asarray(col_rms)
        self.points = np.asarray(points)
        self.cand, self.Zc = np.asarray(cand), np.asarray(Zc)
        self.train_z = train_z
        self.limits = limits
        self._moments = None

    @classmethod
    def compute(cls, predictor, logit_rule: str, eps: float, *,
                limits: SizeLimits = LIMITS) -> "CellsSupport":
        """The per-model and per-benchmark features of a fitted ``predictor`` from its
        observed cells, and a seeded sample of at most ``limits.support_cells_candidates``
        candidate rows (z, dense) for the nearest-model feature, in the interval space
        ``logit_rule``, ``eps``; the predictions, spread and nearest-model feature of a cell
        are made on demand (:meth:`cells`), never as (n_models, n_benchmarks) arrays."""
        import scipy.sparse as sp  # here, not at the top: slow to import (a predict needs none)

        Y = predictor.Y_
        n_m, n_b = Y.shape
        r, c = np.nonzero(~np.isnan(Y))
        y = Y[r, c]
        transform = ScaleTransform.from_scales(predictor.scales_, logit_rule=logit_rule,
                                               eps=eps).fit_cells(y, c, n_b)
        z = transform.transform(y, cols=c)
        zhat = transform.transform(predictor.predict_cells(r, c), cols=c)
        res2 = np.nan_to_num((z - zhat) ** 2)
        row_count = np.bincount(r, minlength=n_m)
        col_count = np.bincount(c, minlength=n_b)
        train_z = sp.csr_matrix((z, (r, c)), shape=Y.shape)
        n_cand = min(n_m, limits.support_cells_candidates)
        cand = np.sort(np.random.default_rng(0).choice(n_m, n_cand, replace=False))
        return cls(predictor, transform, row_count=row_count, col_count=col_count,
                   row_rms=np.sqrt(np.bincount(r, res2, minlength=n_m)
                                   / np.maximum(row_count, 1)),
                   col_rms=np.sqrt(np.bincount(c, res2, minlength=n_b)
                                   / np.maximum(col_count, 1)),
                   points=points_of_cells(predictor.scales_, y, c, n_b), cand=cand,
                   Zc=_dense_rows(train_z, cand), train_z=train_z, limits=limits)

    def state(self) -> dict:
        """The arrays a stored fit keeps (:data:`STATE_ARRAYS`)."""
        return {n: np.asarray(getattr(self, n)) for n in STATE_ARRAYS}

    @classmethod
    def from_state(cls, predictor, transform: ScaleTransform, arrays: dict, *,
                   limits: SizeLimits = LIMITS) -> "CellsSupport":
        """The support of :meth:`state` ``arrays`` for the restored ``predictor`` and its
        interval space ``transform``, as saved (not recomputed); the training cells come
        from the predictor's training matrix (none when it was restored without)."""
        train_z = None
        Y = predictor.Y_
        if Y.shape[0]:
            import scipy.sparse as sp

            r, c = np.nonzero(~np.isnan(Y))
            train_z = sp.csr_matrix((transform.transform(Y[r, c], cols=c), (r, c)),
                                    shape=Y.shape)
        return cls(predictor, transform, train_z=train_z, limits=limits,
                   **{n: np.asarray(arrays[n]) for n in STATE_ARRAYS})

    def near_of(self, Zr, exclude_rows=None) -> np.ndarray:
        """Nearest-model feature of rows ``Zr`` (n_rows, n_benchmarks, z, NaN = missing):
        candidates are the stored sample ``Zc``; ``exclude_rows`` (training indices of the
        rows ``Zr``) are not their own neighbour. Shape (n_rows, n_benchmarks)."""
        with single_blas_thread():  # small products: BLAS threads cost more than they give
            C = pair_corr_moments(Zr, *self._cand_moments())
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

    def _near_cells(self, i, j) -> np.ndarray:
        """Nearest-model feature of training cells (i, j), shape (n_cells,), from the
        candidate sample, ``limits.support_block_rows`` models at a time."""
        out = np.zeros(i.size)
        order = np.argsort(i, kind="stable")
        u = np.unique(i)
        step = self.limits.support_block_rows
        for start in range(0, u.size, step):
            rows = u[start:start + step]
            lo, hi = np.searchsorted(i[order], [rows[0], rows[-1] + 1])
            sel = order[lo:hi]
            near = self.near_of(_dense_rows(self.train_z, rows), exclude_rows=rows)
            out[sel] = near[np.searchsorted(rows, i[sel]), j[sel]]
        return out

    def _cand_moments(self):
        """The candidates' mask, values (0 where missing) and squares, each
        (n_candidates, n_benchmarks), made once."""
        if self._moments is None:
            M = (~np.isnan(self.Zc)).astype(float)
            B0 = np.nan_to_num(self.Zc)
            self._moments = (M, B0, B0 * B0)
        return self._moments

    def cells(self, i, j) -> tuple[np.ndarray, np.ndarray]:
        """z predictions (n_cells,) and features (n_cells, n_features) of training cells
        (i, j)."""
        P, spread = self.predictor.predict_cells(i, j, return_spread=True)
        zhat = self.transform.transform(P, cols=j)
        hi = self.transform.transform(P + np.nan_to_num(spread), cols=j)
        lo = self.transform.transform(P - np.nan_to_num(spread), cols=j)
        spread_z = np.nan_to_num(np.abs(hi - lo) / 2.0)
        X = risk_features(spread_z, self.row_count[i], self.col_count[j], self.row_rms[i],
                          self.col_rms[j], self._near_cells(i, j), zhat)
        return zhat, X


def _dense_rows(train_z, rows) -> np.ndarray:
    """Training rows ``rows`` of the sparse z matrix ``train_z``, dense, NaN where missing."""
    block = train_z[np.asarray(rows, dtype=np.int64)]
    out = np.full(block.shape, np.nan)
    ri = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
    out[ri, block.indices] = block.data
    return out
