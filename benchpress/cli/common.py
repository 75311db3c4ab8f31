"""What every command shares: --home, --format, rendering rows, and turning errors into
one line with the right exit code (1 for bad input, 2 for bad usage)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import sys
from pathlib import Path

import click
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, Progress
from rich.table import Table
from rich.text import Text

from benchpress.errors import BenchPressError, UsageError
from benchpress.home import Home, find_home

__all__ = ["progress_bar", "split_list", "home_option", "format_option", "mirror_option", "render", "terminal_width", "natural_width", "emit_json", "write_or_emit", "handle_errors",
           "stderr", "parse_scores"]

stderr = Console(stderr=True, soft_wrap=True)


@contextlib.contextmanager
def progress_bar(what: str):
    """A progress bar on stderr; yields `update(k, n, label)` for library callbacks."""
    with Progress("[progress.description]{task.description}", BarColumn(),
                  "{task.completed}/{task.total}", console=stderr, transient=True,
                  disable=not stderr.is_terminal) as bar:
        task = bar.add_task(what, total=None)

        def update(k: int, n: int, label: str) -> None:
            bar.update(task, completed=k, total=n, description=f"{what}: {label}")

        yield update


def home_option(f):
    """`--home DIR` (default: the project around the current folder) -> `home: Home`."""
    @click.option("--home", "home_dir", type=click.Path(file_okay=False, path_type=Path),
                  default=None, help="Registry workspace (default: the current project).")
    @functools.wraps(f)
    def wrapper(*args, home_dir=None, **kwargs):
        return f(*args, home=Home(home_dir.resolve()) if home_dir else find_home(), **kwargs)
    return wrapper


def mirror_option(f):
    return click.option(
        "--mirror", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
        envvar="BENCHPRESS_MIRROR",
        help="Offline mirror folder holding the sources' files (env: BENCHPRESS_MIRROR).")(f)


def format_option(default: str = "table", choices=("table", "csv", "json")):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="table for people, json/csv for programs.")


def emit_json(document) -> None:
    click.echo(json.dumps(document, indent=2, default=str, allow_nan=False))


def write_or_emit(doc: dict, out: Path | None, fmt: str, *, written: dict | None = None) -> bool:
    """Write ``written`` (default ``doc``) atomically to ``out`` when given, and print ``doc``
    when ``fmt`` is json. Returns True when printed: the command has nothing more to show."""
    from benchpress.store.tables import write_json_atomic

    if out:
        write_json_atomic(out, doc if written is None else written)
    if fmt == "json":
        emit_json(doc)
        return True
    return False


MIN_WIDTH = 8        # no column is squeezed below this many characters
MAX_CELL = 40        # longer cells (URLs, lists) are cut with an ellipsis in table format
MAX_HEADER = 24      # a header keeps up to this many characters on one line


def terminal_width() -> int:
    """Width for tables: $COLUMNS when set, the terminal's width on a terminal, else 80."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((80, 24)).columns
    return 80


def _cell_text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return " ".join(str(v).split())  # one line: newlines and tabs become spaces


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _column_widths(rows: pl.DataFrame, cells: list[list[str]]) -> list[int]:
    """Width of each column: its longest cell up to MAX_CELL, and its header up to MAX_HEADER
    (so a header never breaks into pieces), at least MIN_WIDTH when it has that much text."""
    widths = []
    for j, name in enumerate(rows.columns):
        longest = max((len(r[j]) for r in cells), default=0)
        natural = max(min(longest, MAX_CELL), min(len(name), MAX_HEADER))
        widths.append(max(natural, min(MIN_WIDTH, max(longest, len(name)))))
    return widths


def _print_table(columns: list[str], cells: list[list[str]], widths: list[int], width: int,
                 title: str | None) -> None:
    table = Table(title=title, show_lines=False)
    for name, w in zip(columns, widths):
        table.add_column(Text(_cut(name, w)), no_wrap=True, overflow="ellipsis",
                         min_width=w, max_width=w)
    for row in cells:
        table.add_row(*(Text(_cut(v, w)) for v, w in zip(row, widths)))
    Console(file=sys.stdout, width=width, soft_wrap=False).print(table)


