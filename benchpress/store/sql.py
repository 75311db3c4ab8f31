"""SQL over the registry: a sealed, in-memory DuckDB over verified tables, read-only, with limits.

`connect` reads every table through `tables.read_table` (each file checked against the digest
its folder recorded), hands the frames to a DuckDB connection that was opened with external
access off, no temporary directory, no extension loading and its configuration locked, and
only then defines the views: the package's own `views.sql` (never a copy from a data
folder). The wide `matrix` (models x benchmarks, pivoted in polars) is made on a query's
first reference to it, up to `MATRIX_MAX_CELLS` cells; `matrix_of(['b1','b2'])` pivots
only the benchmarks it lists, so a query over a few columns of a large registry stays cheap. So no statement runs
before the sandbox is sealed, no SQL text comes from the data, and a query can neither read
nor write a file.

`execute` accepts one SELECT, refuses functions and catalog tables that disclose settings
or run SQL text (`current_setting`, `duckdb_settings()`, `pg_settings`, `query()` ...), and
runs it under a time limit (DuckDB `interrupt()` when it passes, or on Ctrl-C), a memory
limit, and a row cap: results are streamed in batches and fetching stops one row past the
cap, so a huge result is never materialised.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from benchpress.errors import BadInputError, BenchPressError
from benchpress.store.tables import TABLE_NAMES, read_table, require_registry, views_sql

__all__ = ["QueryCancelled", "QueryResult", "connect", "sealed_connection", "check_select",
           "run_select", "execute", "query", "DEFAULT_TIMEOUT", "DEFAULT_MEMORY_LIMIT",
           "DEFAULT_MAX_ROWS", "MATRIX_MAX_CELLS"]

DEFAULT_TIMEOUT = 30.0          # seconds
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_MAX_ROWS = 10_000       # what `benchpress sql` prints at most
#: Largest wide `matrix` (models x benchmarks) built for a query; larger: `matrix_of`.
MATRIX_MAX_CELLS = 20_000_000
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


def sealed_connection(tables: dict[str, pl.DataFrame], *,
                      memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB, sealed from its first statement, with `tables` registered.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        Frames registered under their keys (Arrow, no copy).
    memory_limit : str
        DuckDB's `memory_limit` (for example ``"1GB"``); with no temporary directory a
        query that needs more fails with one line instead of spilling.
    """
    con = duckdb.connect(":memory:", config={**_SEAL, "memory_limit": memory_limit})
    # a connection-level option (DuckDB would draw the bar on stdout, among the rows), then
    # the lock: from here on no SET is accepted
    con.execute("SET enable_progress_bar = false")
    con.execute("SET lock_configuration = true")
    for name, df in tables.items():
        con.register(name, df.to_arrow())
    return con


def _matrix(models: pl.DataFrame, benchmarks: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """(n_models, 1 + n_benchmarks): model_id then one score column per benchmark, in
    registry order; null where a model has no cell."""
    order = benchmarks.sort("ordinal")["benchmark_id"].to_list()
    rows = models.sort("ordinal").select("model_id")
    if cells.height:
        wide = cells.pivot(on="benchmark_id", index="model_id", values="score",
                           aggregate_function="max")
        rows = rows.join(wide, on="model_id", how="left")
    return rows.with_columns(pl.lit(None, pl.Float64).alias(b) for b in order
                             if b not in rows.columns).select("model_id", *order)


def connect(registry: Path, *, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """A sealed DuckDB connection over a registry or snapshot folder's verified tables.

    Tables: models, benchmarks, scores, cells, aliases, sources, quarantine; views from the
    package's `views.sql`. The wide `matrix` and `matrix_of([...])` are made by `run_select`
    when a query names them (see `_prepare_wide`).

    Raises
    ------
    RegistryError
        No registry, or a table that does not match its recorded digest or cannot be read.
    """
    folder = require_registry(registry)
    tables = {name: read_table(folder, name) for name in TABLE_NAMES}
    if "source_version" not in tables["scores"].columns:  # a registry built before versions
        tables["scores"] = tables["scores"].with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))
    frames = dict(tables)
    frames["_scores_in_file_order"] = tables["scores"].with_row_index("file_row_number")
    con = sealed_connection(frames, memory_limit=memory_limit)
    con.execute(views_sql())  # shipped with the code, never a data folder's copy
    return con


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = $1",
                            [name]).fetchall()[0][0])


