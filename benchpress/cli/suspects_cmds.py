"""`benchpress suspects`: the values the rest of their row and column contradict, with
their citations, for review (`benchpress.api.suspect_report.find_suspects`; `build` prints its
summary line)."""

from __future__ import annotations

import textwrap

import click
import polars as pl

from benchpress.cli.common import (
    MAX_CELL, format_option, handle_errors, home_option, out_option, progress_bar, render,
    stderr, terminal_width, write_or_emit,
)
from benchpress.errors import UsageError

__all__ = ["suspects", "check_after_build"]

#: Key columns of the table format (shown at any width).
_KEY = ("model_id", "benchmark_id", "score", "expected", "z", "finding")


def _shown(rows: pl.DataFrame) -> pl.DataFrame:
    """The table format's view: the slip (open) or the verdict (reviewed) as one
    ``finding``, figures to two decimals, the citation after (csv/json: every column)."""
    finding = (pl.when(pl.col("status") == "open")
               .then(pl.concat_str(pl.lit("open"), pl.col("slip"), separator=": ")
                     .fill_null(pl.lit("open")))
               .otherwise(pl.col("verdict")))
    return rows.select(
        "model_id", "benchmark_id", "score",
        *(pl.col(c).fill_nan(None).round(2) for c in ("expected", "z")),
        finding.alias("finding"), "source_id", "reference_url")


def _find(home, snapshot_ref: str | None, threshold: float | None):
    from benchpress.api import BenchPress
    from benchpress.store.matrix import load_matrix
    from benchpress.store.snapshot import resolve_snapshot

    if threshold is not None and not threshold > 0:
        raise UsageError(f"--threshold must be > 0 standard deviations, got {threshold:g}")
    with progress_bar("checking suspect cells"):
        folder = resolve_snapshot(home, snapshot_ref)
        bp = BenchPress(load_matrix(folder), contracts_dir=home.schemas, folder=folder)
        return bp.suspects(threshold)


@click.command()
@click.option("--snapshot", "snapshot_ref", default=None,
              help="A snapshot (id, tag or 'latest'; default: the current registry).")
@click.option("--threshold", type=float, default=None,
              help="Standard deviations from the value's prediction beyond which it is "
                   "suspect (default: the check's, 3).")
@click.option("--open", "only_open", is_flag=True,
              help="Only the suspects no reviewer has seen (not those reviewed ok or "
                   "excluded by a verdict in schemas/cell_reviews.csv).")
@format_option()
@out_option("the report")
@home_option
@handle_errors
def suspects(snapshot_ref, threshold, only_open, fmt, out, home):
    """Values that the rest of their row and column contradict, and scale or direction
    slips, each with its citation, for review.

    Each cell is predicted from the others (a robust low-rank leave-one-out in the
    predictor's z space); a value more than --threshold standard deviations away, or one
    that reads far better as 100-x, x*100, x/100, x*10 or x/10 (bounded percent
    benchmarks only), is listed; so is a citation whose values for a benchmark read as
    their complement as a whole. Record what you find in schemas/cell_reviews.csv
    (verdict ok|wrong_scale|reversed|typo|exclude); every verdict but ok takes the value
    out of the cells at the next build. Nothing is changed here."""
    report = _find(home, snapshot_ref, threshold)
    rows = report.frame.filter(pl.col("status") == "open") if only_open else report.frame
    doc = {**report.to_json(), "suspects": rows.to_dicts()}
    if write_or_emit(doc, out, fmt, rows=rows):
        return
    width = terminal_width()
    for g in report.reversed_groups:
        url = g["reference_url"] or ""
        url = url if len(url) <= MAX_CELL else url[:MAX_CELL - 1] + "…"
        _echo_wrapped(f"reversed as a whole: {g['benchmark_id']} from {g['source_id']} "
                      f"{url} ({g['n_cells']} models; {g['rms_z_as_given']:.1f} standard "
                      f"deviations as given, {g['rms_z_reversed']:.1f} as 100-x)", width)
    if rows.height:
        render(_shown(rows), "table", key=_KEY)
    _echo_wrapped(report.summary(), width)


def _echo_wrapped(line: str, width: int) -> None:
    """``line`` wrapped at ``width`` (a word longer than it stays whole)."""
    click.echo(textwrap.fill(line, width=width, subsequent_indent="  ",
                             break_long_words=False, break_on_hyphens=False))


def check_after_build(home) -> None:
    """`build`'s closing line: the suspect check of the registry just built (a check that
    cannot run is one line on stderr; the registry stands either way)."""
    from benchpress.errors import BenchPressError

    try:
        report = _find(home, None, None)
    except BenchPressError as exc:
        stderr.print(f"suspects: not checked ({' '.join(str(exc).split())})", markup=False,
                     highlight=False)
        return
    _echo_wrapped(report.summary(), terminal_width())
