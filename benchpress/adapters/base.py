"""The interchange format every adapter returns.

An adapter reshapes one published format into three long frames and checks nothing:
validation, id normalization and unit conversion happen later, in `benchpress.validate`.
Every row carries `row`, a pointer back into the raw file ("scores[12]", "line 7",
"observed[3][17]") so that any later error can name where the value came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

__all__ = [
    "MODEL_COLUMNS",
    "BENCHMARK_COLUMNS",
    "SCORE_COLUMNS",
    "AdapterOutput",
    "Adapter",
    "frame",
]

# Raw columns an adapter fills; a column a format lacks is left null.
MODEL_COLUMNS: dict[str, pl.DataType] = {
    "model_id": pl.String,        # the source's own id (normalized later)
    "name": pl.String,
    "provider": pl.String,
    "release_date": pl.String,    # ISO date text as given
    "is_reasoning": pl.Boolean,
    "open_weights": pl.Boolean,
    "setting": pl.String,         # JSON text: mode, effort, tools ... as the source states them
    # what the row is: "model" (null means model), "agent" (a scaffold or system running one
    # or more models: a SWE-bench entry) or "submission" (one evaluation run submitted to a
    # leaderboard: a tau2-bench submission); `schemas.ENTRY_KINDS`
    "entry_kind": pl.String,
    "base_model_id": pl.String,   # the model an agent or submission runs, as the source names it
    "row": pl.String,
}
BENCHMARK_COLUMNS: dict[str, pl.DataType] = {
    "benchmark_id": pl.String,
    "name": pl.String,
    "category": pl.String,
    "metric": pl.String,          # the source's metric label ("% correct", "Elo rating")
    # what a source declares about a benchmark the contract lacks (null: inferred from
    # `metric`, higher is better): its scale kind (schemas/scales.yaml), unit label
    # ("%", "words", "TrueSkill mu"), direction and bounds (null: the scale's)
    "scale": pl.String,
    "unit": pl.String,
    "higher_is_better": pl.Boolean,
    "lower": pl.Float64,
    "upper": pl.Float64,
    "row": pl.String,
}
SCORE_COLUMNS: dict[str, pl.DataType] = {
    "model_id": pl.String,
    "benchmark_id": pl.String,
    "score_raw": pl.String,       # the value exactly as written in the file
    "unit": pl.String,            # null = the benchmark's own scale; "fraction" = 0-1
    "reference_url": pl.String,
    "source_type": pl.String,     # official_blog, tech_report, model_card, leaderboard, ...
    "reported_setting": pl.String,  # JSON text
    "audit_status": pl.String,
    "observed_at": pl.String,     # date the source gives for the result, if any
    "derived": pl.Boolean,        # true when computed from other rows (LiveBench overall)
    "notes": pl.String,
    "row": pl.String,
}


def frame(rows: list[dict], columns: dict[str, pl.DataType]) -> pl.DataFrame:
    """Build a frame with exactly `columns` (missing keys become null)."""
    data = {name: [r.get(name) for r in rows] for name in columns}
    return pl.DataFrame(data, schema=columns)


@dataclass(frozen=True)
class AdapterOutput:
    """What one raw file holds, reshaped. Frames follow the *_COLUMNS contracts."""

    models: pl.DataFrame
    benchmarks: pl.DataFrame
    scores: pl.DataFrame
    # Problems that belong to no single row but are worth counting (skipped blank lines...).
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_rows(cls, models: list[dict] = (), benchmarks: list[dict] = (),
                  scores: list[dict] = (), notes: list[str] = ()) -> "AdapterOutput":
        """Frames from lists of row dicts (keys missing from a row become null)."""
        return cls(frame(list(models), MODEL_COLUMNS), frame(list(benchmarks), BENCHMARK_COLUMNS),
                   frame(list(scores), SCORE_COLUMNS), list(notes))


@dataclass(frozen=True)
class Adapter:
    """A named reader: `detect(path, content)` says whether the file is in this format
    (`content` is the file's bytes, empty for a folder); `read(path)` reshapes it."""

    name: str
    detect: Callable[[Path, bytes], bool]
    read: Callable[[Path], AdapterOutput]
    # True when every score cites the file itself (a model card): the build fills a missing
    # reference_url with the source's URL.
    cites_source: bool = False
    # True when the file holds no citation of its own and the ingest must name one
    # (`--source-url`); ingest refuses the file without it.
    needs_citation: bool = False
    # changes of method the format declares, {benchmark_id: [version label, ...]} (a spec's
    # regimes, see `adapters.spec`): merged into the source config's `method_changes`
    method_changes: dict | None = None
