"""Benchmark versions: a benchmark id names one method, and a source's change of method starts a
new version of the benchmark, `<benchmark_id>@<version>`.

When a source re-bases a benchmark between two of its versions (Artificial Analysis rescaling
its Intelligence Index, an Elo column re-anchored), the values after the change are not
revisions of the values before: they are on another scale. The build therefore files the
source's observations of that benchmark from the change on under a new benchmark id, the
base id with the label of the source version that introduced the method, lower-cased:
`aa_intelligence_index@2026-05-22`. The values before the change keep the base id. The
registry then holds two benchmarks (the predictor treats them as two columns), and no cell
mixes two scales. The benchmarks table describes a method version as its base benchmark (same
scale, bounds and direction), named ``<name> (method of <version>)``.

A change of method is
- **declared** in the source config, ``method_changes: {aa_intelligence_index: [2026-05-22]}``
  (the versions at which a new method starts), or
- **detected** between two consecutive versions of a source (`MethodChangeRule`): on at
  least ``min_models`` models measured in both, at least ``min_share`` of them moved in the
  same direction as the median move, and the median move is at least ``min_move`` times the
  spread (standard deviation) of the benchmark's values in the earlier version. An ordinary
  revision moves a few models, or many by a small amount (Artificial Analysis re-running an
  evaluation moves most values by about 1/1000 of their spread); a re-basing moves most
  models together by a large fraction of it (a ratio of 0.67 on an index: about 0.7 spreads).

A source that shows a benchmark only under a method version in its newest version keeps its
older values of the base id in `cells` (`store.resolve`): the old method's column stays,
frozen at the last version that measured it.
An adapter may also name benchmark versions itself (NYT Connections scores each row on a given
number of puzzles: `nyt_connections@940`); they are described the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = ["SEP", "MethodChangeRule", "base_id", "method_starts", "split_methods",
           "version_rows"]

SEP = "@"


@dataclass(frozen=True)
class MethodChangeRule:
    """When a move of one benchmark between two versions of a source is a change of method
    (see the module docstring)."""

    min_models: int = 10
    min_share: float = 0.6
    min_move: float = 0.1


def base_id(benchmark: pl.Expr) -> pl.Expr:
    """The benchmark id without its method version (`aa_intelligence_index@2026-05-22` ->
    `aa_intelligence_index`)."""
    return benchmark.str.split(SEP).list.first()


def _suffix(version: pl.Expr) -> pl.Expr:
    return version.str.to_lowercase().str.replace_all(r"[^0-9a-z._\-]", "-")


def _detected(scores: pl.DataFrame, rule: MethodChangeRule) -> pl.DataFrame:
    """(source_id, benchmark_id, start) of every change of method the values show."""
    obs = (scores.filter(pl.col("source_version").is_not_null())
           .group_by("source_id", "source_version", "benchmark_id", "model_id")
           .agg(pl.col("score").mean()))
    versions = (obs.select("source_id", "source_version").unique()
                .sort("source_id", "source_version")
                .with_columns(pl.col("source_version").shift().over("source_id").alias("prev"))
                .drop_nulls("prev"))
    earlier = obs.rename({"source_version": "prev", "score": "before"})
    pairs = (obs.join(versions, on=["source_id", "source_version"])
             .join(earlier, on=["source_id", "prev", "benchmark_id", "model_id"])
             .with_columns((pl.col("score") - pl.col("before")).alias("move")))
    key = ["source_id", "benchmark_id", "source_version"]
    move = pl.col("move")
    # the share of models that moved, in the direction of the median move (a window over
    # each pair of versions and benchmark, not a list per group: the through-time build
    # runs this at every month)
    along = (move.sign() == move.median().over(key).sign()) & (move.abs() > 0)
    stats = pairs.with_columns(along.alias("_along")).group_by(key).agg(
        pl.len().alias("n"),
        move.median().alias("median_move"),
        pl.col("before").std().alias("spread"),
        pl.col("_along").mean().alias("share"),
    )
    found = stats.filter(
        (pl.col("n") >= rule.min_models)
        & (pl.col("share") >= rule.min_share)
        & (pl.col("median_move").abs() >= rule.min_move * pl.col("spread"))
        & (pl.col("spread") > 0))
    return found.select("source_id", "benchmark_id", pl.col("source_version").alias("start"))


def _declared(declared: dict[str, dict | None]) -> pl.DataFrame:
    rows = [(sid, str(bench), str(v)) for sid, changes in declared.items()
            for bench, starts in (changes or {}).items() for v in starts]
    return pl.DataFrame(rows, schema={"source_id": pl.String, "benchmark_id": pl.String,
                                      "start": pl.String}, orient="row")


def method_starts(scores: pl.DataFrame, declared: dict[str, dict | None] | None = None,
                  rule: MethodChangeRule = MethodChangeRule(), *,
                  versioned: set[str] | None = None) -> pl.DataFrame:
    """Every change of method: (source_id, benchmark_id, start), `start` the source version
    from which on the source's values of the benchmark follow the new method.

    Parameters
    ----------
    scores : pl.DataFrame
        Observations of every version (`model_id`, `benchmark_id`, `score`, `source_id`,
        `source_version`), benchmark ids as the sources gave them (no method versions yet).
    declared : dict, optional
        source_id -> {benchmark_id: [version, ...]} (the configs' ``method_changes``).
    versioned : set of str, optional
        The sources with more than one version (None: find out); only their values are
        compared, so a large single-version registry costs nothing here.
    """
    if versioned is not None:
        scores = scores.filter(pl.col("source_id").is_in(sorted(versioned)))
    return (pl.concat([_detected(scores, rule), _declared(declared or {})])
            .unique().sort("source_id", "benchmark_id", "start"))


def split_methods(scores: pl.DataFrame, starts: pl.DataFrame) -> pl.DataFrame:
    """`scores` with each observation made at or after a change of method of its benchmark
    (by its source) filed under `<benchmark_id>@<start>`, the latest start not after its
    version."""
    if starts.height == 0 or scores.height == 0:
        return scores
    keyed = scores.with_row_index("_row")
    hits = (keyed.select("_row", "source_id", "benchmark_id", "source_version")
            .join(starts, on=["source_id", "benchmark_id"])
            .filter(pl.col("source_version") >= pl.col("start"))
            .group_by("_row").agg(pl.col("start").max()))
    return (keyed.join(hits, on="_row", how="left")
            .with_columns(pl.when(pl.col("start").is_null()).then(pl.col("benchmark_id"))
                          .otherwise(pl.col("benchmark_id") + SEP + _suffix(pl.col("start")))
                          .alias("benchmark_id"))
            .sort("_row").drop("_row", "start"))


def version_rows(benchmarks: pl.DataFrame, ids: list[str]) -> pl.DataFrame:
    """Rows of the benchmark contract for the method versions among `ids`: each its base's
    row (scale, bounds, direction), named ``<name> (method of <version>)``, no cost.

    `benchmarks` has the columns of `schemas/benchmarks.csv` (`benchmark_id`, `name`, ...).
    """
    wanted = pl.DataFrame({"benchmark_id": ids}, schema={"benchmark_id": pl.String}).filter(
        pl.col("benchmark_id").str.contains(SEP, literal=True)).unique(maintain_order=True)
    if wanted.height == 0:
        return benchmarks.clear()
    base = benchmarks.rename({"benchmark_id": "_base"})
    out = (wanted.with_columns(base_id(pl.col("benchmark_id")).alias("_base"),
                               pl.col("benchmark_id").str.split(SEP).list.get(1).alias("_v"))
           .join(base, on="_base")
           .with_columns(pl.format("{} (method of {})", pl.coalesce("name", "_base"), "_v")
                         .alias("name")))
    if "cost" in out.columns:
        out = out.with_columns(pl.lit(None, dtype=out.schema["cost"]).alias("cost"))
    return out.select(benchmarks.columns)
