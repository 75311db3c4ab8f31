"""Nearest models: predict a model's missing scores from the models that score most like it.

:class:`KNNModels` works in the standardized space of
:class:`~benchpress.predict.transform.ScaleTransform` (logit for percent benchmarks, then
z-scores). The distance between a query model and a fitted model is the RMS difference of
their z-scores over the benchmarks both have; a missing cell (query, j) is the average of
the ``k`` nearest fitted models that scored benchmark j, each optionally shifted by its
mean gap to the query on the shared benchmarks (``offset=True``: a newer model that scores
2 points above its neighbours everywhere it was measured is predicted 2 points above them
where it was not).

The same neighbour search serves both jobs, vectorised over blocks of query rows:
``complete()`` (a fitted model's neighbours are the other fitted models) and ``fold_in``
(a new model's neighbours are the fitted models; no refit, milliseconds per row).

:func:`local_regression` asks the fitted models a second way: each missing benchmark of a
query is regressed on the query's known ones over the fitted models that have them all,
each model weighted by its closeness to the query (a kernel-weighted ridge line, one per
benchmark). Where the average of the nearest models copies their level, the regression
also follows how the benchmark moves with the known ones near the query.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError
from benchpress.predict.base import BasePredictor
from benchpress.predict.models.baselines import model_offset
from benchpress.predict.transform import BenchmarkScales, ScaleTransform
from benchpress.predict.size_limits import LIMITS

__all__ = ["KNNModels", "neighbour_average", "local_regression"]

#: Query rows per block (see :mod:`benchpress.predict.size_limits`).
_BLOCK_FLOATS = LIMITS.knn_block_floats
WEIGHTINGS = ("uniform", "distance")


def neighbour_average(Zq: np.ndarray, Z: np.ndarray, *, k: int = 5, min_shared: int = 3,
                      offset: bool = False, weighting: str = "uniform", candidates: int = 0,
                      exclude=None, prior=None) -> np.ndarray:
    """Average of the ``k`` nearest fitted models per benchmark, z units.

    Parameters
    ----------
    Zq : ndarray (n_queries, n_benchmarks)
        Query rows, z units, NaN = unknown.
    Z : ndarray (n_models, n_benchmarks)
        Fitted models, z units, NaN = unobserved.
    k, min_shared, offset, weighting
        As :class:`KNNModels`. A pair sharing fewer than ``min(min_shared, the query's
        known count)`` benchmarks is not a neighbour.
    candidates : int
        Look for the ``k`` per benchmark among this many nearest models only (0: all);
        a benchmark none of them scored is NaN. Bounds the work at (n_queries,
        candidates, n_benchmarks) instead of (n_queries, n_models, n_benchmarks).
    exclude : ndarray of int (n_queries,), optional
        For each query, a fitted row that is not its neighbour (itself, in ``complete``);
        -1 for none.
    prior : ndarray (n_models,) or (n_queries, n_models), optional
        A weight per fitted model (per query), multiplied into each neighbour's weight.

    Returns
    -------
    ndarray (n_queries, n_benchmarks): NaN where no neighbour scored the benchmark.
    """
    M = ~np.isnan(Z)
    z = np.where(M, Z, 0.0)
    Mf, z2 = M.astype(float), z * z
    out = np.full(Zq.shape, np.nan)
    L = Z.shape[0] if not candidates else min(int(candidates), Z.shape[0])
    step = max(1, _BLOCK_FLOATS // max(L * Z.shape[1], 1))
    for lo in range(0, Zq.shape[0], step):
        q = Zq[lo:lo + step]
        Mq = ~np.isnan(q)
        zq = np.where(Mq, q, 0.0)
        Mqf = Mq.astype(float)
        shared = Mqf @ Mf.T                                               # (r, n)
        ssd = (zq * zq) @ Mf.T + Mqf @ z2.T - 2.0 * (zq @ z.T)
        need = np.minimum(min_shared, Mq.sum(axis=1))[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = np.sqrt(np.maximum(ssd, 0.0) / shared)
        dist[(shared < np.maximum(need, 1))] = np.inf
        if exclude is not None:
            ex = np.asarray(exclude[lo:lo + step])
            has = ex >= 0
            dist[np.flatnonzero(has), ex[has]] = np.inf
        if L < Z.shape[0]:  # the L nearest, then in order
            near = np.argpartition(dist, L - 1, axis=1)[:, :L]
            order = np.take_along_axis(near, np.argsort(np.take_along_axis(dist, near, axis=1),
                                                         axis=1, kind="stable"), axis=1)
        else:
            order = np.argsort(dist, axis=1, kind="stable")                 # (r, L)
        d_sorted = np.take_along_axis(dist, order, axis=1)
        ok = np.isfinite(d_sorted)
        m_sorted = M[order] & ok[:, :, None]                                # (r, L, b)
        take = m_sorted & (np.cumsum(m_sorted, axis=1) <= k)
        w = np.where(ok, 1.0 / (d_sorted + 0.05), 0.0) if weighting == "distance" \
            else ok.astype(float)
        vals = z[order]                                                     # (r, L, b)
        if offset:
            with np.errstate(invalid="ignore", divide="ignore"):
                gap = (zq @ Mf.T - Mqf @ z.T) / shared                      # (r, n)
            gap = np.take_along_axis(np.nan_to_num(gap), order, axis=1)
            vals = vals + gap[:, :, None]
        if prior is not None:
            pr = np.broadcast_to(np.asarray(prior, dtype=float), (Zq.shape[0], Z.shape[0]))
            w = w * np.take_along_axis(pr[lo:lo + step], order, axis=1)
        wt = take * w[:, :, None]
        num = (wt * vals).sum(axis=1)
        den = wt.sum(axis=1)
        out[lo:lo + step] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def local_regression(Zq: np.ndarray, Z: np.ndarray, *, alpha: float = 0.3,
                     bandwidth: float = 0.5, min_rows: int = 10, min_weight: float = 1.0,
                     exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """Each query's unknown benchmarks from its known ones, by a ridge regression over the
    fitted models near it, z units.

    For a query with known benchmarks ``R``, benchmark ``t`` is fitted as
    ``z_t = b0 + z_R @ b`` over the fitted models that scored all of ``R`` and ``t``, each
    weighted by ``exp(-(d / bandwidth)**2)``, ``d`` its RMS z distance to the query on
    ``R``; the penalty ``alpha * |b|^2`` leaves the intercept free. One small solve per
    benchmark, built from two matrix products per query.

    Parameters
    ----------
    Zq, Z : ndarray
        Query rows and fitted models, as :func:`neighbour_average` takes them.
    alpha : float
        Ridge penalty on the slopes.
    bandwidth : float
        Kernel width, z units.
    min_rows : int
        A benchmark needs this many fitted models with ``R`` and it.
    min_weight : float
        ... and this much kernel weight on them (models within about ``bandwidth``).
    exclude : ndarray of int (n_queries,), optional
        For each query, a fitted row left out (itself); -1 for none.

    Returns
    -------
    pred, noise : ndarray (n_queries, n_benchmarks)
        The predictions, NaN on the query's known benchmarks and where too few fitted
        models qualify; and each line's residual variance there, the kernel-weighted mean
        squared residual of the fitted models (z units squared): how closely the
        benchmark follows the known ones near the query.
    """
    M = ~np.isnan(Z)
    z = np.where(M, Z, 0.0)
    Mf = M.astype(float)
    out = np.full(Zq.shape, np.nan)
    noise = np.full(Zq.shape, np.nan)
    for q in range(Zq.shape[0]):
        R = np.flatnonzero(~np.isnan(Zq[q]))
        if R.size == 0:
            continue
        rows = np.flatnonzero(M[:, R].all(axis=1))
        if exclude is not None and exclude[q] >= 0:
            rows = rows[rows != exclude[q]]
        if rows.size < min_rows:
            continue
        X = np.column_stack([np.ones(rows.size), z[rows][:, R]])          # (n, p)
        d = np.sqrt(((X[:, 1:] - Zq[q, R]) ** 2).mean(axis=1))
        W = Mf[rows] * np.exp(-(d / bandwidth) ** 2)[:, None]              # (n, b)
        p = X.shape[1]
        A = (W.T @ (X[:, :, None] * X[:, None, :]).reshape(rows.size, p * p)).reshape(-1, p, p)
        A += np.diag(np.r_[1e-6, np.full(p - 1, float(alpha))])
        coef = np.linalg.solve(A, ((W * z[rows]).T @ X)[..., None])[..., 0]  # (b, p)
        pred = coef @ np.r_[1.0, Zq[q, R]]
        weight = W.sum(axis=0)
        enough = (Mf[rows].sum(axis=0) >= min_rows) & (weight >= min_weight)
        enough[R] = False
        out[q] = np.where(enough, pred, np.nan)
        sq = (W * (z[rows] - X @ coef.T) ** 2).sum(axis=0)
        noise[q] = np.where(enough, sq / np.where(enough, weight, 1.0), np.nan)
    return out, noise


class KNNModels(BasePredictor):
    """k-nearest-model imputation in z units.

    Distance between two models is the RMS difference of their z-scores over shared
    benchmarks (at least ``min_shared``, or all of a new model's known ones when it has
    fewer). A missing cell (i, j) is the (weighted) mean z-score of the ``k`` nearest
    models that scored benchmark j; with no such neighbour, the model's mean z-offset
    is used. ``fold_in`` searches the fitted models without a refit.

    Parameters
    ----------
    k : int, default 5
    min_shared : int, default 3
    offset : bool, default False
        Shift each neighbour by its mean z gap to the query on the shared benchmarks.
    weighting : {"uniform", "distance"}, default "uniform"
        "distance" weights each neighbour by ``1 / (distance + 0.05)``.
    candidates : int, default 0
        Search only the nearest ``candidates`` models per query (0: all of them).
    logit_rule : str, default "percent"
    """

    method = "knn"

    def __init__(self, k: int = 5, *, min_shared: int = 3, offset: bool = False,
                 weighting: str = "uniform", candidates: int = 0, logit_rule: str = "percent"):
        self.k = k
        self.min_shared = min_shared
        self.offset = offset
        self.weighting = weighting
        self.candidates = candidates
        self.logit_rule = logit_rule

    def _options(self) -> dict:
        return dict(k=self.k, min_shared=self.min_shared, offset=self.offset,
                    weighting=self.weighting, candidates=self.candidates)

    def fit(self, Y, scales: BenchmarkScales, *, transform: ScaleTransform | None = None
            ) -> "KNNModels":
        """Hold the models ``Y`` (n_models, n_benchmarks, score units) to search, in a fitted
        ``transform`` when given (a blend passes its low-rank half's, so that both halves
        share one z space), else in one fitted here on ``Y`` with ``logit_rule``."""
        self._given_transform = transform
        return super().fit(Y, scales)

    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:
        if int(self.k) < 1:
            raise UsageError(f"k must be >= 1, got {self.k}")
        if self.weighting not in WEIGHTINGS:
            raise UsageError(f"weighting must be one of {WEIGHTINGS}, got {self.weighting!r}")
        given = getattr(self, "_given_transform", None)
        self.transform_ = given if given is not None else \
            ScaleTransform.from_scales(scales, logit_rule=self.logit_rule).fit(Y)
        self.Z_ = self.transform_.transform(Y)

    def predict_z(self, Zq: np.ndarray, *, exclude=None, fallback: bool = True) -> np.ndarray:
        """Predictions of query rows ``Zq`` (n_queries, n_benchmarks), z units; a cell
        without any neighbour gets the row's own mean z-offset (NaN if not ``fallback``)."""
        P = neighbour_average(Zq, self.Z_, exclude=exclude, **self._options())
        return np.where(np.isnan(P), model_offset(Zq)[:, None], P) if fallback else P

    def _predict(self) -> np.ndarray:
        n = self.Z_.shape[0]
        return self.transform_.to_scores(self.predict_z(self.Z_, exclude=np.arange(n)))

    def _fold_in_fitted(self, S2: np.ndarray) -> np.ndarray:
        """New models from their nearest fitted models: a search, no refit."""
        return self.transform_.to_scores(self.predict_z(self.transform_.transform(S2)))
