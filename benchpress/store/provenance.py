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

A citation is shown to people as what it is for the model it cites (`with_cited_as`): a
vendor's blog is "official blog" only on its own maker's models; on another maker's it is
that maker's ("official blog of Zhipu AI (another maker)": GLM-4.7's blog post quoting
GPT-5's BrowseComp-ZH score is not GPT-5's official blog).

Priority respects it (`store.resolve`): a vendor card is first-hand only for its own models,
so an `other_vendor` observation ranks as `third_party`, below the leaderboard that measured
the value; a leaderboard's own URL ranks as `leaderboard`. The `conflicts` view shows each
side's `measured_by`.
"""

from __future__ import annotations

import polars as pl

from benchpress.validate.schemas import MEASURED_BY

__all__ = ["MEASURED_BY", "VENDOR_TYPES", "with_measured_by", "ranked_type", "with_cited_as"]

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


def with_cited_as(frame: pl.DataFrame, contracts=None) -> pl.DataFrame:
    """`frame` (observations or cells: `source_type`, `measured_by`, `reference_url`) with
    `cited_as`, the citation's kind for the model it cites, in words (see the module
    docstring): the source type for a maker's own publication, "leaderboard" for one the
    leaderboard published, "<type> of <maker> (another maker)" for another maker's (the
    maker named by the URL rules of `contracts`, when given and one matches).

    >>> rows = pl.DataFrame({"source_type": ["official_blog", "official_blog", "tech_report"],
    ...     "measured_by": ["own_vendor", "other_vendor", "vendor"],
    ...     "reference_url": ["https://openai.com/x", "https://z.ai/blog/glm-4.7", None]})
    >>> with_cited_as(rows)["cited_as"].to_list()
    ['official blog', 'official blog of another maker', 'tech report']
    """
    urls = frame["reference_url"].drop_nulls().unique().to_list() if contracts else []
    makers = {u: v[0][0] for u in urls
              if (v := contracts.vendor_for_url(u)) is not None and v[1] == "maker"}
    kind = pl.col("source_type").fill_null("unknown").str.replace_all("_", " ")
    maker = pl.col("reference_url").replace_strict(makers, default=None, return_dtype=pl.String)
    measured = pl.col("measured_by") if "measured_by" in frame.columns else pl.lit(None)
    other = kind + pl.lit(" of ") + pl.when(maker.is_not_null()).then(
        maker + pl.lit(" (another maker)")).otherwise(pl.lit("another maker"))
    return frame.with_columns(
        pl.when(measured == "other_vendor").then(other)
        .when(measured == "leaderboard").then(pl.lit("leaderboard"))
        .otherwise(kind).alias("cited_as"))
