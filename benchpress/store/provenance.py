"""Provenance: who measured each value, and whose word a citation is.

Every observation gets `measured_by` (`MEASURED_BY`), from its source type and its citation:

- `own_vendor`: a vendor's publication (blog, paper, technical report, model card) about one of
  its own models: the URL belongs to the model's maker (`schemas/vendor_urls.csv`, compared
  with the model's provider, case aside; a maker may have several names, ``Alibaba|Qwen``);
- `other_vendor`: a vendor's publication quoting another maker's model (MiniMax's model card
  listing GPT-5's Artificial Analysis index beside its own): second-hand;
- `vendor`: a vendor-type citation whose speaker no rule names (an arXiv paper);
- `leaderboard`: a leaderboard that runs the models itself, or a URL of the leaderboard's
  own (Artificial Analysis announcing its index on x.com, typed `official_blog` by the URL
  rules);
- `third_party`: third parties, aggregators and their papers; `unknown` otherwise.

Priority respects it (`store.resolve`): a vendor card is first-hand only for its own models,
so an `other_vendor` observation ranks as `third_party`, below the leaderboard that measured
the value; a leaderboard's own URL ranks as `leaderboard`. The `conflicts` view shows each
side's `measured_by`.
"""

from __future__ import annotations

import polars as pl

from benchpress.validate.schemas import MEASURED_BY

__all__ = ["MEASURED_BY", "VENDOR_TYPES", "with_measured_by", "ranked_type"]

VENDOR_TYPES = ("official_blog", "official_paper", "tech_report", "model_card")
_THIRD = ("third_party", "third_party_aggregator", "academic_paper")


def with_measured_by(scores: pl.DataFrame, models: pl.DataFrame, contracts) -> pl.DataFrame:
    """`scores` with the `measured_by` of each observation (see the module docstring).

    `models` gives each model's provider; `contracts` (`validate.contracts.Contracts`) the
    URL rules (`vendor_for_url`). Lookups are column maps, not joins, so a large `scores`
    is not copied.
    """
    urls = scores["reference_url"].drop_nulls().unique().to_list()
    found = {u: v for u in urls if (v := contracts.vendor_for_url(u)) is not None}
    names = {u: "|" + "|".join(n.lower() for n in v[0]) + "|" for u, v in found.items()}
    kinds = {u: v[1] for u, v in found.items()}
    given = models.filter(pl.col("provider").is_not_null())
    providers = dict(zip(given["model_id"], given["provider"].str.strip_chars().str.to_lowercase()))
    url = pl.col("reference_url")
    kind = url.replace_strict(kinds, default=None, return_dtype=pl.String)
    speakers = url.replace_strict(names, default=None, return_dtype=pl.String)
    provider = pl.col("model_id").replace_strict(providers, default=None, return_dtype=pl.String)
    st, vendor = pl.col("source_type"), pl.col("source_type").is_in(VENDOR_TYPES)
    measured = (pl.when(kind == "leaderboard").then(pl.lit("leaderboard"))
                .when(st == "leaderboard").then(pl.lit("leaderboard"))
                .when(vendor & (speakers.is_null() | provider.is_null())).then(pl.lit("vendor"))
                .when(vendor & speakers.str.contains(pl.lit("|") + provider + pl.lit("|"),
                                                     literal=True))
                .then(pl.lit("own_vendor"))
                .when(vendor).then(pl.lit("other_vendor"))
                .when(st.is_in(_THIRD)).then(pl.lit("third_party"))
                .otherwise(pl.lit("unknown")))
    return scores.with_columns(measured.alias("measured_by"))


def ranked_type() -> pl.Expr:
    """The source type an observation ranks as (see the module docstring)."""
    measured = pl.col("measured_by")
    return (pl.when(measured == "other_vendor").then(pl.lit("third_party"))
            .when(measured == "leaderboard").then(pl.lit("leaderboard"))
            .otherwise(pl.col("source_type")))
