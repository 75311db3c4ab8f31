"""Benchmark scale metadata (kind and valid range per benchmark column).

A neutral module: the store builds a matrix's scales here
(:attr:`benchpress.store.matrix.ScoreMatrix.scales`) and the predictor transforms scores
with them (:mod:`benchpress.predict.transform`), without either importing the other.
``benchpress.predict.BenchmarkScales`` is the same class.

>>> sc = BenchmarkScales.from_records(
...     [{"benchmark_id": "hle", "scale": "percent", "lower": 0, "upper": 100},
...      {"benchmark_id": "elo", "scale": "elo", "lower": None, "upper": None}], ["hle", "elo"])
>>> sc.logit_mask().tolist(), sc.n_benchmarks
([True, False], 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, UsageError

__all__ = ["BenchmarkScales", "LOGIT_RULES"]

#: Rules choosing which benchmarks are logit-transformed.
#: ``"percent"``: only benchmarks whose scale kind is ``percent``.
#: ``"percent_or_0_100"``: percent, or any other scale bounded to exactly [0, 100]
#: (e.g. ``index``). This reproduces the published BenchPress code, whose data-driven
#: heuristic treats a column as percent when all observed values lie in [-1, 101].
#: ``"none"``: no logit at all (z-scoring only).
LOGIT_RULES = ("percent", "percent_or_0_100", "none")


@dataclass(frozen=True)
class BenchmarkScales:
    """Scale metadata of the benchmark columns, aligned with the score matrix.

    Parameters
    ----------
    kind : ndarray of str, shape (n_benchmarks,)
        Scale kind per benchmark (``percent``, ``index``, ``elo``, ``rating``,
        ``dollars``, ``score``).
    lower, upper : ndarray of float, shape (n_benchmarks,)
        Valid score range in score units; NaN means unbounded on that side.
    """

    kind: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        kind = np.asarray(self.kind, dtype=str)
        lower = np.asarray(self.lower, dtype=float)
        upper = np.asarray(self.upper, dtype=float)
        if kind.ndim != 1 or lower.shape != kind.shape or upper.shape != kind.shape:
            raise BadInputError(
                f"scale arrays must be 1-D and equally long, got {kind.shape}, "
                f"{lower.shape}, {upper.shape}"
            )
        bad = np.isfinite(lower) & np.isfinite(upper) & (upper <= lower)
        if bad.any():
            raise BadInputError(f"upper <= lower for benchmark columns {np.flatnonzero(bad).tolist()}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @property
    def n_benchmarks(self) -> int:
        """Number of benchmark columns."""
        return int(self.kind.shape[0])

    @classmethod
    def from_records(cls, records, benchmark_ids) -> "BenchmarkScales":
        """Build from metadata rows (mappings with ``benchmark_id``, ``scale``, ``lower``,
        ``upper``; blank/None bounds mean unbounded), ordered like ``benchmark_ids``.

        Raises
        ------
        BadInputError
            If a benchmark id has no metadata row.
        """
        by_id = {str(r["benchmark_id"]): r for r in records}
        missing = [b for b in benchmark_ids if b not in by_id]
        if missing:
            raise BadInputError(f"no scale metadata for benchmarks: {missing}")

        def _num(v) -> float:
            if v is None or (isinstance(v, str) and not v.strip()):
                return np.nan
            return float(v)

        rows = [by_id[b] for b in benchmark_ids]
        return cls(
            kind=np.array([str(r["scale"]) for r in rows]),
            lower=np.array([_num(r.get("lower")) for r in rows]),
            upper=np.array([_num(r.get("upper")) for r in rows]),
        )

    def logit_mask(self, rule: str = "percent") -> np.ndarray:
        """Boolean mask, shape (n_benchmarks,), of columns to logit-transform.

        Parameters
        ----------
        rule : {"percent", "percent_or_0_100", "none"}
            See :data:`LOGIT_RULES`. Only columns with both bounds finite can be logit.
        """
        if rule not in LOGIT_RULES:
            raise UsageError(f"unknown logit rule {rule!r}; choose one of {LOGIT_RULES}")
        bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        if rule == "none":
            return np.zeros(self.n_benchmarks, dtype=bool)
        mask = self.kind == "percent"
        if rule == "percent_or_0_100":
            mask = mask | ((self.lower == 0.0) & (self.upper == 100.0))
        return mask & bounded
