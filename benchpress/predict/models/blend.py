"""A blend: a low-rank half and the nearest models, mixed cell by cell by a gate.

A low-rank completion (:class:`~benchpress.predict.models.als_predictor.ALSPredictor`, or
side information, :class:`~benchpress.predict.models.side_info.SideInfoPredictor`) is best
on models with many scores and where the registry holds nothing close to a model. A model
known from a few scores is another matter: its fold-in is shrunk toward the population,
and new releases sit above it, while the registry is full of near-siblings (effort
levels, previews, sizes of one family). :class:`NeighbourBlend` composes the two as
estimator objects given to it (scikit-learn's meta-estimator style):

* ``low_rank``: the low-rank half, fitted on the scores (and the models' covariates, when
  it takes them);
* ``neighbours``: :class:`NeighbourMix`, the registered models searched in the low-rank
  half's z space: the average of the nearest ones, each shifted by its gap to the model,
  and a regression of each benchmark on the model's known ones over the models near it,
  with a release-date term (how a model released then differs from the earlier ones with
  the same known scores; a model given without a date counts as released on the
  registry's newest date, the normal case of a forecast);
* ``gate``: :class:`~benchpress.predict.models.gate.Gate`, the softmax weights of the
  parts (the low-rank half with the model's metadata and without, the nearest models, the
  regression) from what each cell shows before its truth.

Rows with more than :data:`MANY_KNOWN` scores (a registered model's completion, the
paper's folds) are mixed as before the gate: the nearest models at
:data:`MANY_KNOWN_WEIGHT`, no regression. The spread of a cell (what its interval grows
with) adds the parts' weighted disagreement to the low-rank half's.

On a matrix that takes the cells solver (thousands of models: the whole registry), the
registered models' own completions are the low-rank half's alone (a neighbour search and
a local regression for each of them would cost more than the fit), while a new model is
still mixed with its nearest registered models: that is where a leaderboard's new
releases find their siblings (on the whole registry's later releases the low-rank half
alone was 1.3x the nearest models' error; docs/results/forecasts.md).

``make_predictor("default")`` is side information under the nearest models;
``make_predictor("blend")`` the rank-4 ALS under them (what the default gives a model
without metadata, to the bit).
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError
from benchpress.predict.estimator import (BasePredictor, check_scores, clone, flat_params,
                                          set_params)
from benchpress.predict.models.covariates import check_covariates, covariate_dates
from benchpress.predict.models.gate import Gate, gate_features, newness, trend_features
from benchpress.predict.models.knn import KNNModels, local_regression, nearness
from benchpress.predict.models.sparse_als import use_sparse
from benchpress.predict.size_limits import LIMITS

__all__ = ["NeighbourBlend", "NeighbourMix", "MANY_KNOWN", "MANY_KNOWN_WEIGHT", "REG_ALPHA",
           "DATE_ALPHA"]

#: Rows with more known scores than this are mixed without the gate (module docstring).
MANY_KNOWN = 8
#: ... with the nearest models at this weight (chosen on our own folds, seeds 1001-1003).
MANY_KNOWN_WEIGHT = 0.35
#: The local regression's ridge penalty on its slopes (chosen on the temporal yardstick's
#: early cutoffs, 2026-12-05).
REG_ALPHA = 0.03
#: ... and on its release-date term (z units per year).
DATE_ALPHA = 0.3


class NeighbourMix:
    """The nearest-models part of a blend: not a predictor, the registered models searched
    in the low-rank half's z space.

    Parameters
    ----------
    k, min_shared : int
        Neighbours per benchmark, and the scores a neighbour must share with the row.
    reg_alpha, reg_bandwidth : float
        The local regression's ridge penalty and kernel width (z units).
    date_alpha : float or None
        Ridge penalty of the regression's release-date term; None: no date term.

    Attributes
    ----------
    models_ : KNNModels or None
        The registered models (the training rows); None for a fit on no rows.
    dates_ : ndarray (n_models,) or None
        Their release dates (years; NaN: undated).
    newest_ : float
        The newest of them (NaN: none dated): a new model's date when none is given.
    benchmark_models_ : ndarray (n_benchmarks,)
        How many registered models scored each benchmark.
    """

    def __init__(self, k: int = 5, min_shared: int = 3, *, reg_alpha: float = REG_ALPHA,
                 reg_bandwidth: float = 0.5, date_alpha: float | None = DATE_ALPHA):
        self.k = k
        self.min_shared = min_shared
        self.reg_alpha = reg_alpha
        self.reg_bandwidth = reg_bandwidth
        self.date_alpha = date_alpha

    def get_params(self) -> dict:
        """The constructor's arguments."""
        return {name: getattr(self, name) for name in
                ("k", "min_shared", "reg_alpha", "reg_bandwidth", "date_alpha")}

    def set_params(self, **params) -> "NeighbourMix":
        """Change constructor arguments; an unknown name raises UsageError."""
        return set_params(self, params)

    def fit(self, Y: np.ndarray, scales, transform, *, dates=None) -> "NeighbourMix":
        """Hold the training rows ``Y`` (n_models, n_benchmarks, score units), in the
        low-rank half's fitted ``transform``, with their release ``dates`` (years, NaN:
        undated; None: none known)."""
        if not (int(self.k) >= 1 and float(self.reg_alpha) >= 0.0
                and float(self.reg_bandwidth) > 0.0
                and (self.date_alpha is None or float(self.date_alpha) > 0.0)):
            raise UsageError(f"k must be >= 1, reg_alpha >= 0, reg_bandwidth > 0 and "
                             f"date_alpha > 0 (or None), got {self.k}, {self.reg_alpha}, "
                             f"{self.reg_bandwidth} and {self.date_alpha}")
        self.transform_ = transform
        self.models_ = None
        if Y.shape[0]:
            self.models_ = KNNModels(int(self.k), min_shared=int(self.min_shared), offset=True,
                                     weighting="distance",
                                     # the nearest models per benchmark are looked for
                                     # among this many nearest models
                                     candidates=LIMITS.knn_candidates).fit(Y, scales, transform=transform)
        self.dates_ = None if dates is None or self.date_alpha is None else \
            np.asarray(dates, dtype=float)
        known = self.dates_ is not None and np.isfinite(self.dates_).any()
        self.newest_ = float(np.nanmax(self.dates_)) if known else np.nan
        self.benchmark_models_ = (~np.isnan(Y)).sum(axis=0)
        return self

    def answers(self, Zq: np.ndarray, *, query_dates=None, exclude=None,
                rows=None) -> dict:
        """What the registered models say of query rows ``Zq`` (n_rows, n_benchmarks, z
        units, NaN unknown): ``neighbours`` (the shifted average) and ``regression`` with
        its ``noise`` (each (n_rows, n_benchmarks), NaN where it has no answer), and per
        row ``nearest`` and ``near`` ((n_rows, 2): within 0.3 and 0.6), the gate's view of
        the neighbourhood. ``query_dates`` (n_rows,; NaN: the newest registered date),
        ``exclude`` (a registered row that is not its own neighbour, -1 none); ``rows``
        (bool (n_rows,)): the rows the regression and the neighbourhood are asked for
        (default all; the others get NaN and no neighbours near)."""
        Z = self.models_.Z_
        n = Zq.shape[0]
        Zk = self.models_.predict_z(Zq, exclude=exclude, fallback=False)
        out = {"neighbours": Zk, "regression": np.full(Zq.shape, np.nan),
               "noise": np.full(Zq.shape, np.nan), "nearest": np.full(n, np.inf),
               "near": np.zeros((n, 2), dtype=np.int64)}
        sel = np.arange(n) if rows is None else np.flatnonzero(rows)
        if sel.size == 0:
            return out
        tq = None
        if self.dates_ is not None and np.isfinite(self.newest_):
            tq = np.full(sel.size, self.newest_) if query_dates is None else \
                np.where(np.isfinite(query_dates[sel]), query_dates[sel], self.newest_)
        ex = None if exclude is None else np.asarray(exclude)[sel]
        out["regression"][sel], out["noise"][sel] = local_regression(
            Zq[sel], Z, alpha=float(self.reg_alpha), bandwidth=float(self.reg_bandwidth),
            exclude=ex, dates=self.dates_ if tq is not None else None, query_dates=tq,
            date_alpha=float(self.date_alpha or 0.0))
        out["nearest"][sel], out["near"][sel] = nearness(Zq[sel], Z,
                                                         min_shared=int(self.min_shared),
                                                         exclude=ex)
        return out


