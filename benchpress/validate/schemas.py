"""pandera (polars) contracts for every registry table.

One `DataFrameModel` per table, `strict = True`. Value checks only run on eager
DataFrames (a LazyFrame is checked for its schema alone), so `validate_rows` always
collects first; `tests/test_validate.py` proves that a bad value is caught.
`ScoreCheck` is the scores table plus the benchmark's scale bounds, used at ingest time.
"""

from __future__ import annotations

import copy
from typing import Optional

import pandera.polars as pa

import polars as pl

__all__ = [
    "ID_PATTERN",
    "BENCHMARK_ID_PATTERN",
    "MEASURED_BY",
    "ENTRY_KINDS",
    "CHECK_MESSAGES",
    "SCALES",
    "MAX_ABS_SCORE",
    "Models",
    "Benchmarks",
    "Scores",
    "ScoreCheck",
    "StoredScores",
    "Cells",
    "Aliases",
    "Sources",
    "Quarantine",
    "TABLES",
    "validate_table",
]

ID_PATTERN = r"^[a-z0-9][a-z0-9._+\-]*$"
# a benchmark id may carry a method version, `aa_intelligence_index@2026-05-22` (`store.methods`)
BENCHMARK_ID_PATTERN = r"^[a-z0-9][a-z0-9._+\-]*(@[0-9a-z][0-9a-z._\-]*)?$"
URL_PATTERN = r"^https?://[^\s/$.?#][^\s]*$"

# The largest score magnitude accepted on any scale: far above every real one (Elo ratings
# in the thousands, dollars earned in the hundreds of thousands); beyond it a value is an
# error (1e308 overflows the predictor's transforms), as inf and NaN are.
MAX_ABS_SCORE = 1e9

# What a failed named check means, keyed by the check's name (pandera reports a check by
# its function name when it has no `error=` text): (the field a table-level check blames
# in the quarantine, or None for a column check's own column; the message).
CHECK_MESSAGES = {
    "known_scale": ("benchmark_id", "benchmark has no known scale"),
    "finite_score": ("score", f"score is not a finite number within ±{MAX_ABS_SCORE:,.0f}"),
    "within_range": ("score", "score outside the benchmark's range"),
    "not_duplicate": ("row", "duplicate of an earlier row"),
    "calendar_date": (None, "not a date; expected format YYYY-MM-DD"),
    "clean_model_id": ("model_id", "model id refused"),
    "not_own_base": ("base_model_id", "an entry cannot run itself: base_model_id is its own id"),
}


def _calendar_date(column: str) -> pl.Expr:
    """True where `column` is null or a real date YYYY-MM-DD (or YYYY-MM, YYYY): 2026-13-45
    and 11/01/2026 are not."""
    s = pl.col(column)
    return s.is_null() | pl.when(s.str.contains(r"^\d{4}$")).then(True).when(
        s.str.contains(r"^\d{4}-\d{2}$")).then((s + "-01").str.to_date("%Y-%m-%d", strict=False).is_not_null()).when(
        s.str.contains(r"^\d{4}-\d{2}-\d{2}$")).then(s.str.to_date("%Y-%m-%d", strict=False).is_not_null()
    ).otherwise(False)


# What a row of `models` is: a bare model (under one evaluation setting: effort, mode), an
# agent system (a scaffold running one or more models: a SWE-bench entry) or a submission (one
# evaluation run a leaderboard lists: a tau2-bench submission with its user simulator). An
# agent or submission is never merged into its model's cells; `base_model_id` links it.
ENTRY_KINDS = ("model", "agent", "submission")


