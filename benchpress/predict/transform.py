"""Per-benchmark score transforms: logit for bounded percent-like scales, then z-scoring.

Scores arrive in their benchmark's native units (percent points, Elo, dollars, ...).
The predictor works in a standardized space:

1. columns flagged ``logit`` are mapped from ``[lower, upper]`` to the real line with
   ``logit(clip((x - lower) / (upper - lower), eps, 1 - eps))`` where ``eps`` is given in
   percentage points of the range (0.5 -> 0.005); other columns stay native;
2. every column is z-scored with the mean and (population, ``ddof=0``) standard deviation
   of its observed transformed values; a column with std below ``1e-8`` gets std 1, and
   a column with no observed values gets mean 0 and std 1. With ``spread_prior`` n0 > 0,
   a logit column's variance is shrunk toward the median variance of the logit columns
   that ``_POOL_MIN_MODELS`` or more models scored, as if n0 more models had shown it:
   ``(n var + n0 pooled) / (n + n0)``. A benchmark two models scored 42.0 and 42.6 does
   not have a spread of 0.3 points, and a new model's 29.5 on it is not 45 standard
   deviations below them (logit units are comparable across columns; native ones, such
   as Elo and dollars, are not, and keep their own spread);
3. with ``z_bound`` b > 0, a standardized value beyond +-b is taken as +-b: one score far
   outside a benchmark's registered models (LiveBench lists a 0.0 on a task where the
   others score 60-100) pulls a fit or a fold-in no further than b standard deviations.

Which columns are logit-transformed and how predictions are clipped come only from the
benchmark metadata given here (:class:`BenchmarkScales`), never from the data.
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.scales import LOGIT_RULES, BenchmarkScales

__all__ = ["BenchmarkScales", "ScaleTransform", "LOGIT_RULES", "STATE_ARRAYS"]

_STD_FLOOR = 1e-8
#: The fitted arrays of a transform that a stored fit keeps (:meth:`ScaleTransform.state`).
STATE_ARRAYS = ("mean", "std", "n_observed")
#: The columns whose variances pool into the prior of ``spread_prior`` have this many models.
_POOL_MIN_MODELS = 10


class ScaleTransform:
    """Score units <-> standardized space, per benchmark column.

    Parameters
    ----------
    lower, upper : array_like of float, shape (n_benchmarks,)
        Valid range per benchmark in score units (NaN = unbounded); predictions are
        clipped to it by :meth:`inverse_transform`.
    logit : array_like of bool, shape (n_benchmarks,)
        Columns mapped through the logit of their position in ``[lower, upper]``.
        Both bounds must be finite for these columns.
    eps : float, default 0.5
        Logit clipping margin in percentage points of the range.
    kind : array_like of str, optional
        Scale kinds, kept for reference only.
    spread_prior : float, default 0
        Models' worth of the pooled logit variance in each logit column's variance (0:
        each column's own; see the module docstring).
    z_bound : float, default 0
        Standardized values are clipped to ``[-z_bound, z_bound]`` (0: not clipped).

    Attributes
    ----------
    mean_, std_ : ndarray, shape (n_benchmarks,)
        Column mean and population std of the transformed observed values.
    """

    def __init__(self, lower, upper, logit, *, eps: float = 0.5, kind=None,
                 spread_prior: float = 0.0, z_bound: float = 0.0):
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.logit = np.asarray(logit, dtype=bool)
        self.eps = float(eps)
        self.kind = None if kind is None else np.asarray(kind, dtype=str)
        self.spread_prior = float(spread_prior)
        self.z_bound = float(z_bound)
        if not (self.lower.shape == self.upper.shape == self.logit.shape) or self.lower.ndim != 1:
            raise BadInputError("lower, upper and logit must be 1-D arrays of equal length")
        if not (0.0 < self.eps < 50.0):
            raise UsageError(f"eps must lie in (0, 50) percentage points, got {eps}")
        if not self.spread_prior >= 0.0:
            raise UsageError(f"spread_prior must be >= 0 models, got {spread_prior}")
        if not self.z_bound >= 0.0:
            raise UsageError(f"z_bound must be >= 0 standard deviations (0: none), got {z_bound}")
        unbounded = self.logit & ~(np.isfinite(self.lower) & np.isfinite(self.upper))
        if unbounded.any():
            raise BadInputError(
                f"logit columns need finite bounds: {np.flatnonzero(unbounded).tolist()}"
            )

    @classmethod
    def from_scales(cls, scales: BenchmarkScales, *, logit_rule: str = "percent",
                    eps: float = 0.5, spread_prior: float = 0.0,
                    z_bound: float = 0.0) -> "ScaleTransform":
        """Build from :class:`BenchmarkScales` with a logit rule from :data:`LOGIT_RULES`."""
        return cls(scales.lower, scales.upper, scales.logit_mask(logit_rule), eps=eps,
                   kind=scales.kind, spread_prior=spread_prior, z_bound=z_bound)

    def state(self) -> dict:
        """The fitted moments as arrays, named as :data:`STATE_ARRAYS` (``mean_`` ->
        ``"mean"``); :meth:`from_state` restores them."""
        self._fitted()
        return {"mean": np.asarray(self.mean_), "std": np.asarray(self.std_),
                "n_observed": np.asarray(self.n_observed_)}

    @classmethod
    def from_state(cls, arrays: dict, scales: BenchmarkScales, *, logit_rule: str, eps: float,
                   spread_prior: float = 0.0, z_bound: float = 0.0) -> "ScaleTransform":
        """The fitted transform of :meth:`state` ``arrays`` in the space given by ``scales``
        and the other arguments (as :meth:`from_scales`): the moments as saved, not refitted."""
        out = cls.from_scales(scales, logit_rule=logit_rule, eps=eps, spread_prior=spread_prior,
                              z_bound=z_bound)
        out.mean_, out.std_, out.n_observed_ = (np.asarray(arrays[n]) for n in STATE_ARRAYS)
        return out

    # ------------------------------------------------------------------ helpers
    def _check(self, Y: np.ndarray, cols=None) -> np.ndarray:
        Y = np.asarray(Y, dtype=float)
        if cols is not None:
            if Y.ndim != 1 or Y.shape != np.shape(cols):
                raise BadInputError(
                    f"with cols, values and cols must be 1-D and equally long, got "
                    f"{Y.shape} and {np.shape(cols)}"
                )
        elif Y.shape[-1] != self.logit.shape[0]:
            raise BadInputError(
                f"expected {self.logit.shape[0]} benchmark columns, got {Y.shape[-1]}"
            )
        return Y

    @staticmethod
    def _at(a: np.ndarray, cols) -> np.ndarray:
        """Per-benchmark parameter ``a``, or its entries at ``cols`` when given."""
        return a if cols is None else a[cols]

    def _span(self, cols=None) -> tuple[np.ndarray, np.ndarray]:
        logit = self._at(self.logit, cols)
        lo = np.where(logit, self._at(self.lower, cols), 0.0)
        width = np.where(logit, self._at(self.upper - self.lower, cols), 1.0)
        return lo, width

    def to_latent(self, Y, *, cols=None) -> np.ndarray:
        """Apply only the logit step (no z-scoring); NaN stays NaN. Shape preserved.

        With ``cols`` (int array), ``Y`` is 1-D and ``Y[k]`` lies in benchmark ``cols[k]``."""
        Y = self._check(Y, cols)
        lo, width = self._span(cols)
        e = self.eps / 100.0
        p = np.clip((Y - lo) / width, e, 1.0 - e)
        with np.errstate(invalid="ignore"):
            lg = np.log(p) - np.log1p(-p)
        return np.where(self._at(self.logit, cols), lg, Y)

    def from_latent(self, X, *, clip: bool = True, cols=None) -> np.ndarray:
        """Invert :meth:`to_latent` and optionally clip to ``[lower, upper]``."""
        X = self._check(X, cols)
        lo, width = self._span(cols)
        with np.errstate(over="ignore"):
            sig = lo + width / (1.0 + np.exp(-X))
        Y = np.where(self._at(self.logit, cols), sig, X)
        if clip:
            lower, upper = self._at(self.lower, cols), self._at(self.upper, cols)
            Y = np.clip(Y, np.where(np.isnan(lower), -np.inf, lower),
                        np.where(np.isnan(upper), np.inf, upper))
        return Y

    # ------------------------------------------------------------------ API
    def fit(self, Y) -> "ScaleTransform":
        """Learn column means/stds of the transformed observed scores.

        Parameters
        ----------
        Y : array_like, shape (n_models, n_benchmarks)
            Scores in score units, NaN = missing.
        """
        X = self.to_latent(Y)
        if X.ndim != 2:
            raise BadInputError(f"expected a 2-D score matrix, got shape {X.shape}")
        obs = ~np.isnan(X)
        n = obs.sum(axis=0)
        s = np.where(obs, X, 0.0).sum(axis=0)
        mean = np.divide(s, n, out=np.zeros_like(s), where=n > 0)
        dev = np.where(obs, X - mean, 0.0)
        var = np.divide((dev * dev).sum(axis=0), n, out=np.zeros_like(s), where=n > 0)
        return self._set_moments(mean, var, n)

    def fit_cells(self, values, cols, n_benchmarks: int) -> "ScaleTransform":
        """:meth:`fit` from observed cells only: ``values`` (n_cells,) in score units in
        benchmark columns ``cols`` (n_cells,), of a matrix with ``n_benchmarks`` columns
        (no (n_models, n_benchmarks) array; the same figures up to the order of sums)."""
        cols = np.asarray(cols, dtype=np.int64)
        X = self.to_latent(np.asarray(values, dtype=float), cols=cols)
        if self.logit.shape[0] != int(n_benchmarks):
            raise BadInputError(f"expected {self.logit.shape[0]} benchmark columns, got "
                                f"{n_benchmarks}")
        n = np.bincount(cols, minlength=n_benchmarks)
        s = np.bincount(cols, weights=X, minlength=n_benchmarks)
        mean = np.divide(s, n, out=np.zeros_like(s), where=n > 0)
        dev = X - mean[cols]
        var = np.divide(np.bincount(cols, weights=dev * dev, minlength=n_benchmarks), n,
                        out=np.zeros_like(s), where=n > 0)
        return self._set_moments(mean, var, n)

    def _set_moments(self, mean, var, n) -> "ScaleTransform":
        """Store the columns' means and stds from their observed ``n``, ``mean`` and
        population ``var`` (the logit columns' variances shrunk by ``spread_prior``)."""
        pool = self.logit & (n >= _POOL_MIN_MODELS)
        if self.spread_prior > 0 and pool.any():
            n0, pooled = self.spread_prior, float(np.median(var[pool]))
            var = np.where(self.logit & (n > 0), (n * var + n0 * pooled) / (n + n0), var)
        std = np.sqrt(var)
        std[std < _STD_FLOOR] = 1.0
        self.mean_, self.std_, self.n_observed_ = mean, std, n
        return self

    def _fitted(self) -> None:
        if not hasattr(self, "mean_"):
            raise NotFittedError("ScaleTransform is not fitted; call fit(Y) first")

    def transform(self, Y, *, cols=None) -> np.ndarray:
        """Scores (..., n_benchmarks) in score units -> z-scored standardized values.

        With ``cols`` (int array), ``Y`` is 1-D and ``Y[k]`` lies in benchmark ``cols[k]``
        (single cells, without building a full matrix)."""
        self._fitted()
        X = self.to_latent(Y, cols=cols)
        Z = (X - self._at(self.mean_, cols)) / self._at(self.std_, cols)
        return np.clip(Z, -self.z_bound, self.z_bound) if self.z_bound > 0 else Z

    def inverse_transform(self, Z, *, clip: bool = True, cols=None) -> np.ndarray:
        """Standardized values (..., n_benchmarks) -> scores in score units, clipped to
        each benchmark's ``[lower, upper]`` when ``clip``; ``cols`` as in :meth:`transform`."""
        self._fitted()
        Z = self._check(Z, cols)
        return self.from_latent(Z * self._at(self.std_, cols) + self._at(self.mean_, cols),
                                clip=clip, cols=cols)

    def to_scores(self, Z) -> np.ndarray:
        """:meth:`inverse_transform` (clipped), NaN for benchmarks without any score in
        the fitted matrix (they cannot be predicted). ``Z`` is (..., n_benchmarks)."""
        return np.where(self.n_observed_ > 0, self.inverse_transform(Z), np.nan)

    def to_scores_at(self, z, cols) -> np.ndarray:
        """:meth:`to_scores` of single cells: ``z`` (n_cells,) in benchmark columns ``cols``."""
        cols = np.asarray(cols, dtype=np.int64)
        return np.where(self.n_observed_[cols] > 0, self.inverse_transform(z, cols=cols), np.nan)

    def fit_transform(self, Y) -> np.ndarray:
        """``fit(Y).transform(Y)``."""
        return self.fit(Y).transform(Y)
