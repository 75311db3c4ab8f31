"""`validate.prepare` and `validate.schemas` at scale (issue 27, Medium 8 i): the duplicate
check and the built tables' unique keys are found through one 64-bit hash per row, then
checked exactly on the rows whose hash repeats; the answers are those of the exact check."""

from __future__ import annotations

import random

import pandera
import polars as pl
import pytest

from benchpress.validate.prepare import _mark_duplicates
from benchpress.validate.schemas import TABLES, validate_table

KEY = ["model_id", "benchmark_id", "score", "reference_url", "reported_setting"]


def _first_copies(df: pl.DataFrame) -> list[str | None]:
    """The reference: each row's first earlier row with the same key (nulls equal), by a loop."""
    seen, out = {}, []
    for row in df.iter_rows(named=True):
        key = tuple(row[c] for c in KEY)
        out.append(seen.get(key))
        seen.setdefault(key, row["row"])
    return out


@pytest.mark.parametrize("seed", range(20))
def test_duplicates_are_marked_as_the_exact_check_marks_them(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 80)
    df = pl.DataFrame({
        "model_id": [rng.choice(["a", "b", None]) for _ in range(n)],
        "benchmark_id": [rng.choice(["x", "y"]) for _ in range(n)],
        "score": [rng.choice([1.0, 2.5, None]) for _ in range(n)],
        "reference_url": [rng.choice(["https://a.example", "https://b.example"]) for _ in range(n)],
        "reported_setting": [rng.choice([None, "high"]) for _ in range(n)],
        "row": [f"scores[{i}]" for i in range(n)],
    }, schema={"model_id": pl.String, "benchmark_id": pl.String, "score": pl.Float64,
               "reference_url": pl.String, "reported_setting": pl.String, "row": pl.String})
    got = _mark_duplicates(df)
    assert got.columns == [*df.columns, "duplicate_of"]
    assert got["duplicate_of"].to_list() == _first_copies(df)


def test_distinct_rows_get_an_all_null_column():
    df = pl.DataFrame({"model_id": ["a", "a"], "benchmark_id": ["x", "y"], "score": [1.0, 1.0],
                       "reference_url": ["u", "u"], "reported_setting": [None, None],
                       "row": ["r0", "r1"]}, schema_overrides={"reported_setting": pl.String})
    assert _mark_duplicates(df)["duplicate_of"].to_list() == [None, None]


def _cells(n: int) -> pl.DataFrame:
    """`n` valid rows of the cells table (from its own schema's columns)."""
    rows = {"model_id": [f"m{i}" for i in range(n)], "benchmark_id": ["hle"] * n,
            "score": [50.0] * n, "source_id": ["s"] * n, "reference_url": ["https://x.example"] * n,
            "source_type": ["official_blog"] * n, "reported_setting": [None] * n,
            "audit_status": [None] * n, "source_version": [None] * n, "measured_by": [None] * n,
            "n_observations": [1] * n, "n_disagreeing": [0] * n, "min_score": [50.0] * n,
            "max_score": [50.0] * n}
    columns = TABLES["cells"].to_schema().columns
    return pl.DataFrame({c: rows[c] for c in columns},
                        schema={c: col.dtype.type for c, col in columns.items()})


def test_a_repeated_key_in_a_built_table_is_still_a_contract_failure():
    cells = _cells(50)
    assert validate_table("cells", cells) is cells
    with pytest.raises(pandera.errors.SchemaErrors) as info:
        validate_table("cells", pl.concat([cells, cells.slice(7, 1)]))
    assert "m7" in str(info.value.failure_cases)
    with pytest.raises(pandera.errors.SchemaErrors):  # the column checks still run on all rows
        validate_table("cells", cells.with_columns(pl.lit(0, dtype=pl.Int64).alias("n_observations")))
    assert TABLES["cells"].to_schema().unique == ["model_id", "benchmark_id"]  # not changed
