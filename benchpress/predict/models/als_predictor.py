"""The ALS score predictor: scale transform + bias-ALS ensemble (+ pairwise regression).

:class:`ALSPredictor` is the low-rank half of every default since the BenchPress paper; its
named configurations ("published", "als4", ...) and the other methods are registered in
:mod:`benchpress.predict.factory`.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from benchpress.errors import BadInputError, UsageError, import_extra
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.estimator import BasePredictor, check_scores, prefixed, state_part
from benchpress.predict.models.als import ALSConfig
from benchpress.predict.models.ensemble import ALSEnsemble
from benchpress.predict.models.ensemble import STATE_ARRAYS as ENSEMBLE_ARRAYS
from benchpress.predict.models.regression import PairwiseRegression
from benchpress.predict.models.regression import STATE_ARRAYS as REGRESSION_ARRAYS
from benchpress.predict.models.sparse_als import use_sparse
from benchpress.predict.transform import STATE_ARRAYS as TRANSFORM_ARRAYS
from benchpress.predict.transform import BenchmarkScales, ScaleTransform
from benchpress.predict.size_limits import LIMITS

__all__ = ["ALSPredictor", "SOLVERS"]


_ALS = ALSConfig()  # the defaults of the bias-ALS hyperparameters
#: The solvers of `ALSPredictor` (its ``solver`` parameter).
SOLVERS = ("auto", "dense", "cells")


class ALSPredictor(BasePredictor):
    """Logit/z-score transform followed by an ensemble of bias-ALS fits.

    Parameters
    ----------
    rank, regularization, bias_regularization, n_iter, init_scale, n_starts, random_state
        The bias-ALS hyperparameters, documented (with their defaults) once in
        :class:`~benchpress.predict.models.als.ALSConfig`; the starts are averaged in z units,
        before the inverse transform.
    logit_rule : {"percent", "percent_or_0_100", "none"}, default "percent"
        Which benchmarks are logit-transformed (see :data:`transform.LOGIT_RULES`).
    eps : float, default 0.5
        Logit clipping margin, percentage points.
    spread_prior : float, default 0.0
        Each logit benchmark's spread is shrunk toward the pooled spread as if this many
        more models had shown it (:class:`~benchpress.predict.transform.ScaleTransform`;
        :data:`~benchpress.predict.factory.SPREAD_PRIOR` in the default). 0: each benchmark's own spread.
    z_bound : float, default 0.0
        Standardized scores beyond this many standard deviations count as that many
        (:data:`~benchpress.predict.factory.Z_BOUND` in the default; 0: none).
    regression_weight : float, default 0.0
        Weight of :class:`~benchpress.predict.models.regression.PairwiseRegression` in a z-unit
        blend ``(1 - w) * ALS + w * regression`` (cells the regression cannot predict
        keep the ALS value). 0 = pure ALS.
    regression_power : float, default 4.0
        Regression votes are weighted by ``r2 ** regression_power``.
    solver : {"auto", "dense", "cells"}, default "auto"
        How the fit is computed (the numbers agree to ~1e-8 either way). "dense": every
        cell in (n_starts, n_models, n_benchmarks) arrays (:mod:`~benchpress.predict.models.als`);
        "cells": on the observed cells only, completions made in row blocks
        (:mod:`~benchpress.predict.models.sparse_als`), for a matrix too large for the dense
        arrays; "auto": "cells" for a matrix of at least
        ``LIMITS.cells_solver_min_cells`` cells (:func:`~benchpress.predict.models.sparse_als.use_sparse`),
        else "dense". A predictor without a cells solver (`cells_path` False: side
        information) is always dense and refuses "cells".
    method : str, default "als"
        The name this configuration goes by in output (``make_predictor("default")``
        sets "default"); it travels with :func:`~benchpress.predict.estimator.clone`.

    Attributes
    ----------
    solver_ : {"dense", "cells"}
        The solver this fit used (`solver`, with "auto" decided by the matrix's size).
    transform_ : ScaleTransform
    ensemble_ : ALSEnsemble
    regression_ : PairwiseRegression or None
    """

    def __init__(self, rank: int = _ALS.rank, *, regularization: float = _ALS.regularization,
                 bias_regularization: float | None = _ALS.bias_regularization,
                 n_iter: int = _ALS.n_iter, init_scale: float = _ALS.init_scale,
                 n_starts: int = _ALS.n_starts, random_state: int | None = _ALS.random_state,
                 logit_rule: str = "percent", eps: float = 0.5, spread_prior: float = 0.0,
                 z_bound: float = 0.0, regression_weight: float = 0.0,
                 regression_power: float = 4.0, solver: str = "auto", method: str = "als"):
        self.rank = rank
        self.regularization = regularization
        self.bias_regularization = bias_regularization
        self.n_iter = n_iter
        self.init_scale = init_scale
        self.n_starts = n_starts
        self.random_state = random_state
        self.logit_rule = logit_rule
        self.eps = eps
        self.spread_prior = spread_prior
        self.z_bound = z_bound
        self.regression_weight = regression_weight
        self.regression_power = regression_power
        self.solver = solver
        self.method = method

    def als_config(self) -> ALSConfig:
        """This predictor's bias-ALS hyperparameters."""
        return ALSConfig(**{f.name: getattr(self, f.name) for f in fields(ALSConfig)})

    def _ensemble(self) -> ALSEnsemble:
        return ALSEnsemble(self.als_config())

    def make_transform(self, scales: BenchmarkScales) -> ScaleTransform:
        """This predictor's z space (logit rule, margin, spread prior, bound), unfitted."""
        return ScaleTransform.from_scales(scales, logit_rule=self.logit_rule, eps=self.eps,
                                          spread_prior=self.spread_prior, z_bound=self.z_bound)

    def state(self) -> tuple[dict, dict]:
        """``(arrays, meta)`` of the fitted predictor, no pickle: the fitted parts' arrays
        filed by part (``transform_``, ``ensemble_``, ``regression_``; the training rows'
        regression completion ``regression_z`` on the dense path), and ``meta``
        (JSON-ready): class, method, parameters, whether there is a regression and (only
        then, so that the stored fits of small matrices stay as they were) whether the fit
        used the cells solver. The training matrix is not in it; :meth:`from_state` takes
        it back."""
        self._fitted()
        arrays = {**prefixed("transform_", self.transform_.state()),
                  **prefixed("ensemble_", self.ensemble_.state())}
        sparse = self.uses_cells()
        if self.regression_ is not None:
            arrays.update(prefixed("regression_", self.regression_.state()))
            if not sparse:
                arrays["regression_z"] = np.asarray(self.regression_z_)
        meta = {"class": type(self).__name__, "method": self.method,
                "params": self.get_params(), "regression": self.regression_ is not None}
        if sparse:
            meta["sparse"] = True
        return arrays, meta

    @classmethod
    def from_state(cls, params: dict, arrays, meta: dict, Y, scales: BenchmarkScales):
        """The fitted predictor of :meth:`state` (``arrays``, ``meta``) with all its
        parameters ``params``, on its training matrix ``Y`` (n_models, n_benchmarks;
        (0, n_benchmarks) for a fit of the cells solver restored without its training
        rows, which folds in new models only) and ``scales``. Nothing is refitted: every
        fitted array is taken as saved, so the predictions are the saved fit's to the bit.
        BadInputError (one line) for arrays that are missing or do not fit ``Y``."""
        out = cls(**params)
        out.Y_, out.scales_ = np.array(Y, dtype=float, copy=True), scales
        out.transform_ = ScaleTransform.from_state(
            state_part(arrays, "transform_", TRANSFORM_ARRAYS), scales,
            logit_rule=out.logit_rule, eps=out.eps, spread_prior=out.spread_prior,
            z_bound=out.z_bound)
        out.ensemble_ = ALSEnsemble.from_state(state_part(arrays, "ensemble_", ENSEMBLE_ARRAYS),
                                               out.als_config())
        sparse = bool(meta.get("sparse"))
        out.regression_ = None
        if meta.get("regression"):
            out.regression_ = PairwiseRegression.from_state(
                state_part(arrays, "regression_", REGRESSION_ARRAYS), power=out.regression_power)
            out.regression_z_ = None if sparse else state_part(arrays, "regression_",
                                                                ("z",))["z"]
        out.solver_ = "cells" if sparse else "dense"
        out.train_z_ = None  # without training rows, nothing to hold
        n_m, n_b = out.Y_.shape
        if out.ensemble_.V_.shape[1] != n_b or out.ensemble_.U_.shape[1] != n_m:
            raise BadInputError(f"artifact arrays do not match its matrix's shape {out.Y_.shape}")
        if sparse and n_m:
            sp = import_extra("scipy.sparse")  # here: slow to import, and not in the core
            r, c = np.nonzero(~np.isnan(out.Y_))
            out.train_z_ = sp.csr_matrix(
                (out.transform_.transform(out.Y_[r, c], cols=c), (r, c)), shape=out.Y_.shape)
        return out

    def _fit(self, Y: np.ndarray, scales: BenchmarkScales) -> None:
        if not 0.0 <= self.regression_weight <= 1.0:
            raise UsageError(f"regression_weight must lie in [0, 1], got {self.regression_weight}")
        self.solver_ = self._choose_solver(Y)
        if self.solver_ == "cells":
            return self._fit_cells(Y, scales)
        self.transform_ = self.make_transform(scales).fit(Y)
        Z = self.transform_.transform(Y)
        self.ensemble_ = self._ensemble().fit(Z, sparse=False)
        self.regression_ = None
        if self.regression_weight > 0:
            self.regression_ = PairwiseRegression(power=self.regression_power).fit(Z)
            self.regression_z_ = self.regression_.predict(Z)

    #: Whether this predictor has the cells solver; subclasses that read dense
    #: per-start completions (side information) set False.
    cells_path = True

    def _choose_solver(self, Y: np.ndarray) -> str:
        """The solver of a fit of `Y` (n_models, n_benchmarks): `solver`, with "auto"
        decided once, here, by the matrix's size (:func:`use_sparse`)."""
        if self.solver not in SOLVERS:
            raise UsageError(f"solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")
        if self.solver == "cells" and not self.cells_path:
            raise UsageError(f"method '{self.method}' has no cells solver (it reads dense "
                             "per-start completions): use solver 'auto' or 'dense'")
        if self.solver != "auto":
            return self.solver
        return "cells" if self.cells_path and use_sparse(*Y.shape) else "dense"

    def _fit_cells(self, Y: np.ndarray, scales: BenchmarkScales) -> None:
        """The sparse path (:func:`~benchpress.predict.models.sparse_als.use_sparse`):
        transform, ensemble and regression fitted on the observed cells only."""
        import scipy.sparse as sp  # here, not at the top: slow to import (a predict needs none)
        r, c = np.nonzero(~np.isnan(Y))
        self.transform_ = self.make_transform(scales).fit_cells(Y[r, c], c, Y.shape[1])
        z = self.transform_.transform(Y[r, c], cols=c)
        self.ensemble_ = self._ensemble().fit_cells(r, c, z, Y.shape)
        self.regression_ = self.regression_z_ = None
        self.train_z_ = sp.csr_matrix((z, (r, c)), shape=Y.shape)   # z of the observed cells
        if self.regression_weight > 0:
            self.regression_ = PairwiseRegression(power=self.regression_power).fit_cells(
                r, c, z, Y.shape)

    def _rows_z(self, rows) -> np.ndarray:
        """Sparse path: per-start blended completion of models ``rows``, (S, n_rows,
        n_benchmarks), z units."""
        Zs = self.ensemble_.rows_starts(rows)
        if self.regression_ is None:
            return Zs
        return self._blend(Zs, self._regression_rows(rows))

    def _regression_rows(self, rows) -> np.ndarray:
        """Sparse path: the pairwise regression's completion of training models ``rows``
        from their own observed cells, (n_rows, n_benchmarks), z units."""
        Zt = self.train_z_[rows]
        M = Zt.copy()
        M.data[:] = 1.0  # the observed-cell mask, same sparsity
        return self.regression_.predict_csr(Zt, M)

    def _row_blocks(self, rows):
        rows = np.asarray(rows, dtype=np.int64)
        per_row = self.n_starts * max(self.Y_.shape[1], 1)
        step = max(1, LIMITS.completion_block_floats // per_row)
        return [rows[k:k + step] for k in range(0, rows.size, step)]

    def complete_rows(self, rows, *, keep_observed: bool = True) -> np.ndarray:
        """Rows ``rows`` of :meth:`complete`, shape (n_rows, n_benchmarks), made in row
        blocks on the sparse path (memory ~ n_starts * block * n_benchmarks floats)."""
        self._fitted()
        if not self.uses_cells():
            return super().complete_rows(rows, keep_observed=keep_observed)
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((rows.size, self.Y_.shape[1]))
        k = 0
        with single_blas_thread():
            for block in self._row_blocks(rows):
                out[k:k + block.size] = self.transform_.to_scores(self._rows_z(block).mean(axis=0))
                k += block.size
        if keep_observed:
            Y = self.Y_[rows]
            out = np.where(np.isnan(Y), out, Y)
        return out

    def predict_cells(self, rows, cols, *, return_spread: bool = False):
        """Predictions (score units) at cells ``(rows, cols)`` (n_cells,), as
        ``complete(keep_observed=False)[rows, cols]``; on the sparse path computed at
        those cells only (and the start spread too with ``return_spread``)."""
        self._fitted()
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        if not self.uses_cells():
            out = self.complete(keep_observed=False)[rows, cols]
            return (out, self.complete_spread()[rows, cols]) if return_spread else out
        step = max(1, LIMITS.completion_block_floats // self.n_starts)
        if rows.size > step:  # bounded memory: cells in chunks
            parts = [self.predict_cells(rows[k:k + step], cols[k:k + step],
                                        return_spread=return_spread)
                     for k in range(0, rows.size, step)]
            if not return_spread:
                return np.concatenate(parts)
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        Zs = self.ensemble_.cells_starts(rows, cols)
        if self.regression_ is not None:
            order = np.argsort(rows, kind="stable")
            reg = np.empty(rows.size)
            bounds = np.searchsorted(rows[order], [b[0] for b in self._row_blocks(
                np.unique(rows))] + [np.iinfo(np.int64).max])
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                sel = order[lo:hi]
                if sel.size == 0:
                    continue
                u, inv = np.unique(rows[sel], return_inverse=True)
                reg[sel] = self._regression_rows(u)[inv, cols[sel]]
            Zs = self._blend(Zs, reg)
        out = self.transform_.to_scores_at(Zs.mean(axis=0), cols)
        if not return_spread:
            return out
        per = self.transform_.to_scores_at(Zs.ravel(), np.tile(cols, Zs.shape[0]))
        return out, per.reshape(Zs.shape).std(axis=0)

    def _blend(self, Z_als: np.ndarray, Z_reg: np.ndarray | None) -> np.ndarray:
        if self.regression_ is None:
            return Z_als
        w = self.regression_weight
        return np.where(np.isnan(Z_reg), Z_als, (1.0 - w) * Z_als + w * Z_reg)

    def _predict(self) -> np.ndarray:
        if self.uses_cells():
            return self.complete_rows(np.arange(self.Y_.shape[0]), keep_observed=False)
        reg = self.regression_z_ if self.regression_ is not None else None
        return self.transform_.to_scores(self._blend(self.ensemble_.predict(), reg))

    def complete_spread(self) -> np.ndarray:
        """Per-cell std of the starts' predictions in score units, (n_models, n_benchmarks).

        A measure of fit instability for interval work (it is not a calibrated error).
        """
        self._fitted()
        if self.uses_cells():
            out = np.empty(self.Y_.shape)
            k = 0
            for block in self._row_blocks(np.arange(self.Y_.shape[0])):
                out[k:k + block.size] = self.transform_.to_scores(self._rows_z(block)).std(axis=0)
                k += block.size
            return out
        reg = self.regression_z_ if self.regression_ is not None else None
        Zs = self._blend(self.ensemble_.predict_starts(), reg)
        return self.transform_.to_scores(Zs).std(axis=0)

    def fold_in(self, scores, *, refit: bool | None = None, return_spread: bool = False):
        """Predict full rows for new models from their known scores.

        Parameters
        ----------
        scores : array_like, shape (n_benchmarks,) or (n_rows, n_benchmarks)
            Known scores (score units), NaN where unknown.
        refit : bool, optional
            None (default, the cheapest way, as on every predictor) or False: solve each
            new model's bias and factors against the fitted benchmark parameters of every
            start (fast; the training fit is unchanged). True: refit a copy with the rows
            appended.
        return_spread : bool
            Also return the per-cell std over starts (score units); fold-in only.

        Returns
        -------
        ndarray, same shape as ``scores`` (and the spread if requested).
        """
        self._fitted()
        if refit:
            if return_spread:
                raise UsageError("return_spread is only available with refit=False")
            return super().fold_in(scores, refit=True)
        S = np.asarray(scores, dtype=float)
        one = S.ndim == 1
        S2 = check_scores(np.atleast_2d(S), self.scales_)
        if self.uses_cells() and S2.shape[0] > 1:  # in row blocks
            parts = [self._fold_in_rows(S2[b], return_spread)
                     for b in self._row_blocks(np.arange(S2.shape[0]))]
            out = np.vstack([p[0] for p in parts])
            spread = np.vstack([p[1] for p in parts]) if return_spread else None
        else:
            out, spread = self._fold_in_rows(S2, return_spread)
        if not return_spread:
            return out[0] if one else out
        return (out[0], spread[0]) if one else (out, spread)

    def _fold_in_rows(self, S2: np.ndarray, spread: bool):
        Z_new = self.transform_.transform(S2)
        with single_blas_thread():
            reg = self.regression_.predict(Z_new) if self.regression_ is not None else None
            Zs = self._blend(self.ensemble_.fold_in_starts(Z_new), reg)
        out = self.transform_.to_scores(Zs.mean(axis=0))
        return out, (self.transform_.to_scores(Zs).std(axis=0) if spread else None)
