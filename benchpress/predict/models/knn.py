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
from benchpress.predict.estimator import BasePredictor
from benchpress.predict.models.baselines import model_offset
from benchpress.predict.transform import BenchmarkScales, ScaleTransform
from benchpress.predict.size_limits import LIMITS, SizeLimits

__all__ = ["KNNModels", "neighbour_average", "local_regression", "nearness"]

WEIGHTINGS = ("uniform", "distance")


def _distances(q, z, Mf, z2, min_shared: int, exclude=None):
    """RMS z distance (n_rows, n_models) between query rows ``q`` (NaN = unknown) and
    fitted models (``z`` their values with 0 where unobserved, ``Mf`` their observed mask
    as floats, ``z2`` = z * z) over the benchmarks both have, inf where they share fewer
    than ``min(min_shared, the row's known count)`` or for a row's ``exclude`` model (-1:
    none); and the shared counts."""
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
        ex = np.asarray(exclude)
        has = ex >= 0
        dist[np.flatnonzero(has), ex[has]] = np.inf
    return dist, shared


def nearness(Zq: np.ndarray, Z: np.ndarray, *, min_shared: int = 3, radii=(0.3, 0.6),
             exclude=None, limits: SizeLimits = LIMITS) -> tuple[np.ndarray, np.ndarray]:
    """How near the fitted models lie to each query row (z units, as
    :func:`neighbour_average` measures it): the nearest one's distance (inf: none
    qualifies) (n_queries,), and how many lie within each of ``radii`` (n_queries,
    len(radii)). ``exclude`` and ``limits`` (``knn_block_floats`` per block) as there."""
    M = ~np.isnan(Z)
    z = np.where(M, Z, 0.0)
    Mf, z2 = M.astype(float), z * z
    nearest = np.full(Zq.shape[0], np.inf)
    counts = np.zeros((Zq.shape[0], len(radii)), dtype=np.int64)
    step = max(1, limits.knn_block_floats // max(Z.shape[0] * Z.shape[1], 1))
    for lo in range(0, Zq.shape[0], step):
        dist, _ = _distances(Zq[lo:lo + step], z, Mf, z2, min_shared,
                             None if exclude is None else exclude[lo:lo + step])
        nearest[lo:lo + step] = dist.min(axis=1, initial=np.inf)
        counts[lo:lo + step] = (dist[:, :, None] < np.asarray(radii)[None, None, :]).sum(axis=1)
    return nearest, counts


def neighbour_average(Zq: np.ndarray, Z: np.ndarray, *, k: int = 5, min_shared: int = 3,
                      offset: bool = False, weighting: str = "uniform", candidates: int = 0,
                      exclude=None, prior=None, limits: SizeLimits = LIMITS) -> np.ndarray:
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
    limits : SizeLimits
        Queries run in blocks whose (rows, candidates, n_benchmarks) arrays stay under
        ``limits.knn_block_floats`` floats (same numbers).

    Returns
    -------
    ndarray (n_queries, n_benchmarks): NaN where no neighbour scored the benchmark.
    """
    M = ~np.isnan(Z)
    z = np.where(M, Z, 0.0)
    Mf, z2 = M.astype(float), z * z
    out = np.full(Zq.shape, np.nan)
    L = Z.shape[0] if not candidates else min(int(candidates), Z.shape[0])
    step = max(1, limits.knn_block_floats // max(L * Z.shape[1], 1))
    for lo in range(0, Zq.shape[0], step):
        q = Zq[lo:lo + step]
        Mq = ~np.isnan(q)
        zq = np.where(Mq, q, 0.0)
        Mqf = Mq.astype(float)
        dist, shared = _distances(q, z, Mf, z2, min_shared,
                                  None if exclude is None else exclude[lo:lo + step])
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
                     exclude=None, dates=None, query_dates=None,
                     date_alpha: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Each query's unknown benchmarks from its known ones, by a ridge regression over the
    fitted models near it, z units.

    For a query with known benchmarks ``R``, benchmark ``t`` is fitted as
    ``z_t = b0 + z_R @ b`` over the fitted models that scored all of ``R`` and ``t``, each
    weighted by ``exp(-(d / bandwidth)**2)``, ``d`` its RMS z distance to the query on
    ``R``; the penalty ``alpha * |b|^2`` leaves the intercept free. One small solve per
    benchmark, built from two matrix products per query.

    With ``dates`` and ``query_dates`` (release dates in years), the line also has a term
    in the release date, ``+ c (date - query_date)`` (penalty ``date_alpha * c^2``), fitted
    over the dated models alone, and is read at the query's own date: how a model released
    then differs from the earlier models with the same known scores, extrapolated along
    the line where the query is newer than every model it is fitted on. Its residual
    variance is then widened by the line's leverage at the query, ``v (1 + x' A^-1 x)``
    (``A`` the weighted normal matrix), which grows as the query's date leaves the models'.

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
    dates : ndarray (n_models,), optional
        The fitted models' release dates (years; NaN: undated, left out of a dated line).
    query_dates : ndarray (n_queries,), optional
        The queries' release dates (years; NaN: that query's line has no date term).
    date_alpha : float
        Ridge penalty on the date term.

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
    dated = None if dates is None else ~np.isnan(np.asarray(dates, dtype=float))
    for q in range(Zq.shape[0]):
        R = np.flatnonzero(~np.isnan(Zq[q]))
        if R.size == 0:
            continue
        tq = np.nan if query_dates is None else float(query_dates[q])
        timed = dated is not None and np.isfinite(tq)
        rows = np.flatnonzero(M[:, R].all(axis=1) & (dated if timed else True))
        if exclude is not None and exclude[q] >= 0:
            rows = rows[rows != exclude[q]]
        if rows.size < min_rows:
            continue
        cols = [np.ones(rows.size), *z[rows][:, R].T]
        penalty = [1e-6, *np.full(R.size, float(alpha))]
        if timed:
            cols.append(np.asarray(dates, dtype=float)[rows] - tq)
            penalty.append(float(date_alpha))
        X = np.column_stack(cols)                                          # (n, p)
        d = np.sqrt(((X[:, 1:1 + R.size] - Zq[q, R]) ** 2).mean(axis=1))
        W = Mf[rows] * np.exp(-(d / bandwidth) ** 2)[:, None]              # (n, b)
        p = X.shape[1]
        A = (W.T @ (X[:, :, None] * X[:, None, :]).reshape(rows.size, p * p)).reshape(-1, p, p)
        A += np.diag(penalty)
        coef = np.linalg.solve(A, ((W * z[rows]).T @ X)[..., None])[..., 0]  # (b, p)
        x = np.r_[1.0, Zq[q, R], [0.0] * int(timed)]
        pred = coef @ x
        weight = W.sum(axis=0)
        enough = (Mf[rows].sum(axis=0) >= min_rows) & (weight >= min_weight)
        enough[R] = False
        out[q] = np.where(enough, pred, np.nan)
        sq = (W * (z[rows] - X @ coef.T) ** 2).sum(axis=0)
        v = sq / np.where(enough, weight, 1.0)
        if timed:  # the line read where its models thin out: its leverage there
            v = v * (1.0 + np.linalg.solve(A, np.broadcast_to(x, (A.shape[0], p))[..., None])
                     [..., 0] @ x)
        noise[q] = np.where(enough, v, np.nan)
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
