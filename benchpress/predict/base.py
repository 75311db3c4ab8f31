"""Shared interface of every score predictor (ALS ensemble and baselines).

A predictor is configured by its constructor (which only stores arguments), then

* ``fit(Y, scales)`` learns from a score matrix ``Y`` of shape (n_models, n_benchmarks)
  in score units (NaN = missing) and the benchmarks' :class:`BenchmarkScales`;
* ``complete()`` returns the completed (n_models, n_benchmarks) matrix in score units;
* ``fold_in(scores)`` predicts the full row(s) of brand-new models from their known
  scores, by default by refitting with the new rows appended (subclasses may override
  with a cheaper solve against the fitted benchmark parameters).
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict._threads import single_blas_thread
from benchpress.predict.transform import BenchmarkScales

__all__ = ["BasePredictor", "check_scores"]


def check_scores(Y, scales: BenchmarkScales | None = None) -> np.ndarray:
    """Validate a score matrix; returns a float copy of shape (n_models, n_benchmarks)."""
    Y = np.array(Y, dtype=float, copy=True)
    if Y.ndim != 2:
        raise BadInputError(f"scores must be a 2-D (n_models, n_benchmarks) array, got {Y.shape}")
    if np.isinf(Y).any():
        raise BadInputError("scores contain infinite values")
    if scales is not None and Y.shape[1] != scales.n_benchmarks:
        raise BadInputError(
            f"scores have {Y.shape[1]} benchmark columns but scales describe "
            f"{scales.n_benchmarks}"
        )
    return Y


class BasePredictor:
    """Base class: input checks, ``complete`` bookkeeping and refit-based ``fold_in``.

    Subclasses implement ``_fit(Y, scales)`` and ``_predict()`` (full matrix in score
    units, NaN where no prediction is possible).
    """

    method: str = "base"

    def get_params(self) -> dict:
        """Constructor arguments, as stored."""
        return {k: v for k, v in vars(self).items()
                if not k.endswith("_") and k != "method"}

    def fit(self, Y, scales: BenchmarkScales) -> "BasePredictor":
        """Learn from scores ``Y`` (n_models, n_benchmarks), NaN = missing, score units."""
        if not isinstance(scales, BenchmarkScales):
            raise BadInputError("scales must be a BenchmarkScales instance")
        Y = check_scores(Y, scales)
        self.Y_ = Y
        self.scales_ = scales
        with single_blas_thread():
            self._fit(Y, scales)
        return self

    def _fitted(self) -> None:
        if not hasattr(self, "Y_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit(Y, scales) first")

    def complete(self, *, keep_observed: bool = True) -> np.ndarray:
        """Completed matrix, shape (n_models, n_benchmarks), score units.

        Observed cells keep their observed score when ``keep_observed`` (default);
        otherwise every cell holds the model's prediction. Benchmarks with no training
        score are NaN.
        """
        self._fitted()
        with single_blas_thread():
            P = self._predict()
        if keep_observed:
            obs = ~np.isnan(self.Y_)
            P = np.where(obs, self.Y_, P)
        return P

    def fold_in(self, scores, *, refit: bool = True) -> np.ndarray:
        """Predict full score rows for new models from their known scores.

        Parameters
        ----------
        scores : array_like, shape (n_benchmarks,) or (n_rows, n_benchmarks)
            Known scores of the new model(s) in score units, NaN where unknown.
        refit : bool
            Refit on the training matrix with the rows appended: the only way a baseline
            can take a new row (``refit=False`` is refused; the ALS predictor has it).

        Returns
        -------
        ndarray, same shape as ``scores``: predictions for every benchmark (known
        cells are predicted too, not copied).
        """
        self._fitted()
        if not refit:
            raise UsageError(f"{type(self).__name__} cannot fold in without a refit; use refit=True")
        S = np.asarray(scores, dtype=float)
        one = S.ndim == 1
        out = self._fold_in_refit(check_scores(np.atleast_2d(S), self.scales_))
        return out[0] if one else out

    def _fold_in_refit(self, S2: np.ndarray) -> np.ndarray:
        clone = type(self)(**self.get_params())
        clone.fit(np.vstack([self.Y_, S2]), self.scales_)
        return clone.complete(keep_observed=False)[self.Y_.shape[0]:]

    # subclass hooks ------------------------------------------------------------
    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:  # pragma: no cover
        raise NotImplementedError

    def _predict(self) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError
