"""Bounds on what a SQL query may build and return, read from its serialized statement
(`json_serialize_sql`) before it runs and from its Arrow result after.

* A string function given a constant size over :data:`MAX_STRING_CHARS` is refused before
  the query runs (:func:`oversized_string`): DuckDB builds strings outside its buffer
  manager, so its memory limit does not hold them (``repeat('x', 2e9)`` reached 4 GB past
  a 1 GB limit). A size computed from the data is not known before the query runs.
* A result column of a type polars cannot import (an interval, a union) is one line
  naming the column (:func:`to_frame`), not a panic.
"""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa

from benchpress.errors import BadInputError

__all__ = ["MAX_STRING_CHARS", "oversized_string", "to_frame"]

#: characters a string function given a constant size may build (DuckDB makes strings
#: outside its buffer manager, so the memory limit does not hold them)
MAX_STRING_CHARS = 64 * 2**20
#: the argument giving the size of the string each of these functions builds
_SIZED = {"repeat": 1, "lpad": 1, "rpad": 1}


def _constant_number(node) -> float | None:
    """The value of a numeric constant expression (a literal, perhaps cast)."""
    while isinstance(node, dict) and node.get("class") == "CAST":
        node = node.get("child")
    if not isinstance(node, dict) or node.get("class") != "CONSTANT":
        return None
    literal = node.get("literal") or {}
    try:
        return float(literal.get("text")) if literal.get("kind") in (
            "INTEGER", "NUMERIC", "BIGINT", "HUGEINT", "DECIMAL", "DOUBLE") else None
    except (TypeError, ValueError):
        return None


def oversized_string(node) -> str | None:
    """The first call in a serialized statement that builds a string of a constant size
    over `MAX_STRING_CHARS` (``repeat('x', 2000000000)``), in words; None when none does."""
    if isinstance(node, dict):
        name = str(node.get("function_name", "")).lower()
        args = node.get("arguments") if name in _SIZED else None
        if isinstance(args, list) and len(args) > _SIZED[name]:
            size = _constant_number(args[_SIZED[name]].get("expression"))
            text = (args[0].get("expression") or {}).get("literal") or {}
            if size is not None and name == "repeat" and text.get("kind") == "STRING":
                size *= max(len(str(text.get("text", ""))), 1)  # repeat('abc', n): 3n
            if size is not None and size > MAX_STRING_CHARS:
                return f"{name}(..., {size:,.0f})"
        return next((w for v in node.values() if (w := oversized_string(v))), None)
    if isinstance(node, list):
        return next((w for v in node if (w := oversized_string(v))), None)
    return None


def to_frame(table: pa.Table) -> pl.DataFrame:
    """`table` as a polars frame; BadInputError (one line) naming a column of a type
    polars cannot hold. A map column is a polars Map; with polars before 2.0, which has no
    Map type (the core pins polars<1.34, pyproject.toml), JSON text: `{"k": 1}`, not a list
    of key/value structs."""
    odd = next((f for f in table.schema if _unsupported(f.type)), None)
    try:
        if odd is not None:  # polars would panic (not raise) on it
            raise TypeError(f"column {odd.name[:60]!r} has the type {odd.type}")
        return pl.from_arrow(table if hasattr(pl, "Map") else _maps_as_json(table))
    except Exception as exc:  # noqa: BLE001 - a type polars cannot hold
        raise BadInputError(f"SQL error: {_unreturnable(table, exc)}; cast it to VARCHAR, "
                            "e.g. CAST(x AS VARCHAR)") from None


def _maps_as_json(table: pa.Table) -> pa.Table:
    """`table` with each map column as JSON text (one object per row, null kept)."""
    for k, field in enumerate(table.schema):
        if pa.types.is_map(field.type):
            text = [None if v is None else json.dumps(dict(v), default=str)
                    for v in table.column(k).to_pylist()]
            table = table.set_column(k, pa.field(field.name, pa.string()), pa.array(text, pa.string()))
    return table


def _unsupported(t: pa.DataType) -> bool:
    """Whether the Arrow type `t` (or one inside it) is one polars cannot import: an
    interval or a union."""
    if pa.types.is_interval(t) or pa.types.is_union(t):
        return True
    return any(_unsupported(t.field(k).type) for k in range(t.num_fields))


def _unreturnable(table: pa.Table, exc: Exception) -> str:
    """Which column of `table` cannot become a polars column, in words."""
    if isinstance(exc, TypeError) and str(exc).startswith("column "):
        return f"{exc}, which cannot be returned"
    for field in table.schema:
        try:
            pl.from_arrow(table.select([field.name]).slice(0, 0))
        except Exception:  # noqa: BLE001
            return f"column {field.name[:60]!r} has the type {field.type}, which cannot be returned"
    return f"the result cannot be returned ({type(exc).__name__})"
