"""The interval support of a fitted predictor: the risk features of its cells and of new
models' cells (:mod:`~benchpress.predict.intervals.features`), which the conformal
:class:`~benchpress.predict.intervals.calibrator.IntervalCalibrator` turns into intervals.

A predictor fitted densely gets (n_models, n_benchmarks) arrays of its predictions and
features; one fitted on its observed cells (a large registry) gets a
:class:`~benchpress.predict.intervals.cells_support.CellsSupport`, which computes a cell's
features on demand.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import NotFittedError
from benchpress.predict.estimator import BasePredictor
from benchpress.predict.intervals.cells_support import CellsSupport
from benchpress.predict.intervals.features import (EPS, LOGIT_RULE, nearest_similarity,
                                                   point_size, risk_features, spread_in_z)
from benchpress.predict.size_limits import LIMITS, SizeLimits
from benchpress.predict.transform import ScaleTransform

__all__ = ["MatrixSupport", "STATE_ARRAYS"]

#: The arrays of a dense :class:`MatrixSupport` that a stored fit keeps (``obs`` comes from
#: the training matrix), as :meth:`MatrixSupport.state` names them.
STATE_ARRAYS = ("Z", "P", "Zhat", "spread_z", "row_count", "col_count", "row_rms", "col_rms",
                "near")


class MatrixSupport:
    """Risk features of the cells of a fitted ``predictor`` (its ``complete_spread`` is
    used when it has one), in the interval space given by ``logit_rule`` and ``eps``
    (``None``: the predictor's ``interval_logit_rule_`` and ``interval_eps_`` when it has
    them, e.g. a side fit with covariates, else
    :data:`~benchpress.predict.intervals.features.LOGIT_RULE` and
    :data:`~benchpress.predict.intervals.features.EPS`).

    Memory: the model-by-model correlations behind the nearest-model feature are never
    kept; ``near`` (n_models, n_benchmarks) holds the feature of every cell
    (:func:`~benchpress.predict.intervals.features.nearest_similarity`, bounded by
    ``limits``). A predictor of the cells solver gets ``cells_support`` (a
    :class:`CellsSupport`) instead of the arrays.

    Parameters
    ----------
    predictor : fitted predictor
    logit_rule, eps : optional
        The interval space (see above).
    limits : SizeLimits
        The bounds of the nearest-model search and of the row blocks in which
        :func:`~benchpress.predict.intervals.calibration.complete_intervals` works.
    state : dict, optional
        What :meth:`state` returned for a support of ``predictor``, with its fitted
        interval space under ``"transform"``: the support is then taken as saved, nothing
        is computed (:meth:`from_state`).

    Attributes
    ----------
    transform : ScaleTransform
        The interval space, fitted on the training matrix.
    sparse : bool
        Whether the predictor used the cells solver (``cells_support`` then holds the
        features; the arrays below are absent).
    Z, P, Zhat, spread_z, near : ndarray of shape (n_models, n_benchmarks)
        Training scores in z, the predictions (score units) and in z, the spread (z), the
        nearest-model feature.
    obs : ndarray of bool, shape (n_models, n_benchmarks)
    row_count, row_rms : ndarray of shape (n_models,)
    col_count, col_rms : ndarray of shape (n_benchmarks,)
    """

    def __init__(self, predictor: BasePredictor, *, logit_rule: str | None = None,
                 eps: float | None = None, limits: SizeLimits = LIMITS,
                 state: dict | None = None):
        if not hasattr(predictor, "Y_"):
            raise NotFittedError("MatrixSupport needs a fitted predictor")
        self.predictor = predictor
        self.limits = limits
        self.sparse = predictor.uses_cells()
        if state is not None:
            self._take(state)
            return
        if logit_rule is None:
            logit_rule = getattr(predictor, "interval_logit_rule_", None) or LOGIT_RULE
        if eps is None:
            eps = getattr(predictor, "interval_eps_", None) or EPS
        if self.sparse:
            self.cells_support = CellsSupport.compute(predictor, logit_rule, eps, limits=limits)
            self.transform = self.cells_support.transform
            return
        Y, scales = predictor.Y_, predictor.scales_
        self.transform = ScaleTransform.from_scales(scales, logit_rule=logit_rule,
                                                    eps=eps).fit(Y)
        self.Z = self.transform.transform(Y)
        self.obs = ~np.isnan(Y)
        self.P = predictor.complete(keep_observed=False)
        self.Zhat = self.transform.transform(self.P)
        spread = (predictor.complete_spread() if hasattr(predictor, "complete_spread")
                  else np.zeros_like(self.P))
        self.spread_z = spread_in_z(self.transform, self.P, spread)
        res2 = np.where(self.obs, (self.Z - self.Zhat) ** 2, 0.0)
        self.row_count = self.obs.sum(axis=1)
        self.col_count = self.obs.sum(axis=0)
        self.row_rms = np.sqrt(res2.sum(axis=1) / np.maximum(self.row_count, 1))
        self.col_rms = np.sqrt(res2.sum(axis=0) / np.maximum(self.col_count, 1))
        self.near = nearest_similarity(self.Z, self.Z, self.obs, exclude_self=True,
                                       limits=limits)

    def state(self) -> dict:
        """The arrays a stored fit keeps: :data:`STATE_ARRAYS` (dense), or the cells
        support's (:data:`~benchpress.predict.intervals.cells_support.STATE_ARRAYS`). The
        interval space (``transform``) is stored by its own ``state``."""
        if self.sparse:
            return self.cells_support.state()
        return {n: np.asarray(getattr(self, n)) for n in STATE_ARRAYS}

    @classmethod
    def from_state(cls, predictor: BasePredictor, transform: ScaleTransform, arrays: dict, *,
                   limits: SizeLimits = LIMITS) -> "MatrixSupport":
        """The support of a restored ``predictor`` as :meth:`state` saved it (``arrays``)
        with its fitted interval space ``transform``: nothing is recomputed, so the
        restored support gives the saved features to the bit."""
        return cls(predictor, limits=limits, state={**arrays, "transform": transform})

    def _take(self, state: dict) -> None:
        self.transform = state["transform"]
        if self.sparse:
            self.cells_support = CellsSupport.from_state(self.predictor, self.transform, state,
                                                         limits=self.limits)
            return
        self.obs = ~np.isnan(self.predictor.Y_)
        for n in STATE_ARRAYS:
            setattr(self, n, np.asarray(state[n]))

    @property
    def model_counts(self) -> np.ndarray:
        """Observed scores per training model, (n_models,)."""
        return self.cells_support.row_count if self.sparse else self.row_count

    def points(self) -> np.ndarray:
        """One point per benchmark in score units, (n_benchmarks,)."""
        if self.sparse:
            return self.cells_support.points
        return point_size(self.predictor.scales_, self.predictor.Y_)

    def predicted_at(self, rows, cols) -> np.ndarray:
        """The predictor's predictions (score units) at cells ``(rows, cols)`` (n_cells,)."""
        if self.sparse:
            return self.predictor.predict_cells(rows, cols)
        return self.P[rows, cols]

    def near_of(self, Zr) -> np.ndarray:
        """Nearest-model feature of new rows ``Zr`` (n_rows, n_benchmarks, z space, NaN =
        missing) among the training models, shape (n_rows, n_benchmarks)."""
        if self.sparse:
            return self.cells_support.near_of(Zr)
        return nearest_similarity(Zr, self.Z, self.obs, limits=self.limits)

    def cells(self, rows, cols) -> tuple[np.ndarray, np.ndarray]:
        """z predictions (n_cells,) and features (n_cells, n_features) of cells (rows, cols)."""
        i, j = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        if self.sparse:
            return self.cells_support.cells(i, j)
        zhat = self.Zhat[i, j]
        X = risk_features(self.spread_z[i, j], self.row_count[i], self.col_count[j],
                          self.row_rms[i], self.col_rms[j], self.near[i, j], zhat)
        return zhat, X

    def new_rows(self, S, predicted, spread=None) -> tuple[np.ndarray, np.ndarray]:
        """Features of every cell of new models with known scores ``S``, fold-in
        predictions and spread (score units), each (n_rows, n_benchmarks). Returns
        ``zhat`` (n_rows * n_benchmarks,) and ``X`` (n_rows * n_benchmarks, n_features)."""
        S = np.atleast_2d(np.asarray(S, dtype=float))
        P = np.atleast_2d(np.asarray(predicted, dtype=float))
        sp = np.zeros_like(P) if spread is None else np.atleast_2d(spread)
        Zs, Zh = self.transform.transform(S), self.transform.transform(P)
        known = ~np.isnan(S)
        n_r, n_b = S.shape
        rrms = np.sqrt(np.where(known, (Zs - Zh) ** 2, 0.0).sum(axis=1)
                       / np.maximum(known.sum(axis=1), 1))
        i = np.repeat(np.arange(n_r), n_b)
        j = np.tile(np.arange(n_b), n_r)
        col_count, col_rms = ((self.cells_support.col_count, self.cells_support.col_rms)
                              if self.sparse else (self.col_count, self.col_rms))
        X = risk_features(spread_in_z(self.transform, P, sp).ravel(), known.sum(axis=1)[i],
                          col_count[j], rrms[i], col_rms[j], self.near_of(Zs).ravel(),
                          Zh.ravel())
        return Zh.ravel(), X
