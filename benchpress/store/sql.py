"""SQL over the registry: a sealed, in-memory DuckDB over verified tables, read-only, with limits.

`connect` checks every table file against the digest its folder recorded
(`tables.read_table`), opens a DuckDB connection with external access off, no temporary
directory, no extension loading and its configuration locked, registers each table (an
empty stand-in with its columns until a query first reads it: `prepare_select` then
decodes the checked file, so ``SELECT count(*) FROM models`` never decodes the 5 million scores), and
only then defines the views: the package's own `views.sql` (never a copy from a data
folder). The wide `matrix` (models x benchmarks) is streamed per query in batches of
models (`store.wide`), so ``SELECT * FROM matrix LIMIT 5`` pivots one batch at any size; a
query that reads it twice needs it whole, up to `InputLimits.matrix_max_cells` cells;
`matrix_of(['b1','b2'])` pivots only the benchmarks it lists. So no statement runs before
the sandbox is sealed, no SQL text comes from the data, and a query can neither read nor
write a file.

A query is one SELECT (`check_select` refuses functions and catalog tables that disclose
settings or run SQL text: `current_setting`, `duckdb_settings()`, `pg_settings`,
`query()` ...) run under a time limit, a memory limit and a row cap: results are streamed
in batches and fetching stops one row past the cap, so a huge result is never
materialised. `execute` (`benchpress sql`, the app's console; `diff --sql` through
`store.sql_child` too) runs it in a child process that also holds the memory limit for
what DuckDB allocates outside its buffer manager and is killed at the deadline or on
Ctrl-C (`store.sql_child`); `prepare_select`, `fetch` and `result_of` are its steps.
"""

from __future__ import annotations

import functools
import json
import re
import weakref
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from benchpress.input_limits import input_limits
from benchpress.errors import BadInputError, BenchPressError
from benchpress.store import wide
from benchpress.store.sql_bounds import MAX_STRING_CHARS, oversized_string, to_frame
from benchpress.store.tables import (
    TABLE_NAMES, read_arrow, read_table, require_registry, table_schema, views_sql,
)

__all__ = ["QueryCancelled", "QueryResult", "connect", "sealed_connection", "check_select",
           "prepare_select", "fetch", "query_error", "result_of", "timed_out", "execute",
           "query", "DEFAULT_TIMEOUT", "DEFAULT_MEMORY_LIMIT", "DEFAULT_MAX_ROWS"]

DEFAULT_TIMEOUT = 30.0          # seconds
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_MAX_ROWS = 10_000       # what `benchpress sql` prints at most
_BATCH_ROWS = 8192
_SEAL = {
    "enable_external_access": False,     # no file, network or database access
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "temp_directory": "",                # nothing spilled, no directory opened to queries
    "max_temp_directory_size": "0B",
}
# functions and catalog tables a query may not name: they disclose settings (paths among
# them) or run SQL text given as a string
_DENIED = {"current_setting", "query", "query_table", "json_execute_serialized_sql",
           "json_deserialize_sql", "which_secret", "getenv", "pg_settings"}
_DENIED_PREFIXES = ("duckdb_", "pragma_")


class QueryCancelled(BenchPressError):
    """A query stopped by its time limit, or by Ctrl-C (``interrupted`` is then True)."""

    def __init__(self, message: str, *, interrupted: bool = False):
        super().__init__(message)
        self.interrupted = interrupted


@dataclass(frozen=True)
class QueryResult:
    """A query's rows (at most the cap) and whether more rows matched than were kept."""

    frame: pl.DataFrame
    truncated: bool


def _one_line(exc: BaseException) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _unique(names: list[str]) -> list[str]:
    """Column names made unique the way DuckDB does it (`a.*, b.*` gives `id`, `id_1`)."""
    taken, out = set(names), []
    for name in names:
        if name in out:
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            name = f"{name}_{k}"
            taken.add(name)
        out.append(name)
    return out


