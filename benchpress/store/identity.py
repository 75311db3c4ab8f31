"""The cross-source identity report: how many sources each model is seen in, and which reviewed
aliases would join more.

A model's identity spans sources only where its id agrees, directly or through the alias
table (`schemas/aliases.csv`). The report counts, for every bare model (``entry_kind`` model),
the distinct sources of its observations (any version), and again with the sources of the
agent systems and submissions that run it (``base_model_id``: a SWE-bench scaffold on
Claude 3.5 Sonnet shows Claude 3.5 Sonnet in SWE-bench, without merging their cells). Then:

- the alias suggestions (`store.aliases.suggest_aliases`: parsed identity and fuzzy names,
  never a different effort or snapshot), those of the same parsed family first, then by how
  many sources each would join, with the buckets as they would be if every suggestion of the
  same family were accepted (each is for a person to review, then `benchpress aliases
  accept`);
- the models that agents and submissions name but the registry has no row for
  (``base_model_id`` unmatched), each with its closest model id: an alias there links the
  entries to a model the other sources describe.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from benchpress.store.aliases import closest_models, suggest_aliases

__all__ = ["IdentityReport", "identity_report", "BUCKETS"]

BUCKETS = ("1", "2", "3", "4", "5+")


@dataclass(frozen=True)
class IdentityReport:
    """What `identity_report` finds (frames ready to print).

    Attributes
    ----------
    n_models : int
        Bare models (rows of kind ``model``) with at least one observation.
    by_sources : pl.DataFrame
        One row per bucket of `BUCKETS`: ``sources``, ``models`` (own observations),
        ``with_entries`` (also through the agents and submissions that run them) and
        ``if_accepted`` (with entries, every suggestion of the same parsed family accepted:
        what the reviewable aliases could reach; fuzzy ones are often sibling models).
    suggestions : pl.DataFrame
        ``alias, canonical_id, similarity, match, sources_now, sources_joined, shared,
        mean_abs_diff``: the alias suggestions that join sources, most sources joined first.
    unlinked : pl.DataFrame
        ``base_model_id, entries, candidate, similarity, match``: models that entries run but
        the registry lacks, with the closest bare model (`store.aliases.closest_models`; null
        when none is close).
    """

    n_models: int
    by_sources: pl.DataFrame
    suggestions: pl.DataFrame
    unlinked: pl.DataFrame

    def to_dict(self) -> dict:
        return {"n_models": self.n_models, "by_sources": self.by_sources.to_dicts(),
                "suggestions": self.suggestions.to_dicts(), "unlinked_bases": self.unlinked.to_dicts()}


def _kinds(models: pl.DataFrame) -> pl.DataFrame:
    cols = ["model_id",
            pl.col("entry_kind").fill_null("model") if "entry_kind" in models.columns
            else pl.lit("model").alias("entry_kind"),
            pl.col("base_model_id") if "base_model_id" in models.columns
            else pl.lit(None, dtype=pl.String).alias("base_model_id")]
    return models.select(cols)


def _source_sets(kinds: pl.DataFrame, scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(model_id, source_id) pairs of bare models: their own, and with their entries'."""
    seen = scores.select("model_id", "source_id").unique()
    bare = kinds.filter(pl.col("entry_kind") == "model").select("model_id")
    own = seen.join(bare, on="model_id")
    through = (seen.join(kinds.filter(pl.col("entry_kind") != "model"), on="model_id")
               .filter(pl.col("base_model_id").is_not_null())
               .select(pl.col("base_model_id").alias("model_id"), "source_id")
               .join(bare, on="model_id"))
    return own, pl.concat([own, through]).unique()


def _buckets(pairs: pl.DataFrame, name: str) -> pl.DataFrame:
    counts = pairs.group_by("model_id").agg(pl.col("source_id").n_unique().alias("n"))
    bucket = pl.when(pl.col("n") >= 5).then(pl.lit("5+")).otherwise(pl.col("n").cast(pl.String))
    found = counts.group_by(bucket.alias("sources")).agg(pl.len().cast(pl.Int64).alias(name))
    return (pl.DataFrame({"sources": list(BUCKETS)}).join(found, on="sources", how="left")
            .with_columns(pl.col(name).fill_null(0)))


