"""The cause of each change between two registry versions (`store.diff`).

Every added, changed and removed cell names one `cause` (`CAUSES`), the first that applies:
- added: `renamed` (the model is new under this id, and B's alias table maps a model id of A
  to it: a source renamed it, `store.renames`), `new_model` (the model is not in A),
  `method_change` (the benchmark is a new method version `<id>@<version>` of a benchmark A
  has, see `store.methods`), `new_benchmark` (the benchmark is not in A), `new_source` (the value comes from a source A had not),
  `first_value` (model, benchmark and source were all in A, the cell was not: a first
  value, never a revision);
- changed: `revised` (the same source, a newer version gave another value), `reread` (the
  same source and version, read again: an adapter or contract changed), `reviewed` (A's
  value was taken out by a reviewed verdict, `schemas/cell_reviews.csv`), `new_source`,
  `setting` (another source's value, measured under another evaluation setting), `priority`
  (another source, already in A, now wins the cell: source priority or recency);
- removed: `renamed` (the model id is gone from B, whose alias table maps it to a model B
  has), `model_removed`, `benchmark_removed` (the id is gone from B), `source_dropped`
  (the source is gone from B), `estimated` (the source's newest version flags the value as
  estimated, which makes no cell), `retracted` (retracted or superseded by its source),
  `reviewed` (a reviewed verdict took the value out, `store.verdicts`), `quarantined` (the
  newest version's value was refused by validation), `method_change` (B
  holds the cell under a new method version of the benchmark), `withdrawn` (the source's
  newest version no longer lists it).
"""

from __future__ import annotations

import polars as pl

from benchpress.store.methods import base_id
from benchpress.store.verdicts import REVIEW_FIELD

__all__ = ["CAUSES", "with_causes"]

_KEY = ["model_id", "benchmark_id"]
CAUSES = {
    "added": ("renamed", "new_model", "method_change", "new_benchmark", "new_source",
              "first_value"),
    "changed": ("revised", "reread", "reviewed", "new_source", "setting", "priority"),
    "removed": ("renamed", "model_removed", "benchmark_removed", "source_dropped", "estimated",
                "retracted", "reviewed", "quarantined", "method_change", "withdrawn"),
}
_base = base_id  # the benchmark id without its method version


def _newest_rows(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Each source's newest-version observations (all rows of an unversioned source)."""
    scores = tables["scores"]
    if "source_version" not in scores.columns:
        scores = scores.with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))
    newest = pl.col("source_version").max().over("source_id")
    return scores.filter(newest.is_null() | (pl.col("source_version") == newest))