def _matrix_of_lists(node, found: list) -> list:
    """The argument of every `matrix_of(...)` call in a serialized statement: a list of
    strings when it is a constant list of strings, else None."""
    if isinstance(node, dict):
        if node.get("function_name") == "matrix_of" and "arguments" in node:
            args = node["arguments"]
            expr = args[0].get("expression", {}) if len(args) == 1 else {}
            items = expr.get("arguments", []) if expr.get("function_name") == "list_value" else None
            lits = None if items is None else [a.get("expression", {}).get("literal", {})
                                                for a in items]
            found.append([v["text"] for v in lits] if lits and all(
                v.get("kind") == "STRING" for v in lits) else None)
        for value in node.values():
            _matrix_of_lists(value, found)
    elif isinstance(node, list):
        for value in node:
            _matrix_of_lists(value, found)
    return found


def _prepare_wide(con: duckdb.DuckDBPyConnection, tree: dict) -> None:
    """Make what a query's wide tables need, from the registered tables: `matrix`
    (models x every benchmark) on its first reference, when it has at most
    `MATRIX_MAX_CELLS` cells; and `matrix_of([b1, b2, ...])`, the same rows with only the
    given benchmark columns, in the given order (one list per query).

    Raises
    ------
    BadInputError
        `matrix` named on a registry over the size limit, or `matrix_of` with an
        argument other than one constant list of known benchmark ids, or several lists.
    """
    names = _names(tree, set())
    if "matrix" in names and not _has_table(con, "matrix"):
        n_m, n_b = con.execute("SELECT (SELECT count(*) FROM models), "
                               "(SELECT count(*) FROM benchmarks)").fetchall()[0]
        if n_m * n_b > MATRIX_MAX_CELLS:
            raise BadInputError(
                f"SQL error: the wide matrix ({n_m} models x {n_b} benchmarks) is too large to "
                f"build for a query (limit {MATRIX_MAX_CELLS} cells); use "
                "matrix_of(['gpqa_diamond','hle']) for the benchmarks you need, or cells")
        con.register("matrix", _matrix(*_frames(con)).to_arrow())
    if "matrix_of" not in names:
        return
    lists = _matrix_of_lists(tree, [])
    if any(x is None for x in lists) or not lists:
        raise BadInputError("SQL error: matrix_of takes one constant list of benchmark ids, "
                            "e.g. matrix_of(['gpqa_diamond','hle'])")
    if any(x != lists[0] for x in lists):
        raise BadInputError("SQL error: one query may use matrix_of with one list of benchmarks")
    models, benchmarks, cells = _frames(con, lists[0])
    known = set(benchmarks["benchmark_id"].to_list())
    unknown = [b for b in lists[0] if b not in known]
    if unknown or len(set(lists[0])) != len(lists[0]) or not lists[0]:
        what = f"unknown benchmark '{unknown[0]}'" if unknown else "a repeated or empty list"
        raise BadInputError(f"SQL error: matrix_of: {what}")
    order = {b: k for k, b in enumerate(lists[0])}
    benchmarks = benchmarks.filter(pl.col("benchmark_id").is_in(lists[0])).with_columns(
        pl.col("benchmark_id").replace_strict(order, return_dtype=pl.Int64).alias("ordinal"))
    con.register("_matrix_of", _matrix(models, benchmarks, cells).to_arrow())
    con.execute("CREATE OR REPLACE MACRO matrix_of(benchmark_ids) AS TABLE SELECT * FROM _matrix_of")


def _frames(con: duckdb.DuckDBPyConnection, only: list[str] | None = None):
    """models, benchmarks and cells (of the benchmarks `only`, if given) as polars frames."""
    models = con.sql("SELECT model_id, ordinal FROM models").pl()
    benchmarks = con.sql("SELECT benchmark_id, ordinal FROM benchmarks").pl()
    cells = (con.sql("SELECT model_id, benchmark_id, score FROM cells").pl() if only is None
             else con.sql("SELECT model_id, benchmark_id, score FROM cells "
                          "WHERE list_contains($1, benchmark_id)", params=[only]).pl())
    return models, benchmarks, cells


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
    tree = json.loads(con.execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0])
    if tree.get("error"):
        raise BadInputError(f"SQL error: this query cannot be checked ({tree.get('error_message', '')})")
    denied = sorted(n for n in _names(tree, set())
                    if n in _DENIED or n.startswith(_DENIED_PREFIXES))
    if denied:
        raise BadInputError(f"SQL error: {', '.join(denied)} is not available here (functions "
                            "that show settings or run SQL text are blocked; "
                            "information_schema.tables lists the tables)")
    return tree


