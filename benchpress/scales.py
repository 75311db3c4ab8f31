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

Each benchmark also carries its direction (``higher_is_better``: +1, -1, or 0 when it has
none) and unit. Figures are never pooled across scales: :meth:`BenchmarkScales.labels`
names each benchmark's scale for figures (``"percent"``, the headline, is a percentage
where higher is better; a rate where lower is better is ``"percent (lower is better)"``)
and :meth:`BenchmarkScales.left_out` says which benchmarks the predictor leaves out of
its fits, and why.

>>> sc = BenchmarkScales.from_records(
...     [{"benchmark_id": "hle", "scale": "percent", "lower": 0, "upper": 100},
...      {"benchmark_id": "halluc", "scale": "percent", "lower": 0, "upper": 100,
...       "higher_is_better": False},
...      {"benchmark_id": "len", "scale": "words", "lower": 0, "upper": None,
...       "higher_is_better": None, "unit": "words"}], ["hle", "halluc", "len"])
>>> sc.labels().tolist()
['percent', 'percent (lower is better)', 'words (no direction)']
>>> sc.direction.tolist(), sc.left_out().tolist()
([1.0, -1.0, 0.0], ['', '', 'no direction (higher or lower is not better)'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, UsageError

__all__ = ["BenchmarkScales", "LOGIT_RULES", "HEADLINE", "LOG_KINDS", "LEFT_OUT_KINDS",
           "scale_label"]

#: Rules choosing which benchmarks are logit-transformed.
#: ``"percent"``: only benchmarks whose scale kind is ``percent``.
#: ``"percent_or_0_100"``: percent, or any other scale bounded to exactly [0, 100]
#: (e.g. ``index``). This reproduces the published BenchPress code, whose data-driven
#: heuristic treats a column as percent when all observed values lie in [-1, 101].
#: ``"none"``: no logit at all (z-scoring only).
LOGIT_RULES = ("percent", "percent_or_0_100", "none")

#: The scale of the headline figures: percentages where higher is better. Every other
#: scale's figures are reported apart, in its own units (:meth:`BenchmarkScales.labels`).
HEADLINE = "percent"

#: Scale kinds the predictor models on a log scale (money, time and counts: a cost of $2
#: and $20 are as far apart as $20 and $200), before z-scoring.
LOG_KINDS = frozenset({"dollars", "seconds", "count"})

#: Scale kinds the predictor leaves out of every fit, with the reason it says; chosen by
#: measuring whether they help or hurt the percent cells' held-out and temporal error
#: (docs/results/scales.md, docs/results/tries.md). A benchmark without a direction is
#: always left out (see :meth:`BenchmarkScales.left_out`).
LEFT_OUT_KINDS: dict[str, str] = {}

#: The kind whose benchmarks each name their own unit (``score``: "unitless
#: task-specific"): its figures go by unit. Every other kind is one unit.
_BY_UNIT = frozenset({"score"})
NO_DIRECTION = "no direction (higher or lower is not better)"


def scale_label(kind: str, unit: str = "", direction: float = 1.0) -> str:
    """The name of a benchmark's scale in figures: its kind, the unit for kinds whose
    benchmarks each have their own (``score``), and its direction unless higher is better.

    >>> scale_label("percent"), scale_label("score", "judge score (0-10)", -1)
    ('percent', 'score [judge score (0-10)] (lower is better)')
    """
    label = str(kind)
    if label in _BY_UNIT and unit and unit != label:
        label += f" [{unit}]"
    if direction < 0:
        label += " (lower is better)"
    elif direction == 0:
        label += " (no direction)"
    return label


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
    unit : ndarray of str, shape (n_benchmarks,), optional
        Each benchmark's unit ("" when not given).
    direction : ndarray of float, shape (n_benchmarks,), optional
        +1 where higher is better (the default), -1 where lower is better, 0 where
        neither is (a length in words).
    """

    kind: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    unit: np.ndarray | None = None
    direction: np.ndarray | None = None

    def __post_init__(self) -> None:
        kind = np.asarray(self.kind, dtype=str)
        lower = np.asarray(self.lower, dtype=float)
        upper = np.asarray(self.upper, dtype=float)
        unit = np.full(kind.shape, "", dtype=object) if self.unit is None else self.unit
        unit = np.asarray(unit, dtype=str)
        direction = (np.ones(kind.shape) if self.direction is None
                     else np.sign(np.asarray(self.direction, dtype=float)))
        if kind.ndim != 1 or any(a.shape != kind.shape for a in (lower, upper, unit, direction)):
            raise BadInputError(
                f"scale arrays must be 1-D and equally long, got {kind.shape}, "
                f"{lower.shape}, {upper.shape}, {unit.shape}, {direction.shape}"
            )
        if not np.isfinite(direction).all():
            raise BadInputError("direction must be +1, -1 or 0 per benchmark (no NaN)")
        bad = np.isfinite(lower) & np.isfinite(upper) & (upper <= lower)
        if bad.any():
            raise BadInputError(f"upper <= lower for benchmark columns {np.flatnonzero(bad).tolist()}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "direction", direction)

    @property
    def n_benchmarks(self) -> int:
        """Number of benchmark columns."""
        return int(self.kind.shape[0])

    def subset(self, cols) -> "BenchmarkScales":
        """The scales of the benchmark columns ``cols`` (indices or a boolean mask)."""
        return BenchmarkScales(self.kind[cols], self.lower[cols], self.upper[cols],
                               self.unit[cols], self.direction[cols])

    def unturned(self) -> "BenchmarkScales":
        """The same scales with every benchmark read as given (direction +1): a transform
        of them neither turns a column nor leaves one out for want of a direction (for
        checks that apply directions of their own)."""
        return BenchmarkScales(self.kind, self.lower, self.upper, self.unit,
                               np.ones(self.n_benchmarks))

    def arrays(self) -> tuple:
        """Every array describing the scales, for digests of what a fit was made on."""
        return (self.kind.astype("U"), self.lower, self.upper, self.unit.astype("U"),
                self.direction)

    def labels(self) -> np.ndarray:
        """Each benchmark's scale as figures name it (:func:`scale_label`), shape
        (n_benchmarks,): figures are computed per label, never pooled across labels, and
        :data:`HEADLINE` is the headline's."""
        return np.array([scale_label(k, u, d) for k, u, d in
                         zip(self.kind, self.unit, self.direction)], dtype=object).astype(str)

    def headline(self) -> np.ndarray:
        """Boolean mask (n_benchmarks,) of the headline scale's benchmarks (percentages
        where higher is better)."""
        return (self.kind == HEADLINE) & (self.direction > 0)

    def left_out(self) -> np.ndarray:
        """Why the predictor leaves each benchmark out of its fits, shape (n_benchmarks,):
        "" for the benchmarks it fits; a benchmark without a direction (its scores say
        neither better nor worse, e.g. a summary's length), and the kinds of
        :data:`LEFT_OUT_KINDS`, with their reason."""
        why = np.array([LEFT_OUT_KINDS.get(k, "") for k in self.kind], dtype=object)
        why[self.direction == 0] = NO_DIRECTION
        return why.astype(str)

    def log_mask(self) -> np.ndarray:
        """Boolean mask (n_benchmarks,) of the columns modelled on a log scale
        (:data:`LOG_KINDS`)."""
        return np.isin(self.kind, sorted(LOG_KINDS))

    @classmethod
    def from_records(cls, records, benchmark_ids) -> "BenchmarkScales":
        """Build from metadata rows (mappings with ``benchmark_id``, ``scale``, ``lower``,
        ``upper``; blank/None bounds mean unbounded; optional ``unit`` and
        ``higher_is_better``: True or absent = +1, False = -1, None = no direction),
        ordered like ``benchmark_ids``.

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

        def _direction(r) -> float:
            if "higher_is_better" not in r:
                return 1.0
            hib = r["higher_is_better"]
            return 0.0 if hib is None else (1.0 if bool(hib) else -1.0)

        rows = [by_id[b] for b in benchmark_ids]
        return cls(
            kind=np.array([str(r["scale"]) for r in rows]),
            lower=np.array([_num(r.get("lower")) for r in rows]),
            upper=np.array([_num(r.get("upper")) for r in rows]),
            unit=np.array([str(r.get("unit") or "") for r in rows], dtype=object),
            direction=np.array([_direction(r) for r in rows]),
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
