"""Averaging :class:`~benchpress.predict.models.als.BiasALS` over several random starts.

Start ``k`` (``k = 0 .. n_starts-1``) is seeded with ``random_state + k`` (the published
scheme with ``random_state=42``); all starts are fitted together in one batched ALS run.
The ensemble prediction is the plain mean of the starts' completions in z units; their
standard deviation is kept as a per-cell spread.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict.models.als import ALSConfig, fit_starts, fold_in_batched, weights_from
from benchpress.predict.estimator import check_scores
from benchpress.predict.models.sparse_als import cell_values, fit_cells, use_sparse

__all__ = ["ALSEnsemble", "start_seeds", "STATE_ARRAYS"]


def start_seeds(random_state: int | None, n_starts: int) -> list[int]:
    """Seeds of the ``n_starts`` starts: ``random_state + k``; None draws a fresh base."""
    if n_starts < 1:
        raise UsageError(f"n_starts must be >= 1, got {n_starts}")
    if random_state is None:
        random_state = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    return [int(random_state) + k for k in range(int(n_starts))]


#: The arrays of a fitted ensemble that a stored fit keeps (:meth:`ALSEnsemble.state`), in
#: order: its fitted attributes without their trailing underscore, and the starts' seeds.
STATE_ARRAYS = ("mu", "model_bias", "benchmark_bias", "U", "V", "seeds")


class ALSEnsemble:
    """Mean of ``n_starts`` bias-ALS fits that differ only in their random start.

    Parameters
    ----------
    config : ALSConfig, optional
        The hyperparameters (default ``ALSConfig()``): ``n_starts`` starts, start ``k``
        seeded ``random_state + k``.

    Attributes
    ----------
    mu_ : ndarray, shape (n_starts,)
    model_bias_ : ndarray, shape (n_starts, n_models)
    benchmark_bias_ : ndarray, shape (n_starts, n_benchmarks)
    U_ : ndarray, shape (n_starts, n_models, rank)
    V_ : ndarray, shape (n_starts, n_benchmarks, rank)
    seeds_ : list of int
    """

    def __init__(self, config: ALSConfig | None = None):
        self.config = config if config is not None else ALSConfig()

    def fit(self, Z, sample_weight=None, *, sparse: bool | None = None) -> "ALSEnsemble":
        """Fit all starts on ``Z`` (n_models, n_benchmarks), z-scored, NaN = missing.

        ``sparse`` forces the observed-cells path (True) or the dense one (False); None
        chooses by size (:func:`~benchpress.predict.models.sparse_als.use_sparse`)."""
        cfg = self.config
        if use_sparse(*np.shape(Z), sparse):
            Z = check_scores(Z)
            r, c = np.nonzero(~np.isnan(Z))
            w = None if sample_weight is None else weights_from(Z, sample_weight)[r, c]
            return self.fit_cells(r, c, Z[r, c], Z.shape, w)
        self.seeds_ = start_seeds(cfg.random_state, cfg.n_starts)
        (self.mu_, self.model_bias_, self.benchmark_bias_, self.U_,
         self.V_) = fit_starts(Z, self.seeds_, cfg.reg_diagonal(), n_iter=cfg.n_iter,
                               init_scale=cfg.init_scale, sample_weight=sample_weight)
        return self

    def fit_cells(self, rows, cols, z, shape, w=None) -> "ALSEnsemble":
        """Fit all starts on observed cells only (:mod:`~benchpress.predict.models.sparse_als`):
        ``rows, cols, z`` (n_cells,) of a ``shape`` (n_models, n_benchmarks) matrix,
        optional cell weights ``w`` (n_cells,)."""
        cfg = self.config
        self.seeds_ = start_seeds(cfg.random_state, cfg.n_starts)
        (self.mu_, self.model_bias_, self.benchmark_bias_, self.U_,
         self.V_) = fit_cells(rows, cols, z, shape, self.seeds_, cfg.reg_diagonal(),
                              n_iter=cfg.n_iter, init_scale=cfg.init_scale, w=w)
        return self

    def state(self) -> dict:
        """The fitted arrays, named without their trailing underscore (``U_`` -> ``"U"``),
        and the starts' seeds (``"seeds"``); :meth:`from_state` restores them."""
        self._fitted()
        return {**{n: np.asarray(getattr(self, n + "_")) for n in STATE_ARRAYS[:-1]},
                "seeds": np.asarray(self.seeds_, dtype=np.int64)}

    @classmethod
    def from_state(cls, arrays: dict, config: ALSConfig | None = None) -> "ALSEnsemble":
        """The fitted ensemble of :meth:`state` ``arrays`` with ``config``, as saved."""
        out = cls(config)
        for n in STATE_ARRAYS[:-1]:
            setattr(out, n + "_", np.asarray(arrays[n]))
        out.seeds_ = [int(s) for s in arrays["seeds"]]
        return out

    def cells_starts(self, rows, cols) -> np.ndarray:
        """Per-start predictions at cells ``(rows, cols)`` (n_cells,), shape (n_starts,
        n_cells), z units (no (n_models, n_benchmarks) array)."""
        self._fitted()
        return cell_values(self.mu_, self.model_bias_, self.benchmark_bias_, self.U_,
                           self.V_, rows, cols)

    def rows_starts(self, rows) -> np.ndarray:
        """Per-start completion of the models ``rows``, shape (n_starts, n_rows,
        n_benchmarks), z units."""
        self._fitted()
        rows = np.asarray(rows, dtype=np.int64)
        return (self.mu_[:, None, None] + self.model_bias_[:, rows, None]
                + self.benchmark_bias_[:, None, :] + self.U_[:, rows] @ self.V_.transpose(0, 2, 1))

    def _fitted(self) -> None:
        if not hasattr(self, "V_"):
            raise NotFittedError("ALSEnsemble is not fitted; call fit(Z) first")

    def predict_starts(self) -> np.ndarray:
        """Completion of every start, shape (n_starts, n_models, n_benchmarks), z units."""
        self._fitted()
        return (self.mu_[:, None, None] + self.model_bias_[:, :, None]
                + self.benchmark_bias_[:, None, :] + self.U_ @ self.V_.transpose(0, 2, 1))

    def predict(self) -> np.ndarray:
        """Ensemble-mean completion, shape (n_models, n_benchmarks), z units."""
        return self.predict_starts().mean(axis=0)

    def fold_in_starts(self, z, mask=None) -> np.ndarray:
        """Per-start completion of new rows, shape (n_starts, n_rows, n_benchmarks).

        ``z`` is (n_rows, n_benchmarks) z-scored with NaN where unknown; ``mask``
        optionally restricts which finite entries are used.
        """
        self._fitted()
        z = np.atleast_2d(np.asarray(z, dtype=float))
        if z.shape[1] != self.V_.shape[1]:
            raise BadInputError(f"expected {self.V_.shape[1]} benchmark columns, got {z.shape[1]}")
        m = ~np.isnan(z)
        if mask is not None:
            m &= np.atleast_2d(np.asarray(mask, dtype=bool))
        return fold_in_batched(z, m.astype(float), self.mu_, self.benchmark_bias_, self.V_,
                               reg_diag=self.config.reg_diagonal())

    def fold_in(self, z, mask=None) -> np.ndarray:
        """Ensemble-mean completion of new rows; same shape as ``z`` (1-D or 2-D)."""
        out = self.fold_in_starts(z, mask).mean(axis=0)
        return out[0] if np.ndim(z) == 1 else out
