"""`benchpress identity`: how many sources each model is seen in, and the aliases that would
join more (`store.identity`)."""

from __future__ import annotations

import click
import polars as pl

from benchpress.cli.common import (
    format_option, handle_errors, home_option, out_option, progress_bar, render, stderr,
    write_or_emit,
)
from benchpress.store.snapshot import resolve_snapshot
from benchpress.store.tables import read_table, require_registry

__all__ = ["identity"]


@click.command()
@click.option("--min-score", type=click.FloatRange(0, 100), default=85.0, show_default=True,
              help="Smallest match score (0-100) of a suggestion or a candidate.")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Show at most this many suggestions (the most sources joined first).")
@click.option("--snapshot", default=None, help="Report on a snapshot (id, tag or 'latest').")
@format_option()
@out_option("the report")
@home_option
@handle_errors
def identity(min_score, limit, snapshot, fmt, out, home):
    """How many models appear in 1, 2, 3, 4 and 5+ sources (also through the agents and
    submissions that run them), the alias suggestions that would join more sources, and the
    models that entries run but the registry lacks. Suggestions are for review: accept one
    with `benchpress aliases accept ALIAS CANONICAL_ID`. csv: the counts table."""
    from benchpress.store.identity import identity_report

    folder = resolve_snapshot(home, snapshot)
    if snapshot is None:
        require_registry(folder)
    with progress_bar("matching model names across sources"):
        tables = {n: read_table(folder, n) for n in ("models", "cells", "scores")}
        report = identity_report(tables["models"], tables["cells"], tables["scores"],
                                 min_score=min_score, limit=limit)
    if write_or_emit(report.to_dict(), out, fmt, rows=report.by_sources):
        return
    render(report.by_sources, "table", title=f"{report.n_models:,} models by number of sources "
           "(with_entries: also through the agents and submissions that run them; "
           "if_accepted: with every suggestion below of the same family)")
    if report.suggestions.height:
        shown = report.suggestions.select(
            "alias", "canonical_id",
            pl.format("{} -> {}", "sources_now", "sources_joined").alias("sources"),
            "similarity", "match")
        render(shown, "table", key=("alias", "canonical_id", "sources"),
               title="aliases that would join sources: review each, then "
                     "`benchpress aliases accept ALIAS CANONICAL_ID`")
    else:
        click.echo("no alias suggestion would join more sources")
    if report.unlinked.height:
        shown = report.unlinked.select("base_model_id", "entries", "candidate").head(limit)
        render(shown, "table", key=("base_model_id", "entries", "candidate"),
               title="models that agents or submissions run, not in the registry")
        if report.unlinked.height > limit:
            stderr.print(f"note: {report.unlinked.height - limit} more models that entries run are "
                         "not in the registry (--limit, or --format json)", markup=False,
                         highlight=False)
