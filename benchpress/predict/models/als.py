"""Bias-plus-low-rank matrix completion fitted by alternating ridge regression (ALS).

Model, on a z-scored matrix ``Z`` of shape (n_models, n_benchmarks)::

    Z_ij ~ mu + a_i + c_j + U_i . V_j          (U: (n_models, rank), V: (n_benchmarks, rank))

fitted on the observed cells by minimising::

    sum_obs w_ij (Z_ij - mu - a_i - c_j - U_i.V_j)^2
        + lam_b (|a|^2 + |c|^2) + lam_f (|U|_F^2 + |V|_F^2)

with ``w_ij = 1`` unless cell weights are given. Initialisation: ``mu`` = (weighted) mean
of the observed values, ``a = c = 0``, ``U`` then ``V`` drawn from
``numpy.random.RandomState(seed).normal(0, init_scale)``. One sweep is

1. all model rows at once: ridge solve of ``[a_i, U_i]`` given ``mu, c, V``;
2. all benchmark columns at once: ridge solve of ``[c_j, V_j]`` given ``mu, a, U``;
3. ``mu`` <- (weighted) mean residual over observed cells (not regularised).

A row or column without observed cells keeps its previous parameters. Every step is a
batch of (rank+1)x(rank+1) normal equations built from the mask with matrix products and
solved all at once by a vectorised Cholesky factorisation (`spd_solve`; about 3x faster than
``numpy.linalg.solve`` on these tiny systems, equal to 1e-15); the functions take a leading
"start" axis so several random starts run in the same batch (see
:mod:`benchpress.predict.models.ensemble`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.blas_threads import single_blas_thread
from benchpress.predict.estimator import check_scores

__all__ = [
    "ALSConfig", "BiasALS", "init_factors", "fit_batched", "fit_starts", "fold_in_batched", "reg_diagonal",
    "spd_solve", "weights_from",
]


@dataclass(frozen=True)
class ALSConfig:
    """The bias-ALS hyperparameters, declared here once.

    :class:`BiasALS` (one start), :class:`~benchpress.predict.models.ensemble.ALSEnsemble`
    (``n_starts`` starts) and :class:`~benchpress.predict.models.als_predictor.ALSPredictor` (whose
    constructor exposes them as parameters, with these defaults) all read them from here.

    Parameters
    ----------
    rank : int, default 2
        Number of latent factors.
    regularization : float, default 0.1
        Ridge penalty on the factors ``U`` and ``V`` (and on the biases unless
        ``bias_regularization`` is given).
    bias_regularization : float, optional
        Ridge penalty on the biases ``a`` and ``c``; defaults to ``regularization``.
    n_iter : int, default 40
        Number of ALS sweeps.
    init_scale : float, default 0.01
        Std of the Gaussian initial factors.
    random_state : int, optional, default 42
        Seed of ``numpy.random.RandomState`` for the initial factors; start ``k`` of an
        ensemble is seeded ``random_state + k`` (None = a fresh seed).
    n_starts : int, default 10
        Random starts of an ensemble (a single :class:`BiasALS` fit ignores it).

    >>> ALSConfig(rank=4).reg_diagonal().tolist()
    [0.1, 0.1, 0.1, 0.1, 0.1]
    """

    rank: int = 2
    regularization: float = 0.1
    bias_regularization: float | None = None
    n_iter: int = 40
    init_scale: float = 0.01
    random_state: int | None = 42
    n_starts: int = 10

    def reg_diagonal(self) -> np.ndarray:
        """Ridge diagonal, shape (rank + 1,) (see :func:`reg_diagonal`)."""
        return reg_diagonal(self.rank, self.regularization, self.bias_regularization)


def reg_diagonal(rank: int, regularization: float, bias_regularization: float | None = None):
    """Ridge diagonal, shape (rank + 1,): ``[lam_bias, lam_factor, ..., lam_factor]``."""
    if rank < 0 or int(rank) != rank:
        raise UsageError(f"rank must be a non-negative integer, got {rank}")
    lam_b = regularization if bias_regularization is None else bias_regularization
    return np.concatenate([[float(lam_b)], np.full(rank, float(regularization))])


def init_factors(seeds, n_models: int, n_benchmarks: int, rank: int, scale: float = 0.01):
    """Random initial factors, one start per seed.

    Returns
    -------
    U : ndarray, shape (n_starts, n_models, rank)
    V : ndarray, shape (n_starts, n_benchmarks, rank)
    """
    U = np.empty((len(seeds), n_models, rank))
    V = np.empty((len(seeds), n_benchmarks, rank))
    for s, seed in enumerate(seeds):  # loop over starts only (10), not over rows
        rng = np.random.RandomState(int(seed))
        U[s] = rng.normal(0.0, scale, size=(n_models, rank))
        V[s] = rng.normal(0.0, scale, size=(n_benchmarks, rank))
    return U, V


def _cholesky_solve(A, b):
    """Solve SPD systems given entry-wise: ``A[i][j]`` and ``b[i]`` are equally shaped
    arrays (one value per system). Returns the list of solution components."""
    q = len(b)
    L = [[None] * q for _ in range(q)]
    for j in range(q):
        d = A[j][j]
        for k in range(j):
            d = d - L[j][k] * L[j][k]
        L[j][j] = np.sqrt(d)
        for i in range(j + 1, q):
            t = A[i][j]
            for k in range(j):
                t = t - L[i][k] * L[j][k]
            L[i][j] = t / L[j][j]
    y = [None] * q
    for i in range(q):
        t = b[i]
        for k in range(i):
            t = t - L[i][k] * y[k]
        y[i] = t / L[i][i]
    x = [None] * q
    for i in range(q - 1, -1, -1):
        t = y[i]
        for k in range(i + 1, q):
            t = t - L[k][i] * x[k]
        x[i] = t / L[i][i]
    return x


def spd_solve(A, b):
    """Solve a batch of small symmetric positive-definite systems ``A x = b``.

    Cholesky factorisation vectorised over the batch (Python loops run over the matrix
    entries only). ``A``: (..., q, q), ``b``: (..., q) -> (..., q). Much faster than
    ``numpy.linalg.solve`` for thousands of 3x3 or 4x4 systems.
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    q = A.shape[-1]
    x = _cholesky_solve([[A[..., i, j] for j in range(q)] for i in range(q)],
                        [b[..., i] for i in range(q)])
    return np.stack(x, axis=-1)


