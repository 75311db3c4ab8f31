"""Reviewed verdicts on suspect values: the contract file `schemas/cell_reviews.csv`.

A maintainer who has looked at a value the suspect check named (`benchpress suspects`)
records what it is, one row per observation:

    model_id,benchmark_id,source_id,score,verdict,note,reviewer

- ``model_id``, ``benchmark_id``, ``source_id``: the observation (ids as the registry
  has them, after aliases);
- ``score``: the value reviewed; the verdict holds for that value only (a source that
  corrects it later is not silently excluded); blank: any value;
- ``verdict``: ``ok`` (the value stands; the check no longer counts it as open),
  ``wrong_scale`` (a fraction, a per-mille, another unit), ``reversed`` (the complement:
  an accuracy where the benchmark holds an error rate), ``typo`` or ``exclude`` (any other
  reason). Every verdict but ``ok`` takes the observation out of the cells: it moves to
  the quarantine with the verdict as its reason, and the cell goes to the next observation
  in the usual order, or stays empty. A value is never rewritten (the complement of a
  published rate is not what its publisher measured);
- ``note``: what the reviewer found (required for every verdict but ``ok``);
- ``reviewer``: who.

The file is optional. A malformed row is one line naming the file, the row and the field;
all of them are reported at once.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from benchpress.errors import BadRowsError
from benchpress.validate.contract_csv import read_contract_csv

__all__ = ["REVIEW_COLUMNS", "VERDICTS", "EXCLUDING", "REVIEWS_FILE", "read_reviews",
           "empty_reviews"]

REVIEWS_FILE = "cell_reviews.csv"
REVIEW_COLUMNS = ["model_id", "benchmark_id", "source_id", "score", "verdict", "note",
                  "reviewer"]
VERDICTS = ("ok", "wrong_scale", "reversed", "typo", "exclude")
#: The verdicts that take an observation out of the cells.
EXCLUDING = ("wrong_scale", "reversed", "typo", "exclude")

_ID = re.compile(r"^[a-z0-9][a-z0-9._+\-]*$")
_BENCHMARK_ID = re.compile(r"^[a-z0-9][a-z0-9._+\-]*(@[0-9a-z][0-9a-z._\-]*)?$")
_SCHEMA = {c: (pl.Float64 if c == "score" else pl.String) for c in REVIEW_COLUMNS}


def empty_reviews() -> pl.DataFrame:
    """A reviews frame without rows (``REVIEW_COLUMNS``, ``score`` a float, plus
    ``review_row``, the row's line in the file)."""
    return pl.DataFrame(schema={**_SCHEMA, "review_row": pl.Int64})


def _row_problems(row: dict) -> list[tuple[str, str]]:
    """(field, problem) of one row of the file (``row``: its text cells)."""
    problems = []
    for field, pattern in (("model_id", _ID), ("benchmark_id", _BENCHMARK_ID),
                           ("source_id", _ID)):
        value = row[field]
        if not value:
            problems.append((field, "is empty"))
        elif not pattern.match(value):
            problems.append((field, f"{value!r} is not an id (lowercase letters, digits, "
                                    "'.', '_', '+', '-')"))
    if row["score"]:
        try:
            float(row["score"])
        except ValueError:
            problems.append(("score", f"{row['score']!r} is not a number (blank: any value)"))
    if row["verdict"] not in VERDICTS:
        problems.append(("verdict", f"{row['verdict']!r} is not one of {', '.join(VERDICTS)}"))
    elif row["verdict"] != "ok" and not row["note"]:
        problems.append(("note", f"a '{row['verdict']}' verdict needs a note saying what "
                                 "was found"))
    if not row["reviewer"]:
        problems.append(("reviewer", "is empty: say who reviewed the value"))
    return problems


def read_reviews(schemas_dir: Path) -> pl.DataFrame:
    """The reviewed verdicts of ``schemas_dir/cell_reviews.csv`` (none when the file is
    absent), with ``review_row``, each row's line in the file.

    Raises
    ------
    BadInputError
        One line per malformed row (file, row, field), or for a file that is not this
        contract's CSV.
    """
    path = Path(schemas_dir) / REVIEWS_FILE
    if not path.is_file():
        return empty_reviews()
    text = read_contract_csv(path, REVIEW_COLUMNS)
    text = text.select(pl.col(c).fill_null("").str.strip_chars() for c in REVIEW_COLUMNS)
    lines, seen = [], {}
    for k, row in enumerate(text.iter_rows(named=True)):
        lines += [f"{path} row {k + 2}: field '{field}': {problem}"
                  for field, problem in _row_problems(row)]
        key = (row["model_id"], row["benchmark_id"], row["source_id"], row["score"])
        if key in seen:
            lines.append(f"{path} row {k + 2}: field 'row': the same observation as row "
                         f"{seen[key]} (one verdict per value)")
        seen.setdefault(key, k + 2)
    if lines:
        raise BadRowsError(lines)
    return (text.with_columns(pl.col("score").replace("", None).cast(pl.Float64),
                              *(pl.col(c).replace("", None) for c in ("note",)))
            .with_row_index("review_row").with_columns((pl.col("review_row") + 2).cast(pl.Int64))
            .select(*REVIEW_COLUMNS, "review_row"))
