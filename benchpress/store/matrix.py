"""The resolved score matrix as numpy, for the predictor.

The store knows nothing of the predictor: it hands over a dense (n_models, n_benchmarks)
float array with NaN for missing cells, the row and column ids in registry order, and each
benchmark's scale metadata (and its `BenchmarkScales`, built here and nowhere else),
optionally restricted to some sources (`--sources benchpress,epoch`: a source matches by
its id or an id prefix followed by "-"). One type serves every use: a registry's matrix,
a snapshot version in a drift run (its `label`), a matrix with one model left out.

>>> import numpy as np
>>> from benchpress.scales import BenchmarkScales
>>> sc = BenchmarkScales(np.array(["percent", "elo"]), np.array([0.0, np.nan]),
...                      np.array([100.0, np.nan]))
>>> m = ScoreMatrix.from_arrays(np.array([[50.0, 1200.0], [70.0, np.nan]]), ["a", "b"],
...                             ["hle", "arena"], sc, label="v1")
>>> m.without_model("a").model_ids, m.scales.kind.tolist()
(['b'], ['percent', 'elo'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.input_limits import input_limits
from benchpress.errors import BadInputError, UsageError, listed
from benchpress.scales import BenchmarkScales
from benchpress.store.noise import measurement_noise
from benchpress.store.sources import names_source, source_names
from benchpress.store.tables import read_table

__all__ = ["ScoreMatrix", "load_matrix", "match_sources", "present_sources", "held_sources",
           "as_published"]


@dataclass(frozen=True)
class ScoreMatrix:
    """Scores in benchmark units; `values[i, j]` is model_ids[i] on benchmark_ids[j].

    `scales` (the benchmarks' kind and range, aligned with the columns) is built from
    `benchmarks` when not given; `label` names the version (a snapshot tag in drift).
    A registry's matrix lists in `benchmarks["sources"]` the sources of each column's
    cells (`source_reach`), and in `benchmarks["noise"]` each benchmark's measurement noise
    (score units, null when unknown; `store.noise`), which `compare` counts for observed
    scores.
    """

    values: np.ndarray          # (n_models, n_benchmarks), NaN = not observed
    model_ids: list[str]
    benchmark_ids: list[str]
    benchmarks: pl.DataFrame    # benchmark metadata rows, in column order
    models: pl.DataFrame        # model metadata rows, in row order
    label: str = ""
    scales: BenchmarkScales = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n_m, n_b = np.shape(self.values)
        if n_m != len(self.model_ids) or n_b != len(self.benchmark_ids):
            raise BadInputError(f"a {n_m}x{n_b} matrix needs {n_m} model ids and {n_b} "
                                f"benchmark ids, got {len(self.model_ids)} and "
                                f"{len(self.benchmark_ids)}")
        if self.scales is None:
            object.__setattr__(self, "scales", BenchmarkScales.from_records(
                self.benchmarks.to_dicts(), self.benchmark_ids))

    @classmethod
    def from_arrays(cls, values, model_ids, benchmark_ids, scales: BenchmarkScales, *,
                    label: str = "") -> "ScoreMatrix":
        """A matrix without registry metadata (the metadata frames hold ids and scales)."""
        nan_none = lambda a: [None if np.isnan(v) else float(v) for v in a]  # noqa: E731
        benchmarks = pl.DataFrame({"benchmark_id": list(benchmark_ids),
                                   "scale": scales.kind.tolist(), "lower": nan_none(scales.lower),
                                   "upper": nan_none(scales.upper), "unit": scales.unit.tolist(),
                                   "higher_is_better": [None if d == 0 else bool(d > 0)
                                                        for d in scales.direction]},
                                  schema_overrides={"lower": pl.Float64, "upper": pl.Float64,
                                                    "higher_is_better": pl.Boolean})
        return cls(np.asarray(values, dtype=float), list(model_ids), list(benchmark_ids),
                   benchmarks, pl.DataFrame({"model_id": list(model_ids)}), label, scales)

    def source_reach(self) -> np.ndarray | None:
        """Which sources report each benchmark: (n_sources, n_benchmarks) bool, the
        sources in sorted order; None for a matrix whose benchmarks do not list their
        sources (one made from arrays, or an artifact stored before 2026-12-03)."""
        if "sources" not in self.benchmarks.columns:
            return None
        pairs = (self.benchmarks.select(pl.col("sources")).with_row_index("j")
                 .explode("sources").drop_nulls())
        names, s = np.unique(pairs["sources"].to_numpy().astype(str), return_inverse=True)
        reach = np.zeros((names.size, len(self.benchmark_ids)), dtype=bool)
        reach[s, pairs["j"].to_numpy()] = True
        return reach

    def without_model(self, model_id: str) -> "ScoreMatrix":
        """The same matrix with one model's row left out (columns and scales unchanged)."""
        if model_id not in self.model_ids:
            raise BadInputError(f"model '{model_id}' is not in the registry")
        keep = np.array([m != model_id for m in self.model_ids])
        return ScoreMatrix(self.values[keep], [m for m in self.model_ids if m != model_id],
                           self.benchmark_ids, self.benchmarks,
                           self.models.filter(pl.col("model_id") != model_id), self.label,
                           self.scales)



def match_sources(all_ids: list[str], wanted: list[str]) -> list[str]:
    """The source ids `wanted` picks (see `names_source`), in the order the names are given."""
    unmatched = [w for w in wanted if not any(names_source(w, s) for s in all_ids)]
    if unmatched:  # (a registry's sources table has a row per version: each id once)
        raise UsageError(f"--sources: no source matches {listed(unmatched)}; known: "
                         f"{listed(dict.fromkeys(all_ids), 20, quote=False)}")
    return [s for w in wanted for s in all_ids if names_source(w, s)]


def present_sources(folder: Path, wanted: list[str] | None) -> list[str] | None:
    """The names in `wanted` that match a source of the registry or snapshot `folder` (None:
    all sources): the sources a plan or a series of monthly snapshots names that a snapshot
    does not have yet are left out; BadInputError when it has none of them."""
    if not wanted:
        return None
    chosen, known = held_sources(folder, wanted)
    if not chosen:
        raise BadInputError(f"{folder.name}: none of the sources {listed(wanted, quote=False)} "
                            f"is in it; it has {listed(known, 20, quote=False)}")
    return chosen


def held_sources(folder: Path, wanted: list[str]) -> tuple[list[str], list[str]]:
    """The names in `wanted` that match a source of `folder` (possibly none), and the
    folder's source ids (each once): one read of its sources table."""
    known = read_table(folder, "sources")["source_id"].unique(maintain_order=True).to_list()
    return [w for w in wanted if any(names_source(w, s) for s in known)], known


def _check_size(n_models: int, n_benchmarks: int, what: str) -> None:
    """Refuse a matrix of more than `InputLimits.max_fit_models` models or `InputLimits.max_fit_cells`
    cells before it is allocated."""
    limits = input_limits()
    cells = n_models * n_benchmarks
    if n_models > limits.max_fit_models or cells > limits.max_fit_cells:
        over = (f"more than the {limits.max_fit_models:,} models" if n_models > limits.max_fit_models
                else f"more than the {limits.max_fit_cells:,} cells")
        name = "MODELS" if n_models > limits.max_fit_models else "CELLS"
        raise BadInputError(
            f"the score matrix ({what}) has {n_models:,} models x {n_benchmarks:,} benchmarks "
            f"({cells:,} cells), {over} the predictor is sized for; predict from fewer "
            f"sources with --sources, or raise BENCHPRESS_MAX_FIT_{name}")


def load_matrix(folder: Path, *, sources: list[str] | str | None = None,
                label: str = "") -> ScoreMatrix:
    """Read the resolved matrix from a registry or snapshot folder.

    With `sources` ("a,b" or a list, `store.sources.source_names`), only their observations
    are used, and where they disagree the source named first wins (so `--sources
    benchpress,epoch` keeps every BenchPress value and adds Epoch's values only where
    BenchPress has none).

    Raises
    ------
    BadInputError
        The matrix would hold more than `InputLimits.max_fit_models` models or
        `InputLimits.max_fit_cells` cells.
    """
    sources = source_names(sources)
    cells = every_cell = read_table(folder, "cells")
    if sources:
        known = read_table(folder, "sources")["source_id"].to_list()
        chosen = list(dict.fromkeys(match_sources(known, sources)))  # first-named first
        rank = {sid: len(chosen) - k for k, sid in enumerate(chosen)}
        from benchpress.store.resolve import resolve_cells  # (pandera: only when used)

        scores = read_table(folder, "scores").filter(pl.col("source_id").is_in(chosen))
        cells = resolve_cells(scores, {}, rank)
    models = (read_table(folder, "models").filter(pl.col("model_id").is_in(cells["model_id"].implode()))
              .sort("ordinal"))
    reported = cells.group_by("benchmark_id").agg(pl.col("source_id").unique().sort()
                                                  .alias("sources"))
    benchmarks = read_table(folder, "benchmarks")
    # each benchmark's measurement noise, from every source's disagreements in the folder
    # (the whole cells table, whatever `sources` picks): `compare` counts it in `p_ahead`
    noise = measurement_noise(every_cell, benchmarks)
    benchmarks = (benchmarks.join(reported, on="benchmark_id")
                  .join(noise, on="benchmark_id", how="left").sort("ordinal"))
    model_ids, bench_ids = models["model_id"].to_list(), benchmarks["benchmark_id"].to_list()
    _check_size(len(model_ids), len(bench_ids), label or str(folder))
    at = (cells.join(models.select("model_id").with_row_index("i"), on="model_id")
          .join(benchmarks.select("benchmark_id").with_row_index("j"), on="benchmark_id"))
    values = np.full((len(model_ids), len(bench_ids)), np.nan)
    values[at["i"].to_numpy(), at["j"].to_numpy()] = at["score"].to_numpy()
    return ScoreMatrix(values, model_ids, bench_ids, benchmarks, models, label)


def as_published(folder: Path, matrix: ScoreMatrix, *, sources: list[str] | None = None):
    """``matrix.values`` (a matrix loaded from ``folder`` with ``sources``) as they stood
    before a date, for sources with a history: a function ``values_at(date)`` (ISO date ->
    a new (n_models, n_benchmarks) array), or None when no source has more than one
    version (the values never change with the date). Reads the folder once.

    A cell whose value comes from a version of its source labelled on or after the date
    takes that source's value in its newest version before the date, or NaN when the
    source had none then. A source with one version is taken as it is (its label may be
    the day it was ingested, not published). Simplification: a cell is not re-resolved
    among sources, so where a later version won a conflict that an older one would have
    lost, the older version's value is shown."""
    from benchpress.store.resolve import NOT_OBSERVED  # (pandera: only when used)

    scores = read_table(folder, "scores")
    if "source_version" not in scores.columns:
        return None
    versions = (scores.filter(pl.col("source_version").is_not_null())
                .group_by("source_id").agg(pl.col("source_version").n_unique().alias("n")))
    history = versions.filter(pl.col("n") > 1)["source_id"].to_list()
    if sources:
        # (the sources with a history among those asked for; none of them may have one)
        history = [h for h in history if any(names_source(w, h) for w in sources)]
    if not history:
        return None
    keys = ["source_id", "model_id", "benchmark_id"]
    cells = (read_table(folder, "cells").filter(pl.col("source_id").is_in(history))
             .select(*keys, "source_version")
             .join(pl.DataFrame({"model_id": matrix.model_ids}).with_row_index("i"),
                   on="model_id")
             .join(pl.DataFrame({"benchmark_id": matrix.benchmark_ids}).with_row_index("j"),
                   on="benchmark_id"))
    observed = scores.filter(pl.col("source_id").is_in(history)
                             & ~pl.col("audit_status").is_in(NOT_OBSERVED).fill_null(False)
                             ).select(*keys, "source_version", "score").sort("source_version")

    def values_at(date: str) -> np.ndarray:
        late = cells.filter(pl.col("source_version") >= date).drop("source_version")
        then = (observed.filter(pl.col("source_version") < date)
                .group_by(keys).agg(pl.col("score").last()))
        found = late.join(then, on=keys, how="left")
        values = matrix.values.copy()
        values[found["i"].to_numpy(), found["j"].to_numpy()] = \
            found["score"].fill_null(np.nan).to_numpy()
        return values

    return values_at