def _ridge_side(WT, WZT, w_line, wz_line, offset, F, old_bias, old_F, reg_diag):
    """Solve every line's ``[bias, factors]`` ridge problem, all starts in one batch.

    Line ``i`` (a model row, or a benchmark column with the matrices transposed)
    regresses ``Z_i. - offset`` on ``[1, F]`` with cell weights ``W_i.``:
    ``(X^T W_i X + diag(reg)) [bias_i, F_i] = X^T W_i (Z_i. - offset)``, ``X = [1, F]``.
    The normal equations of all lines and starts come from two matrix products of the
    stacked factor features with the mask (only the upper triangle of ``X^T W X`` is
    formed) and are solved entry-wise by a vectorised Cholesky.

    Parameters
    ----------
    WT, WZT : ndarray, shape (n_other, n_lines)
        Transposed cell weights (0 where unobserved) and weights * Z.
    w_line, wz_line : ndarray, shape (n_lines,)
        Per-line sums of the weights and of weights * Z.
    offset : ndarray, shape (S, n_other)
        ``mu`` plus the other side's bias, per start.
    F : ndarray, shape (rank, S, n_other)
        The other side's factors.
    old_bias : (S, n_lines), old_F : (rank, S, n_lines)
        Current values, kept for lines without observations.
    reg_diag : ndarray, shape (rank + 1,)

    Returns
    -------
    bias : (S, n_lines), factors : (rank, S, n_lines)
    """
    rank, S, n_other = F.shape
    n_lines = WT.shape[1]
    iu, ju = _triu(rank)
    n_up = len(iu)
    k = 2 * rank + n_up + 1
    P = np.empty((k, S, n_other))             # [F, F_u*F_v (u<=v), offset, offset*F]
    P[:rank] = F
    for t, (u, v) in enumerate(zip(iu, ju)):
        np.multiply(F[u], F[v], out=P[rank + t])
    P[rank + n_up] = offset
    np.multiply(offset, F, out=P[rank + n_up + 1:])
    G = (P.reshape(k * S, n_other) @ WT).reshape(k, S, n_lines)
    H = (F.reshape(rank * S, n_other) @ WZT).reshape(rank, S, n_lines)
    q = rank + 1
    A = [[None] * q for _ in range(q)]
    A[0][0] = np.broadcast_to(w_line + reg_diag[0], (S, n_lines))
    for m in range(rank):
        A[0][m + 1] = A[m + 1][0] = G[m]
    for t, (u, v) in enumerate(zip(iu, ju)):
        entry = G[rank + t]
        if u == v:
            entry = entry + reg_diag[1 + u]
        A[1 + u][1 + v] = A[1 + v][1 + u] = entry
    b = [wz_line - G[rank + n_up]]
    b += [H[m] - G[rank + n_up + 1 + m] for m in range(rank)]
    x = _cholesky_solve(A, b)
    fac = np.stack(x[1:]) if rank else np.zeros((0, S, n_lines))
    has = w_line > 0
    if has.all():
        return x[0], fac
    return np.where(has, x[0], old_bias), np.where(has, fac, old_F)


