"""What changed between two registry versions (snapshots or the live registry).

`diff_folders(a, b)` compares two folders of registry tables and returns a `RegistryDiff`:

- `models` / `benchmarks`: ids added in B or removed from A; a model a source renamed under
  its own upstream id (`store.renames`) is one `renamed` row (new id and name, the old ones
  in `old_model_id` and `old_name`), never one added plus one removed;
- `merged`: ids present in both whose raw spellings in the sources differ (for instance
  `hmmt_2025` in A and `hmmt_feb_2025` in B): normalization and the alias table kept them
  from showing up as one removal plus one addition;
- `cells`: resolved cells added, removed and changed (value moved by more than 1e-9), each
  with old and new value, source, citation and evaluation setting;
- `summary`: one row per table with the counts; `sources` counts source ids and
  `source_versions` their versions (one source ingested twice: 1 source, 2 versions).

A cell's evaluation setting is its observation's `reported_setting` (mode and effort), else
the model's own canonical setting in that version, else its `is_reasoning` flag (thinking
or non-thinking). `setting_changed` is set when both versions know the mode and it differs,
or both name a specific effort and it differs; such changes are the most common cause of
large moves between two releases of a matrix.

Every added, changed and removed cell names one `cause` (`CAUSES`: see `store.causes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchpress.errors import RegistryError
from benchpress.home import Home
from benchpress.store.causes import CAUSES, with_causes
from benchpress.store.snapshot import resolve_snapshot
from benchpress.store.sql import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT
from benchpress.store.tables import read_table, registry_exists

__all__ = ["RegistryDiff", "diff", "diff_folders", "diff_tables", "read_tables", "TOLERANCE",
           "CAUSES"]

TOLERANCE = 1e-9
_KEY = ["model_id", "benchmark_id"]
_UNKNOWN = ["", "unknown", "default", "n/a", "na", "none", "null"]
_CELL_FIELDS = ["score", "source_id", "reference_url", "source_type", "reported_setting",
                "source_version"]
_TABLES = ("models", "benchmarks", "scores", "cells", "sources", "quarantine",
           "aliases")  # what a diff reads


@dataclass(frozen=True)
class RegistryDiff:
    """The differences between version A and version B (frames; see the module docstring)."""

    a: str
    b: str
    summary: pl.DataFrame
    models: pl.DataFrame
    benchmarks: pl.DataFrame
    merged: pl.DataFrame
    cells: pl.DataFrame

    def tables(self) -> dict[str, pl.DataFrame]:
        return {"summary": self.summary, "models": self.models, "benchmarks": self.benchmarks,
                "merged": self.merged, "cells": self.cells}

    def counts(self) -> dict[str, dict[str, int]]:
        """{"models": {"a": .., "b": .., "added": .., ...}, "benchmarks": ..., "cells": ...}."""
        return {row["table"]: {k: v for k, v in row.items() if k != "table" and v is not None}
                for row in self.summary.to_dicts()}

    def to_dict(self) -> dict:
        """The JSON document of `benchpress diff --format json`."""
        def rows(df: pl.DataFrame, change: str) -> list[dict]:
            return df.filter(pl.col("change") == change).drop("change").to_dicts()

        return {
            "a": self.a,
            "b": self.b,
            "summary": self.counts(),
            "models": {c: rows(self.models, c) for c in ("added", "removed", "renamed")},
            "benchmarks": {"added": rows(self.benchmarks, "added"),
                           "removed": rows(self.benchmarks, "removed")},
            "merged": self.merged.to_dicts(),
            "causes": self.causes(),
            "cells": {c: rows(self.cells, c) for c in ("added", "removed", "changed")},
        }

    def causes(self) -> dict[str, dict[str, int]]:
        """{"changed": {cause: n}, "added": {..}, "removed": {..}}: why cells changed (see
        `CAUSES`)."""
        out = {}
        for change in ("changed", "added", "removed"):
            part = self.cells.filter(pl.col("change") == change)
            out[change] = {c: n for c, n in part.group_by("cause").len().sort("cause").rows()}
        return out

    def brief(self) -> str:
        """One line: cells added, removed and changed, each with its counts by cause."""
        parts = []
        for change, counts in (("added", self.causes()["added"]),
                               ("removed", self.causes()["removed"]),
                               ("changed", self.causes()["changed"])):
            by = ", ".join(f"{c} {n}" for c, n in sorted(counts.items(), key=lambda x: -x[1]))
            parts.append(f"{change} {sum(counts.values())}" + (f" ({by})" if by else ""))
        return "cells " + "; ".join(parts)

    def query(self, sql: str, *, timeout: float | None = DEFAULT_TIMEOUT,
              max_rows: int | None = None) -> pl.DataFrame:
        """Run one SELECT over the diff's tables (summary, models, benchmarks, merged, cells)
        in a sealed DuckDB in a child process, under the limits of `store.sql.execute`."""
        from benchpress.store.sql_child import run_in_child

        return run_in_child(None, sql, timeout=timeout, max_rows=max_rows,
                            memory_limit=DEFAULT_MEMORY_LIMIT, tables=self.tables(),
                            what="a diff").frame

    def write(self, folder: Path) -> list[Path]:
        """Write every table as `<folder>/<name>.parquet`; returns the paths."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, df in self.tables().items():
            df.write_parquet(folder / f"{name}.parquet")
            paths.append(folder / f"{name}.parquet")
        return paths


