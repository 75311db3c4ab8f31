"""Fits made once: a fitted clone of a predictor kept by what it was fitted on.

The temporal yardstick fits the predictor on the models released before each monthly
cutoff, and calibrates its intervals on the months before that cutoff, each fitted on the
models released before it. Month after month these are the same fits: the calibration
group of month m at the cutoff after m trains on exactly the rows the cutoff m itself
trained on. A :class:`FitMemo` hands out the fit already made when the content matches
(the predictor's parameters, the score matrix to the bit, the scales and the covariates),
and fits a clone otherwise; a fit is deterministic, so the numbers are the same with or
without it. It keeps the last ``max_fits`` fits (and their interval supports).

>>> import numpy as np
>>> from benchpress.predict import make_predictor
>>> from benchpress.scales import BenchmarkScales
>>> Y = np.arange(24.0).reshape(6, 4) + np.eye(6, 4)
>>> sc = BenchmarkScales(np.array(["percent"] * 4), np.zeros(4), np.full(4, 100.0))
>>> memo = FitMemo()
>>> a = memo.fit(make_predictor("knn"), Y, sc)
>>> b = memo.fit(make_predictor("knn"), Y.copy(), sc)
>>> c = memo.fit(make_predictor("knn", k=2), Y, sc)
>>> (a is b, a is c, memo.hits, memo.misses)
(True, False, 1, 2)
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from benchpress.predict.estimator import BasePredictor, clone, flat_params

__all__ = ["FitMemo"]


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"\x00none")
            continue
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


class FitMemo:
    """Fitted clones of predictors, by content (see the module docstring).

    Parameters
    ----------
    max_fits : int, default 8
        Fits kept (the least recently used one goes first).

    Attributes
    ----------
    hits, misses : int
        Fits handed out again, and fits made.
    """

    def __init__(self, max_fits: int = 8):
        self.max_fits = int(max_fits)
        self.hits = self.misses = 0
        self._fits: OrderedDict = OrderedDict()

    def _key(self, predictor: BasePredictor, Y, scales, covariates) -> tuple:
        params = repr(sorted(flat_params(predictor).items()))  # a blend's parts by value
        return (type(predictor).__name__, predictor.method, params,
                _digest(np.asarray(Y, dtype=float), *scales.arrays(), covariates))

    def fit(self, predictor: BasePredictor, Y, scales, **extra) -> BasePredictor:
        """A clone of the unfitted ``predictor`` fitted on ``Y`` and ``scales`` (``extra``:
        the fit's keywords, i.e. ``covariates``), the one made before when it matches."""
        key = self._key(predictor, Y, scales, extra.get("covariates"))
        if key in self._fits:
            self.hits += 1
            self._fits.move_to_end(key)
            return self._fits[key][0]
        self.misses += 1
        fitted = clone(predictor).fit(Y, scales, **extra)
        self._fits[key] = [fitted, None]
        while len(self._fits) > self.max_fits:
            self._fits.popitem(last=False)
        return fitted

    def support(self, fitted: BasePredictor, make):
        """The interval support of a fit this memo made (``make(fitted)`` the first time;
        made anew for a fit it does not hold)."""
        for entry in self._fits.values():
            if entry[0] is fitted:
                if entry[1] is None:
                    entry[1] = make(fitted)
                return entry[1]
        return make(fitted)
