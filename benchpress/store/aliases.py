"""Alias suggestions: fuzzy candidate matches for a person to review, never applied silently.

For each model (or benchmark) id, the closest ids that came from other sources are scored
with rapidfuzz on the normalized id; model candidates also show how many benchmarks the
two rows share and how far apart their scores are there, which is what a reviewer needs
to tell "the same model under another name" from "a sibling model".
"""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
from rapidfuzz import fuzz, process

from benchpress.errors import BadInputError
from benchpress.validate.contracts import ALIAS_COLUMNS
from benchpress.validate.normalize import canonical_benchmark_id, canonical_model_id

__all__ = ["suggest_aliases", "accept_alias"]


def suggest_aliases(models: pl.DataFrame, benchmarks_used: pl.DataFrame, cells: pl.DataFrame,
                    scores: pl.DataFrame, *, kind: str = "model", source: str | None = None,
                    min_score: float = 80.0, limit: int = 3) -> pl.DataFrame:
    """Candidate (alias, canonical_id, similarity, shared, mean_abs_diff) rows, best first."""
    key = "model_id" if kind == "model" else "benchmark_id"
    per_source = scores.select(key, "source_id").unique()
    left = per_source.filter(pl.col("source_id") == source)[key] if source else per_source[key]
    left = sorted(set(left.to_list()))
    rows = []
    for alias in left:
        sources_of_alias = set(per_source.filter(pl.col(key) == alias)["source_id"])
        candidates = sorted(set(per_source.filter(~pl.col("source_id").is_in(list(sources_of_alias)))[key])
                            - {alias})
        for match, similarity, _ in process.extract(alias, candidates, scorer=fuzz.WRatio,
                                                    limit=limit, score_cutoff=min_score):
            rows.append({"kind": kind, "alias": alias, "canonical_id": match,
                         "similarity": round(float(similarity), 1)})
    frame = pl.DataFrame(rows, schema={"kind": pl.String, "alias": pl.String,
                                       "canonical_id": pl.String, "similarity": pl.Float64})
    if frame.height == 0 or kind != "model":
        return frame.sort("similarity", descending=True)
    a = cells.select(pl.col("model_id").alias("alias"), "benchmark_id", pl.col("score").alias("a"))
    b = cells.select(pl.col("model_id").alias("canonical_id"), "benchmark_id", pl.col("score").alias("b"))
    evidence = (frame.join(a, on="alias").join(b, on=["canonical_id", "benchmark_id"])
                .group_by("alias", "canonical_id")
                .agg(pl.len().alias("shared"), (pl.col("a") - pl.col("b")).abs().mean().round(2)
                     .alias("mean_abs_diff")))
    return (frame.join(evidence, on=["alias", "canonical_id"], how="left")
            .with_columns(pl.col("shared").fill_null(0))
            .sort(["similarity", "shared"], descending=True))


def accept_alias(schemas_dir: Path, kind: str, alias: str, canonical_id: str, note: str = "") -> None:
    """Append an accepted suggestion to schemas/aliases.csv (takes effect on the next build)."""
    if kind not in ("model", "benchmark"):
        raise BadInputError(f"alias kind must be 'model' or 'benchmark', not '{kind}'")
    norm = canonical_model_id if kind == "model" else canonical_benchmark_id
    alias, canonical_id = norm(alias), norm(canonical_id)
    path = schemas_dir / "aliases.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        existing = list(csv.DictReader(fh))
    if any(r["kind"] == kind and r["alias"] == alias for r in existing):
        raise BadInputError(f"{path}: {kind} alias '{alias}' is already in the table")
    with open(path, "a", newline="", encoding="utf-8") as fh:
        csv.DictWriter(fh, fieldnames=ALIAS_COLUMNS, lineterminator="\n").writerow(
            {"kind": kind, "alias": alias, "canonical_id": canonical_id,
             "origin": "accepted suggestion", "note": note})
