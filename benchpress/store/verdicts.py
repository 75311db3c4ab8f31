"""Reviewed verdicts applied to the observations (`schemas/cell_reviews.csv`).

An observation a reviewer judged wrong (`wrong_scale`, `reversed`, `typo`, `exclude`; see
`benchpress.validate.reviews`) leaves `scores` for the quarantine, with the verdict, the
note, the reviewer and the review's row as its reason, so that it takes part in no cell:
the cell goes to the next observation in the usual order (`store.resolve`), or stays
empty. It is never rewritten, and never dropped: `SELECT * FROM quarantine WHERE field =
'review'` lists every one, and `benchpress suspects` shows them beside the open suspects.
A verdict `ok` changes nothing here.
"""

from __future__ import annotations

import json

import polars as pl

from benchpress.validate.normalize import alias_map
from benchpress.validate.reviews import EXCLUDING, REVIEWS_FILE

__all__ = ["REVIEW_FIELD", "apply_reviews"]

#: The quarantine's `field` for an observation a review took out.
REVIEW_FIELD = "review"
_KEY = ["model_id", "benchmark_id", "source_id"]
_SAME_VALUE = 1e-6


def apply_reviews(scores: pl.DataFrame, reviews: pl.DataFrame | None, contracts=None
                  ) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """(scores kept, quarantine rows of the observations taken out, warnings).

    ``reviews``: `benchpress.validate.reviews.read_reviews` rows. An observation matches a
    review by model, benchmark and source, and by value where the review gives one (every
    version of the source that has that value); a review of a source the registry holds
    that matches no observation is a warning (its source may have corrected the value).
    ``contracts`` (`benchpress.validate.contracts.Contracts`): through its aliases, a review
    written under an id that an alias accepted later still names its observation (scores
    hold canonical ids).
    """
    quarantine_columns = ["source_id", "kind", "row", "record", "field", "reason", "ingest_id"]
    none = pl.DataFrame(schema={c: pl.String for c in quarantine_columns})
    if reviews is None or reviews.height == 0:
        return scores, none, []
    if contracts is not None:
        reviews = reviews.with_columns(
            pl.col(f"{kind}_id").replace(alias_map(contracts, kind)) for kind in ("model", "benchmark"))
    indexed = scores.with_row_index("_pos")
    found = indexed.select("_pos", *_KEY, "score").join(
        reviews.rename({"score": "_reviewed"}), on=_KEY)
    found = found.filter(pl.col("_reviewed").is_null()
                         | ((pl.col("score") - pl.col("_reviewed")).abs() <= _SAME_VALUE))
    # a review of a source this registry does not hold is not stale, only not used here
    unmatched = (reviews.filter(pl.col("source_id").is_in(scores["source_id"].unique().implode()))
                 .join(found.select("review_row").unique(), on="review_row", how="anti"))
    warnings = [
        f"schemas/{REVIEWS_FILE} row {r['review_row']}: matches no observation ({r['model_id']}, "
        f"{r['benchmark_id']}, {r['source_id']}"
        + (f", {r['score']:g}" if r["score"] is not None else "")
        + "); the source may have corrected the value or renamed an id"
        for r in unmatched.sort("review_row").iter_rows(named=True)]
    out = found.filter(pl.col("verdict").is_in(EXCLUDING))
    if out.height == 0:
        return scores, none, warnings
    taken = indexed.join(out.select("_pos", "verdict", "note", "reviewer", "review_row"),
                         on="_pos").sort("_pos")
    records = [json.dumps(r, ensure_ascii=False, default=str)
               for r in taken.drop("_pos", "verdict", "note", "reviewer", "review_row").to_dicts()]
    quarantined = taken.select(
        pl.col("source_id"), pl.lit("score").alias("kind"), pl.col("row").fill_null("?"),
        pl.Series("record", records, dtype=pl.String),
        pl.lit(REVIEW_FIELD).alias("field"),
        pl.format("reviewed '{}' by {} (schemas/{} row {}): {}", "verdict", "reviewer",
                  pl.lit(REVIEWS_FILE), "review_row", pl.col("note").fill_null("")).alias("reason"),
        pl.col("ingest_id"),
    ).cast({c: pl.String for c in quarantine_columns})
    kept = scores.filter(~pl.int_range(pl.len()).is_in(out["_pos"].implode()))
    return kept, quarantined, warnings

