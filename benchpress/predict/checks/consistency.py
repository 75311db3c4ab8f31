"""A given score that the model's other given scores contradict.

A new model is folded in from the few scores someone typed or copied, and one wrong digit
(9.1 for 91) moves its whole predicted row. So each given score is also predicted from the
others alone (leave one out, one fold-in per given score, in one batch); the one furthest
from its prediction, in standardized units (:func:`check_space`: a percent benchmark's
logit, any other's score, divided by its spread over the registered models), is reported
when it lies more than :data:`CONTRADICTION_Z` of them away. It is still used as given:
the check says, it never drops.

On the temporal yardstick (fits before each cutoff, later models folded in from 3 or 5
revealed scores; README, "Forecasts that hold up") the threshold 3 notes 1% of the
reveals as published, and names the score in 63% of reveals where one percent score was
divided by ten (README, "A given score the others contradict";
``benchmarks/given_score_check.py``).
"""

from __future__ import annotations

import copy

import numpy as np

from benchpress.errors import NotFittedError
from benchpress.predict.intervals.calibration import fold_in_rows
from benchpress.predict.factory import make_predictor
from benchpress.predict.transform import ScaleTransform

__all__ = ["CONTRADICTION_Z", "MIN_GIVEN", "check_space", "leave_one_out", "most_contradicted"]

#: Standardized units between a given score and its prediction from the others beyond
#: which it is reported.
CONTRADICTION_Z = 3.0
#: Fewest given scores to check: with two, each is predicted from the other alone and
#: they contradict each other symmetrically.
MIN_GIVEN = 3


def check_space(Y, scales, fitted_transform: ScaleTransform | None = None) -> ScaleTransform:
    """The space the check measures in, whatever the method: the default's z space
    (:meth:`~benchpress.predict.models.als_predictor.ALSPredictor.make_transform` of
    ``make_predictor("default")``: a logit for percent scales, each benchmark's spread
    with the prior) without its bound, fitted on the training matrix ``Y`` (n_models,
    n_benchmarks; score units, NaN = missing) of ``scales``. A matrix without rows (a
    cells-solver fit loaded without them) measures in ``fitted_transform``, the
    predictor's own fitted z space, without its bound."""
    if np.shape(Y)[0] == 0:
        if fitted_transform is None:
            raise NotFittedError("a matrix without rows needs the predictor's fitted transform")
        unbounded = copy.copy(fitted_transform)
        unbounded.z_bound = 0.0
        return unbounded
    return make_predictor("default", z_bound=0.0).make_transform(scales).fit(Y)


def leave_one_out(predictor, transform, row, covariates=None) -> tuple[np.ndarray, np.ndarray]:
    """Each given score of ``row`` predicted from the others.

    Parameters
    ----------
    predictor : fitted predictor (``fold_in``)
    transform : ScaleTransform
        The space the distance is measured in (z units).
    row : ndarray (n_benchmarks,)
        Given scores, score units, NaN where not given.
    covariates : ndarray (n_features,) or None
        The model's covariate row, for predictors that take them.

    Returns
    -------
    expected : ndarray (n_benchmarks,)
        Each given score's prediction from the other given scores (score units); NaN
        where none was given, and everywhere with fewer than :data:`MIN_GIVEN`.
    z : ndarray (n_benchmarks,)
        ``z(given) - z(expected)`` in ``transform``'s units, NaN likewise.
    """
    row = np.asarray(row, dtype=float)
    expected = np.full(row.shape, np.nan)
    given = np.flatnonzero(~np.isnan(row))
    if given.size < MIN_GIVEN:
        return expected, expected.copy()
    S = np.repeat(row[None, :], given.size, axis=0)
    S[np.arange(given.size), given] = np.nan  # row i lacks the i-th given score
    cov = None if covariates is None else [covariates] * given.size
    P = fold_in_rows(predictor, S, cov)[0]
    expected[given] = P[np.arange(given.size), given]
    z = np.full(row.shape, np.nan)
    z[given] = (transform.transform(row[None, :])[0, given]
                - transform.transform(expected[None, :])[0, given])
    return expected, z


def most_contradicted(z: np.ndarray, threshold: float = CONTRADICTION_Z) -> int | None:
    """Index of the largest ``|z|`` if it exceeds ``threshold``, else None."""
    a = np.abs(np.asarray(z, dtype=float))
    if np.isnan(a).all():
        return None
    j = int(np.nanargmax(a))
    return j if a[j] > threshold else None
