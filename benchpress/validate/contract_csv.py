"""Reading a contract CSV of `schemas/` (aliases, benchmarks, reviews, ...) as text columns.

Every contract file is read the same way: all columns as text (the contract's own checks
parse numbers and ids, so a bad cell is reported with its row and field, never as a polars
type error), one line naming the file when it is missing, is not CSV, or lacks a column.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from benchpress.errors import BadInputError

__all__ = ["read_contract_csv"]


def read_contract_csv(path: Path, columns=(), **kwargs) -> pl.DataFrame:
    """The contract CSV at ``path`` as text columns, with ``columns`` present.

    Raises
    ------
    BadInputError
        One line naming the file: missing, not readable as CSV, or without a column of
        ``columns``.
    """
    if not path.is_file():
        raise BadInputError(f"{path}: contract file is missing")
    try:
        table = pl.read_csv(path, infer_schema_length=0, **kwargs)
    except Exception as exc:  # polars raises several types for malformed CSV
        raise BadInputError(f"{path}: cannot be read as CSV "
                            f"({' '.join(str(exc).split())[:200]})") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise BadInputError(f"{path}: no column {', '.join(map(repr, missing))} (expected "
                            f"{', '.join(columns)})")
    return table