def run_select(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None, *,
               timeout: float | None = DEFAULT_TIMEOUT, max_rows: int | None = None,
               what: str = "the registry") -> QueryResult:
    """Check and run one SELECT on `con` under a time limit, streaming at most `max_rows`.

    The query runs in a worker thread; this thread waits, and on the deadline or Ctrl-C
    calls `con.interrupt()`.

    Parameters
    ----------
    timeout : float or None
        Seconds before the query is interrupted (None: no limit).
    max_rows : int or None
        Keep at most this many rows (None: all); fetching stops one row past it.

    Raises
    ------
    BadInputError
        The SQL is refused or fails (one line).
    QueryCancelled
        The time limit passed, or Ctrl-C.
    """
    _prepare_wide(con, check_select(con, sql, what=what))
    out: dict = {}
    done = threading.Event()

    def stream() -> None:
        reader = con.sql(sql, params=params).to_arrow_reader(_BATCH_ROWS)
        try:
            batches, n = [], 0
            for batch in reader:
                batches.append(batch)
                n += batch.num_rows
                if max_rows is not None and n > max_rows:
                    break
            out["table"] = pa.Table.from_batches(batches, schema=reader.schema)
        finally:  # release the stream in this thread, not later in another one
            reader.close()

    def fetch() -> None:
        try:
            stream()  # returns with every DuckDB object it made released
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            out["error"] = exc.with_traceback(None)
        finally:
            done.set()

    # an interrupted stream may end early without an error: `stopped` says a partial
    # result is not to be returned
    stopped = None
    deadline = None if timeout is None else time.monotonic() + timeout
    threading.Thread(target=fetch, name="benchpress-sql", daemon=True).start()
    try:
        while not done.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                stopped = QueryCancelled(f"SQL query stopped at the time limit of {timeout:g} s "
                                         "(--timeout to change it)")
                break
            done.wait(0.1 if left is None else min(left, 0.1))
    except KeyboardInterrupt:
        stopped = QueryCancelled("SQL query interrupted", interrupted=True)
    if stopped is not None:
        con.interrupt()
        done.wait(30)
        raise stopped
    error = out.get("error")
    if isinstance(error, duckdb.OutOfMemoryException):
        raise BadInputError("SQL error: the query needs more memory than its limit "
                            f"({_one_line(error).split(' (')[0]})") from None
    if isinstance(error, duckdb.Error):
        raise BadInputError(f"SQL error: {_one_line(error)}") from None
    if error is not None:
        raise error
    table = out["table"]
    names = _unique(table.column_names)
    frame = pl.from_arrow(table.rename_columns(names) if names != table.column_names else table)
    truncated = max_rows is not None and frame.height > max_rows
    return QueryResult(frame.head(max_rows) if truncated else frame, truncated)


def execute(registry: Path, sql: str, params: dict | list | None = None, *,
            timeout: float | None = DEFAULT_TIMEOUT, max_rows: int | None = None,
            memory_limit: str = DEFAULT_MEMORY_LIMIT) -> QueryResult:
    """Run one read-only SELECT over a registry or snapshot folder (see `run_select`)."""
    con = connect(registry, memory_limit=memory_limit)
    try:
        return run_select(con, sql, params, timeout=timeout, max_rows=max_rows)
    finally:
        con.close()


def query(registry: Path, sql: str, params: dict | list | None = None, *,
          timeout: float | None = DEFAULT_TIMEOUT, max_rows: int | None = None,
          memory_limit: str = DEFAULT_MEMORY_LIMIT) -> pl.DataFrame:
    """Run one read-only SELECT; returns its rows as a polars frame (see `execute`)."""
    return execute(registry, sql, params, timeout=timeout, max_rows=max_rows,
                   memory_limit=memory_limit).frame
