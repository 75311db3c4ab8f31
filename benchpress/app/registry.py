"""What the app reads from the registry itself: citations, snapshots, diffs and SQL.

`RegistryView` reads the verified tables of the served folder once (`tables.read_table`),
runs the SQL console's queries through `store.sql.execute` as `benchpress sql` does (a
child process under the sandbox's time limit, memory limit and row cap), one at a time, and reads
other snapshots' cells on demand (cached) for a model's values across versions.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import polars as pl

from benchpress.errors import BadInputError, BenchPressError
from benchpress.home import Home
from benchpress.store import sql as sandbox
from benchpress.store.diff import diff as registry_diff
from benchpress.store.provenance import with_cited_as
from benchpress.store.snapshot import list_snapshots
from benchpress.store.tables import read_table
from benchpress.validate.contracts import load_contracts

__all__ = ["RegistryView", "SQL_TIMEOUT", "SQL_MAX_ROWS", "SQL_MAX_BYTES", "EXAMPLE_SQL"]

SQL_TIMEOUT = 10.0      # seconds per console query
SQL_MAX_ROWS = 5_000    # rows a console query returns at most
SQL_MAX_BYTES = 16 * 2**20  # size of a console query's result (as held in memory) at most
EXAMPLE_SQL = ("SELECT benchmark_id, count(*) AS n_models, round(avg(score), 1) AS mean_score\n"
               "FROM cells GROUP BY benchmark_id ORDER BY n_models DESC LIMIT 20")
_CAUSE_SQL_COLUMNS = ("change", "model_id", "benchmark_id", "score_a", "score_b", "difference",
                      "setting_changed", "setting_a", "setting_b", "citation_changed",
                      "source_id_a", "source_id_b", "reference_url_b")



def benchmark_names(benchmarks: pl.DataFrame, aliases: pl.DataFrame) -> list[dict]:
    """Every benchmark with its name, scale, cost and aliases, in column order (the
    autocompletion list of the registry view and of the pre-fit model's)."""
    alias = (aliases.filter(pl.col("kind") == "benchmark")
             .group_by("canonical_id").agg(pl.col("alias").sort()))
    known = dict(zip(alias["canonical_id"].to_list(), alias["alias"].to_list()))
    return [{"benchmark_id": r["benchmark_id"], "name": r["name"], "scale": r["scale"],
             "cost": r["cost"], "aliases": known.get(r["benchmark_id"], [])}
            for r in benchmarks.sort("ordinal").to_dicts()]

def _contracts(home: Home):
    """The home's contracts (for the URL rules), or None when it has none to read."""
    try:
        return load_contracts(home.schemas)
    except (BenchPressError, OSError, ValueError):
        return None


class RegistryView:
    """The served registry or snapshot folder, read-only.

    Parameters
    ----------
    home : Home
        The workspace (for snapshots and diffs).
    folder : Path
        The registry or snapshot folder the model was loaded from.
    """

    def __init__(self, home: Home, folder: Path):
        self.home, self.folder = home, Path(folder)
        self.models = read_table(self.folder, "models")
        self.benchmarks = read_table(self.folder, "benchmarks")
        self.scores = read_table(self.folder, "scores")
        self.cells = read_table(self.folder, "cells")
        self.aliases = read_table(self.folder, "aliases")
        self.contracts = _contracts(home)  # whose publication a citation is (its URL rules)
        self._sql_lock = threading.Lock()
        self._history = lru_cache(maxsize=64)(self._snapshot_cells)

    # -- citations -------------------------------------------------------------------------
    def model_meta(self, model_id: str) -> dict | None:
        rows = self.models.filter(pl.col("model_id") == model_id).to_dicts()
        return rows[0] if rows else None

    def model_cells(self, model_id: str) -> pl.DataFrame:
        """The model's resolved cells with their citation (and `cited_as`, what it is for
        this model: `store.provenance.with_cited_as`), one row per benchmark."""
        return with_cited_as(self.cells.filter(pl.col("model_id") == model_id)
                             .join(self.benchmarks.select("benchmark_id", "name", "scale",
                                                          "ordinal"),
                                   on="benchmark_id", how="left").sort("ordinal"),
                             self.contracts)

    def observations(self, model_id: str, benchmark_id: str | None = None) -> pl.DataFrame:
        """Every observation (all sources) of a model, or of one of its cells, with
        `cited_as`."""
        rows = self.scores.filter(pl.col("model_id") == model_id)
        if benchmark_id is not None:
            rows = rows.filter(pl.col("benchmark_id") == benchmark_id)
        measured = ["measured_by"] if "measured_by" in rows.columns else []
        return with_cited_as(rows.select(
            "benchmark_id", "score", "source_id", "source_type", *measured, "reference_url",
            "reported_setting", "audit_status", "observed_at", "row"), self.contracts)

    def benchmark_names(self) -> list[dict]:
        """Every benchmark with its name and aliases (for autocompletion)."""
        return benchmark_names(self.benchmarks, self.aliases)

    # -- versions --------------------------------------------------------------------------
    def snapshots(self) -> list[dict]:
        """The snapshot timeline, oldest first."""
        return [{"id": s.id, "tags": s.tags, "created_at": s.created_at, "counts": s.counts,
                 "label": s.tags[-1] if s.tags else s.id[:12]} for s in list_snapshots(self.home)]

    def _snapshot_cells(self, path: str) -> pl.DataFrame:
        return read_table(Path(path), "cells").select("model_id", "benchmark_id", "score")

    def history(self, model_id: str) -> dict:
        """The model's observed values in every snapshot (and the served folder):
        ``{"versions": [labels], "rows": [{benchmark_id, values: [...], changed}]}``."""
        versions = [(s.tags[-1] if s.tags else s.id[:12], s.path) for s in list_snapshots(self.home)]
        if not any(Path(p).resolve() == self.folder.resolve() for _, p in versions):
            versions.append(("served", self.folder))
        table: dict[str, list] = {}
        for k, (_, path) in enumerate(versions):
            cells = self._history(str(path)).filter(pl.col("model_id") == model_id)
            for bid, score in zip(cells["benchmark_id"].to_list(), cells["score"].to_list()):
                table.setdefault(bid, [None] * len(versions))[k] = score
        rows = [{"benchmark_id": b, "values": v,
                 "changed": len({x for x in v if x is not None}) > 1 or (None in v and any(
                     x is not None for x in v))} for b, v in sorted(table.items())]
        return {"versions": [label for label, _ in versions], "rows": rows}

    def diff(self, ref_a: str, ref_b: str, *, max_cells: int = 500) -> dict:
        """The diff between two versions (snapshot id, tag, latest or current), with the
        cause of each added, removed and changed cell, at most `max_cells` cell rows per kind."""
        d = registry_diff(self.home, ref_a, ref_b)
        cells = d.cells  # each row's cause is the library's (`store.diff.CAUSES`)
        out = {"a": d.a, "b": d.b, "summary": d.counts(),
               "models": d.models.to_dicts(), "benchmarks": d.benchmarks.to_dicts(),
               "merged": d.merged.to_dicts(), "cells": {}, "truncated": {}}
        for change in ("added", "removed", "changed"):
            part = cells.filter(pl.col("change") == change)
            if change == "changed":
                part = part.sort(pl.col("difference").abs(), descending=True)
            out["cells"][change] = part.select(*_CAUSE_SQL_COLUMNS, "cause").head(max_cells).to_dicts()
            out["truncated"][change] = part.height > max_cells
        return out

    # -- SQL -------------------------------------------------------------------------------
    def sql(self, query: str, *, max_rows: int = SQL_MAX_ROWS) -> sandbox.QueryResult:
        """Run one read-only SELECT in the sealed sandbox (time limit `SQL_TIMEOUT`): at
        most `max_rows` rows and `SQL_MAX_BYTES` (the rows that fit, `truncated` set)."""
        if not query or not query.strip():
            raise BadInputError("enter a SELECT query")
        with self._sql_lock:
            result = sandbox.execute(self.folder, query, timeout=SQL_TIMEOUT, max_rows=max_rows)
        size = result.frame.estimated_size()
        if size <= SQL_MAX_BYTES:
            return result
        keep = result.frame.height * SQL_MAX_BYTES // size  # the rows that fit, in order
        if keep < 1:
            raise BadInputError(
                f"SQL error: one row of the result holds about "
                f"{size / max(result.frame.height, 1) / 2**20:,.1f} MB, more "
                f"than the app returns ({SQL_MAX_BYTES // 2**20} MB); select fewer columns, "
                "shorten long text, or run it with `benchpress sql`")
        return replace(result, frame=result.frame.head(keep), truncated=True)
