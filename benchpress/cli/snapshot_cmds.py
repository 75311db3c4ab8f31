"""Snapshot commands: snapshot create|list|show, diff, and stats (the metrics stage)."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from benchpress.cli.common import (
    emit_json, executor_option, format_option, handle_errors, home_option, mirror_option,
    out_option, progress_bar, render, stderr, write_or_emit,
)
from benchpress.store.tables import write_json_atomic
from benchpress.errors import RegistryError, UsageError
from benchpress.store.diff import diff as diff_versions
from benchpress.store.snapshot import (
    Snapshot, create_snapshot, get_snapshot, list_snapshots, registry_metrics, resolve_snapshot,
    tagged,
    verify_snapshot,
)

__all__ = ["snapshot", "diff", "stats"]


def _row(s: Snapshot) -> dict:
    """A snapshot's line of `snapshot list`: sources (ids) and their versions apart."""
    listed_sources = s.manifest.get("sources") or []
    return {"id": s.id, "created_at": s.created_at, "tags": ", ".join(s.tags),
            "models": s.counts.get("models"), "benchmarks": s.counts.get("benchmarks"),
            "cells": s.counts.get("cells"), "scores": s.counts.get("scores"),
            "sources": len({r.get("source_id") for r in listed_sources}) if listed_sources
            else s.counts.get("sources"),
            "versions": s.counts.get("sources")}  # a row of the sources table per version


_LIST_SCHEMA = {"id": pl.String, "created_at": pl.String, "tags": pl.String, "models": pl.Int64,
                "benchmarks": pl.Int64, "cells": pl.Int64, "scores": pl.Int64, "sources": pl.Int64,
                "versions": pl.Int64}


@click.group()
def snapshot():
    """Frozen, content-addressed versions of the registry (tracked with DVC)."""


@snapshot.command()
@click.option("--tag", help="A name for this version (letters, digits, '.', '_', '-'); a tag "
              "names one snapshot.")
@click.option("--move-tag", is_flag=True, help="Move --tag here if another snapshot has it.")
@click.option("--monthly", is_flag=True,
              help="Also freeze the registry as it stood at the end of every month of its "
                   "sources' versions (tagged YYYY-MM, dated by the month's newest version; "
                   "the newest month is the current registry); a line per month.")
@mirror_option
@home_option
@handle_errors
@executor_option
def create(tag, move_tag, monthly, mirror, home, executor):
    """Freeze the current registry into snapshots/<id>/ and print the id."""
    if move_tag and not tag:
        raise UsageError("--move-tag needs --tag NAME")
    if monthly:
        if tag:
            raise UsageError("--monthly tags each snapshot with its month; give no --tag")
        _create_monthly(home, mirror, executor)
        return
    before = [s.id for s in tagged(home, tag)] if tag else []
    with progress_bar("snapshotting the registry"):
        snap, created = create_snapshot(home, tag=tag, move_tag=move_tag)
    moved = [sid for sid in before if sid != snap.id]
    if moved:
        stderr.print(f"moved tag '{tag}' from snapshot {', '.join(moved)} to {snap.id}",
                     highlight=False, markup=False)
    what = "created" if created else "unchanged data; kept"
    stderr.print(f"{what} snapshot {snap.id} ({snap.counts.get('models')} models, "
                 f"{snap.counts.get('benchmarks')} benchmarks, {snap.counts.get('cells')} cells)"
                 + (f" tags: {', '.join(snap.tags)}" if snap.tags else ""), highlight=False,
                 soft_wrap=False)  # wrapped at the terminal's width (80 off a terminal)
    click.echo(snap.id)


def _create_monthly(home, mirror, executor) -> None:
    """`snapshot create --monthly`: one line per month on stderr, the newest id on stdout."""
    from benchpress.store.history import snapshot_months

    def said(m) -> None:
        what = "new" if m.created else "kept"
        added = ", ".join(m.added[:3]) + (f", +{len(m.added) - 3} more" if len(m.added) > 3 else "")
        stderr.print(f"{m.month or 'undated'} ({m.day or '-'}): snapshot {m.snapshot.id} {what}; "
                     f"{m.snapshot.counts.get('models')} models, "
                     f"{m.snapshot.counts.get('cells')} cells, "
                     f"{m.snapshot.counts.get('scores')} scores; "
                     f"{len(m.added)} version(s) added" + (f": {added}" if added else ""),
                     highlight=False, markup=False)

    with progress_bar("preparing versions") as update:
        done = snapshot_months(home, mirror=mirror, on_source=update, on_month=said,
                               executor=executor)
    new = sum(m.created for m in done)
    stderr.print(f"{len(done)} months, {len({m.snapshot.id for m in done})} snapshots "
                 f"({new} new)", highlight=False, markup=False)
    click.echo(done[-1].snapshot.id)


@snapshot.command(name="list")
@format_option()
@out_option()
@home_option
@handle_errors
def list_(fmt, out, home):
    """Every snapshot, oldest first."""
    render(pl.DataFrame([_row(s) for s in list_snapshots(home)], schema=_LIST_SCHEMA), fmt,
           title="snapshots", out=out)


@snapshot.command()
@click.argument("ref")
@click.option("--verify", is_flag=True, help="Re-hash the tables and check them against the manifest.")
@format_option()
@out_option()
@home_option
@handle_errors
def show(ref, verify, fmt, out, home):
    """The manifest of snapshot REF (id, tag or 'latest'); csv: its tables, one row each."""
    snap = get_snapshot(home, ref)
    if verify:
        problems = verify_snapshot(snap)
        if problems:
            raise RegistryError(f"snapshot {snap.id} is damaged: " + "; ".join(problems))
        stderr.print(f"snapshot {snap.id}: every table matches its manifest")
    tables = pl.DataFrame([{"table": name, "rows": snap.counts.get(name),
                            "content_sha256": entry.get("content_sha256", "")}
                           for name, entry in snap.manifest.get("tables", {}).items()],
                          schema={"table": pl.String, "rows": pl.Int64, "content_sha256": pl.String})
    if write_or_emit(snap.manifest, out, fmt, rows=tables):
        return
    render(pl.DataFrame([_row(snap)], schema=_LIST_SCHEMA), fmt, title=f"snapshot {snap.id}")
    render(tables.with_columns(pl.col("content_sha256").str.slice(0, 16)), fmt, title="tables")
    render(pl.DataFrame(snap.manifest.get("sources", []),
                        schema={"source_id": pl.String, "adapter": pl.String, "url": pl.String,
                                "path": pl.String, "sha256": pl.String, "retrieved_at": pl.String,
                                "licence": pl.String}).select("source_id", "adapter", "sha256"),
           fmt, title="sources")


@click.command()
@click.argument("ref_a", metavar="A")
@click.argument("ref_b", metavar="B", default="current")
@click.option("--sql", "sql_text", help="Run one SELECT over the diff's tables instead "
              "(summary, models, benchmarks, merged, cells).")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write the diff's tables as Parquet into this folder.")
@click.option("--limit", type=int, default=15, show_default=True,
              help="Largest changes listed in table format.")
@format_option()
@out_option("the output (csv: every added, removed and changed cell)")
@home_option
@handle_errors
def diff(ref_a, ref_b, sql_text, out_dir, limit, fmt, out, home):
    """What changed from version A to version B (snapshot id, tag, 'latest', or 'current' for
    the live registry; B defaults to 'current')."""
    result = diff_versions(home, ref_a, ref_b)
    if out_dir is not None:
        paths = result.write(out_dir)
        stderr.print(f"wrote {len(paths)} tables to {out_dir}")
    if sql_text:
        render(result.query(sql_text), fmt, out=out)
    elif fmt == "json":
        emit_json(result.to_dict(), out)
    elif fmt == "csv":
        render(result.cells, fmt, out=out)
    else:
        if out is not None:
            write_or_emit(result.to_dict(), out, "table")
        render(result.summary, fmt, title=f"{result.a} -> {result.b}")
        if result.models.height:  # a rename: one row, the old id and name beside the new
            render(result.models, fmt, title="models added, removed and renamed",
                   key=("change", "model_id", "old_model_id"))
        if result.benchmarks.height:
            render(result.benchmarks, fmt, title="benchmarks added and removed")
        if result.merged.height:
            render(result.merged, fmt, title="kept by normalization (raw spellings differ)")
        if result.cells.height:
            by_cause = (result.cells.group_by("change", "cause").len("cells")
                        .sort("change", "cells", descending=[False, True]))
            render(by_cause, fmt, title="cells by cause")
        changed = result.cells.filter(pl.col("change") == "changed")
        brief = ["model_id", "benchmark_id", "score_a", "score_b", "difference", "cause",
                 "setting_a", "setting_b", "reference_url_b"]
        # kept at any width, first (render narrows and wraps them rather than drop the cause)
        key = ("model_id", "benchmark_id", "difference", "cause")
        setting = changed.filter(pl.col("setting_changed"))
        if setting.height:
            render(setting.select(brief), fmt, title="changed cells whose evaluation setting changed",
                   key=key)
        if changed.height and limit > 0:
            render(changed.sort(pl.col("difference").abs(), descending=True).head(limit)
                   .select(*brief[:6], "setting_changed", "reference_url_a", "reference_url_b"),
                   fmt, title=f"largest changes (top {min(limit, changed.height)} of {changed.height})",
                   key=key)
        stderr.print("every added, removed and changed cell: --format json|csv, or --sql "
                     "\"SELECT * FROM cells WHERE change = 'changed'\"")


@click.command()
@click.option("--snapshot", "snapshot_ref", default=None, help="A snapshot (id, tag or 'latest').")
@click.option("--write-metrics", "metrics_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the figures as JSON to this file instead (the DVC metrics stage).")
@format_option()
@out_option()
@home_option
@handle_errors
def stats(snapshot_ref, metrics_file, fmt, out, home):
    """Headline figures of the registry or a snapshot: counts, fill, conflicts, per source."""
    folder = resolve_snapshot(home, snapshot_ref)
    figures = registry_metrics(folder)
    if metrics_file is not None:
        write_json_atomic(metrics_file, figures, sort_keys=True)
        stderr.print(f"wrote {metrics_file}")
        return
    rows = [{"figure": k, "value": str(v)} for k, v in figures.items() if k != "per_source"]
    rows += [{"figure": f"scores from {k}", "value": str(v)}
             for k, v in figures["per_source"].items()]
    frame = pl.DataFrame(rows, schema={"figure": pl.String, "value": pl.String})
    if not write_or_emit(figures, out, fmt, rows=frame):
        render(frame, fmt, title=str(folder))