_TRIU: dict = {}


def _triu(rank: int):
    if rank not in _TRIU:
        iu, ju = np.triu_indices(rank)
        _TRIU[rank] = (iu.tolist(), ju.tolist())
    return _TRIU[rank]


def fit_batched(Z, W, U, V, *, reg_diag, n_iter: int = 40):
    """Run ``n_iter`` ALS sweeps for a batch of starts.

    Parameters
    ----------
    Z : ndarray, shape (n_models, n_benchmarks)
        Z-scored targets; values where ``W == 0`` are ignored (may be NaN).
    W : ndarray, shape (n_models, n_benchmarks)
        Non-negative cell weights, 0 for missing cells (1 for observed, unweighted).
    U, V : ndarray, shapes (S, n_models, rank), (S, n_benchmarks, rank)
        Initial factors of the S starts (not modified).
    reg_diag : ndarray, shape (rank + 1,)
        Ridge penalties for ``[bias, factor_1..rank]`` (see :func:`reg_diagonal`).

    Returns
    -------
    mu : (S,), a : (S, n_models), c : (S, n_benchmarks), U : (S, n_models, rank),
    V : (S, n_benchmarks, rank)
    """
    W = np.ascontiguousarray(W, dtype=float)
    if W.ndim != 2:
        raise BadInputError("weights must be a 2-D (n_models, n_benchmarks) array")
    WZ = W * np.where(W > 0, Z, 0.0)
    WT, WZT = np.ascontiguousarray(W.T), np.ascontiguousarray(WZ.T)
    S, n_models, rank = U.shape
    n_bench = V.shape[1]
    # internal layout: factors (rank, S, n), biases (S, n)
    Ut = U.transpose(2, 0, 1).copy()
    Vt = V.transpose(2, 0, 1).copy()
    row_w, col_w = W.sum(axis=1), W.sum(axis=0)
    row_wz, col_wz = WZ.sum(axis=1), WZ.sum(axis=0)
    wsum, wz_sum = float(W.sum()), float(WZ.sum())
    mu = np.full(S, wz_sum / wsum if wsum > 0 else 0.0)
    a = np.zeros((S, n_models))
    c = np.zeros((S, n_bench))
    for _ in range(n_iter):
        a, Ut = _ridge_side(WT, WZT, row_w, row_wz, mu[:, None] + c, Vt, a, Ut, reg_diag)
        c, Vt = _ridge_side(W, WZ, col_w, col_wz, mu[:, None] + a, Ut, c, Vt, reg_diag)
        if wsum > 0:
            # weighted mean residual: sum W (Z - a - c - U V^T) / sum W
            WV = (Vt.reshape(rank * S, n_bench) @ WT).reshape(Ut.shape)
            uv = (Ut * WV).sum(axis=(0, 2))
            mu = (wz_sum - a @ row_w - c @ col_w - uv) / wsum
    return mu, a, c, Ut.transpose(1, 2, 0).copy(), Vt.transpose(1, 2, 0).copy()


def fold_in_batched(Z_rows, W_rows, mu, c, V, *, reg_diag):
    """Solve bias and factors of new rows against fixed benchmark parameters.

    Parameters
    ----------
    Z_rows : ndarray, shape (n_rows, n_benchmarks)
        Z-scored known values of the new models (ignored where ``W_rows == 0``).
    W_rows : ndarray, shape (n_rows, n_benchmarks)
        Cell weights, 0 where unknown.
    mu : (S,), c : (S, n_benchmarks), V : (S, n_benchmarks, rank)
        Fitted parameters of S starts.

    Returns
    -------
    Zhat : ndarray, shape (S, n_rows, n_benchmarks)
        Completed z-scored rows for every start.
    """
    W_rows = np.asarray(W_rows, dtype=float)
    WZ = W_rows * np.where(W_rows > 0, Z_rows, 0.0)
    S, n_bench, rank = V.shape
    n_rows = WZ.shape[0]
    Vt = V.transpose(2, 0, 1).copy()
    a, Ut = _ridge_side(np.ascontiguousarray(W_rows.T), np.ascontiguousarray(WZ.T),
                        W_rows.sum(axis=1), WZ.sum(axis=1), mu[:, None] + c, Vt,
                        np.zeros((S, n_rows)), np.zeros((rank, S, n_rows)), reg_diag)
    return (mu[:, None, None] + a[:, :, None] + c[:, None, :]
            + Ut.transpose(1, 2, 0) @ V.transpose(0, 2, 1))


