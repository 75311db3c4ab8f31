"""Benchmark-to-benchmark regression: predict a benchmark from its best-correlated peers.

For every ordered pair of benchmarks (target ``j``, predictor ``l``) with at least
``min_shared`` models observed on both, a simple least-squares line
``z_j ~ intercept_jl + slope_jl * z_l`` is fitted on those models (z units), with its
coefficient of determination ``r2_jl``. Pairs below ``min_r2`` are dropped.

A cell (i, j) is predicted from the predictors ``l`` that model ``i`` has a score on:
each votes with its line's prediction, weighted by ``r2_jl ** power``. With ``k=None``
(default) all usable predictors vote, so the whole prediction is three matrix products;
with an integer ``k`` only the ``k`` heaviest available predictors of each cell vote.
Cells with no usable predictor are NaN. Everything is computed with masked moment
matrices, without loops over models or benchmarks.

Blended with the ALS ensemble (see ``ALSPredictor(regression_weight=...)``), this
local, pairwise signal complements the global low-rank fit.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError

__all__ = ["PairwiseRegression", "STATE_ARRAYS"]


#: The arrays of a fitted regression that a stored fit keeps (:meth:`PairwiseRegression.state`),
#: in order: its fitted attributes without their trailing underscore.
STATE_ARRAYS = ("slope", "intercept", "r2", "weight")
#: Cells of one (rows, j, l) block of a top-k prediction (8 bytes each: 128 MiB).
_TOPK_BLOCK_CELLS = 2**24


class PairwiseRegression:
    """Top-k pairwise benchmark regression in z units.

    Parameters
    ----------
    k : int or None, default None
        Use only the ``k`` best (highest r^2) available predictors per cell; None = all.
    power : float, default 4.0
        Votes are weighted by ``r2 ** power`` (a soft top-k).
    min_shared : int, default 5
        Minimum models observed on both benchmarks of a pair.
    min_r2 : float, default 0.2
        Pairs with a lower r^2 are not used.

    Attributes
    ----------
    slope_, intercept_, r2_ : ndarray, shape (n_benchmarks, n_benchmarks)
        ``[j, l]``: line predicting target ``j`` from ``l`` (r2 0 for unusable pairs).
    """

    def __init__(self, k: int | None = None, *, power: float = 4.0, min_shared: int = 5,
                 min_r2: float = 0.2):
        self.k = k
        self.power = power
        self.min_shared = min_shared
        self.min_r2 = min_r2

    def fit(self, Z) -> "PairwiseRegression":
        """Fit all pairwise lines on ``Z`` (n_models, n_benchmarks), NaN = missing."""
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2:
            raise BadInputError(f"expected a 2-D array, got shape {Z.shape}")
        if self.k is not None and self.k < 1:
            raise UsageError(f"k must be >= 1, got {self.k}")
        m = (~np.isnan(Z)).astype(float)
        z = np.where(m > 0, Z, 0.0)
        n = m.T @ m                             # [j, l] models observed on both
        s_t = z.T @ m                           # [j, l] sum of z_j over shared models
        ss_t = (z * z).T @ m                    # [j, l] sum of z_j^2 over shared models
        return self._fit_moments(n, s_t, ss_t, z.T @ z)

    def fit_cells(self, rows, cols, z, shape) -> "PairwiseRegression":
        """:meth:`fit` from the observed cells ``(rows, cols)`` (n_cells,) with values
        ``z`` of a ``shape`` (n_models, n_benchmarks) matrix, by sparse products (no
        (n_models, n_benchmarks) array; the same figures up to the order of sums)."""
        if self.k is not None and self.k < 1:
            raise UsageError(f"k must be >= 1, got {self.k}")
        import scipy.sparse as sp  # here, not at the top: slow to import (a predict needs none)

        z = np.asarray(z, dtype=float)
        M = sp.csr_matrix((np.ones(z.size), (rows, cols)), shape=shape)
        Zs = sp.csr_matrix((z, (rows, cols)), shape=shape)
        Z2 = sp.csr_matrix((z * z, (rows, cols)), shape=shape)
        dense = (lambda A: np.asarray(A.toarray()))
        return self._fit_moments(dense(M.T @ M), dense(Zs.T @ M), dense(Z2.T @ M),
                                 dense(Zs.T @ Zs))

    def _fit_moments(self, n, s_t, ss_t, s_tp) -> "PairwiseRegression":
        """The lines from the (n_benchmarks, n_benchmarks) moment matrices: shared counts
        ``n``, target sums ``s_t`` and squares ``ss_t``, cross products ``s_tp``."""
        s_p, ss_p = s_t.T, ss_t.T               # same for the predictor l
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_t, mean_p = s_t / n, s_p / n
            var_t = ss_t / n - mean_t**2
            var_p = ss_p / n - mean_p**2
            cov = s_tp / n - mean_t * mean_p
            slope = cov / var_p
            r2 = cov**2 / (var_t * var_p)
        ok = (n >= self.min_shared) & (var_p > 1e-10) & (var_t > 1e-10)
        np.fill_diagonal(ok, False)
        ok &= r2 >= self.min_r2
        self.slope_ = np.where(ok, slope, 0.0)
        self.intercept_ = np.where(ok, mean_t - slope * mean_p, 0.0)
        self.r2_ = np.where(ok, r2, 0.0)
        self.weight_ = self.r2_ ** float(self.power)
        return self

    def state(self) -> dict:
        """The fitted lines as arrays, named without their trailing underscore
        (``slope_`` -> ``"slope"``); :meth:`from_state` restores them."""
        if not hasattr(self, "r2_"):
            raise NotFittedError("PairwiseRegression is not fitted; call fit(Z) first")
        return {n: np.asarray(getattr(self, n + "_")) for n in STATE_ARRAYS}

    @classmethod
    def from_state(cls, arrays: dict, *, power: float = 4.0) -> "PairwiseRegression":
        """The fitted regression of :meth:`state` ``arrays`` (with its ``power``), as saved."""
        out = cls(power=power)
        for n in STATE_ARRAYS:
            setattr(out, n + "_", np.asarray(arrays[n]))
        return out

    def predict_csr(self, Zs, M) -> np.ndarray:
        """:meth:`predict` (with ``k=None``) of rows given sparse: ``Zs`` and ``M``, CSR
        (n_rows, n_benchmarks) of the known values (z units) and of ones at the same
        cells. Returns (n_rows, n_benchmarks), NaN where no usable predictor is known."""
        if not hasattr(self, "r2_"):
            raise NotFittedError("PairwiseRegression is not fitted; call fit(Z) first")
        if self.k is not None:
            raise UsageError("predict_csr supports k=None only")
        w = self.weight_
        num = Zs @ (w * self.slope_).T + M @ (w * self.intercept_).T
        tot = M @ w.T
        return np.where(tot > 0, num / np.where(tot > 0, tot, 1.0), np.nan)

    def predict(self, Z) -> np.ndarray:
        """Predict every cell of the rows ``Z`` (n_rows, n_benchmarks) from their own
        observed cells; NaN where no usable predictor is observed."""
        if not hasattr(self, "r2_"):
            raise NotFittedError("PairwiseRegression is not fitted; call fit(Z) first")
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        if Z.shape[1] != self.r2_.shape[0]:
            raise BadInputError(f"expected {self.r2_.shape[0]} benchmark columns, got {Z.shape[1]}")
        m = ~np.isnan(Z)
        z = np.where(m, Z, 0.0)
        n_rows, n_b = z.shape
        if self.k is None or self.k >= n_b:
            w = self.weight_
            num = z @ (w * self.slope_).T + m @ (w * self.intercept_).T
            tot = m @ w.T
        else:  # keep the k heaviest available predictors of every cell
            num, tot = np.empty((n_rows, n_b)), np.empty((n_rows, n_b))
            # (rows, j, l) arrays, a bounded block of rows at a time: 7,000 rows of a
            # 450-benchmark registry would otherwise ask for 10 GiB at once
            step = max(1, _TOPK_BLOCK_CELLS // (n_b * n_b))
            for a in range(0, n_rows, step):
                num[a:a + step], tot[a:a + step] = self._top_k_votes(z[a:a + step], m[a:a + step])
        return np.where(tot > 0, num / np.where(tot > 0, tot, 1.0), np.nan)

    def _top_k_votes(self, z, m):
        """(weighted sum of votes, sum of weights), each (rows, n_benchmarks), of the
        ``k`` heaviest predictors of every cell observed in ``m`` (rows, n_benchmarks)."""
        n_rows, n_b = z.shape
        w = self.weight_[None, :, :] * m[:, None, :]                         # (rows, j, l)
        k = int(self.k)
        top = np.argpartition(w, n_b - k, axis=2)[:, :, n_b - k:]              # (rows, j, k)
        jj = np.arange(n_b)[None, :, None]
        w_k = np.take_along_axis(w, top, axis=2)
        pred = (self.slope_[jj, top] * z[np.arange(n_rows)[:, None, None], top]
                + self.intercept_[jj, top])
        return (w_k * pred).sum(axis=2), w_k.sum(axis=2)
