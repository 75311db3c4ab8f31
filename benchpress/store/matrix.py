"""The resolved score matrix as numpy, for the predictor.

The store knows nothing of the predictor: it hands over a dense (n_models, n_benchmarks)
float array with NaN for missing cells, the row and column ids in registry order, and each
benchmark's scale metadata, optionally restricted to some sources (`--sources
benchpress,epoch`: a source matches by its id or an id prefix followed by "-").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.errors import UsageError
from benchpress.store.resolve import resolve_cells
from benchpress.store.sources import names_source
from benchpress.store.tables import read_table

__all__ = ["ScoreMatrix", "load_matrix", "match_sources"]


@dataclass(frozen=True)
class ScoreMatrix:
    """Scores in benchmark units; `values[i, j]` is model_ids[i] on benchmark_ids[j]."""

    values: np.ndarray          # (n_models, n_benchmarks), NaN = not observed
    model_ids: list[str]
    benchmark_ids: list[str]
    benchmarks: pl.DataFrame    # benchmark metadata rows, in column order
    models: pl.DataFrame        # model metadata rows, in row order



def match_sources(all_ids: list[str], wanted: list[str]) -> list[str]:
    """The source ids `wanted` picks (see `names_source`), in the order the names are given."""
    unmatched = [w for w in wanted if not any(names_source(w, s) for s in all_ids)]
    if unmatched:
        raise UsageError(f"--sources: no source matches {unmatched}; known: {', '.join(all_ids)}")
    return [s for w in wanted for s in all_ids if names_source(w, s)]


def load_matrix(folder: Path, *, sources: list[str] | None = None) -> ScoreMatrix:
    """Read the resolved matrix from a registry or snapshot folder.

    With `sources`, only their observations are used, and where they disagree the source
    named first wins (so `--sources benchpress,epoch` keeps every BenchPress value and
    adds Epoch's values only where BenchPress has none).
    """
    cells = read_table(folder, "cells")
    if sources:
        known = read_table(folder, "sources")["source_id"].to_list()
        chosen = list(dict.fromkeys(match_sources(known, sources)))  # first-named first
        rank = {sid: len(chosen) - k for k, sid in enumerate(chosen)}
        scores = read_table(folder, "scores").filter(pl.col("source_id").is_in(chosen))
        cells = resolve_cells(scores, {}, rank)
    models = (read_table(folder, "models").filter(pl.col("model_id").is_in(cells["model_id"].implode()))
              .sort("ordinal"))
    benchmarks = (read_table(folder, "benchmarks")
                  .filter(pl.col("benchmark_id").is_in(cells["benchmark_id"].implode())).sort("ordinal"))
    model_ids, bench_ids = models["model_id"].to_list(), benchmarks["benchmark_id"].to_list()
    at = (cells.join(models.select("model_id").with_row_index("i"), on="model_id")
          .join(benchmarks.select("benchmark_id").with_row_index("j"), on="benchmark_id"))
    values = np.full((len(model_ids), len(bench_ids)), np.nan)
    values[at["i"].to_numpy(), at["j"].to_numpy()] = at["score"].to_numpy()
    return ScoreMatrix(values, model_ids, bench_ids, benchmarks, models)
