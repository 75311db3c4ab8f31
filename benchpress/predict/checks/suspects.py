"""Suspect cells: registry values that the rest of their row and column contradict.

Eighteen sources bring their errors with them: a rate quoted as its complement (another
vendor's card gives FActScore's share of supported facts, 91.1, where the benchmark holds
a hallucination rate, 2.8), a fraction in a percent column, a dropped digit. This check
names such values for review; it never changes or drops one (reviewed verdicts do that,
``schemas/cell_reviews.csv``, applied by the store).

The space is the given-score check's (:func:`~benchpress.predict.checks.consistency.check_space`:
the default predictor's z space without its bound; a bounded percent benchmark's logit,
each benchmark divided by its spread over the registered models), each column turned to
its declared direction (``higher_is_better`` false: sign flipped), so that a model's
bias means "better" on every benchmark. There:

1. a robust fit: bias plus rank-``rank`` ALS (:func:`~benchpress.predict.models.als.fit_batched`)
   with Huber weights (``huber`` robust standard deviations of the residuals), so that a
   wrong value pulls its column and row little;
2. citation groups reversed as a whole (a vendor's card quoting the complement of a rate
   for five models): for each group of ``group_min`` or more cells of a bounded percent
   benchmark from one citation (source and reference URL), at most half the benchmark,
   the benchmark's bias and factors are refitted without the group, the group's cells
   predicted from that, and the group named when its values as given lie ``group_z`` or
   more standard deviations (root mean square) from the prediction while ``lower + upper
   - x`` lies ``group_ratio`` as far or closer. Named groups are left out, the space and
   the fit made again;
3. each cell predicted from the rest of its row and column: the model's bias and factors
   solved again without the cell, and the benchmark's (ridge leave-one-out in closed form,
   ``r / (1 - h_row - h_col)`` to first order, the share floored at 0.4), for models with
   ``min_row`` cells or more on benchmarks with ``min_col`` or more;
4. each observation (a cell's winner or another source's value for it) is ``z`` standard
   deviations from its cell's prediction; it is suspect when ``|z| > threshold``, or when
   ``|z| > slip_threshold`` and one of :data:`SLIPS` (on bounded percent benchmarks only:
   a relative rating or a rank is never read as a percent) lands within ``slip_fit``
   standard deviations and at least three times closer.

Measured on the default registry with planted slips (``benchmarks/suspect_cells.py``;
``docs/results/suspect-cells.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.models.als import fit_batched, init_factors, reg_diagonal
from benchpress.predict.checks.consistency import check_space
from benchpress.scales import BenchmarkScales

__all__ = ["SUSPECT_Z", "SLIP_Z", "SLIPS", "Slip", "SuspectCheck", "slip_values"]

#: Standard deviations between a value and its prediction from the rest of its row and
#: column beyond which it is suspect (measured: docs/results/suspect-cells.md).
SUSPECT_Z = 3.0
#: ... and beyond which it is suspect when a slip (:data:`SLIPS`) fits it far better.
SLIP_Z = 2.0


@dataclass(frozen=True)
class Slip:
    """A way a value goes wrong on the way into a table: ``name``, the verdict a reviewer
    would likely give (``cell_reviews.csv``), and how the value would read undone."""

    name: str
    verdict: str
    formula: str  # how the value reads if the slip is undone, for people (x: as given)


#: The slips tried on bounded percent benchmarks, in order (undone: ``fits_as``).
SLIPS = (
    Slip("reversed", "reversed", "lower+upper-x"),   # the complement (accuracy for a rate)
    Slip("fraction", "wrong_scale", "x*100"),        # a 0-1 fraction in a percent column
    Slip("per_cent_of_fraction", "wrong_scale", "x/100"),
    Slip("dropped_digit", "typo", "x*10"),           # 9.1 for 91
    Slip("extra_digit", "typo", "x/10"),
)


def slip_values(x, lower, upper) -> np.ndarray:
    """Each observation's value with each slip of :data:`SLIPS` undone, shape
    (n_slips, n): ``x``, ``lower``, ``upper`` of shape (n,); NaN where the undone value
    falls outside ``[lower, upper]``.

    >>> slip_values(np.array([91.1]), np.array([0.0]), np.array([100.0]))[:, 0].round(3).tolist()
    [8.9, nan, 0.911, nan, 9.11]
    """
    x, lo, hi = (np.asarray(a, dtype=float) for a in (x, lower, upper))
    undone = np.stack([lo + hi - x, x * 100, x / 100, x * 10, x / 10])
    inside = (undone >= lo) & (undone <= hi) & (undone != x)
    return np.where(inside, undone, np.nan)


#: Most rounds of naming reversed citation groups (each round refits without them).
_GROUP_ROUNDS = 3
#: Least share of a cell's residual its leave-one-out keeps (see ``_leave_one_out``).
_MIN_KEPT = 0.4


def _outer(F: np.ndarray) -> np.ndarray:
    """Each row's outer product with itself, flattened: (n, q) -> (n, q * q)."""
    return (F[:, :, None] * F[:, None, :]).reshape(F.shape[0], -1)


