"""What every command shares: --home, --format, rendering rows, and turning errors into
one line with the right exit code (1 for bad input, 2 for bad usage)."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from pathlib import Path

import click
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, Progress
from rich.table import Table

from benchpress.errors import BenchPressError, UsageError
from benchpress.home import Home, find_home

__all__ = ["progress_bar", "split_list", "home_option", "format_option", "mirror_option", "render", "emit_json", "write_or_emit", "handle_errors",
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


def render(rows: pl.DataFrame, fmt: str, *, title: str | None = None) -> None:
    """Print a frame as a rich table, CSV, or a JSON list of row objects."""
    if fmt == "json":
        emit_json(rows.to_dicts())
        return
    nested = [c for c, t in rows.schema.items() if t.is_nested()]
    if nested:  # CSV and tables hold scalars: nested values are shown as JSON text
        rows = rows.with_columns(pl.col(c).map_elements(
            lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v, default=str),
            return_dtype=pl.String) for c in nested)
    if fmt == "csv":
        click.echo(rows.write_csv(), nl=False)
    else:
        table = Table(title=title, show_lines=False)
        for name in rows.columns:
            table.add_column(name, overflow="fold")
        for row in rows.iter_rows():
            table.add_row(*("" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
                            for v in row))
        Console(width=max(120, Console().width)).print(table)


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
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except BenchPressError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
    return wrapper