def _removal_flags(cells: pl.DataFrame, ta: dict[str, pl.DataFrame],
                   tb: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """`cells` with `_estimated`, `_retracted`, `_quarantined`, `_reviewed` and `_moved`: what B's newest
    version of the cell's A source says about the cell (see the module docstring)."""
    key = [*_KEY, "source_id"]
    newest = _newest_rows(tb).select(*key, pl.col("audit_status").fill_null(""))
    flags = newest.group_by(key).agg(
        (pl.col("audit_status") == "estimated").any().alias("_estimated"),
        pl.col("audit_status").is_in(["retracted", "superseded"]).any().alias("_retracted"))
    # a refused row is quarantined under its raw spellings; A's scores give the cell's
    sources = tb["sources"]
    if "source_version" in sources.columns:
        sources = sources.filter(pl.col("source_version").fill_null("")
                                 == pl.col("source_version").fill_null("").max().over("source_id"))
    ingests = sources.select("source_id", pl.col("sha256").str.slice(0, 12).alias("ingest_id"))
    refused = (tb["quarantine"].filter(pl.col("kind") == "score")
               .join(ingests, on=["source_id", "ingest_id"])
               .select("source_id",
                       pl.col("record").str.json_path_match("$.model_id").alias("raw_model_id"),
                       pl.col("record").str.json_path_match("$.benchmark_id")
                       .alias("raw_benchmark_id"))
               .unique())
    quarantined = (ta["scores"].select(*key, "raw_model_id", "raw_benchmark_id")
                   .join(refused, on=["source_id", "raw_model_id", "raw_benchmark_id"])
                   .select(key).unique().with_columns(pl.lit(True).alias("_quarantined")))
    # a value a reviewed verdict took out: B's quarantine holds it by its registry ids
    reviewed = (tb["quarantine"].filter(pl.col("field") == REVIEW_FIELD)
                .select(pl.col("record").str.json_path_match("$.model_id").alias("model_id"),
                        pl.col("record").str.json_path_match("$.benchmark_id")
                        .alias("benchmark_id"), "source_id")
                .unique().with_columns(pl.lit(True).alias("_reviewed")))
    moved = (tb["cells"].filter(pl.col("benchmark_id").str.contains("@", literal=True))
             .select("model_id", _base(pl.col("benchmark_id")).alias("_base")).unique()
             .with_columns(pl.lit(True).alias("_moved")))
    return (cells.with_columns(pl.col("source_id_a").alias("source_id"),
                               _base(pl.col("benchmark_id")).alias("_base"))
            .join(flags, on=key, how="left").join(quarantined, on=key, how="left")
            .join(reviewed, on=key, how="left")
            .join(moved, on=["model_id", "_base"], how="left")
            .with_columns(pl.col(c).fill_null(False)
                          for c in ("_estimated", "_retracted", "_quarantined", "_moved",
                                    "_reviewed"))
            .drop("source_id"))


def with_causes(cells: pl.DataFrame, ta: dict[str, pl.DataFrame],
                tb: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """`cells` with the `cause` of each row (see the module docstring)."""
    def ids(tables, table, col):
        return tables[table][col].unique().implode()

    change = pl.col("change")
    model, bench = pl.col("model_id"), pl.col("benchmark_id")
    src_a, src_b = pl.col("source_id_a"), pl.col("source_id_b")
    old_source = src_b.is_in(ids(ta, "scores", "source_id"))
    method = (bench.str.contains("@", literal=True)
              & _base(bench).is_in(ta["benchmarks"].select(_base(pl.col("benchmark_id")))
                                   .to_series().implode()))
    # a model id that B's alias table maps to another model B has: a rename
    renamed = tb["aliases"].filter((pl.col("kind") == "model")
                                   & pl.col("canonical_id").is_in(ids(tb, "models", "model_id")))
    old_names = renamed.filter(pl.col("alias").is_in(ids(ta, "models", "model_id")))
    added = (pl.when(~model.is_in(ids(ta, "models", "model_id"))
                     & model.is_in(old_names["canonical_id"].implode())).then(pl.lit("renamed"))
             .when(~model.is_in(ids(ta, "models", "model_id"))).then(pl.lit("new_model"))
             .when(~bench.is_in(ids(ta, "benchmarks", "benchmark_id")) & method)
             .then(pl.lit("method_change"))
             .when(~bench.is_in(ids(ta, "benchmarks", "benchmark_id")))
             .then(pl.lit("new_benchmark"))
             .when(~old_source).then(pl.lit("new_source"))
             .otherwise(pl.lit("first_value")))
    same_version = (pl.col("source_version_a").fill_null("")
                    == pl.col("source_version_b").fill_null(""))
    changed = (pl.when((src_a == src_b) & ~same_version).then(pl.lit("revised"))
               .when(src_a == src_b).then(pl.lit("reread"))
               .when(pl.col("_reviewed")).then(pl.lit("reviewed"))
               .when(~old_source).then(pl.lit("new_source"))
               .when(pl.col("setting_changed")).then(pl.lit("setting"))
               .otherwise(pl.lit("priority")))
    removed = (pl.when(~model.is_in(ids(tb, "models", "model_id"))
                       & model.is_in(renamed["alias"].implode())).then(pl.lit("renamed"))
               .when(~model.is_in(ids(tb, "models", "model_id"))).then(pl.lit("model_removed"))
               .when(~bench.is_in(ids(tb, "benchmarks", "benchmark_id")))
               .then(pl.lit("benchmark_removed"))
               .when(~src_a.is_in(ids(tb, "sources", "source_id"))).then(pl.lit("source_dropped"))
               .when(pl.col("_estimated")).then(pl.lit("estimated"))
               .when(pl.col("_retracted")).then(pl.lit("retracted"))
               .when(pl.col("_reviewed")).then(pl.lit("reviewed"))
               .when(pl.col("_quarantined")).then(pl.lit("quarantined"))
               .when(pl.col("_moved")).then(pl.lit("method_change"))
               .otherwise(pl.lit("withdrawn")))
    return (_removal_flags(cells, ta, tb)
            .with_columns(pl.when(change == "added").then(added)
                          .when(change == "changed").then(changed)
                          .otherwise(removed).alias("cause")))
