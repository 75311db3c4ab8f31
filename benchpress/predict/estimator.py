"""Shared interface of every score predictor (ALS ensemble and baselines).

A predictor is configured by its constructor (which only stores arguments), then

* ``fit(Y, scales)`` learns from a score matrix ``Y`` of shape (n_models, n_benchmarks)
  in score units (NaN = missing) and the benchmarks' :class:`BenchmarkScales`;
* ``complete()`` returns the completed (n_models, n_benchmarks) matrix in score units;
* ``fold_in(scores)`` predicts the full row(s) of brand-new models from their known
  scores, the cheapest way the predictor has (``refit=None``, the same default on every
  predictor): the ALS predictor solves the new rows against its fitted benchmark
  parameters, kNN searches the fitted models, regression applies its fitted lines
  (``_fold_in_fitted``); a baseline with no such way refits a copy with the rows
  appended. ``refit=True`` always refits; ``refit=False`` insists on the fitted way (the
  others refuse).

Predictors are scikit-learn style estimators: ``__init__`` only stores its arguments,
:meth:`BasePredictor.get_params` / :meth:`BasePredictor.set_params` read and change them,
and :func:`clone` makes a fresh unfitted copy with the same parameters (and so the same
``method`` name), which is how every refit loop (held-out folds, calibration, probe
search, backtest) gets its predictors from the one object it is given.

>>> from benchpress.predict import make_predictor
>>> pred = make_predictor("published", n_starts=3)
>>> twin = clone(pred)
>>> (twin.method, twin.get_params()["n_starts"], twin is pred)
('published', 3, False)
"""

from __future__ import annotations

import inspect

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.transform import BenchmarkScales

__all__ = ["BasePredictor", "check_scores", "check_predictor", "clone", "fit_matrix",
           "state_part", "prefixed", "flat_params", "set_params"]


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


def fit_matrix(Y: np.ndarray, scales: BenchmarkScales) -> np.ndarray:
    """``Y`` as a predictor fits it: the columns it leaves out
    (:meth:`~benchpress.scales.BenchmarkScales.left_out`: a benchmark without a direction,
    a scale kind it does not model) emptied, so that nothing it fits or counts reads them
    and their predictions are NaN. ``Y`` itself when nothing is left out."""
    out = scales.left_out() != ""
    if not out.any():
        return Y
    Y = np.array(Y, dtype=float, copy=True)
    Y[:, out] = np.nan
    return Y


