"""Plain loop implementations of the predictor's pieces: the test oracle.

Written for readability, not speed, and independently of the package (nothing here imports
``benchpress``): one ``numpy.linalg.solve`` per model row and per benchmark column in every
ALS sweep, one column at a time for the score transform, one benchmark pair at a time for
the pairwise regression. It follows the algorithms documented in
``benchpress/predict/models/als.py``, ``transform.py`` and ``regression.py`` (same initialisation,
update order, ridge penalties, seeding ``random_state + k``; same logit rules, clipping and
thresholds), so with the same hyperparameters the vectorized engine must give the same
predictions to ~1e-6.
"""

from __future__ import annotations

import math

import numpy as np

STD_FLOOR = 1e-8   # a column whose transformed values are (nearly) constant gets std 1
VAR_FLOOR = 1e-10  # a regression pair needs more spread than this on both benchmarks


class LoopTransform:
    """Score units <-> z units, one benchmark column at a time.

    Parameters
    ----------
    scales : object with ``kind``, ``lower``, ``upper``, each shape (n_benchmarks,)
        Scale kind and valid range per benchmark (NaN bound = unbounded on that side).
    logit_rule : {"percent", "percent_or_0_100", "none"}
        Which columns go through the logit: percent scales; percent scales and any other
        scale bounded to exactly [0, 100]; none. Only columns with both bounds finite.
    eps : float
        Logit clipping margin in percentage points of the range.
    """

    def __init__(self, scales, *, logit_rule="percent", eps=0.5):
        self.kind = [str(k) for k in scales.kind]
        self.lower = [float(v) for v in scales.lower]
        self.upper = [float(v) for v in scales.upper]
        self.eps = eps / 100.0
        self.logit = []
        for kind, lo, hi in zip(self.kind, self.lower, self.upper):
            bounded = math.isfinite(lo) and math.isfinite(hi)
            if logit_rule == "none":
                use = False
            elif logit_rule == "percent":
                use = kind == "percent"
            elif logit_rule == "percent_or_0_100":
                use = kind == "percent" or (lo == 0.0 and hi == 100.0)
            else:
                raise ValueError(f"unknown logit rule {logit_rule!r}")
            self.logit.append(use and bounded)

    def latent(self, y, j):
        """One score of benchmark ``j`` -> the logit of its position in the range (or y)."""
        if math.isnan(y) or not self.logit[j]:
            return y
        p = (y - self.lower[j]) / (self.upper[j] - self.lower[j])
        p = min(max(p, self.eps), 1.0 - self.eps)
        return math.log(p / (1.0 - p))

    def score(self, x, j):
        """One latent value of benchmark ``j`` -> a score, clipped to the valid range."""
        if self.logit[j]:
            sigmoid = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
            x = self.lower[j] + (self.upper[j] - self.lower[j]) * sigmoid
        if math.isfinite(self.lower[j]):
            x = max(x, self.lower[j])
        if math.isfinite(self.upper[j]):
            x = min(x, self.upper[j])
        return x

    def fit(self, Y):
        """Mean and population std of each column's observed latent values."""
        Y = np.asarray(Y, dtype=float)
        self.mean, self.std, self.n_observed = [], [], []
        for j in range(Y.shape[1]):
            values = [self.latent(y, j) for y in Y[:, j] if not math.isnan(y)]
            mean = sum(values) / len(values) if values else 0.0
            var = sum((v - mean) ** 2 for v in values) / len(values) if values else 0.0
            std = math.sqrt(var)
            self.mean.append(mean)
            self.std.append(std if std >= STD_FLOOR else 1.0)
            self.n_observed.append(len(values))
        return self

    def to_z(self, Y):
        """Score matrix (NaN = missing) -> z matrix."""
        Z = np.full(np.shape(Y), np.nan)
        for (i, j), y in np.ndenumerate(np.asarray(Y, dtype=float)):
            if not math.isnan(y):
                Z[i, j] = (self.latent(y, j) - self.mean[j]) / self.std[j]
        return Z

    def to_scores(self, Z):
        """z matrix -> score matrix; NaN for benchmarks without any fitted score."""
        P = np.full(np.shape(Z), np.nan)
        for (i, j), z in np.ndenumerate(np.asarray(Z, dtype=float)):
            if self.n_observed[j] > 0 and not math.isnan(z):
                P[i, j] = self.score(z * self.std[j] + self.mean[j], j)
        return P


def loop_pairwise_regression(Z, *, power=4.0, min_shared=5, min_r2=0.2):
    """Predict every cell from the model's other observed benchmarks (all usable ones vote).

    For each target ``j`` and predictor ``l != j`` with at least ``min_shared`` models on
    both, a least-squares line ``z_j ~ a + b z_l`` is fitted on those models; pairs with
    r^2 below ``min_r2`` (or without spread) are dropped. Cell (i, j) is the average of the
    lines' predictions from the cells model ``i`` has, weighted by ``r2 ** power``.

    Returns an array shaped like ``Z``, NaN where no usable predictor is observed.
    """
    Z = np.asarray(Z, dtype=float)
    n_models, n_bench = Z.shape
    observed = ~np.isnan(Z)
    lines = {}  # (target, predictor) -> (intercept, slope, weight)
    for j in range(n_bench):
        for l in range(n_bench):
            if l == j:
                continue
            shared = np.flatnonzero(observed[:, j] & observed[:, l])
            if shared.size < min_shared:
                continue
            t, p = Z[shared, j], Z[shared, l]
            mean_t, mean_p = t.mean(), p.mean()
            var_t = ((t - mean_t) ** 2).mean()
            var_p = ((p - mean_p) ** 2).mean()
            if var_t <= VAR_FLOOR or var_p <= VAR_FLOOR:
                continue
            cov = ((t - mean_t) * (p - mean_p)).mean()
            r2 = cov**2 / (var_t * var_p)
            if r2 < min_r2:
                continue
            slope = cov / var_p
            lines[j, l] = (mean_t - slope * mean_p, slope, r2**power)
    R = np.full(Z.shape, np.nan)
    for i in range(n_models):
        for j in range(n_bench):
            num = tot = 0.0
            for l in np.flatnonzero(observed[i]):
                if (j, l) in lines:
                    intercept, slope, weight = lines[j, l]
                    num += weight * (intercept + slope * Z[i, l])
                    tot += weight
            if tot > 0:
                R[i, j] = num / tot
    return R