class NeighbourBlend(BasePredictor):
    """A low-rank half and the nearest models, mixed in z units by a gate.

    Parameters
    ----------
    low_rank : BasePredictor
        The low-rank half, unfitted (an :class:`ALSPredictor` or a
        :class:`SideInfoPredictor`; each fit is a clone). Its z space is the blend's.
    neighbours : NeighbourMix
        The nearest-models half, unfitted.
    gate : Gate
        How the parts are weighed (:mod:`benchpress.predict.models.gate`).
    method : str
        The name in output (``make_predictor("default")``: "default").

    Attributes
    ----------
    low_rank_ : BasePredictor
        The fitted low-rank half. On a matrix that takes the cells solver, which side
        information does not have, it is the same ALS without the covariates.
    neighbours_ : NeighbourMix
        The fitted nearest-models half.
    """

    cells_path = True  # (by dropping the covariates where the low-rank half has no cells path)
    fold_in_reads_rows = True  # a new model's nearest models are the training rows

    def __init__(self, low_rank=None, neighbours=None, gate=None, *, method: str = "blend"):
        self.low_rank = low_rank
        self.neighbours = neighbours
        self.gate = gate
        self.method = method

    @property
    def accepts_covariates(self) -> bool:
        """Always: the release dates in the covariates are the regression's date term (and
        a low-rank half that takes covariates gets them all)."""
        return True

    # -- fit -------------------------------------------------------------------------
    def fit(self, Y, scales, covariates=None) -> "NeighbourBlend":
        """Fit on scores ``Y`` (n_models, n_benchmarks) and optional ``covariates``
        (n_models, n_features, :func:`~benchpress.predict.models.covariates.
        model_covariates`: the release date first)."""
        if self.low_rank is None or self.neighbours is None or self.gate is None:
            raise UsageError("a blend needs its parts: low_rank, neighbours and gate "
                             "(make_predictor('default') builds them)")
        X = check_covariates(covariates, np.shape(Y)[0]) if np.ndim(Y) == 2 else None
        self._covariates = X
        return super().fit(Y, scales)

    def _fit(self, Y: np.ndarray, scales) -> None:
        self.gate.matrix()  # (its shape checked before any work)
        low = clone(self.low_rank)
        X = self._covariates
        auto = low.get_params().get("solver", "auto") == "auto"
        cells = use_sparse(*Y.shape) if auto \
            else low.get_params()["solver"] == "cells"
        if cells and not low.cells_path:  # the same ALS on the cells, without covariates
            from benchpress.predict.models.als_predictor import ALSPredictor

            low = ALSPredictor(**{k: v for k, v in low.get_params().items()
                                  if k in ALSPredictor._param_names()})
        takes = getattr(low, "accepts_covariates", False) and X is not None
        self._hold(low.fit(Y, scales, **({"covariates": X} if takes else {})), Y, scales,
                   covariate_dates(X))

    def _hold(self, low_rank_, Y, scales, dates) -> None:
        """Around a fitted low-rank half: the nearest models (the rows ``Y`` in its z
        space, with their release ``dates``)."""
        self.low_rank_ = low_rank_
        self.solver_ = getattr(low_rank_, "solver_", "dense")
        self.neighbours_ = NeighbourMix(**self.neighbours.get_params()).fit(
            Y, scales, low_rank_.transform_, dates=dates)
        self._training = None

    @property
    def mixes_registered_(self) -> bool:
        """Whether the registered models' own completions are mixed too: not on the cells
        solver, where they are the low-rank half's (new models are mixed either way)."""
        return self.neighbours_.models_ is not None and not self.low_rank_.uses_cells()

    @classmethod
    def from_fitted_half(cls, blend: "NeighbourBlend", low_rank_, Y, scales, *, dates=None,
                         covariates=None) -> "NeighbourBlend":
        """The fit of ``blend`` (its parameters) around an already fitted low-rank half
        (a stored one, :mod:`benchpress.predict.state`): nothing is refitted, the nearest
        models are the rows ``Y`` (n_models, n_benchmarks) with their release ``dates``;
        ``covariates`` are kept for a refit."""
        out = clone(blend)
        out.Y_, out.scales_, out._covariates = check_scores(Y, scales), scales, covariates
        out._hold(low_rank_, out.Y_, scales, dates)
        return out

    # -- stored fits (:mod:`benchpress.predict.state`) ---------------------------------------
    def state(self) -> tuple[dict, dict]:
        """``(arrays, meta)`` of the fitted blend: the low-rank half's (its
        :meth:`state`), and the nearest models' release dates (``blend_dates``; the
        nearest models themselves are the training rows, which :meth:`from_state` takes
        back). ``meta`` names the blend (class, method, its parameters flat,
        :func:`~benchpress.predict.estimator.flat_params`) and the half's class."""
        self._fitted()
        arrays, meta = self.low_rank_.state()
        meta = {**meta, "class": type(self).__name__, "method": self.method,
                "params": flat_params(self), "low_rank_class": type(self.low_rank_).__name__}
        if self.neighbours_.dates_ is not None:
            arrays["blend_dates"] = np.asarray(self.neighbours_.dates_, dtype=float)
        return arrays, meta

    @classmethod
    def from_state(cls, params: dict, arrays, meta: dict, Y, scales) -> "NeighbourBlend":
        """The fitted blend of :meth:`state` with its parameters ``params`` (its parts
        unfitted, as ``get_params()`` holds them), on its training matrix ``Y``: the
        low-rank half restored as saved (its own ``from_state``), the nearest models
        ``Y`` in its z space. Nothing is refitted."""
        blend = cls(**params)
        low = clone(blend.low_rank)
        kind = meta.get("low_rank_class", type(low).__name__)
        if kind != type(low).__name__:  # a fit of the cells solver: the same ALS
            from benchpress.predict.models.als_predictor import ALSPredictor

            low = ALSPredictor(**{k: v for k, v in low.get_params().items()
                                  if k in ALSPredictor._param_names()})
        half = type(low).from_state(low.get_params(), arrays, {**meta, "class": kind}, Y,
                                    scales)
        dates = arrays.get("blend_dates")
        return cls.from_fitted_half(
            blend, half, half.Y_, scales,
            dates=None if dates is None else np.asarray(dates, dtype=float),
            covariates=getattr(half, "_raw_covariates", None))

    # -- what the rest of the package reads of a fitted predictor --------------------------
    @property
    def transform_(self):
        """The fitted z space (the low-rank half's)."""
        return self.low_rank_.transform_

    @property
    def interval_logit_rule_(self):
        return getattr(self.low_rank_, "interval_logit_rule_", None)

    @property
    def interval_eps_(self):
        return getattr(self.low_rank_, "interval_eps_", None)

    @property
    def extra_ranks(self):
        return getattr(self.low_rank, "extra_ranks", ())

    def make_transform(self, scales):
        """The blend's z space, unfitted (the low-rank half's)."""
        return self.low_rank.make_transform(scales)

    def uses_cells(self) -> bool:
        return hasattr(self, "low_rank_") and self.low_rank_.uses_cells()

    def covariates_apply(self, covariates) -> np.ndarray:
        """(n_rows,) bool: which rows the low-rank half folds in with ``covariates``."""
        self._fitted()
        if hasattr(self.low_rank_, "covariates_apply"):
            return self.low_rank_.covariates_apply(covariates)
        return np.zeros(len(covariates), dtype=bool)

    # -- the mix ---------------------------------------------------------------------------
    def _mix(self, P_low, spread_low, P_plain, Zq, n_known, *, metadata, query_dates=None,
             exclude=None):
        """Rows of the low-rank half (``P_low`` with its ``spread_low``; ``P_plain``
        without the metadata, None where it was not given) mixed with the nearest
        models: (predictions, spread), score units, (n_rows, n_benchmarks)."""
        mix = self.neighbours_
        if mix.models_ is None:
            return P_low, spread_low
        tf = self.transform_
        many = np.asarray(n_known) > MANY_KNOWN  # as before the gate: no regression
        ans = mix.answers(Zq, query_dates=query_dates, exclude=exclude, rows=~many)
        Zl = tf.transform(P_low)
        Zp = Zl if P_plain is None else tf.transform(P_plain)
        parts = np.stack([Zl, Zp, ans["neighbours"], ans["regression"]], axis=2)
        available = np.isfinite(parts)
        available[:, :, 1] &= np.asarray(metadata, dtype=bool)[:, None]
        F = gate_features(n_known, ans["nearest"], ans["near"][:, 0], ans["near"][:, 1],
                          mix.models_.Z_.shape[0], metadata, ans["noise"],
                          mix.benchmark_models_)
        W = self.gate.weights(F, available)
        if many.any():
            w = np.where(available[many][:, :, 2], MANY_KNOWN_WEIGHT, 0.0)
            W[many] = 0.0
            W[many, :, 0], W[many, :, 2] = 1.0 - w, w
        W = np.where(available.any(axis=2, keepdims=True), W, 0.0)
        new = newness(np.full(len(n_known), np.nan) if query_dates is None else query_dates,
                      mix.newest_)
        shift = np.where(many, 0.0, self.gate.offset(trend_features(n_known, new)))
        Zm = (W * np.nan_to_num(parts)).sum(axis=2) + shift[:, None]
        led = (W[:, :, 0] < 1.0) | (shift[:, None] != 0.0)  # not the low-rank half alone
        P = np.where(led, tf.to_scores(Zm), P_low)
        Pp = tf.to_scores(np.where(available, parts, Zm[:, :, None]).transpose(2, 0, 1))
        disagree = np.sqrt((W.transpose(2, 0, 1) * (Pp - P[None]) ** 2).sum(axis=0))
        spread = np.sqrt(spread_low * spread_low + np.where(led, disagree, 0.0) ** 2)
        return P, spread

    def _training_rows(self):
        """The training rows mixed (each without itself) and their spread, made once."""
        if self._training is None:
            low = self.low_rank_
            Y = self.Y_
            P_low = low.complete(keep_observed=False)
            spread = low.complete_spread() if hasattr(low, "complete_spread") else \
                np.zeros_like(P_low)
            n = Y.shape[0]
            with_cov = getattr(low, "covariates_", None) is not None
            self._training = self._mix(
                P_low, spread, None, self.transform_.transform(Y), (~np.isnan(Y)).sum(axis=1),
                metadata=np.full(n, with_cov), query_dates=self.neighbours_.dates_,
                exclude=np.arange(n))
        return self._training

    def _predict(self) -> np.ndarray:
        if not self.mixes_registered_:
            return self.low_rank_.complete(keep_observed=False)
        return self._training_rows()[0]

    def complete_spread(self) -> np.ndarray:
        """The low-rank half's spread with the parts' disagreement added in quadrature
        (score units, (n_models, n_benchmarks))."""
        self._fitted()
        if not self.mixes_registered_:
            return self.low_rank_.complete_spread()
        return self._training_rows()[1]

    def complete_rows(self, rows, *, keep_observed: bool = True) -> np.ndarray:
        if not self.mixes_registered_:
            return self.low_rank_.complete_rows(rows, keep_observed=keep_observed)
        return super().complete_rows(rows, keep_observed=keep_observed)

    def predict_cells(self, rows, cols, *, return_spread: bool = False):
        """Predictions (and spread) at cells ``(rows, cols)`` (n_cells,)."""
        self._fitted()
        if not self.mixes_registered_:
            return self.low_rank_.predict_cells(rows, cols, return_spread=return_spread)
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        P, spread = self._training_rows()
        return (P[rows, cols], spread[rows, cols]) if return_spread else P[rows, cols]

    def fold_in(self, scores, *, covariates=None, refit: bool | None = None,
                return_spread: bool = False):
        """Full rows of new models from their known ``scores`` ((n_benchmarks,) or
        (n_rows, n_benchmarks), NaN unknown) and optional ``covariates`` (n_rows,
        n_features: their metadata, :func:`~benchpress.predict.models.covariates.
        metadata_covariates`); ``refit=True`` refits a copy with the rows appended;
        ``return_spread`` also returns each cell's spread."""
        self._fitted()
        S = np.asarray(scores, dtype=float)
        one = S.ndim == 1
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        X = None if covariates is None else check_covariates(np.atleast_2d(covariates),
                                                             S2.shape[0])
        if refit:
            if return_spread:
                raise UsageError("return_spread is only available with refit=False")
            own = self._covariates
            Xall = None if X is None or own is None else np.vstack([own, X])
            twin = clone(self).fit(np.vstack([self.Y_, S2]), self.scales_, covariates=Xall)
            out = twin.complete(keep_observed=False)[self.Y_.shape[0]:]
            return out[0] if one else out
        low = self.low_rank_
        takes = getattr(low, "accepts_covariates", False)
        spread_of = hasattr(low, "complete_spread")
        kw = {"return_spread": True} if spread_of else {}
        res = low.fold_in(S2, **kw, **({"covariates": X} if takes and X is not None else {}))
        P_low, spread = res if spread_of else (res, np.zeros_like(res))
        used = self.covariates_apply(X) if X is not None else np.zeros(S2.shape[0], bool)
        P_plain = low.fold_in(S2) if used.any() else None
        P, spread = self._mix(P_low, spread, P_plain, self.transform_.transform(S2),
                              (~np.isnan(S2)).sum(axis=1), metadata=used,
                              query_dates=covariate_dates(X))
        if one:
            P, spread = P[0], spread[0]
        return (P, spread) if return_spread else P