def fit_starts(Z, seeds, reg_diag, *, n_iter: int, init_scale: float, sample_weight=None):
    """Check ``Z`` (n_models, n_benchmarks), draw one random start per seed and fit them all
    in one batch: returns ``mu, a, c, U, V`` with a leading (n_starts,) axis."""
    Z = check_scores(Z)
    rank = len(reg_diag) - 1
    U0, V0 = init_factors(seeds, Z.shape[0], Z.shape[1], rank, init_scale)
    with single_blas_thread():
        return fit_batched(Z, weights_from(Z, sample_weight), U0, V0, reg_diag=reg_diag,
                           n_iter=int(n_iter))


def weights_from(Z: np.ndarray, sample_weight=None) -> np.ndarray:
    """Cell weights (n_models, n_benchmarks): ``sample_weight`` broadcast, 0 where NaN."""
    obs = ~np.isnan(Z)
    if sample_weight is None:
        return obs.astype(float)
    w = np.broadcast_to(np.asarray(sample_weight, dtype=float), Z.shape)
    if (w < 0).any() or not np.isfinite(w).all():
        raise BadInputError("sample weights must be finite and non-negative")
    return np.where(obs, w, 0.0)


class BiasALS:
    """Rank-``rank`` bias-decomposed completion of a z-scored matrix, one random start.

    Parameters
    ----------
    config : ALSConfig, optional
        The hyperparameters (default ``ALSConfig()``); ``config.random_state`` seeds the
        start, ``config.n_starts`` is not used.

    Attributes
    ----------
    mu_ : float
    model_bias_ : ndarray, shape (n_models,)
    benchmark_bias_ : ndarray, shape (n_benchmarks,)
    U_ : ndarray, shape (n_models, rank)
    V_ : ndarray, shape (n_benchmarks, rank)
    """

    def __init__(self, config: ALSConfig | None = None):
        self.config = config if config is not None else ALSConfig()

    def fit(self, Z, sample_weight=None) -> "BiasALS":
        """Fit on ``Z`` (n_models, n_benchmarks), z-scored, NaN = missing.

        ``sample_weight`` (broadcastable to Z) weights the squared errors.
        """
        cfg = self.config
        seed = cfg.random_state
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        mu, a, c, U, V = fit_starts(Z, [seed], cfg.reg_diagonal(), n_iter=cfg.n_iter,
                                    init_scale=cfg.init_scale, sample_weight=sample_weight)
        self.mu_ = float(mu[0])
        self.model_bias_, self.benchmark_bias_ = a[0], c[0]
        self.U_, self.V_ = U[0], V[0]
        return self

    def _fitted(self) -> None:
        if not hasattr(self, "V_"):
            raise NotFittedError("BiasALS is not fitted; call fit(Z) first")

    def predict(self) -> np.ndarray:
        """Full completion, shape (n_models, n_benchmarks), in z units."""
        self._fitted()
        return (self.mu_ + self.model_bias_[:, None] + self.benchmark_bias_[None, :]
                + self.U_ @ self.V_.T)

    def fold_in(self, z, mask=None) -> np.ndarray:
        """Complete new model rows against the fitted benchmark parameters (no refit).

        Parameters
        ----------
        z : array_like, shape (n_benchmarks,) or (n_rows, n_benchmarks)
            Z-scored known values of the new model(s); NaN allowed where unknown.
        mask : array_like of bool, same shape, optional
            Which entries of ``z`` are known (default: the finite ones).

        Returns
        -------
        ndarray, same shape as ``z``: completed rows in z units.
        """
        self._fitted()
        z = np.asarray(z, dtype=float)
        one = z.ndim == 1
        z2 = np.atleast_2d(z)
        m = ~np.isnan(z2) if mask is None else np.atleast_2d(np.asarray(mask, bool)) & ~np.isnan(z2)
        if z2.shape[1] != self.V_.shape[0]:
            raise BadInputError(f"expected {self.V_.shape[0]} benchmark columns, got {z2.shape[1]}")
        out = fold_in_batched(z2, m.astype(float), np.array([self.mu_]),
                              self.benchmark_bias_[None], self.V_[None], reg_diag=self.config.reg_diagonal())[0]
        return out[0] if one else out