def sealed_connection(tables: dict[str, pl.DataFrame | pa.Table], *,
                      memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB, sealed from its first statement, with `tables` registered.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame or pyarrow.Table
        Tables registered under their keys (as Arrow, which DuckDB reads in place).
    memory_limit : str
        DuckDB's `memory_limit` (for example ``"1GB"``); with no temporary directory a
        query that needs more fails with one line instead of spilling.
    """
    con = duckdb.connect(":memory:", config={**_SEAL, "memory_limit": memory_limit})
    # a connection-level option (DuckDB would draw the bar on stdout, among the rows), then
    # the lock: from here on no SET is accepted
    con.execute("SET enable_progress_bar = false")
    con.execute("SET lock_configuration = true")
    for name, table in tables.items():
        con.register(name, table.to_arrow() if isinstance(table, pl.DataFrame) else table)
    return con


def _with_derived(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """`tables` plus what the views read besides them: `_scores_in_file_order` (the scores
    with their `file_row_number` first) when `scores` is among them, made of the scores'
    own columns (a second conversion doubled the peak: 14 GB for 12 million scores)."""
    out = {}
    for name, table in tables.items():
        # a registry built before versions (source_version), provenance (measured_by) or
        # entry kinds (every row then a model)
        for col in {"scores": ("source_version", "measured_by"), "cells": ("measured_by",),
                    "models": ("entry_kind", "base_model_id")}.get(name, ()):
            if col not in table.column_names:
                table = table.append_column(col, pa.array(["model"] * table.num_rows, pa.string())
                                            if col == "entry_kind"
                                            else pa.nulls(table.num_rows, pa.string()))
        out[name] = table
    if "scores" in out:
        rows = pa.array(np.arange(out["scores"].num_rows, dtype=np.uint32))
        out["_scores_in_file_order"] = out["scores"].add_column(0, "file_row_number", rows)
    return out


@dataclass
class _Lazy:
    """A registry connection's folder and the tables still registered as empty stand-ins."""

    folder: Path
    pending: set[str]


# connection -> its registry folder and stand-in tables (`connect`); gone with the connection
_LAZY: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, _Lazy]" = weakref.WeakKeyDictionary()
_VIEW = re.compile(r"CREATE OR REPLACE VIEW (\w+) AS(.*?);", re.S)


@functools.cache
def _view_reads() -> dict[str, set[str]]:
    """For each view of `views.sql`, the tables it reads (through other views too)."""
    body = {name: set(re.findall(r"\w+", text)) for name, text in _VIEW.findall(views_sql())}
    known = set(TABLE_NAMES) | {"_scores_in_file_order"}
    reads = {}
    for name in body:
        seen, todo, found = set(), [name], set()
        while todo:
            view = todo.pop()
            for word in body[view] - seen:
                seen.add(word)
                if word in body:
                    todo.append(word)
                elif word in known:
                    found.add("scores" if word == "_scores_in_file_order" else word)
        reads[name] = found
    return reads


