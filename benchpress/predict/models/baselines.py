"""Reference predictors with the same ``fit(Y, scales)`` / ``complete()`` interface.

* :class:`BenchmarkMean` - every cell gets its benchmark's mean observed score;
* :class:`ModelNormalizedMean` - benchmark mean plus the model's mean z-offset;
* :class:`SoftImpute` - iterative rank-r SVD imputation (optionally with shrinkage);
* :class:`BenchmarkRegression` - benchmark-wise regression: each benchmark from the
  model's other scores through pairwise lines (:mod:`benchpress.predict.models.regression`),
  falling back to the model's mean z-offset; a new model is folded in from the fitted
  lines, without a refit.

The last three work in the standardized space of :class:`ScaleTransform` (logit for
percent benchmarks, then z-scores) and map back with clipping.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError
from benchpress.predict.estimator import BasePredictor
from benchpress.predict.models.regression import PairwiseRegression
from benchpress.predict.transform import BenchmarkScales, ScaleTransform

__all__ = [
    "BenchmarkMean", "ModelNormalizedMean", "SoftImpute", "BenchmarkRegression",
]


def model_offset(Z: np.ndarray) -> np.ndarray:
    """Each model's mean z-score over its observed benchmarks, shape (n_models,); 0 for a
    model without scores (the benchmark mean is 0 in z units)."""
    obs = ~np.isnan(Z)
    return np.where(obs, Z, 0.0).sum(axis=1) / np.maximum(obs.sum(axis=1), 1)


class _ZBaseline(BasePredictor):
    """Fits the transform, works on ``Z`` (n_models, n_benchmarks), maps back."""

    logit_rule = "percent"

    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:
        self.transform_ = ScaleTransform.from_scales(scales, logit_rule=self.logit_rule).fit(Y)
        Z = self.transform_.transform(Y)
        self.Zhat_ = self._fit_z(Z)

    def _predict(self) -> np.ndarray:
        return self.transform_.to_scores(self.Zhat_)

    def _fit_z(self, Z: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class BenchmarkMean(BasePredictor):
    """Predict each cell by its benchmark's mean observed score (score units)."""

    method = "benchmark_mean"

    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:
        obs = ~np.isnan(Y)
        n = obs.sum(axis=0)
        s = np.where(obs, Y, 0.0).sum(axis=0)
        self.benchmark_mean_ = np.where(n > 0, s / np.maximum(n, 1), np.nan)

    def _predict(self) -> np.ndarray:
        return np.broadcast_to(self.benchmark_mean_, self.Y_.shape).copy()


class ModelNormalizedMean(_ZBaseline):
    """Benchmark mean shifted by the model's mean z-offset over its observed benchmarks.

    ``Zhat_ij = mean_{k observed for i} Z_ik`` (the benchmark mean is 0 in z units);
    models without scores get offset 0.
    """

    method = "model_mean"

    def __init__(self, *, logit_rule: str = "percent"):
        self.logit_rule = logit_rule

    def _fit_z(self, Z: np.ndarray) -> np.ndarray:
        return np.broadcast_to(model_offset(Z)[:, None], Z.shape).copy()


class SoftImpute(_ZBaseline):
    """Iterative truncated-SVD imputation of the z-scored matrix.

    Missing cells start at 0 (the column mean); each iteration replaces them with the
    rank-``rank`` SVD reconstruction whose singular values are reduced by ``shrinkage``
    (0 = hard rank truncation), until the relative change is below ``tol``.

    Parameters
    ----------
    rank : int, default 2
    shrinkage : float, default 0.0
    max_iter : int, default 100
    tol : float, default 1e-4
    """

    method = "soft_impute"

    def __init__(self, rank: int = 2, *, shrinkage: float = 0.0, max_iter: int = 100,
                 tol: float = 1e-4, logit_rule: str = "percent"):
        self.rank = rank
        self.shrinkage = shrinkage
        self.max_iter = max_iter
        self.tol = tol
        self.logit_rule = logit_rule

    def _fit_z(self, Z: np.ndarray) -> np.ndarray:
        if self.rank < 1:
            raise UsageError(f"rank must be >= 1, got {self.rank}")
        obs = ~np.isnan(Z)
        X = np.where(obs, Z, 0.0)
        approx = X
        self.n_iter_ = 0
        for _ in range(int(self.max_iter)):
            self.n_iter_ += 1
            u, s, vt = np.linalg.svd(X, full_matrices=False)
            s = np.maximum(s[: self.rank] - self.shrinkage, 0.0)
            approx = (u[:, : self.rank] * s) @ vt[: self.rank]
            X_new = np.where(obs, Z, approx)
            change = np.sqrt(np.mean((X_new - X) ** 2)) / (np.sqrt(np.mean(X ** 2)) + 1e-12)
            X = X_new
            if change < self.tol:
                break
        return approx


class BenchmarkRegression(_ZBaseline):
    """Pairwise benchmark regression (top-``k`` or, with ``k=None``, all predictors
    weighted by ``r2 ** power``); cells it cannot reach get the model's mean z-offset
    (as :class:`ModelNormalizedMean`).

    Parameters
    ----------
    k : int or None, default 5
    power : float, default 1.0
    min_shared : int, default 5
    min_r2 : float, default 0.2
    """

    method = "regression"

    def __init__(self, k: int | None = 5, *, power: float = 1.0, min_shared: int = 5,
                 min_r2: float = 0.2, logit_rule: str = "percent"):
        self.k = k
        self.power = power
        self.min_shared = min_shared
        self.min_r2 = min_r2
        self.logit_rule = logit_rule

    def _fit_z(self, Z: np.ndarray) -> np.ndarray:
        self.regression_ = PairwiseRegression(self.k, power=self.power,
                                              min_shared=self.min_shared,
                                              min_r2=self.min_r2).fit(Z)
        return self._predict_z(Z)

    def _predict_z(self, Z: np.ndarray) -> np.ndarray:
        P = self.regression_.predict(Z)
        return np.where(np.isnan(P), model_offset(Z)[:, None], P)

    def _fold_in_fitted(self, S2: np.ndarray) -> np.ndarray:
        """New models from the fitted lines: each benchmark from the model's known ones."""
        return self.transform_.to_scores(self._predict_z(self.transform_.transform(S2)))