def loop_als_fit(Z, *, rank=2, regularization=0.1, bias_regularization=None, n_iter=40,
                 init_scale=0.01, seed=42):
    """One start of bias ALS on a z-scored matrix with NaN for missing cells.

    Returns (mu, a, c, U, V).
    """
    Z = np.asarray(Z, dtype=float)
    n_models, n_bench = Z.shape
    observed = ~np.isnan(Z)
    lam_bias = regularization if bias_regularization is None else bias_regularization
    penalty = np.diag([lam_bias] + [regularization] * rank)

    rng = np.random.RandomState(seed)
    U = rng.normal(0.0, init_scale, size=(n_models, rank))
    V = rng.normal(0.0, init_scale, size=(n_bench, rank))
    a = np.zeros(n_models)
    c = np.zeros(n_bench)
    mu = Z[observed].mean()

    for _ in range(n_iter):
        for i in range(n_models):
            cols = np.flatnonzero(observed[i])
            if cols.size == 0:
                continue
            X = np.column_stack([np.ones(cols.size), V[cols]])
            target = Z[i, cols] - mu - c[cols]
            solution = np.linalg.solve(X.T @ X + penalty, X.T @ target)
            a[i] = solution[0]
            U[i] = solution[1:]
        for j in range(n_bench):
            rows = np.flatnonzero(observed[:, j])
            if rows.size == 0:
                continue
            X = np.column_stack([np.ones(rows.size), U[rows]])
            target = Z[rows, j] - mu - a[rows]
            solution = np.linalg.solve(X.T @ X + penalty, X.T @ target)
            c[j] = solution[0]
            V[j] = solution[1:]
        total = 0.0
        for i in range(n_models):
            for j in np.flatnonzero(observed[i]):
                total += Z[i, j] - a[i] - c[j] - U[i] @ V[j]
        mu = total / observed.sum()
    return mu, a, c, U, V


def loop_ensemble_predict(Z, *, n_starts=10, random_state=42, **params):
    """Mean completion (z units) over starts seeded ``random_state + k``."""
    total = np.zeros(np.shape(Z))
    for k in range(n_starts):
        mu, a, c, U, V = loop_als_fit(Z, seed=random_state + k, **params)
        total += mu + a[:, None] + c[None, :] + U @ V.T
    return total / n_starts


def loop_fold_in(z_row, mu, c, V, *, regularization=0.1, bias_regularization=None):
    """Complete one new z-scored row against fixed (mu, c, V) of one start."""
    rank = V.shape[1]
    lam_bias = regularization if bias_regularization is None else bias_regularization
    penalty = np.diag([lam_bias] + [regularization] * rank)
    cols = np.flatnonzero(~np.isnan(z_row))
    X = np.column_stack([np.ones(cols.size), V[cols]])
    solution = np.linalg.solve(X.T @ X + penalty, X.T @ (z_row[cols] - mu - c[cols]))
    return mu + solution[0] + c + V @ solution[1:]


def loop_predict_scores(Y, scales, *, rank=2, regularization=0.1, bias_regularization=None,
                        n_iter=40, init_scale=0.01, n_starts=10, random_state=42,
                        logit_rule="percent", eps=0.5, regression_weight=0.0,
                        regression_power=4.0):
    """Full predictor in score units (all cells predicted), mirroring ``ALSPredictor``:
    the loop transform, the loop ALS ensemble and, blended in z units with weight
    ``regression_weight`` where it predicts, the loop pairwise regression."""
    transform = LoopTransform(scales, logit_rule=logit_rule, eps=eps).fit(Y)
    Z = transform.to_z(Y)
    Zhat = loop_ensemble_predict(Z, n_starts=n_starts, random_state=random_state, rank=rank,
                                 regularization=regularization,
                                 bias_regularization=bias_regularization, n_iter=n_iter,
                                 init_scale=init_scale)
    if regression_weight > 0:
        R = loop_pairwise_regression(Z, power=regression_power)
        Zhat = np.where(np.isnan(R), Zhat, (1 - regression_weight) * Zhat + regression_weight * R)
    return transform.to_scores(Zhat)


def loop_heldout_predictions(make, Y, scales, test_cells) -> np.ndarray:
    """Held-out predictions by hand, one fold after the other: a new predictor from
    ``make()`` fitted on a copy of ``Y`` with the fold's cells set to NaN, then asked for
    those cells. ``test_cells``: per fold, an array of ``(i, j)`` pairs. Returns the
    predictions of every fold's cells in fold order, shape (n_cells,), which is the order of
    an evaluation's ``cells`` table."""
    out = []
    for cells in test_cells:
        cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
        hidden = np.array(Y, dtype=float, copy=True)
        hidden[cells[:, 0], cells[:, 1]] = np.nan
        out.append(make().fit(hidden, scales).predict_cells(cells[:, 0], cells[:, 1]))
    return np.concatenate(out)
