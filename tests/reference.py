"""Plain per-row loop implementation of the bias-ALS ensemble: the test oracle.

Written for readability, not speed: one ``numpy.linalg.solve`` per model row and per
benchmark column in every sweep. It follows the algorithm documented in
``benchpress/predict/als.py`` (same initialisation, update order, ridge penalties,
seeding ``random_state + k``), so with the same hyperparameters the vectorized engine
must give the same predictions to ~1e-6.
"""

from __future__ import annotations

import numpy as np

from benchpress.predict.regression import PairwiseRegression
from benchpress.predict.transform import ScaleTransform


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
    the package's transform and pairwise regression, the loop ALS ensemble."""
    transform = ScaleTransform.from_scales(scales, logit_rule=logit_rule, eps=eps).fit(Y)
    Z = transform.transform(Y)
    Zhat = loop_ensemble_predict(Z, n_starts=n_starts, random_state=random_state, rank=rank,
                                 regularization=regularization,
                                 bias_regularization=bias_regularization, n_iter=n_iter,
                                 init_scale=init_scale)
    if regression_weight > 0:
        R = PairwiseRegression(power=regression_power).fit(Z).predict(Z)
        Zhat = np.where(np.isnan(R), Zhat, (1 - regression_weight) * Zhat + regression_weight * R)
    P = transform.inverse_transform(Zhat)
    return np.where(transform.n_observed_ > 0, P, np.nan)