class BasePredictor:
    """Base class: input checks, ``complete`` bookkeeping and refit-based ``fold_in``.

    Subclasses implement ``_fit(Y, scales)`` and ``_predict()`` (full matrix in score
    units, NaN where no prediction is possible).
    """

    #: The method name (:func:`~benchpress.predict.factory.make_predictor`); a class
    #: attribute of the baselines, a constructor argument of the ALS predictor.
    method: str = "base"

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self) -> dict:
        """Constructor arguments, as stored: ``type(self)(**self.get_params())`` is an
        unfitted copy (a part, such as a blend's low-rank half, is the object itself;
        :func:`flat_params` spells every value out)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params) -> "BasePredictor":
        """Change parameters (:func:`set_params`: a part's as ``part__name``, or by its
        name alone where one part has it); an unknown name raises UsageError. Returns
        self."""
        return set_params(self, params)

    def fit(self, Y, scales: BenchmarkScales) -> "BasePredictor":
        """Learn from scores ``Y`` (n_models, n_benchmarks), NaN = missing, score units."""
        if not isinstance(scales, BenchmarkScales):
            raise BadInputError("scales must be a BenchmarkScales instance")
        Y = fit_matrix(check_scores(Y, scales), scales)
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

    def uses_cells(self) -> bool:
        """Whether the fit used the cells solver (the ALS predictors' ``solver``, "auto"
        decided in `fit` by the matrix's size): its completion is then made in row blocks
        (:meth:`complete_rows`, :meth:`completion_blocks`) rather than whole. False
        before a fit and for every predictor without such a solver. Asked inside
        `benchpress.predict` only."""
        return getattr(self, "solver_", "dense") == "cells"

    def completion_blocks(self, cells_per_block: int):
        """`complete()` (observed cells kept) in row blocks: ``(first_row, block)`` pairs,
        `block` of shape (n_rows, n_benchmarks). One block, unless the fit used the cells
        solver: then about `cells_per_block` cells per block, so a large completion is
        never held whole."""
        n_m, n_b = self.Y_.shape
        if not self.uses_cells():
            yield 0, self.complete()
            return
        step = max(1, cells_per_block // max(n_b, 1))
        for k in range(0, max(n_m, 1), step):
            yield k, self.complete_rows(np.arange(k, min(k + step, n_m)))

    def complete_rows(self, rows, *, keep_observed: bool = True) -> np.ndarray:
        """Rows ``rows`` (model indices) of :meth:`complete`, shape (n_rows,
        n_benchmarks); predictors with a cheaper way (the sparse ALS path) override it."""
        return self.complete(keep_observed=keep_observed)[np.asarray(rows, dtype=np.int64)]

    def predict_cells(self, rows, cols) -> np.ndarray:
        """Predictions at cells ``(rows, cols)`` (n_cells,): ``complete(keep_observed=
        False)[rows, cols]``; predictors with a cheaper way override it."""
        return self.complete(keep_observed=False)[np.asarray(rows, dtype=np.int64),
                                                  np.asarray(cols, dtype=np.int64)]

    def fold_in(self, scores, *, refit: bool | None = None) -> np.ndarray:
        """Predict full score rows for new models from their known scores.

        The fitted predictor itself is never changed.

        Parameters
        ----------
        scores : array_like, shape (n_benchmarks,) or (n_rows, n_benchmarks)
            Known scores of the new model(s) in score units, NaN where unknown.
        refit : bool, optional
            None (default): the cheapest way this predictor has: from the fitted
            parameters where it can (:meth:`_fold_in_fitted`: kNN, regression), else a
            refit of a copy with the rows appended. True: that refit. False: from the
            fitted parameters only (UsageError for a predictor that has no such way).

        Returns
        -------
        ndarray, same shape as ``scores``: predictions for every benchmark (known
        cells are predicted too, not copied).
        """
        self._fitted()
        S = np.asarray(scores, dtype=float)
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        out = None if refit else self._fold_in_fitted(S2)
        if out is None and refit is False:
            raise UsageError(f"{type(self).__name__} cannot fold in without a refit; "
                             "use refit=None or refit=True")
        if out is None:
            out = self._fold_in_refit(S2)
        return out[0] if S.ndim == 1 else out

    def _fold_in_fitted(self, S2: np.ndarray) -> np.ndarray | None:
        """Rows (n_rows, n_benchmarks, score units) of new models with known scores
        ``S2`` from the fitted parameters alone, or None where this predictor has no such
        way (then :meth:`fold_in` refits)."""
        return None

    def _fold_in_refit(self, S2: np.ndarray) -> np.ndarray:
        twin = clone(self).fit(np.vstack([self.Y_, S2]), self.scales_)
        return twin.complete(keep_observed=False)[self.Y_.shape[0]:]

    # subclass hooks ------------------------------------------------------------
    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:  # pragma: no cover
        raise NotImplementedError

    def _predict(self) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


def prefixed(prefix: str, arrays: dict) -> dict:
    """``arrays`` with each name prefixed: how a fitted part's ``state()`` is filed in the
    flat dict of arrays of a stored fit (``prefixed("ensemble_", {"U": ...})`` ->
    ``{"ensemble_U": ...}``)."""
    return {prefix + name: value for name, value in arrays.items()}


def state_part(arrays, prefix: str, names) -> dict:
    """The arrays ``names`` of a stored fit filed under ``prefix`` (see :func:`prefixed`),
    without it; BadInputError (one line) naming the first one ``arrays`` lacks."""
    out = {}
    for name in names:
        key = prefix + name
        if key not in arrays:
            raise BadInputError(f"artifact arrays lack {key!r}")
        out[name] = np.asarray(arrays[key])
    return out


def check_predictor(estimator) -> BasePredictor:
    """``estimator`` itself when it is a predictor object; UsageError otherwise (e.g. a
    method name: build the object with ``make_predictor(name, **params)``)."""
    if not isinstance(estimator, BasePredictor):
        raise UsageError(f"expected a predictor object (make_predictor(...)), got "
                         f"{type(estimator).__name__}")
    return estimator


def clone(estimator: BasePredictor) -> BasePredictor:
    """A fresh, unfitted predictor of the same class with the same parameters (its
    ``method`` name travels with them, and each part, such as a blend's halves, is
    cloned too); raises UsageError for anything else."""
    check_predictor(estimator)
    return _copy(estimator)


def _is_part(value) -> bool:
    """Whether a parameter's value is an estimator of its own (a part of a composite)."""
    return hasattr(value, "get_params") and not isinstance(value, type)


def _copy(obj):
    """A fresh, unfitted copy of an estimator object, its parts copied too."""
    return type(obj)(**{k: _copy(v) if _is_part(v) else v for k, v in obj.get_params().items()})


def flat_params(estimator) -> dict:
    """Every parameter of ``estimator`` as a plain value: its own, and each part's as
    ``part__name`` (recursively), as scikit-learn names them. What identifies a
    configuration in a key, an artifact or a table of what ``--param`` changed.

    >>> from benchpress.predict import make_predictor
    >>> flat = flat_params(make_predictor("default"))
    >>> flat["low_rank__rank"], flat["low_rank__method"], "low_rank" in flat
    (4, 'side', False)
    """
    out = {}
    for name, value in estimator.get_params().items():
        if _is_part(value):
            out.update({f"{name}__{k}": v for k, v in flat_params(value).items()})
        else:
            out[name] = value
    return out


def set_params(obj, params: dict):
    """Set parameters of ``obj`` (an estimator or a part of one): a name of its own, a
    part's as ``part__name``, or a part's by its name alone when exactly one part has it
    (``n_starts`` of the default is its low-rank half's). Unknown or ambiguous names raise
    UsageError naming them. Returns ``obj``."""
    own = dict(obj.get_params())
    parts = {k: v for k, v in own.items() if _is_part(v)}
    for name, value in params.items():
        if name in own:
            setattr(obj, name, value)
            continue
        head, sep, rest = name.partition("__")
        if sep and head in parts:
            set_params(parts[head], {rest: value})
            continue
        owners = [p for p, part in parts.items() if name in flat_params(part)]
        if len(owners) != 1:
            taken = sorted([k for k in own if k not in parts]
                           + [f"{p}__{k}" for p, part in parts.items() for k in flat_params(part)])
            why = "no" if not owners else f"ambiguous (parts {owners}) as a"
            raise UsageError(f"{type(obj).__name__} has {why} parameter {name!r}; it takes "
                             f"{taken}")
        set_params(parts[owners[0]], {name: value})
    return obj