def natural_width(rows: pl.DataFrame) -> int:
    """Characters a table of ``rows`` needs to show every column without cutting a cell
    (beyond MAX_CELL), borders included: compare with :func:`terminal_width`."""
    cells = [[_cell_text(v) for v in row] for row in rows.iter_rows()]
    widths = _column_widths(rows, cells)
    return sum(widths) + 3 * len(widths) + 1


def render(rows: pl.DataFrame, fmt: str, *, title: str | None = None) -> None:
    """Print a frame as a table readable at the terminal's width, as CSV, or as JSON.

    The table keeps as many columns (left to right) as fit in ``terminal_width()``, never
    narrower than MIN_WIDTH, cuts long cells with an ellipsis, and says on stderr how many
    columns it left out (``--format csv`` / ``--format json`` print everything). A single
    row too wide for the terminal is shown transposed (one line per column). CSV cells that
    a spreadsheet would read as a formula are defused (``csv_safe_frame``).

    Parameters
    ----------
    rows : pl.DataFrame, shape (n, k)
    fmt : {"table", "csv", "json"}
    title : str, optional
        Heading of the table format.
    """
    if fmt == "json":
        emit_json(rows.to_dicts())
        return
    nested = [c for c, t in rows.schema.items() if t.is_nested()]
    if nested:  # CSV and tables hold scalars: nested values are shown as JSON text
        rows = rows.with_columns(pl.col(c).map_elements(
            lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v, default=str),
            return_dtype=pl.String) for c in nested)
    if fmt == "csv":
        from benchpress.validate.text import csv_safe_frame

        click.echo(csv_safe_frame(rows).write_csv(), nl=False)
        return
    width = terminal_width()
    cells = [[_cell_text(v) for v in row] for row in rows.iter_rows()]
    widths = _column_widths(rows, cells)
    # a rich table with a box: 1 border + 3 per column (padding and separator)
    fits = lambda ws: sum(ws) + 3 * len(ws) + 1 <= width  # noqa: E731
    if rows.height == 1 and not fits(widths):  # one wide row: one line per column instead
        long = [[name, value] for name, value in zip(rows.columns, cells[0])]
        name_w = max(MIN_WIDTH, min(max(map(len, rows.columns)), MAX_HEADER))
        value_w = max(MIN_WIDTH, min(width - 7 - name_w, max(map(len, cells[0]))))
        _print_table(["column", "value"], long, [name_w, value_w], width, title)
        return
    keep = 0
    while keep < len(widths) and fits(widths[: keep + 1]):
        keep += 1
    if keep == 0:  # even the first column is wider than the terminal: cut it to fit
        keep, widths = 1, [max(MIN_WIDTH, width - 4)]
    elif keep < len(widths):  # use the room left for one more column, cut, if it is readable
        room = width - (sum(widths[:keep]) + 3 * (keep + 1) + 1)
        if room >= MIN_WIDTH:
            widths = widths[:keep] + [room]
            keep += 1
    _print_table(rows.columns[:keep], [r[:keep] for r in cells], widths[:keep], width, title)
    hidden = len(rows.columns) - keep
    if hidden:
        stderr.print(f"note: {hidden} of {len(rows.columns)} columns not shown at width {width} "
                     f"({', '.join(rows.columns[keep:keep + 5])}{', ...' if hidden > 5 else ''}); "
                     "--format csv or --format json prints every column", markup=False,
                     highlight=False)


def split_list(text: str | None) -> list[str] | None:
    """"a, b" -> ["a", "b"]; empty or None -> None."""
    return [s.strip() for s in text.split(",") if s.strip()] if text else None


def parse_scores(text: str) -> dict[str, float]:
    """"gpqa_diamond=71.2,hle=20.1" -> {"gpqa_diamond": 71.2, "hle": 20.1}."""
    scores = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--scores: '{part}' is not BENCHMARK=VALUE")
        try:
            scores[key.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--scores: value of '{key.strip()}' is '{value}', not a number") from None
    return scores


def handle_errors(f):
    """Library errors become `Error: ...` on stderr with exit 1 (2 for usage errors)."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except UsageError as exc:
            click.echo(f"Error: {' '.join(str(exc).split())}", err=True)
            sys.exit(2)
        except BenchPressError as exc:
            click.echo(f"Error: {' '.join(str(exc).split())}", err=True)
            sys.exit(1)
    return wrapper