def _merged(pairs: pl.DataFrame, suggestions: pl.DataFrame) -> pl.DataFrame:
    """`pairs` with every suggested alias read as its canonical id (union of the pairs it
    links, followed through chains)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    for a, b in suggestions.select("alias", "canonical_id").iter_rows():
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
    mapping = {m: root(m) for m in list(parent)}
    return pairs.with_columns(pl.col("model_id").replace(mapping)).unique()


def _unlinked(kinds: pl.DataFrame, models: pl.DataFrame, min_score: float) -> pl.DataFrame:
    known = kinds.filter(pl.col("entry_kind") == "model")["model_id"]
    missing = (kinds.filter((pl.col("entry_kind") != "model") & pl.col("base_model_id").is_not_null()
                            & ~pl.col("base_model_id").is_in(known.implode()))
               .group_by("base_model_id").agg(pl.len().cast(pl.Int64).alias("entries"))
               .sort("entries", "base_model_id", descending=[True, False]))
    close = closest_models(missing["base_model_id"].to_list(), models, min_score=min_score)
    return missing.join(close.rename({"name": "base_model_id"}), on="base_model_id", how="left")


def identity_report(models: pl.DataFrame, cells: pl.DataFrame, scores: pl.DataFrame, *,
                    min_score: float = 85.0, limit: int = 20) -> IdentityReport:
    """The report of the module docstring for one registry's tables.

    Parameters
    ----------
    models, cells, scores : pl.DataFrame
        The registry's tables (`scores`: every version's observations).
    min_score : float
        Smallest match score (0-100) of a suggestion or an unlinked model's candidate.
    limit : int
        At most this many suggestions (the most sources joined first).
    """
    kinds = _kinds(models)
    own, with_entries = _source_sets(kinds, scores)
    found = suggest_aliases(models, cells, scores, kind="model", min_score=min_score, limit=3)
    per_model = with_entries.group_by("model_id").agg(pl.col("source_id").unique().alias("_s"))
    if found.height:
        found = (found.join(per_model.rename({"model_id": "alias", "_s": "_a"}), on="alias", how="left")
                 .join(per_model.rename({"model_id": "canonical_id", "_s": "_c"}),
                       on="canonical_id", how="left")
                 .with_columns(pl.max_horizontal(pl.col("_a").list.len(), pl.col("_c").list.len())
                               .fill_null(0).alias("sources_now"),
                               pl.concat_list(pl.col("_a").fill_null([]), pl.col("_c").fill_null([]))
                               .list.unique().list.len().alias("sources_joined"))
                 .filter(pl.col("sources_joined") > pl.col("sources_now")))
    columns = ["alias", "canonical_id", "similarity", "match", "sources_now", "sources_joined",
               "shared", "mean_abs_diff"]
    found = (found.select(columns) if found.height else pl.DataFrame(
        schema={"alias": pl.String, "canonical_id": pl.String, "similarity": pl.Float64,
                "match": pl.String, "sources_now": pl.UInt32, "sources_joined": pl.UInt32,
                "shared": pl.Int64, "mean_abs_diff": pl.Float64}))
    # the same parsed family first (fuzzy names are often sibling models), then what it joins
    ranked = found.with_columns((pl.col("sources_joined") - pl.col("sources_now")).alias("_gain"),
                                (pl.col("match") == "identity").alias("_same")) \
        .sort(["_same", "_gain", "similarity", "alias"], descending=[True, True, True, False]) \
        .drop("_gain", "_same")
    identity_matches = found.filter(pl.col("match") == "identity")
    by_sources = (_buckets(own, "models").join(_buckets(with_entries, "with_entries"), on="sources")
                  .join(_buckets(_merged(with_entries, identity_matches), "if_accepted"),
                        on="sources"))
    return IdentityReport(
        n_models=int(own["model_id"].n_unique()), by_sources=by_sources,
        suggestions=ranked.head(limit), unlinked=_unlinked(kinds, models, min_score))