class SuspectCheck:
    """Leave-one-out of every registry cell in the predictor's z space, robustly fitted.

    Parameters
    ----------
    threshold : float, default SUSPECT_Z
        Standard deviations beyond which a value is suspect.
    slip_threshold : float, default SLIP_Z
        ... beyond which it is suspect when a slip fits it (see the module docstring).
    slip_fit : float, default 1.0
        Standard deviations within which an undone slip "fits".
    rank : int, default 3
    regularization : float, default 1.0
        Ridge penalty of the biases and factors of the robust fit.
    huber : float, default 2.0
        Residuals beyond this many robust standard deviations weigh less (Huber).
    n_rounds : int, default 3
        Reweighting rounds of the robust fit (``n_iter`` ALS sweeps each).
    n_iter : int, default 8
    group_min : int, default 3
        Fewest cells of a citation group tested as reversed as a whole.
    group_z, group_ratio : float, default 1.5, 1/3
        A group is reversed when its values lie ``group_z`` (root mean square) from the
        prediction without it and their complements ``group_ratio`` as far or closer.
    group_regularization : float, default 5.0
        Ridge penalty of a benchmark's factors refitted without a group (its bias keeps
        ``regularization``): a few cells left cannot fit a profile of their own.
    min_row, min_col : int, default 3
        Fewest observed cells of a model, of a benchmark, for its cells to be checked.
    random_state : int, default 42
        Seed of the initial factors.

    Attributes
    ----------
    transform_ : ScaleTransform
        The space (fitted without the reversed groups).
    sign_ : ndarray (n_benchmarks,)
        +1 where higher is better, -1 where lower is.
    expected_ : ndarray (n_models, n_benchmarks)
        Each cell's prediction from the rest (score units); an empty cell's from the fit;
        NaN where the model or the benchmark has too few cells.
    expected_z_ : ndarray (n_models, n_benchmarks)
        The same in z units (the transform's, not turned to the direction).
    checked_ : ndarray of bool (n_models, n_benchmarks)
        Cells whose row and column are large enough to check.
    left_out_ : ndarray of bool (n_models, n_benchmarks)
        Cells of the reversed groups (left out of the fit).
    reversed_groups_ : ndarray of int (n_named, 2)
        The groups named as reversed as a whole: citation code (``fit``'s ``groups``),
        benchmark column.
    group_rms_ : ndarray (n_groups_tested, 4)
        Per tested group: citation code, benchmark column, root mean square z as given,
        as reversed.
    """

    def __init__(self, threshold: float = SUSPECT_Z, *, slip_threshold: float = SLIP_Z,
                 slip_fit: float = 1.0, rank: int = 3, regularization: float = 1.0,
                 huber: float = 2.0, n_rounds: int = 3, n_iter: int = 8, group_min: int = 3,
                 group_z: float = 1.5, group_ratio: float = 1 / 3,
                 group_regularization: float = 5.0, min_row: int = 3, min_col: int = 3,
                 random_state: int = 42):
        self.threshold = threshold
        self.slip_threshold = slip_threshold
        self.slip_fit = slip_fit
        self.rank = rank
        self.regularization = regularization
        self.huber = huber
        self.n_rounds = n_rounds
        self.n_iter = n_iter
        self.group_min = group_min
        self.group_z = group_z
        self.group_ratio = group_ratio
        self.group_regularization = group_regularization
        self.min_row = min_row
        self.min_col = min_col
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, Y, scales: BenchmarkScales, higher_is_better, groups=None) -> "SuspectCheck":
        """Fit on the registry's cells.

        Parameters
        ----------
        Y : ndarray (n_models, n_benchmarks)
            Cell values in score units, NaN where none.
        scales : BenchmarkScales
        higher_is_better : array_like of bool (n_benchmarks,)
        groups : ndarray of int (n_models, n_benchmarks), optional
            Each cell's citation (codes >= 0; -1: none), for the test of groups reversed
            as a whole (a group: one citation's cells of one benchmark).
        """
        Y = np.asarray(Y, dtype=float)
        if Y.ndim != 2 or Y.shape[1] != scales.n_benchmarks:
            raise BadInputError(f"expected a 2-D matrix of {scales.n_benchmarks} benchmark "
                                f"columns, got shape {Y.shape}")
        for name in ("threshold", "slip_threshold", "slip_fit", "huber", "group_z"):
            if not getattr(self, name) > 0:
                raise UsageError(f"{name} must be > 0 standard deviations, got "
                                 f"{getattr(self, name)}")
        self.sign_ = np.where(np.asarray(higher_is_better, dtype=bool), 1.0, -1.0)
        observed = ~np.isnan(Y)
        groups = (np.full(Y.shape, -1, dtype=np.int64) if groups is None
                  else np.where(observed, np.asarray(groups, dtype=np.int64), -1))
        left_out = np.zeros(Y.shape, dtype=bool)
        self.reversed_groups_ = np.zeros((0, 2), dtype=np.int64)
        self.group_rms_ = np.zeros((0, 4))
        factors = None
        with single_blas_thread():
            for rounds in range(_GROUP_ROUNDS + 1):  # named groups out, everything again
                kept = np.where(left_out, np.nan, Y)
                self.transform_ = check_space(kept, scales)
                Z = self.transform_.transform(kept) * self.sign_
                W, params = self._robust_fit(Z, factors)
                factors = params[3:]
                if rounds == _GROUP_ROUNDS:
                    break
                named, rms = self._reversed_groups(Y, Z, W, params, groups, left_out)
                self.group_rms_ = np.concatenate([self.group_rms_, rms])
                if named.shape[0] == 0:
                    break
                self.reversed_groups_ = np.concatenate([self.reversed_groups_, named])
                cols = np.arange(Y.shape[1])[None, :]
                left_out |= np.isin(groups * Y.shape[1] + cols, named[:, 0] * Y.shape[1] + named[:, 1])
            self._leave_one_out(Z, W, params, observed)
        self.left_out_ = left_out
        return self

    def _robust_fit(self, Z, factors):
        """Huber-reweighted bias + low-rank ALS: (weights, (mu, a, c, U, V))."""
        obs = ~np.isnan(Z)
        reg = reg_diagonal(self.rank, self.regularization)
        if factors is None:
            U, V = init_factors([self.random_state], *Z.shape, self.rank, 0.1)
        else:
            U, V = factors
        W = obs.astype(float)
        for _ in range(max(int(self.n_rounds), 1)):
            mu, a, c, U, V = fit_batched(Z, W, U, V, reg_diag=reg, n_iter=int(self.n_iter))
            R = np.abs(np.where(obs, Z - (mu[0] + a[0][:, None] + c[0] + U[0] @ V[0].T), 0.0))
            sigma = 1.4826 * float(np.median(R[obs])) if obs.any() else 1.0
            W = np.where(obs, np.minimum(1.0, self.huber * max(sigma, 1e-6)
                                         / np.maximum(R, 1e-12)), 0.0)
        return W, (mu[0], a[0], c[0], U, V)

    def _reversed_groups(self, Y, Z, W, params, groups, left_out):
        """Citation groups of bounded percent benchmarks whose complement fits far better
        than their values as given (see the module docstring): (named codes, rms rows)."""
        mu, a, c, U, V = params
        logit = self.transform_.logit
        n_col = (~np.isnan(Z)).sum(axis=0)
        cand = (groups >= 0) & ~left_out & logit[None, :]
        if not cand.any():
            return np.zeros((0, 2), dtype=np.int64), np.zeros((0, 4))
        ii, jj = np.nonzero(cand)
        n_bench = Z.shape[1]
        # a group is one citation's cells of one benchmark
        pairs, inverse, size = np.unique(groups[ii, jj] * n_bench + jj, return_inverse=True,
                                         return_counts=True)
        codes, col_of = pairs // n_bench, pairs % n_bench
        tested = (size >= self.group_min) & (2 * size <= n_col[col_of])
        if not tested.any():
            return np.zeros((0, 2), dtype=np.int64), np.zeros((0, 4))
        F = np.concatenate([np.ones((Z.shape[0], 1)), U[0]], axis=1)   # (n_models, q)
        target = np.where(W > 0, Z - mu - a[:, None], 0.0)
        # each benchmark's normal equations, then each group's share taken out
        q = F.shape[1]
        A_col = (W.T @ _outer(F)).reshape(-1, q, q)                     # (n_benchmarks, q, q)
        b_col = (W * target).T @ F
        A_grp = np.zeros((pairs.size, q, q))
        b_grp = np.zeros((pairs.size, q))
        w = W[ii, jj]
        np.add.at(A_grp, inverse, w[:, None, None] * F[ii][:, :, None] * F[ii][:, None, :])
        np.add.at(b_grp, inverse, (w * target[ii, jj])[:, None] * F[ii])
        ridge = np.diag(np.concatenate([[self.regularization],
                                        np.full(q - 1, self.group_regularization)]))
        theta = np.linalg.solve(A_col[col_of] - A_grp + ridge, (b_col[col_of] - b_grp)[..., None])[..., 0]
        pred = mu + a[ii] + (F[ii] * theta[inverse]).sum(axis=1)
        lo, hi = self.transform_.lower[jj], self.transform_.upper[jj]
        z_given = Z[ii, jj] - pred
        z_rev = self.transform_.transform(lo + hi - Y[ii, jj], cols=jj) * self.sign_[jj] - pred
        rms_given = np.sqrt(np.bincount(inverse, z_given ** 2) / size)
        rms_rev = np.sqrt(np.bincount(inverse, z_rev ** 2) / size)
        named = tested & (rms_given >= self.group_z) & (rms_rev <= self.group_ratio * rms_given)
        rms = np.stack([codes, col_of, rms_given, rms_rev], axis=1)[tested]
        return np.stack([codes, col_of], axis=1)[named], rms

    def _leave_one_out(self, Z, W, params, observed) -> None:
        """Each cell's prediction from the rest of its row and column (a cell left out of
        the fit, ``W == 0``: its prediction from the fit)."""
        mu, a, c, U, V = params
        X = np.concatenate([np.ones((Z.shape[1], 1)), V[0]], axis=1)      # (n_benchmarks, q)
        reg = np.diag(reg_diagonal(self.rank, self.regularization))
        q = X.shape[1]
        A = (W @ _outer(X)).reshape(-1, q, q) + reg                    # (n_models, q, q)
        target = np.where(W > 0, Z - mu - c, 0.0)
        A_inv = np.linalg.inv(A)
        theta = np.einsum("ipq,iq->ip", A_inv, (W * target) @ X)
        fitted = mu + c + theta @ X.T
        h = W * (A_inv.reshape(-1, q * q) @ _outer(X).T)                  # x_j' A_i^-1 x_j
        # ... and the benchmark's bias and factors without it: r / (1 - h_row - h_col),
        # to first order; the share kept is floored (a cell that alone sets a factor of
        # a small benchmark is not predicted from nothing)
        F = np.concatenate([np.ones((theta.shape[0], 1)), theta[:, 1:]], axis=1)  # [1, U_i]
        B_inv = np.linalg.inv((W.T @ _outer(F)).reshape(-1, q, q) + reg)
        h = h + W * (_outer(F) @ B_inv.reshape(-1, q * q).T)
        used = W > 0
        resid = np.where(used, Z - fitted, 0.0)
        loo = Z - resid / np.maximum(1.0 - h, _MIN_KEPT)
        loo = np.where(used, loo, fitted)
        known = ((used.sum(axis=1) >= self.min_row)[:, None]
                 & (used.sum(axis=0) >= self.min_col)[None, :])
        self.checked_ = observed & known
        # a cell without a value (one a review took out) is predicted by the fit
        self.expected_z_ = np.where(known, np.where(observed, loo, fitted) * self.sign_, np.nan)
        self.expected_ = np.where(known,
                                  self.transform_.inverse_transform(
                                      np.nan_to_num(self.expected_z_), clip=True), np.nan)

    # ------------------------------------------------------------------ use
    def _fitted(self) -> None:
        if not hasattr(self, "expected_z_"):
            raise NotFittedError("SuspectCheck is not fitted; call fit(Y, scales, "
                                 "higher_is_better) first")

    def z(self, rows, cols, values) -> np.ndarray:
        """Standard deviations of each value above its cell's prediction (n,); NaN where
        the cell is not checked. ``rows``, ``cols``, ``values``: shape (n,)."""
        self._fitted()
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        return self.transform_.transform(values, cols=cols) - self.expected_z_[rows, cols]

    def judge(self, rows, cols, values) -> dict:
        """The check of observations (``rows``, ``cols``, ``values``: shape (n,)): a dict of
        arrays of shape (n,): ``expected`` (score units), ``z``, ``slip`` (index into
        :data:`SLIPS`, -1 for none), ``fits_as`` (the value with the slip undone),
        ``slip_z``, ``in_reversed_group`` (the cell's citation group was named reversed as
        a whole), ``complement`` (``lower + upper - value``) and ``suspect`` (bool)."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        z = self.z(rows, cols, values)
        tr = self.transform_
        undone = slip_values(values, tr.lower[cols], tr.upper[cols])     # (n_slips, n)
        undone[:, ~tr.logit[cols]] = np.nan  # bounded percent benchmarks only
        alt_z = np.abs(np.where(np.isnan(undone), np.nan,
                                tr.transform(np.nan_to_num(undone).ravel(),
                                             cols=np.tile(cols, len(SLIPS))).reshape(undone.shape)
                                - self.expected_z_[rows, cols]))
        has = ~np.isnan(alt_z).all(axis=0)
        best = np.where(has, np.nanargmin(np.where(np.isnan(alt_z), np.inf, alt_z), axis=0), -1)
        best_z = np.where(has, alt_z[np.maximum(best, 0), np.arange(z.size)], np.nan)
        az = np.abs(z)
        fits = has & (best_z <= self.slip_fit) & (3 * best_z <= az)
        slip = np.where(fits, best, -1)
        return {
            "expected": self.expected_[rows, cols],
            "z": z,
            "slip": slip,
            "fits_as": np.where(fits, undone[np.maximum(best, 0), np.arange(z.size)], np.nan),
            "slip_z": np.where(fits, best_z, np.nan),
            "in_reversed_group": self.left_out_[rows, cols],
            "complement": tr.lower[cols] + tr.upper[cols] - np.asarray(values, dtype=float),
            "suspect": ((az > self.threshold) | (fits & (az > self.slip_threshold))
                        | self.left_out_[rows, cols]),
        }