def connect(registry: Path, *, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """A sealed DuckDB connection over a registry or snapshot folder's verified tables.

    Tables: models, benchmarks, scores, cells, aliases, sources, quarantine and the wide
    `matrix`; views from the package's `views.sql`. Every file is checked against its
    recorded digest here, but a table's rows are decoded only when a query first reads it
    (`prepare_select` loads what the query names, through the views it names); until then an
    empty table with its columns stands in. The `matrix` rows are streamed per query (see
    `_prepare_wide`).

    Raises
    ------
    RegistryError
        No registry, or a table that does not match its recorded digest or cannot be read.
    """
    folder = require_registry(registry)
    empty = {name: pl.DataFrame(schema=table_schema(folder, name)) for name in TABLE_NAMES}
    frames: dict = _with_derived({name: df.to_arrow() for name, df in empty.items()})
    benchmarks = read_table(folder, "benchmarks", columns=["benchmark_id", "ordinal"])
    frames["matrix"] = wide.pivot(empty["models"], benchmarks, empty["cells"])
    con = sealed_connection(frames, memory_limit=memory_limit)
    con.execute(views_sql())  # shipped with the code, never a data folder's copy
    _LAZY[con] = _Lazy(folder, set(TABLE_NAMES))
    return con


def _load(con: duckdb.DuckDBPyConnection, names: set[str]) -> None:
    """Decode and register (once per connection) the tables that `names`, the tables,
    views and wide tables a query names, read."""
    lazy = _LAZY.get(con)
    if lazy is None:
        return
    want = set(names) & set(TABLE_NAMES)
    if "_scores_in_file_order" in names:
        want.add("scores")
    for view, reads in _view_reads().items():
        if view in names:
            want |= reads
    if names & {"matrix", "matrix_of"}:
        want |= {"models", "benchmarks"}
    want &= lazy.pending
    if not want:
        return
    for name, table in _with_derived({n: read_arrow(lazy.folder, n) for n in sorted(want)}).items():
        con.register(name, table)
    lazy.pending -= want


def _prepare_wide(con: duckdb.DuckDBPyConnection, tree: dict) -> None:
    """`wide.prepare` for this connection: a registry connection (`connect`) streams
    `matrix` and reads the cells' three columns from the checked file."""
    lazy = _LAZY.get(con)
    cells_of = None if lazy is None else (lambda: read_table(
        lazy.folder, "cells", columns=["model_id", "benchmark_id", "score"]))
    wide.prepare(con, tree, _names(tree, set()), cells_of=cells_of,
                 max_cells=input_limits().matrix_max_cells)


def _names(node, found: set[str]) -> set[str]:
    """Every function and table name in a serialized statement (`json_serialize_sql`)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("function_name", "table_name") and isinstance(value, str):
                found.add(value.lower())
            else:
                _names(value, found)
    elif isinstance(node, list):
        for value in node:
            _names(value, found)
    return found


def check_select(con: duckdb.DuckDBPyConnection, sql: str, *, what: str = "the registry") -> dict:
    """Refuse anything but one SELECT that names no denied function or table; returns the
    serialized statement (`json_serialize_sql`).

    Raises
    ------
    BadInputError
        A parse error, several statements, a statement other than SELECT, or a denied name.
    """
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise BadInputError(f"SQL error: {_one_line(exc)}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise BadInputError(f"only a single SELECT query is allowed ({what} is read-only)")
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0])
    except duckdb.Error as exc:
        raise BadInputError(f"SQL error: {_one_line(exc)}") from None
    if tree.get("error"):
        raise BadInputError(f"SQL error: this query cannot be checked ({tree.get('error_message', '')})")
    denied = sorted(n for n in _names(tree, set())
                    if n in _DENIED or n.startswith(_DENIED_PREFIXES))
    if denied:
        raise BadInputError(f"SQL error: {', '.join(denied)} is not available here (functions "
                            "that show settings or run SQL text are blocked; "
                            "information_schema.tables lists the tables)")
    big = oversized_string(tree)
    if big:
        raise BadInputError(f"SQL error: {big} would build a string of more than "
                            f"{MAX_STRING_CHARS:,} characters, which no memory limit holds; "
                            "ask for a shorter one")
    return tree


def prepare_select(con: duckdb.DuckDBPyConnection, sql: str, *, what: str = "the registry") -> None:
    """Check one SELECT (`check_select`), then decode the tables it reads and stream the
    wide tables it names, so that what is left to run is the query alone."""
    tree = check_select(con, sql, what=what)
    _load(con, _names(tree, set()))
    _prepare_wide(con, tree)


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None, *,
          max_rows: int | None = None) -> pa.Table:
    """Run a prepared query (`prepare_select`), streaming its result in batches and
    stopping one row past `max_rows` (None: every row)."""
    reader = con.sql(sql, params=params).to_arrow_reader(_BATCH_ROWS)
    try:
        batches, n = [], 0
        for batch in reader:
            batches.append(batch)
            n += batch.num_rows
            if max_rows is not None and n > max_rows:
                break
        return pa.Table.from_batches(batches, schema=reader.schema)
    finally:  # release the stream in this thread, not later in another one
        reader.close()


def query_error(error: BaseException) -> BaseException:
    """What a failure met while a query ran is, for the user: DuckDB's own errors (out of
    memory among them) as a one-line `BadInputError`, anything else unchanged."""
    # DuckDB's failure met while Arrow reads its stream arrives as an Arrow error, or as an
    # OSError without an errno (ArrowIOError): a query's fault, not a file's
    streamed = isinstance(error, pa.ArrowException) or (
        isinstance(error, OSError) and error.errno is None)
    if isinstance(error, duckdb.OutOfMemoryException) or (
            streamed and "Out of Memory" in str(error)):
        text = _one_line(error)
        return BadInputError("SQL error: the query needs more memory than its limit "
                             f"({text[text.find('Out of Memory'):].split(' (')[0]})")
    if isinstance(error, duckdb.Error) or streamed:
        return BadInputError(f"SQL error: {_one_line(error)}")
    return error


def result_of(table: pa.Table, max_rows: int | None) -> QueryResult:
    """A fetched Arrow result (`fetch`) as a `QueryResult`: column names made unique, at
    most `max_rows` rows, `truncated` when more were fetched."""
    names = _unique(table.column_names)
    table = table.rename_columns(names) if names != table.column_names else table
    frame = to_frame(table)
    truncated = max_rows is not None and frame.height > max_rows
    return QueryResult(frame.head(max_rows) if truncated else frame, truncated)


def timed_out(timeout: float, note: str = "") -> QueryCancelled:
    """The error of a query stopped at its time limit of `timeout` seconds (`note` added
    to its line)."""
    return QueryCancelled(f"SQL query stopped at the time limit of {timeout:g} s "
                          f"(--timeout to change it){note}")


def execute(registry: Path, sql: str, params: dict | list | None = None, *,
            timeout: float | None = DEFAULT_TIMEOUT, max_rows: int | None = None,
            memory_limit: str = DEFAULT_MEMORY_LIMIT) -> QueryResult:
    """Run one read-only SELECT over a registry or snapshot folder, in a child process
    whose memory, time and rows are limited (`store.sql_child.run_in_child`).

    Raises
    ------
    BadInputError
        The SQL is refused or fails, or needs more memory than `memory_limit` (one line).
    QueryCancelled
        The time limit passed, or Ctrl-C.
    """
    from benchpress.store.sql_child import run_in_child  # it imports this module

    return run_in_child(registry, sql, params, timeout=timeout, max_rows=max_rows,
                        memory_limit=memory_limit)


def query(registry: Path, sql: str, params: dict | list | None = None, *,
          timeout: float | None = DEFAULT_TIMEOUT, max_rows: int | None = None,
          memory_limit: str = DEFAULT_MEMORY_LIMIT) -> pl.DataFrame:
    """Run one read-only SELECT; returns its rows as a polars frame (see `execute`)."""
    return execute(registry, sql, params, timeout=timeout, max_rows=max_rows,
                   memory_limit=memory_limit).frame
