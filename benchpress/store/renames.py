"""Renames: a source's stable upstream id ties a renamed model to its history.

A source whose adapter records the publisher's own id of each model (the model's `setting`
JSON key ``upstream_id``: Artificial Analysis's model ``id``) says which rows of two of its
versions are the same model even when the display name, and so the model id, changed
(``Grok 4.3`` in 2026-05-08 became ``Grok 4.3 (high)`` in 2026-05-22, same AA id). The build
then files the older versions' rows of that source under the newest version's model id: the
old id becomes an alias (origin ``upstream id``, in the registry's `aliases` table), never a
second model, and the model's values of every version stay one history.

Providers: a publisher may rename a maker (AA's creator ``Microsoft Azure`` became
``Microsoft``, same creator id ``upstream_provider_id``). Provider renames are applied from the
reviewed table `schemas/provider_aliases.csv` (`validate.prepare`); a rename the upstream ids
show that the table lacks is reported as a build warning naming the line to add.
"""

from __future__ import annotations

import polars as pl

__all__ = ["identities", "upstream_renames", "apply_renames", "provider_renames", "ORIGIN"]

ORIGIN = "upstream id"


def _upstream(key: str) -> pl.Expr:
    return pl.col("setting").str.json_path_match(f"$.{key}")


def identities(source_id: str, version: str | None, models: pl.DataFrame) -> pl.DataFrame:
    """(source_id, source_version, model_id, provider, upstream_id, upstream_provider_id) of
    the model rows of one version of a source (`models`) that carry an upstream id."""
    return models.filter(pl.col("setting").is_not_null()).select(
        pl.lit(source_id, dtype=pl.String).alias("source_id"),
        pl.lit(version, dtype=pl.String).alias("source_version"),
        pl.col("model_id").cast(pl.String), pl.col("provider").cast(pl.String),
        _upstream("upstream_id").alias("upstream_id"),
        _upstream("upstream_provider_id").alias("upstream_provider_id"),
    ).filter(pl.col("upstream_id").is_not_null())


def _identities(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Every version's `identities`, as one frame."""
    frames = [f for f in parts if f.height]
    if not frames:
        return pl.DataFrame(schema={c: pl.String for c in (
            "source_id", "source_version", "model_id", "provider", "upstream_id",
            "upstream_provider_id")})
    return pl.concat(frames)


def upstream_renames(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Old model ids of a source and the id its newest version gives the same upstream id:
    (source_id, alias, canonical_id, upstream_id), one row per renamed id; `parts` holds
    each version's `identities`.

    An old id that the newest version still uses for another model is left alone (the
    publisher reused a name); so is an upstream id the newest version does not list.
    """
    rows = _identities(parts)
    newest = (rows.sort("source_version", descending=True, nulls_last=True)
              .unique(["source_id", "upstream_id"], keep="first")
              .select("source_id", "upstream_id", pl.col("model_id").alias("canonical_id"),
                      pl.col("source_version").alias("_newest")))
    latest = rows.group_by("source_id").agg(pl.col("source_version").max().alias("_latest"))
    current = (rows.join(latest, on="source_id")
               .filter(pl.col("source_version") == pl.col("_latest"))
               .select("source_id", pl.col("model_id").alias("alias")).unique()
               .with_columns(pl.lit(True).alias("_in_use")))
    return (rows.join(newest, on=["source_id", "upstream_id"])
            .join(latest, on="source_id")
            .filter((pl.col("_newest") == pl.col("_latest"))
                    & (pl.col("model_id") != pl.col("canonical_id")))
            .select("source_id", pl.col("model_id").alias("alias"), "canonical_id", "upstream_id")
            .unique().join(current, on=["source_id", "alias"], how="anti")
            .sort("source_id", "alias"))


def apply_renames(frame: pl.DataFrame, renames: pl.DataFrame) -> pl.DataFrame:
    """`frame` (scores or models, with `source_id` and `model_id`) with each renamed id of a
    source replaced by its canonical id, in that source's rows only."""
    if renames.height == 0 or frame.height == 0:
        return frame
    mapping = renames.select("source_id", pl.col("alias").alias("model_id"), "canonical_id")
    return (frame.join(mapping, on=["source_id", "model_id"], how="left")
            .with_columns(pl.coalesce("canonical_id", "model_id").alias("model_id"))
            .drop("canonical_id"))


def provider_renames(parts: list[pl.DataFrame]) -> list[tuple[str, str, str]]:
    """(source_id, old provider, newest provider) where one upstream provider id carries two
    names across a source's versions (after the provider alias table was applied); `parts`
    holds each version's `identities`."""
    rows = _identities(parts).filter(pl.col("upstream_provider_id").is_not_null()
                                     & pl.col("provider").is_not_null())
    newest = (rows.sort("source_version", descending=True, nulls_last=True)
              .unique(["source_id", "upstream_provider_id"], keep="first")
              .select("source_id", "upstream_provider_id", pl.col("provider").alias("_new")))
    found = (rows.join(newest, on=["source_id", "upstream_provider_id"])
             .filter(pl.col("provider") != pl.col("_new"))
             .select("source_id", "provider", "_new").unique().sort("source_id", "provider"))
    return found.rows()
