"""The wide layout of the resolved matrix for SQL: one row per model, one column per benchmark.

Two forms, the same rows and values:

* `pivot` builds the whole (n_models, 1 + n_benchmarks) frame (a polars pivot); used for a
  query that scans the matrix more than once, up to `InputLimits.matrix_max_cells` cells;
* `matrix_reader` streams it as Arrow record batches of `BATCH_MODELS` models each, in
  registry order, made only when DuckDB asks for the next batch: ``SELECT * FROM matrix
  LIMIT 5`` at 100,000 models makes one batch, a full scan holds one batch at a time. The
  cells are first put in model order once (integer positions, an argsort), which is what a
  query that reads to the end pays for.

A reader can be scanned once; `prepare` registers a fresh one for each query that reads
`matrix` once (a query that reads it twice gets the whole pivot, under a size limit).
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from benchpress.errors import BadInputError

__all__ = ["pivot", "matrix_reader", "matrix_schema", "matrix_of_lists", "prepare",
           "BATCH_MODELS"]

#: models per streamed batch (2,048 x 1,000 benchmarks: 16 MB of scores)
BATCH_MODELS = 2048


def _order(models: pl.DataFrame, benchmarks: pl.DataFrame) -> tuple[pl.Series, list[str]]:
    return (models.sort("ordinal")["model_id"],
            benchmarks.sort("ordinal")["benchmark_id"].to_list())


def matrix_schema(benchmark_ids: list[str]) -> pa.Schema:
    """``model_id`` (string) then one float64 column per benchmark id, in the given order."""
    return pa.schema([("model_id", pa.string()), *((b, pa.float64()) for b in benchmark_ids)])


def pivot(models: pl.DataFrame, benchmarks: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """(n_models, 1 + n_benchmarks): model_id then one score column per benchmark, in
    registry order (`ordinal`); null where a model has no cell.

    Parameters
    ----------
    models : polars.DataFrame
        ``model_id``, ``ordinal``; one row per model.
    benchmarks : polars.DataFrame
        ``benchmark_id``, ``ordinal``; the columns to make.
    cells : polars.DataFrame
        ``model_id``, ``benchmark_id``, ``score``; cells of other benchmarks are ignored.
    """
    model_ids, order = _order(models, benchmarks)
    rows = model_ids.to_frame()
    cells = cells.filter(pl.col("benchmark_id").is_in(order))
    if cells.height:
        wide = cells.pivot(on="benchmark_id", index="model_id", values="score",
                           aggregate_function="max")
        rows = rows.join(wide, on="model_id", how="left")
    return rows.with_columns(pl.lit(None, pl.Float64).alias(b) for b in order
                             if b not in rows.columns).select("model_id", *order)


def _batch(ids: pa.Array, a: int, b: int, n_b: int, i, j, v, schema: pa.Schema) -> pa.RecordBatch:
    """Models a..b-1 as a record batch; `i`, `j`, `v`: the row, column and score of their
    cells (rows counted from 0 for the whole matrix)."""
    values = np.zeros((n_b, b - a))
    missing = np.ones((n_b, b - a), dtype=bool)
    values[j, i - a] = v
    missing[j, i - a] = False
    return pa.RecordBatch.from_arrays(
        [ids.slice(a, b - a), *(pa.array(values[k], mask=missing[k]) for k in range(n_b))],
        schema=schema)


def _positions(cells: pl.DataFrame, model_ids: pl.Series, order: list[str]):
    """(i, j, score) arrays of `cells`, sorted by model row `i`."""
    at = (cells.join(model_ids.to_frame().with_row_index("i"), on="model_id")
          .join(pl.Series("benchmark_id", order, pl.String).to_frame().with_row_index("j"),
                on="benchmark_id"))
    i = at["i"].to_numpy().astype(np.int64)
    sort = np.argsort(i, kind="stable")
    return i[sort], at["j"].to_numpy()[sort], at["score"].to_numpy()[sort]


def _batches(model_ids: pl.Series, order: list[str], cells_of, batch: int):
    """Record batches of `batch` models; `cells_of()` gives the cells, read on the first
    batch asked for. The first batch takes its models' cells by a filter; only a query that
    asks for a second batch pays for putting every cell in model order."""
    n_m, n_b = len(model_ids), len(order)
    schema = matrix_schema(order)
    ids = model_ids.to_arrow().cast(pa.string())
    cells = cells_of()
    first = min(batch, n_m)
    if first:
        head = cells.filter(pl.col("model_id").is_in(model_ids.head(first).implode()))
        yield _batch(ids, 0, first, n_b, *_positions(head, model_ids.head(first), order), schema)
    if first >= n_m:
        return
    i, j, v = _positions(cells, model_ids, order)
    del cells
    for a in range(first, n_m, batch):
        b = min(a + batch, n_m)
        lo, hi = np.searchsorted(i, [a, b])
        yield _batch(ids, a, b, n_b, i[lo:hi], j[lo:hi], v[lo:hi], schema)


def matrix_reader(models: pl.DataFrame, benchmarks: pl.DataFrame, cells_of, *,
                  batch: int | None = None) -> pa.RecordBatchReader:
    """The wide matrix as a one-pass Arrow stream, `batch` models per record batch.

    Parameters
    ----------
    models, benchmarks : polars.DataFrame
        As in `pivot`.
    cells_of : callable
        Returns the cells (``model_id``, ``benchmark_id``, ``score``, at most one row per
        model and benchmark); called when the first batch is asked for, not before.
    batch : int, optional
        Models per batch (default `BATCH_MODELS`, read at call time).

    Returns
    -------
    pyarrow.RecordBatchReader
        Schema `matrix_schema`; batches of shape (batch, 1 + n_benchmarks), the last
        shorter.
    """
    model_ids, order = _order(models, benchmarks)
    return pa.RecordBatchReader.from_batches(
        matrix_schema(order), _batches(model_ids, order, cells_of, batch or BATCH_MODELS))


def matrix_of_lists(node, found: list) -> list:
    """The argument of every `matrix_of(...)` call in a serialized statement
    (`json_serialize_sql`): a list of strings when it is a constant list of strings, else
    None."""
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
            matrix_of_lists(value, found)
    elif isinstance(node, list):
        for value in node:
            matrix_of_lists(value, found)
    return found


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = $1",
                            [name]).fetchall()[0][0])


def _refs(node, name: str) -> int:
    """How many times a serialized statement reads the table `name`."""
    if isinstance(node, dict):
        own = int(node.get("type") == "BASE_TABLE" and str(node.get("table_name", "")).lower() == name)
        return own + sum(_refs(v, name) for v in node.values())
    if isinstance(node, list):
        return sum(_refs(v, name) for v in node)
    return 0


def prepare(con: duckdb.DuckDBPyConnection, tree: dict, names: set[str], *, cells_of=None,
            max_cells: int) -> None:
    """Make what a query's wide tables need: `matrix` (models x every benchmark) and
    `matrix_of([b1, b2, ...])`, the same rows with only the given benchmark columns, in
    the given order (one list per query).

    `names` are the names the query uses. With `cells_of` (a registry connection,
    `store.sql.connect`; it returns the cells) a query that reads `matrix` once gets a fresh
    stream of it (`matrix_reader`: batches of models made as DuckDB asks for them, so
    ``LIMIT 5`` pivots one batch); one that reads it more than once, and any query on a
    connection of given frames (a diff), gets the whole pivot, up to `max_cells` cells.

    Raises
    ------
    BadInputError
        `matrix` read more than once on a registry over the size limit, or `matrix_of`
        with an argument other than one constant list of known benchmark ids, or several
        lists.
    """
    if "matrix" in names:
        if cells_of is not None and _refs(tree, "matrix") <= 1:
            con.register("matrix", matrix_reader(*_frames(con)[:2], cells_of))
        elif cells_of is not None or not _has_table(con, "matrix"):
            n_m, n_b = con.execute("SELECT (SELECT count(*) FROM models), "
                                   "(SELECT count(*) FROM benchmarks)").fetchall()[0]
            if n_m * n_b > max_cells:
                raise BadInputError(
                    f"SQL error: this query reads the wide matrix ({n_m} models x {n_b} "
                    f"benchmarks) more than once, which needs it whole, and it is too large "
                    f"(limit {max_cells} cells); read it once (a CTE, or a temporary "
                    "result of one scan), or use matrix_of(['gpqa_diamond','hle']) for the "
                    "benchmarks you need, or cells")
            con.register("matrix", pivot(*_frames(con, cells_of=cells_of)).to_arrow())
    if "matrix_of" not in names:
        return
    lists = matrix_of_lists(tree, [])
    if any(x is None for x in lists) or not lists:
        raise BadInputError("SQL error: matrix_of takes one constant list of benchmark ids, "
                            "e.g. matrix_of(['gpqa_diamond','hle'])")
    if any(x != lists[0] for x in lists):
        raise BadInputError("SQL error: one query may use matrix_of with one list of benchmarks")
    models, benchmarks, cells = _frames(con, lists[0], cells_of=cells_of)
    known = set(benchmarks["benchmark_id"].to_list())
    unknown = [b for b in lists[0] if b not in known]
    if unknown or len(set(lists[0])) != len(lists[0]) or not lists[0]:
        what = f"unknown benchmark '{unknown[0]}'" if unknown else "a repeated or empty list"
        raise BadInputError(f"SQL error: matrix_of: {what}")
    order = {b: k for k, b in enumerate(lists[0])}
    benchmarks = benchmarks.filter(pl.col("benchmark_id").is_in(lists[0])).with_columns(
        pl.col("benchmark_id").replace_strict(order, return_dtype=pl.Int64).alias("ordinal"))
    con.register("_matrix_of", pivot(models, benchmarks, cells).to_arrow())
    con.execute("CREATE OR REPLACE MACRO matrix_of(benchmark_ids) AS TABLE SELECT * FROM _matrix_of")


def _frames(con: duckdb.DuckDBPyConnection, only: list[str] | None = None, *, cells_of=None):
    """models, benchmarks and cells (of the benchmarks `only`, if given) as polars frames;
    with `cells_of` the cells come from it (a registry's checked file, three columns), not
    from the connection."""
    models = con.sql("SELECT model_id, ordinal FROM models").pl()
    benchmarks = con.sql("SELECT benchmark_id, ordinal FROM benchmarks").pl()
    if cells_of is not None:
        cells = cells_of()
        cells = cells if only is None else cells.filter(pl.col("benchmark_id").is_in(only))
    elif only is None:
        cells = con.sql("SELECT model_id, benchmark_id, score FROM cells").pl()
    else:
        cells = con.sql("SELECT model_id, benchmark_id, score FROM cells "
                        "WHERE list_contains($1, benchmark_id)", params=[only]).pl()
    return models, benchmarks, cells
