"""The gate of a blend: which part leads, cell by cell, from what can be seen before the
truth.

A new model's row is predicted by several parts (:class:`~benchpress.predict.models.blend.
NeighbourBlend`): the low-rank half with the model's metadata and without it, the average
of its nearest registered models (each shifted by its gap to the model), and a local
regression of each benchmark on the model's known ones (with a release-date term) over the
models near it. None of them is best everywhere: the nearest models lead where a registry
holds close siblings, the low-rank half where it holds none (a small registry, a model
unlike the others), the regression where a benchmark follows the known ones tightly.

:class:`Gate` weighs the parts in z units by a softmax of a linear score of the cell's
features (:data:`FEATURES`): how many scores are known, how far the nearest registered
models are and how many lie near, how large the registry is, whether metadata was given,
how tightly the regression's line fits near the model, how many models scored the
benchmark. A part that cannot answer a cell (no neighbour scored it, no line) gets weight
0 there. On top, a *new-model offset*: a model released after the registry's newest (or
given without a date: the normal case of a forecast) scores higher on the benchmarks it
did not reveal than earlier models with the same revealed scores (the temporal
yardstick's later models were predicted 1.3-2.4 points low on average), so its row is
raised by a learned amount per known-score count (:data:`GATE_SHIFT`, :func:`newness`). The coefficients (:data:`GATE_COEF`) were learned on the temporal yardstick's
early cutoffs and the paper matrix's own random whole-model splits (seeds 1001-1005)
only, and are checked on the late cutoffs, the later-release pairs and the published
seeds (``python benchmarks/gate_study.py``; docs/results/forecasts.md).
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import UsageError

__all__ = ["Gate", "part_weights", "PARTS", "FEATURES", "TREND", "GATE_COEF", "GATE_SHIFT", "gate_features",
           "trend_features", "newness"]

#: The parts a gate weighs, in this order (columns of its weight matrix).
PARTS = ("low_rank", "low_rank_plain", "neighbours", "regression")
#: The features of a cell, in this order (columns of its feature matrix): an intercept;
#: one known score; two or three; log of the nearest model's RMS z distance; log(1 + the
#: registered models within 0.3 and within 0.6); log of the registry's models over 500;
#: metadata given (and used); log(1 + the regression's residual variance near the model
#: over 0.05); log of the models that scored the benchmark over 100.
FEATURES = ("intercept", "one_known", "two_three_known", "log_nearest", "near_03", "near_06",
            "log_models", "metadata", "regression_noise", "log_benchmark_models")

#: The features of the new-model offset, per row: how new the model is
#: (:func:`newness`), and that times one known score, and times two or three.
TREND = ("new", "new_one_known", "new_two_three_known")

#: Learned coefficients, one row per part of :data:`PARTS` over :data:`FEATURES`
#: (``benchmarks/gate_study.py``).
GATE_COEF = (
    (-0.854, 0.061, 0.219, 0.184, 0.620, -0.046, -0.593, 1.094, 0.258, -0.097),  # low_rank
    (0.035, 0.624, 0.013, -0.030, -0.590, -0.670, 1.052, 0.035, 0.240, -0.092),  # ... plain
    (-0.185, -0.007, -0.406, -0.057, -0.147, 0.244, -0.891, -1.314, -0.003, 0.115),  # neighbours
    (1.004, -0.678, 0.175, -0.097, 0.117, 0.472, 0.432, 0.186, -0.495, 0.074),  # regression
)
#: The new-model offset's coefficients over :data:`TREND` (z units), learned with them.
GATE_SHIFT = (0.0508, 0.0290, 0.0160)


def newness(query_dates, newest) -> np.ndarray:
    """How new each model is against the registry (n_rows,; ``newest``: the registry's
    newest release date, or one per row): 1 for a release on or after
    the newest registered model's date, falling to 0 half a year before it; 1 for a model
    without a date (a forecast's normal case) or a registry without dates."""
    t, newest = np.asarray(query_dates, dtype=float), np.asarray(newest, dtype=float)
    with np.errstate(invalid="ignore"):
        near = np.clip(1.0 + 2.0 * (t - newest), 0.0, 1.0)
    return np.where(np.isfinite(t) & np.isfinite(newest), near, 1.0)


def trend_features(n_known, new) -> np.ndarray:
    """The offset's features (n_rows, len(TREND)) from each row's known-score count and
    :func:`newness`."""
    k = np.asarray(n_known, dtype=float)
    new = np.asarray(new, dtype=float)
    return np.column_stack([new, new * (k == 1), new * ((k > 1) & (k <= 3))])


def gate_features(n_known, nearest, near_03, near_06, n_models, metadata, reg_noise,
                  benchmark_models) -> np.ndarray:
    """The features (n_rows, n_benchmarks, len(FEATURES)) of every cell of query rows:
    per row ``n_known``, ``nearest`` (RMS z distance to the nearest registered model; inf
    or NaN: none), ``near_03``/``near_06`` (registered models within 0.3 / 0.6) and
    ``metadata`` (bool), each (n_rows,); ``n_models`` (the registry's size);
    ``reg_noise`` (n_rows, n_benchmarks; NaN where no line); ``benchmark_models``
    (n_benchmarks,), the models that scored each benchmark."""
    k = np.asarray(n_known, dtype=float)
    n_r, n_b = np.shape(reg_noise)
    d = np.nan_to_num(np.asarray(nearest, dtype=float), nan=3.0, posinf=3.0)
    rows = np.column_stack([np.ones(n_r), k == 1, (k > 1) & (k <= 3),
                            np.log(np.clip(d, 0.01, 3.0)), np.log1p(near_03), np.log1p(near_06),
                            np.full(n_r, np.log(max(float(n_models), 1.0) / 500.0)),
                            np.asarray(metadata, dtype=float)]).astype(float)
    noise = np.log1p(np.nan_to_num(np.asarray(reg_noise, dtype=float), nan=1.0) / 0.05)
    pop = np.log(np.maximum(np.asarray(benchmark_models, dtype=float), 1.0) / 100.0)
    return np.concatenate([np.broadcast_to(rows[:, None, :], (n_r, n_b, rows.shape[1])),
                           noise[:, :, None], np.broadcast_to(pop[None, :, None], (n_r, n_b, 1))],
                          axis=2)


class Gate:
    """Softmax weights of a blend's parts from each cell's features.

    Parameters
    ----------
    coef : tuple of tuples, shape (len(PARTS), len(FEATURES))
        The linear score of each part; a cell's weights are the softmax of the scores of
        the parts that answer it.
    shift : tuple, shape (len(TREND),)
        The new-model offset: how much higher (z units) a model newer than the registry
        scores than its parts say, by known-score count (:func:`trend_features`).

    >>> F = gate_features([3], [0.1], [2], [5], 500, [False], [[0.05]], [100])
    >>> flat = tuple((0.0,) * len(FEATURES) for _ in PARTS)
    >>> w = Gate(flat).weights(F, np.ones((1, 1, len(PARTS)), dtype=bool))
    >>> w.round(2).tolist()   # all-zero coefficients: the parts in equal shares
    [[[0.25, 0.25, 0.25, 0.25]]]
    """

    def __init__(self, coef=GATE_COEF, shift=GATE_SHIFT):
        self.coef = coef
        self.shift = shift

    def get_params(self) -> dict:
        """The constructor's arguments (a part's parameters, :func:`~benchpress.predict.
        base.flat_params`)."""
        return {"coef": self.coef, "shift": self.shift}

    def set_params(self, **params) -> "Gate":
        """Change ``coef`` or ``shift``; another name raises UsageError."""
        from benchpress.predict.estimator import set_params

        return set_params(self, params)

    def matrix(self) -> np.ndarray:
        """``coef`` as a checked (len(PARTS), len(FEATURES)) float array."""
        C = np.asarray(self.coef, dtype=float)
        if C.shape != (len(PARTS), len(FEATURES)) or not np.isfinite(C).all():
            raise UsageError(f"gate coef must be {len(PARTS)} rows of {len(FEATURES)} finite "
                             f"numbers ({', '.join(PARTS)} over {', '.join(FEATURES)}), got "
                             f"shape {C.shape}")
        return C

    def offset(self, T: np.ndarray) -> np.ndarray:
        """The new-model offset (z units, (n_rows,)) of rows with trend features ``T``
        (n_rows, len(TREND))."""
        b = np.asarray(self.shift, dtype=float)
        if b.shape != (len(TREND),) or not np.isfinite(b).all():
            raise UsageError(f"gate shift must be {len(TREND)} finite numbers "
                             f"({', '.join(TREND)}), got {self.shift!r}")
        return np.asarray(T, dtype=float) @ b

    def weights(self, F: np.ndarray, available: np.ndarray) -> np.ndarray:
        """Each cell's weights (..., len(PARTS)) from its features ``F`` (...,
        len(FEATURES)); ``available`` (..., len(PARTS)) bool marks the parts that answer
        it (a cell no part answers gets all zeros)."""
        return part_weights(F @ self.matrix().T, available)


def part_weights(score: np.ndarray, available: np.ndarray) -> np.ndarray:
    """The softmax (..., n_parts) of each cell's part ``score`` over the parts that answer
    it (``available``, bool, same shape); a cell no part answers gets all zeros."""
    score = np.where(available, score, -np.inf)
    top = np.max(score, axis=-1, keepdims=True)
    e = np.where(available, np.exp(score - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