class Models(pa.DataFrameModel):
    """One row per entry (see `ENTRY_KINDS`); `entry_kind` and `base_model_id` are absent in
    registries built before they existed (read as "model" and null)."""

    model_id: str = pa.Field(str_matches=ID_PATTERN, unique=True)
    name: str
    provider: str = pa.Field(nullable=True)
    release_date: str = pa.Field(nullable=True)
    is_reasoning: bool = pa.Field(nullable=True)
    open_weights: bool = pa.Field(nullable=True)
    setting: str = pa.Field(nullable=True)
    # parsed from the id by `model_identity.parse_model` (effort falls back to the setting)
    family: str = pa.Field(nullable=True)
    version_date: str = pa.Field(nullable=True, str_matches=r"^(\d{4}(-\d{2}(-\d{2})?)?|--\d{2}-\d{2})$")
    effort: str = pa.Field(nullable=True)
    source_id: str  # the source that first described the model
    ordinal: int = pa.Field(ge=0)
    entry_kind: Optional[str] = pa.Field(isin=list(ENTRY_KINDS))
    # the model an agent or submission runs (canonical id; null: not stated, or several)
    base_model_id: Optional[str] = pa.Field(nullable=True, str_matches=ID_PATTERN)

    class Config:
        strict = True

    @pa.check("release_date", name="calendar_date")
    def calendar_date(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(_calendar_date(data.key))

    @pa.dataframe_check(name="not_own_base")
    def not_own_base(cls, data) -> pl.LazyFrame:
        """An entry is not the model it runs (a bare model names no base)."""
        if "base_model_id" not in data.lazyframe.collect_schema().names():
            return data.lazyframe.select(pl.lit(True))
        return data.lazyframe.select(
            pl.col("base_model_id").is_null() | (pl.col("base_model_id") != pl.col("model_id")))


#: the scale kinds of schemas/scales.yaml (`validate.contracts` refuses a benchmark of another)
SCALES = ["percent", "index", "elo", "rating", "dollars", "score", "normalized", "trueskill",
          "bradley_terry", "glicko", "rank", "words", "seconds", "count"]


class Benchmarks(pa.DataFrameModel):
    """Every benchmark with its scale kind, bounds, direction (`higher_is_better`; null:
    none, a descriptive measure such as a summary's length in words) and unit label ("%",
    "words", "TrueSkill mu"; absent in registries built before units were recorded)."""

    benchmark_id: str = pa.Field(str_matches=BENCHMARK_ID_PATTERN, unique=True)
    name: str
    category: str = pa.Field(nullable=True)
    scale: str = pa.Field(isin=SCALES)
    lower: float = pa.Field(nullable=True)
    upper: float = pa.Field(nullable=True)
    higher_is_better: bool = pa.Field(nullable=True)
    cost: float = pa.Field(nullable=True, ge=0)
    ordinal: int = pa.Field(ge=0)
    unit: Optional[str] = pa.Field(nullable=True)

    class Config:
        strict = True

    @pa.dataframe_check
    def bounds_ordered(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(
            pl.col("lower").is_null() | pl.col("upper").is_null() | (pl.col("lower") < pl.col("upper"))
        )


class Scores(pa.DataFrameModel):
    """Every observation, with its citation."""

    model_id: str = pa.Field(str_matches=ID_PATTERN)
    benchmark_id: str = pa.Field(str_matches=BENCHMARK_ID_PATTERN)
    score: float
    score_raw: str
    unit: str = pa.Field(nullable=True)
    source_id: str
    reference_url: str = pa.Field(nullable=True, str_matches=URL_PATTERN)
    source_type: str
    reported_setting: str = pa.Field(nullable=True)
    audit_status: str = pa.Field(nullable=True)
    observed_at: str = pa.Field(nullable=True)
    derived: bool
    notes: str = pa.Field(nullable=True)
    raw_model_id: str
    raw_benchmark_id: str
    row: str
    retrieved_at: str
    ingest_id: str

    class Config:
        strict = True


class ScoreCheck(Scores):
    """Scores plus the bounds of their benchmark's scale, checked row by row."""

    scale: str = pa.Field(nullable=True)
    lower: float = pa.Field(nullable=True)
    upper: float = pa.Field(nullable=True)
    duplicate_of: str = pa.Field(nullable=True)
    id_problem: str = pa.Field(nullable=True)  # see `validate.text.identifier_problem`

    @pa.dataframe_check
    def clean_model_id(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("id_problem").is_null())

    @pa.dataframe_check
    def known_scale(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("scale").is_not_null())

    @pa.dataframe_check
    def finite_score(cls, data) -> pl.LazyFrame:
        """inf, NaN (as text in any source: "inf", "Infinity", "NaN") and absurd magnitudes
        stop here, on every adapter's rows: the predictor never sees them."""
        s = pl.col("score")
        return data.lazyframe.select(s.is_null() | (s.is_finite() & (s.abs() <= MAX_ABS_SCORE)))

    @pa.dataframe_check
    def within_range(cls, data) -> pl.LazyFrame:
        s = pl.col("score")
        return data.lazyframe.select(
            s.is_null()
            | (
                (pl.col("lower").is_null() | (s >= pl.col("lower")))
                & (pl.col("upper").is_null() | (s <= pl.col("upper")))
            )
        )

    @pa.dataframe_check
    def not_duplicate(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("duplicate_of").is_null())


MEASURED_BY = ("own_vendor", "other_vendor", "vendor", "leaderboard", "third_party", "unknown")


class StoredScores(Scores):
    """The built `scores` table: every observation plus the version of its source it came
    from (`source_version`, null for an unversioned source; see `store.sources`) and who
    measured it (`measured_by`, see `store.provenance`; absent in registries built before)."""

    source_version: str = pa.Field(nullable=True)
    measured_by: Optional[str] = pa.Field(nullable=True, isin=list(MEASURED_BY))


class Cells(pa.DataFrameModel):
    """The resolved matrix: one winning observation per model and benchmark."""

    model_id: str
    benchmark_id: str
    score: float
    source_id: str
    reference_url: str = pa.Field(nullable=True)
    source_type: str
    reported_setting: str = pa.Field(nullable=True)
    audit_status: str = pa.Field(nullable=True)
    source_version: str = pa.Field(nullable=True)  # the winning source's newest version
    measured_by: Optional[str] = pa.Field(nullable=True, isin=list(MEASURED_BY))  # the winner's
    n_observations: int = pa.Field(ge=1)
    n_disagreeing: int = pa.Field(ge=0)
    min_score: float
    max_score: float

    class Config:
        strict = True
        unique = ["model_id", "benchmark_id"]


class Aliases(pa.DataFrameModel):
    kind: str = pa.Field(isin=["model", "benchmark"])
    alias: str
    canonical_id: str = pa.Field(str_matches=ID_PATTERN)
    origin: str
    note: str = pa.Field(nullable=True)

    class Config:
        strict = True
        unique = ["kind", "alias"]


class Sources(pa.DataFrameModel):
    """One row per (source, version); an unversioned source has one row, version null."""

    source_id: str
    source_version: str = pa.Field(nullable=True)
    adapter: str
    url: str = pa.Field(nullable=True)
    path: str = pa.Field(nullable=True)
    sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    retrieved_at: str
    licence: str = pa.Field(nullable=True)
    rows_read: int = pa.Field(ge=0)
    rows_accepted: int = pa.Field(ge=0)
    rows_merged: int = pa.Field(ge=0)
    rows_quarantined: int = pa.Field(ge=0)

    class Config:
        strict = True
        unique = ["source_id", "source_version"]


class Quarantine(pa.DataFrameModel):
    source_id: str
    kind: str = pa.Field(isin=["model", "benchmark", "score"])
    row: str
    record: str  # the raw row as JSON text
    field: str = pa.Field(nullable=True)
    reason: str
    ingest_id: str

    class Config:
        strict = True


TABLES = {
    "models": Models,
    "benchmarks": Benchmarks,
    "scores": StoredScores,
    "cells": Cells,
    "aliases": Aliases,
    "sources": Sources,
    "quarantine": Quarantine,
}


def validate_table(name: str, df: pl.DataFrame) -> pl.DataFrame:
    """``TABLES[name].validate(df, lazy=True)``, with the table's `unique` rule checked
    first on one 64-bit hash of the key per row, then exactly (by pandera) on the rows
    whose hash repeats, the only ones that can repeat the key: pandera's own check hashes
    the key's strings, a table that outgrew 8 GB at 12 million cells.

    Raises
    ------
    pandera.errors.SchemaErrors
        As ``validate`` does, for a failed column check or a repeated key.
    """
    schema = TABLES[name].to_schema()
    key = schema.unique
    if not key:
        return schema.validate(df, lazy=True)
    relaxed = copy.deepcopy(schema)
    relaxed.unique = None
    relaxed.validate(df, lazy=True)
    suspect = df.select(pl.struct(key).hash().is_duplicated()).to_series()
    if suspect.any():
        schema.validate(df.filter(suspect), lazy=True)
    return df