def _entity_changes(a: pl.DataFrame, b: pl.DataFrame, key: str, keep: list[str]) -> pl.DataFrame:
    cols = [key, *keep]
    added = b.join(a.select(key), on=key, how="anti").select(cols)
    removed = a.join(b.select(key), on=key, how="anti").select(cols)
    return pl.concat([added.with_columns(pl.lit("added").alias("change")),
                      removed.with_columns(pl.lit("removed").alias("change"))]
                     ).select("change", *cols).sort("change", key)


def _renamed_models(models: pl.DataFrame, tb: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """`models` (added and removed ids) with each rename folded into one row: a removed id
    that B's alias table maps to an added one (a source renamed the model under its own
    upstream id, `store.renames`) is `renamed`, under the new id and name, with the old id
    and name in `old_model_id` and `old_name` (null on the other rows)."""
    pairs = (tb["aliases"].filter(pl.col("kind") == "model")
             .select(old_model_id="alias", model_id="canonical_id")
             .join(models.filter(pl.col("change") == "removed")
                   .select(old_model_id="model_id", old_name="name"), on="old_model_id")
             .join(models.filter(pl.col("change") == "added").drop("change"), on="model_id")
             .unique("old_model_id", keep="first", maintain_order=True)
             .unique("model_id", keep="first", maintain_order=True))
    kept = (models.join(pairs.select("model_id"), on="model_id", how="anti")
            .join(pairs.select(model_id="old_model_id"), on="model_id", how="anti")
            .with_columns(pl.lit(None, dtype=pl.String).alias("old_model_id"),
                          pl.lit(None, dtype=pl.String).alias("old_name")))
    renamed = pairs.with_columns(pl.lit("renamed").alias("change")).select(kept.columns)
    return pl.concat([kept, renamed]).sort("change", "model_id")


def _spellings(scores: pl.DataFrame, kind: str) -> pl.DataFrame:
    key = f"{kind}_id"
    return (scores.group_by(key)
            .agg(pl.col(f"raw_{key}").unique().sort().str.join(", ").alias("spellings")))


def _merged(scores_a: pl.DataFrame, scores_b: pl.DataFrame) -> pl.DataFrame:
    parts = []
    for kind in ("model", "benchmark"):
        key = f"{kind}_id"
        both = _spellings(scores_a, kind).join(_spellings(scores_b, kind), on=key, suffix="_b")
        parts.append(both.filter(pl.col("spellings") != pl.col("spellings_b")).select(
            pl.lit(kind).alias("kind"), pl.col(key).alias("canonical_id"),
            pl.col("spellings").alias("spellings_a"), "spellings_b"))
    merged = pl.concat(parts)
    # keep only ids that some source spelled differently from the canonical id
    return merged.filter(
        pl.concat_str("spellings_a", pl.lit(", "), "spellings_b").str.split(", ")
        .list.set_difference(pl.concat_list("canonical_id")).list.len() > 0
    ).sort("kind", "canonical_id")


def _setting(cells: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Cells with `_mode` / `_effort`: the setting each value was measured under."""
    def parts(col: str, prefix: str) -> list[pl.Expr]:
        text = pl.col(col)
        plain = text.str.strip_chars('"').str.split(":")  # a bare "thinking:default"
        out = []
        for field, index in (("mode", 0), ("effort", 1)):
            value = (pl.when(text.str.starts_with("{"))
                     .then(text.str.json_path_match(f"$.{field}"))
                     .when(text.str.starts_with('"'))
                     .then(plain.list.get(index, null_on_oob=True))
                     .otherwise(None).str.strip_chars().str.to_lowercase())
            out.append(pl.when(value.is_in(_UNKNOWN)).then(None).otherwise(value)
                       .alias(f"{prefix}{field}"))
        return out

    model_setting = models.select(
        "model_id", *parts("setting", "_m_"),
        pl.when(pl.col("is_reasoning")).then(pl.lit("thinking"))
        .when(pl.col("is_reasoning").not_()).then(pl.lit("non-thinking"))
        .otherwise(None).alias("_r_mode"),
    )
    return (cells.with_columns(parts("reported_setting", "_c_"))
            .join(model_setting, on="model_id", how="left")
            .with_columns(pl.coalesce("_c_mode", "_m_mode", "_r_mode").alias("_mode"),
                          pl.coalesce("_c_effort", "_m_effort").alias("_effort"))
            .drop("_c_mode", "_c_effort", "_m_mode", "_m_effort", "_r_mode"))


def _label(mode: pl.Expr, effort: pl.Expr) -> pl.Expr:
    return (pl.when(mode.is_null() & effort.is_null()).then(None)
            .otherwise(pl.concat_str(mode.fill_null("?"),
                                     pl.when(effort.is_null()).then(pl.lit(""))
                                     .otherwise(pl.lit(", effort ") + effort))))


def _cell_changes(tables_a: dict[str, pl.DataFrame],
                  tables_b: dict[str, pl.DataFrame]) -> pl.DataFrame:
    sides = []
    for tables, suffix in ((tables_a, "_a"), (tables_b, "_b")):
        cells = tables["cells"]
        if "source_version" not in cells.columns:  # a version written before source versions
            cells = cells.with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))
        cells = _setting(cells, tables["models"])
        sides.append(cells.select(*_KEY, *_CELL_FIELDS, "_mode", "_effort")
                     .rename({c: c + suffix for c in [*_CELL_FIELDS, "_mode", "_effort"]}))
    joined = sides[0].join(sides[1], on=_KEY, how="full", coalesce=True)
    in_a, in_b = pl.col("score_a").is_not_null(), pl.col("score_b").is_not_null()
    diff = pl.col("score_b") - pl.col("score_a")
    mode_a, mode_b, eff_a, eff_b = (pl.col(c) for c in ("_mode_a", "_mode_b", "_effort_a", "_effort_b"))
    return (
        joined.with_columns(
            pl.when(in_a & in_b & (diff.abs() > TOLERANCE)).then(pl.lit("changed"))
            .when(in_b & ~in_a).then(pl.lit("added"))
            .when(in_a & ~in_b).then(pl.lit("removed"))
            .otherwise(None).alias("change"),
            diff.alias("difference"),
            _label(mode_a, eff_a).alias("setting_a"),
            _label(mode_b, eff_b).alias("setting_b"),
            ((mode_a.is_not_null() & mode_b.is_not_null() & (mode_a != mode_b))
             | (eff_a.is_not_null() & eff_b.is_not_null() & (eff_a != eff_b))).fill_null(False)
            .alias("setting_changed"),
            ((pl.col("reference_url_a") != pl.col("reference_url_b"))
             | (pl.col("source_id_a") != pl.col("source_id_b"))).fill_null(False)
            .alias("citation_changed"),
        )
        .filter(pl.col("change").is_not_null())
        .with_columns(pl.when(pl.col("change") == "changed").then(pl.col(c)).otherwise(False)
                      .alias(c) for c in ("setting_changed", "citation_changed"))
        .pipe(with_causes, tables_a, tables_b)
        .select("change", *_KEY, "score_a", "score_b", "difference", "cause", "setting_changed",
                "setting_a", "setting_b", "citation_changed", "source_id_a", "source_id_b",
                "reference_url_a", "reference_url_b", "source_type_a", "source_type_b",
                "reported_setting_a", "reported_setting_b", "source_version_a",
                "source_version_b")
        .sort("change", *_KEY)
    )


_VERSION = ["source_id", "source_version"]


def _versions(sources: pl.DataFrame) -> pl.DataFrame:
    """The `sources` table with a `source_version` column (null in a table written before
    versions existed: one version per source)."""
    if "source_version" in sources.columns:
        return sources
    return sources.with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))


def _summary(tables_a: dict[str, pl.DataFrame], tables_b: dict[str, pl.DataFrame],
             models, benchmarks, merged, cells) -> pl.DataFrame:
    def n(df: pl.DataFrame, **eq) -> int:
        for col, value in eq.items():
            df = df.filter(pl.col(col) == value)
        return df.height

    rows = []
    for table, changes in (("models", models), ("benchmarks", benchmarks)):
        rows.append({"table": table, "a": tables_a[table].height, "b": tables_b[table].height,
                     "added": n(changes, change="added"), "removed": n(changes, change="removed"),
                     "renamed": n(changes, change="renamed") if table == "models" else None,
                     "merged": n(merged, kind=table[:-1]), "changed": None,
                     "setting_changed": None, "citation_changed": None})
    # sources and their versions apart: one source ingested twice is 1 source, 2 versions
    for table, key in (("sources", ["source_id"]), ("source_versions", _VERSION)):
        a, b = (_versions(t["sources"]).select(key).unique() for t in (tables_a, tables_b))
        rows.append({"table": table, "a": a.height, "b": b.height,
                     "added": b.join(a, on=key, how="anti", nulls_equal=True).height,
                     "removed": a.join(b, on=key, how="anti", nulls_equal=True).height,
                     "renamed": None, "merged": None, "changed": None,
                     "setting_changed": None, "citation_changed": None})
    rows.append({"table": "cells", "a": tables_a["cells"].height, "b": tables_b["cells"].height,
                 "added": n(cells, change="added"), "removed": n(cells, change="removed"),
                 "renamed": None, "merged": None, "changed": n(cells, change="changed"),
                 "setting_changed": n(cells, change="changed", setting_changed=True),
                 "citation_changed": n(cells, change="changed", citation_changed=True)})
    return pl.DataFrame(rows, schema={"table": pl.String, "a": pl.Int64, "b": pl.Int64,
                                      "added": pl.Int64, "removed": pl.Int64,
                                      "renamed": pl.Int64, "merged": pl.Int64,
                                      "changed": pl.Int64, "setting_changed": pl.Int64,
                                      "citation_changed": pl.Int64})


def diff_folders(folder_a: Path, folder_b: Path, *, a: str | None = None,
                 b: str | None = None) -> RegistryDiff:
    """Compare two folders of registry tables.

    Parameters
    ----------
    folder_a, folder_b : Path
        Registry or snapshot folders (each with `build.json` and the Parquet tables).
    a, b : str, optional
        Labels for the two versions in the result (default: the folders' paths).

    Returns
    -------
    RegistryDiff
        `cells` has one row per added, removed or changed (model, benchmark) cell.
    """
    ta, tb = read_tables(folder_a), read_tables(folder_b)
    return diff_tables(ta, tb, a=a or str(folder_a), b=b or str(folder_b))


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """The tables a diff reads from a registry or snapshot folder."""
    if not registry_exists(folder):
        raise RegistryError(f"{folder}: not a registry or snapshot folder (no build.json)")
    return {name: read_table(folder, name) for name in _TABLES}


def diff_tables(ta: dict[str, pl.DataFrame], tb: dict[str, pl.DataFrame], *, a: str,
                b: str) -> RegistryDiff:
    """`diff_folders` on tables already read (`read_tables`); `a`, `b` label the versions."""
    models = _renamed_models(
        _entity_changes(ta["models"], tb["models"], "model_id", ["name", "provider"]), tb)
    benchmarks = _entity_changes(ta["benchmarks"], tb["benchmarks"], "benchmark_id",
                                 ["name", "category"])
    merged = _merged(ta["scores"], tb["scores"])
    cells = _cell_changes(ta, tb)
    return RegistryDiff(a, b, _summary(ta, tb, models, benchmarks, merged, cells),
                        models, benchmarks, merged, cells)


def diff(home: Home, ref_a: str, ref_b: str) -> RegistryDiff:
    """Compare two versions named by snapshot id, tag, `latest` or `current` (the registry)."""
    folder_a, folder_b = resolve_snapshot(home, ref_a), resolve_snapshot(home, ref_b)
    label = lambda ref, folder: ref if ref == folder.name else f"{ref} ({folder.name})"  # noqa: E731
    return diff_folders(folder_a, folder_b, a=label(ref_a, folder_a), b=label(ref_b, folder_b))
