"""SQL over the registry: DuckDB views on the Parquet tables, read-only.

`connect` opens an in-memory DuckDB database whose views read the Parquet files in place
(no copies), plus a wide `matrix` view (models x benchmarks) that DuckDB pivots itself.
`query` accepts SELECT statements only and runs them with file access limited to the
registry folder, so a query can never change the registry.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from benchpress.errors import BadInputError
from benchpress.store.tables import require_registry

__all__ = ["connect", "query"]


def connect(registry: Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the registry's views defined."""
    registry = require_registry(registry)
    con = duckdb.connect(":memory:")
    folder = registry.resolve().as_posix().replace("'", "''")
    con.execute((registry / "views.sql").read_text(encoding="utf-8").replace("{dir}", folder))
    benchmarks = [r[0] for r in con.execute(
        "SELECT benchmark_id FROM benchmarks ORDER BY ordinal").fetchall()]
    columns = ", ".join(
        f"max(score) FILTER (WHERE benchmark_id = '{b}') AS \"{b}\"" for b in benchmarks)
    con.execute(
        "CREATE OR REPLACE VIEW matrix AS SELECT m.model_id"
        + (", " + columns if columns else "")
        + " FROM models m LEFT JOIN cells c USING (model_id) GROUP BY m.model_id, m.ordinal"
        " ORDER BY m.ordinal"
    )
    con.execute(f"SET allowed_directories = ['{folder}']")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def query(registry: Path, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """Run one read-only query; returns the result as a polars frame."""
    con = connect(registry)
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise BadInputError(f"SQL error: {exc}") from exc
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise BadInputError("only a single SELECT query is allowed (the registry is read-only)")
    try:
        return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())
    except duckdb.Error as exc:
        raise BadInputError(f"SQL error: {exc}") from exc
