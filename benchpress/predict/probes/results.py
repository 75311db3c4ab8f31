"""What a probe search reports: the error of one probe set (:class:`ProbeScore`), a
greedy selection (:class:`ProbeSelection`) and how a chosen set moved between two
selections (:func:`probe_set_change`); see :mod:`benchpress.predict.probes.search`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import polars as pl

__all__ = ["ProbeScore", "ProbeSelection", "probe_set_change"]


@dataclass(frozen=True)
class ProbeScore:
    """Transcript-recovery error of one probe set (see module doc); ``cost`` is the
    probes' summed cost (None when some cost is unknown)."""

    probes: tuple
    cost: float | None
    medae: float
    medape: float
    medae_hidden: float
    medape_hidden: float
    within5_hidden: float
    n_cells: int
    n_probe_cells: int
    n_unpredicted: int
    n_models: int
    n_models_missing_probe: int
    n_models_without_probes: int

    def to_json(self) -> dict:
        """JSON-ready dict (NaN -> None)."""
        return {**{k: None if isinstance(v, float) and v != v else v
                   for k, v in asdict(self).items()}, "probes": list(self.probes)}


@dataclass
class ProbeSelection:
    """Outcome of :meth:`ProbeSearch.select`: the chosen set at every k = 1..K."""

    objective: str
    scope: str
    method: str
    steps: list            # ProbeScore of the chosen set at k = 1..K
    candidates: tuple
    budget: float | None
    swaps: list = field(default_factory=list)   # {"k", "out", "in", "before", "after"}
    n_sets_scored: int = 0
    seconds: float = 0.0
    fit_seconds: float = 0.0

    @property
    def final(self) -> ProbeScore:
        """The chosen set at the largest k."""
        return self.steps[-1]

    def curve(self) -> pl.DataFrame:
        """One row per k: ``k, probes, cost, medae, medape, medae_hidden, medape_hidden``."""
        return pl.DataFrame([{
            "k": len(s.probes), "probes": ",".join(s.probes), "cost": s.cost,
            "medae": s.medae, "medape": s.medape, "medae_hidden": s.medae_hidden,
            "medape_hidden": s.medape_hidden} for s in self.steps],
            schema_overrides={"cost": pl.Float64})

    def to_json(self) -> dict:
        return {"objective": self.objective, "scope": self.scope, "method": self.method,
                **self.final.to_json(), "budget": self.budget, "candidates": list(self.candidates),
                "n_candidates": len(self.candidates), "steps": [s.to_json() for s in self.steps],
                "swaps": self.swaps, "n_sets_scored": self.n_sets_scored,
                "seconds": self.seconds, "fit_seconds": self.fit_seconds}


def probe_set_change(previous, current) -> dict:
    """How a probe set moved between two selections: ``kept`` and ``added`` (in the order
    of ``current``) and ``dropped`` (in the order of ``previous``), lists of ids."""
    prev, cur = set(previous), set(current)
    return {"kept": [b for b in current if b in prev], "added": [b for b in current if b not in prev],
            "dropped": [b for b in previous if b not in cur]}
