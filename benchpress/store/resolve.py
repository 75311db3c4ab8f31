"""Conflict resolution: which observation a (model, benchmark) cell shows.

Every observation stays in `scores`, of every version of every source; only each source's
newest version (`latest_versions`: the greatest `source_version` label, see
`store.sources`) takes part in a cell, so a value its publisher revised is replaced, never
counted as a disagreement. One exception: a benchmark whose method the source changed
(`store.methods`: the newest version has it only as `<id>@<version>`) keeps the source's
values of the old method from the last version that had them, so the old column stays. Among those, the cell takes the winner of this order:
1. not marked `dropped` by the publisher's audit;
2. source type priority from schemas/source_priority.csv (official blog first), the type
   an observation ranks as by who measured it (`store.provenance`: a vendor's card quoting
   another maker's model ranks as a third party);
3. recency: the newer source (its `published` date, else its build order);
4. the earlier row in that source.
`n_disagreeing` counts the other observations whose value differs from the winner.
An observation whose `audit_status` is in `NOT_OBSERVED` (a value its publisher flags as
estimated, not measured; a hand-entered value superseded by a newer citation or retracted)
stays in `scores` for audit but makes no cell.
"""

from __future__ import annotations

import polars as pl

from benchpress.store.provenance import ranked_type
from benchpress.validate.schemas import Cells

__all__ = ["resolve_cells", "latest_versions", "NOT_OBSERVED"]

NOT_OBSERVED = ("estimated", "superseded", "retracted")


def _current(frame, versions: bool = True):
    """`frame` (a DataFrame or LazyFrame of observations) with only the observations that
    take part in cells (see the module docstring). `versions=False` says no benchmark id
    has a method version: the newest version of each source is then the whole rule."""
    version, src = pl.col("source_version"), "source_id"
    if not versions:
        newest = version.max().over(src)
        return frame.filter(newest.is_null() | (version == newest))
    base = pl.col("benchmark_id").str.split("@").list.first().alias("_base")
    marked = (frame.with_columns(base, version.max().over(src).alias("_newest"))
              .with_columns((version == pl.col("_newest")).fill_null(False).alias("_in_newest"))
              .with_columns(pl.col("_in_newest").any().over(src, "benchmark_id").alias("_id_now"),
                            pl.col("_in_newest").any().over(src, "_base").alias("_base_now"),
                            version.max().over(src, "benchmark_id").alias("_last")))
    # the old method of a benchmark the newest version shows only under a new method
    frozen = ~pl.col("_id_now") & pl.col("_base_now") & (version == pl.col("_last"))
    return (marked.filter(pl.col("_newest").is_null() | pl.col("_in_newest") | frozen)
            .drop("_base", "_newest", "_in_newest", "_id_now", "_base_now", "_last"))


def latest_versions(scores: pl.DataFrame) -> pl.DataFrame:
    """The observations that take part in cells: each source's newest version (all rows of
    an unversioned source), and the last values of a benchmark's old method (see the module
    docstring); a table written before versions existed gets a null `source_version` column."""
    if "source_version" not in scores.columns:
        return scores.with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))
    return _current(scores, _has_versions(scores))


def _has_versions(scores: pl.DataFrame) -> bool:
    """Whether some benchmark id names a method version (`<id>@<version>`)."""
    return bool(scores["benchmark_id"].str.contains("@", literal=True).any())


def resolve_cells(scores: pl.DataFrame, source_priority: dict[str, int],
                  source_rank: dict[str, int]) -> pl.DataFrame:
    """One row per (model_id, benchmark_id); `source_rank` is higher for newer sources.

    Only the columns a cell shows are carried through the ranking sort (a lazy query over
    them), not every column of `scores`: at 5 million observations that is the difference
    between copying 9 columns and 19.
    """
    worst = max(source_priority.values(), default=0) + 1
    for col in ("source_version", "measured_by"):
        if col not in scores.columns:
            scores = scores.with_columns(pl.lit(None, dtype=pl.String).alias(col))
    shown = ["model_id", "benchmark_id", "score", "source_id", "reference_url", "source_type",
             "reported_setting", "audit_status", "source_version", "measured_by"]
    ranked = (
        _current(scores.lazy().select(shown), _has_versions(scores))
        .filter(~pl.col("audit_status").fill_null("").is_in(NOT_OBSERVED))
        .with_row_index("_pos").with_columns(
            (pl.col("audit_status").fill_null("") == "dropped").alias("_dropped"),
            ranked_type().replace_strict(source_priority, default=worst,
                                         return_dtype=pl.Int64).alias("_priority"),
            (-pl.col("source_id").replace_strict(source_rank, default=0,
                                                 return_dtype=pl.Int64)).alias("_age"),
        )
    )
    key = ["model_id", "benchmark_id"]
    # cells in key order, each cell's observations in rank order: a cell's winner is its
    # first row, and a cell is a run of equal keys (numbered by `_cell`)
    ranked = ranked.sort(*key, "_dropped", "_priority", "_age", "_pos").with_columns(
        ((pl.col("model_id") != pl.col("model_id").shift())
         | (pl.col("benchmark_id") != pl.col("benchmark_id").shift()))
        .fill_null(True).cum_sum().alias("_cell")).collect()
    if ranked.height == 0 or ranked["_cell"][-1] == ranked.height:  # one observation a cell
        return ranked.with_columns(
            pl.lit(1, dtype=pl.Int64).alias("n_observations"),
            pl.lit(0, dtype=pl.Int64).alias("n_disagreeing"),
            pl.col("score").alias("min_score"), pl.col("score").alias("max_score"),
        ).select(list(Cells.to_schema().columns))
    return (
        ranked.group_by("_cell", maintain_order=True)
        .agg(
            pl.col(*key, "score", "source_id", "reference_url", "source_type", "reported_setting",
                   "audit_status", "source_version", "measured_by").first(),
            pl.len().cast(pl.Int64).alias("n_observations"),
            ((pl.col("score") - pl.col("score").first()).abs() > 1e-9).sum()
            .cast(pl.Int64).alias("n_disagreeing"),
            pl.col("score").min().alias("min_score"),
            pl.col("score").max().alias("max_score"),
        )
        .select(list(Cells.to_schema().columns))
    )
