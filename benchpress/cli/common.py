"""What every command shares: --home, --format, rendering rows, and turning errors into
one line with the right exit code (1 for bad input, 2 for bad usage)."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shutil
import sys
import textwrap
from pathlib import Path

import click
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn
from rich.table import Table
from rich.text import Text

from benchpress.errors import BadInputError, BenchPressError, UsageError, missing_extra
from benchpress.home import Home, find_home
from benchpress.precision import rounded
from benchpress.validate.text import visible

__all__ = ["progress_bar", "split_list", "home_option", "format_option", "mirror_option", "render", "key_first", "terminal_width", "natural_width", "wrapped", "emit_json", "emit", "json_text", "csv_text", "out_option", "FORMAT_HELP", "write_or_emit", "handle_errors", "executor_option",
           "stderr", "one_line"]

stderr = Console(stderr=True, soft_wrap=True)


PROGRESS_ENV = "BENCHPRESS_PROGRESS"  # "always": show progress even off a terminal; "never"


def _progress_console() -> Console | None:
    """The console progress goes to: stderr when it is a terminal (or $BENCHPRESS_PROGRESS
    is "always"), else None (no progress: pipes, files and tests see nothing)."""
    wanted = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if wanted in ("never", "0", "off", "no"):
        return None
    forced = wanted in ("always", "1", "on", "yes")
    err = sys.stderr
    try:
        on_terminal = err.isatty()
    except (AttributeError, ValueError):
        on_terminal = False
    if not (forced or on_terminal):
        return None
    return Console(file=err, force_terminal=True if forced else None, soft_wrap=True)


@contextlib.contextmanager
def progress_bar(what: str):
    """Progress on stderr while a slow step runs, off when stderr is not a terminal.

    Yields ``update(k, n, label)`` for a library's ``progress=`` callback: with no call it
    stays a spinner naming ``what``; after one it counts ``k`` of ``n``. Stdout is never
    redirected (the command's output stays clean); the display is erased when done."""
    console = _progress_console()
    if console is None:
        yield lambda k, n, label="": None
        return
    with Progress(SpinnerColumn(), "[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), console=console, transient=True,
                  redirect_stdout=False, redirect_stderr=True) as bar:
        task = bar.add_task(what, total=None)

        def update(k: int, n: int, label: str = "") -> None:
            bar.update(task, completed=k, total=n,
                       description=f"{what}: {label}" if label else what)

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


FORMAT_HELP = ("table: for people, fitted to the terminal; csv or json: every row and column, "
               "for programs (docs/guide/output.md).")


def format_option(default: str = "table", choices=("table", "csv", "json")):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help=FORMAT_HELP)


def out_option(what: str = "this command's output"):
    """`--out FILE` -> `out`: also write the output to FILE (see `emit`)."""
    return click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help=f"Also write {what} to FILE: with --format csv/json the bytes "
                             "printed; with table, the JSON document.")


def _finite(value):
    """NaN and infinities -> None (JSON has no such numbers), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(document) -> str:
    """The one JSON form of every command: indented by 2, floats at full precision (no
    rounding: the figures match the library's), NaN as null, a trailing newline."""
    return json.dumps(_finite(document), indent=2, default=str, allow_nan=False) + "\n"


def emit_json(document, out: Path | None = None) -> None:
    emit(json_text(document), out)


def emit(text: str, out: Path | None = None) -> None:
    """Print ``text`` (CSV or JSON) as is (on a terminal, control characters but line
    ends written out: `validate.text.visible`); with ``out``, write the same bytes there."""
    shown = "\n".join(map(visible, text.split("\n"))) if sys.stdout.isatty() else text
    click.echo(shown, nl=False)
    if out is not None:
        _write_text(out, text)


def write_figures(out: Path, document) -> None:
    """Write `document` to `out` (atomically) as a file the pipeline keeps: the JSON form of
    `json_text`, its floats to `precision.SIGNIFICANT` digits (the same bytes on every
    CPU)."""
    _write_text(out, json_text(rounded(document)))


def _write_text(out: Path, text: str) -> None:
    from benchpress.store.tables import write_atomic

    write_atomic(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def csv_text(rows: pl.DataFrame) -> str:
    """CSV of ``rows``: a header line, nested values as JSON text, cells a spreadsheet would
    read as a formula defused (``csv_safe_frame``)."""
    from benchpress.validate.text import csv_safe_frame

    return csv_safe_frame(_flat(rows)).write_csv()


def write_or_emit(doc: dict, out: Path | None, fmt: str, *, written: dict | None = None,
                  rows: pl.DataFrame | None = None) -> bool:
    """The output contract for a command whose result is a document ``doc``.

    json: print ``doc``; csv: print ``rows`` (the command's main table) as CSV; ``out``
    gets the same bytes. table: ``out`` gets ``doc`` as JSON and the command goes on to
    print its tables. ``written`` replaces what ``out`` gets whatever the format (a metrics
    file for DVC keeps its figures-only form, its floats to `precision.SIGNIFICANT`
    digits: the same bytes on every CPU). Returns True when printed: the command has
    nothing more to show."""
    if fmt == "csv" and rows is None:
        raise UsageError("this command has no CSV form; use --format json")
    text = json_text(doc) if fmt != "csv" else csv_text(rows)
    if written is not None and written.get("params") == {}:
        # a metrics file keeps its bytes (`dvc metrics diff`): no empty params entry
        written = {k: v for k, v in written.items() if k != "params"}
    if out and written is not None:
        write_figures(out, written)
    elif out:
        _write_text(out, text if fmt != "table" else json_text(doc))
    if fmt == "table":
        return False
    click.echo(text, nl=False)
    return True


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


def wrapped(text: str, width: int | None = None) -> str:
    """`text` (`one_line`: data in it can neither split it nor reach the terminal as a
    command) wrapped to `width` (default: the terminal's), later lines indented by two,
    never breaking a word or an id at a hyphen.

    >>> print(wrapped("note: one two three four", 12))
    note: one
      two three
      four
    """
    return textwrap.fill(one_line(text), width=width or terminal_width(),
                         subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def _cell_text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    # one line: newlines and tabs become spaces, other control characters escapes
    return visible(" ".join(str(v).split()))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _column_widths(rows: pl.DataFrame, cells: list[list[str]], whole=()) -> list[int]:
    """Width of each column: its longest cell up to MAX_CELL (columns in `whole`: no cap),
    and its header up to MAX_HEADER (so a header never breaks into pieces), at least
    MIN_WIDTH when it has that much text."""
    widths = []
    for j, name in enumerate(rows.columns):
        longest = max((len(r[j]) for r in cells), default=0)
        natural = max(longest if name in whole else min(longest, MAX_CELL),
                      min(len(name), MAX_HEADER))
        widths.append(max(natural, min(MIN_WIDTH, max(longest, len(name)))))
    return widths


def _print_table(columns: list[str], cells: list[list[str]], widths: list[int], width: int,
                 title: str | None, wrap: int = 0, fixed=frozenset()) -> None:
    """The first `wrap` columns (the key) wrap their long cells onto more lines, but those
    whose index is in `fixed` (whole at their natural width); the others cut them with an
    ellipsis."""
    table = Table(title=title, show_lines=False)
    for j, (name, w) in enumerate(zip(columns, widths)):
        folds = j < wrap and j not in fixed
        head = "\n".join(_cut(part, w) for part in name.split("\n"))
        table.add_column(Text(head), no_wrap=not folds,
                         overflow="fold" if folds else "ellipsis", min_width=w, max_width=w)
    for row in cells:
        table.add_row(*(Text(v if j < wrap else _cut(v, w))
                        for j, (v, w) in enumerate(zip(row, widths))))
    Console(file=sys.stdout, width=width, soft_wrap=False).print(table)


def _two_lines(name: str) -> str:
    """A header on two lines, split after the underscore that makes the longer line shortest
    (unchanged without one).

    >>> _two_lines("resolved_score").splitlines(), _two_lines("n_conflicting_cells").splitlines()
    (['resolved_', 'score'], ['n_conflicting_', 'cells'])
    >>> _two_lines("gap")
    'gap'
    """
    cuts = [k + 1 for k, ch in enumerate(name) if ch == "_" and 0 < k < len(name) - 1]
    if not cuts:
        return name
    k = min(cuts, key=lambda c: max(c, len(name) - c))
    return name[:k] + "\n" + name[k:]


def _fit_key(widths: list[int], n_key: int, width: int, fixed=frozenset()) -> list[int]:
    """Narrow the widest of the first `n_key` columns but those in `fixed` (indices), a
    character at a time (not below MIN_WIDTH), until they fit in `width` together: the key
    is shown at any width.

    >>> _fit_key([30, 20, 8], 2, 40)
    [16, 17, 8]
    >>> _fit_key([30, 20, 8], 2, 40, fixed={1})
    [13, 20, 8]
    """
    w = list(widths)
    narrowable = [i for i in range(n_key) if i not in fixed]
    while narrowable and sum(w[:n_key]) + 3 * n_key + 1 > width:
        j = max(narrowable, key=lambda i: w[i])
        if w[j] <= MIN_WIDTH:
            break
        w[j] -= 1
    return w


def natural_width(rows: pl.DataFrame) -> int:
    """Characters a table of ``rows`` needs to show every column without cutting a cell
    (beyond MAX_CELL), borders included: compare with :func:`terminal_width`."""
    cells = [[_cell_text(v) for v in row] for row in rows.iter_rows()]
    widths = _column_widths(rows, cells)
    return sum(widths) + 3 * len(widths) + 1


def _flat(rows: pl.DataFrame) -> pl.DataFrame:
    """Nested values (lists, structs) as JSON text: CSV and tables hold scalars."""
    nested = [c for c, t in rows.schema.items() if t.is_nested()]
    if not nested:
        return rows
    return rows.with_columns(pl.col(c).map_elements(
        lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v, default=str),
        return_dtype=pl.String) for c in nested)


def key_first(rows: pl.DataFrame, key) -> pl.DataFrame:
    """``rows`` with the columns named in ``key`` (those it has) first, in that order.

    >>> key_first(pl.DataFrame({"a": [1], "b": [2], "c": [3]}), ["c", "x"]).columns
    ['c', 'a', 'b']
    """
    first = [c for c in dict.fromkeys(key) if c in rows.columns]
    return rows.select(first + [c for c in rows.columns if c not in first])


def render(rows: pl.DataFrame, fmt: str, *, title: str | None = None,
           out: Path | None = None, key=(), whole=()) -> None:
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
    key : sequence of str, optional
        The command's key columns: in the table format they come first, in this order, so
        they are shown at any width, and their cells are not cut at MAX_CELL (a probe set
        is shown whole, up to the terminal's width). CSV and JSON keep the frame's order.
    whole : sequence of str, optional
        Key columns never narrowed nor wrapped (scores): the other key columns give way.
    """
    if fmt == "json":
        emit_json(rows.to_dicts(), out)
        return
    if fmt == "csv":
        emit(csv_text(rows), out)
        return
    if out is not None:
        _write_text(out, json_text(rows.to_dicts()))
    rows = key_first(_flat(rows), key)
    width = terminal_width()
    cells = [[_cell_text(v) for v in row] for row in rows.iter_rows()]
    widths = [min(w, width - 4) for w in _column_widths(rows, cells, whole=key)]
    # a rich table with a box: 1 border + 3 per column (padding and separator)
    fits = lambda ws: sum(ws) + 3 * len(ws) + 1 <= width  # noqa: E731
    if rows.height == 1 and not fits(widths):  # one wide row: one line per column instead
        long = [[name, value] for name, value in zip(rows.columns, cells[0])]
        name_w = max(MIN_WIDTH, min(max(map(len, rows.columns)), MAX_HEADER))
        value_w = max(MIN_WIDTH, min(width - 7 - name_w, max(map(len, cells[0]))))
        _print_table(["column", "value"], long, [name_w, value_w], width, title)
        return
    n_key = len([c for c in dict.fromkeys(key) if c in rows.columns])
    fixed = frozenset(j for j, c in enumerate(rows.columns[:n_key]) if c in whole)
    widths = _fit_key(widths, n_key, width, fixed)
    headers = list(rows.columns)

    def kept(ws):
        k = n_key
        while k < len(ws) and fits(ws[: k + 1]):
            k += 1
        return k

    keep = kept(widths)
    if keep < len(widths):  # a column left out: headers wider than their cells take two lines
        longest = [max((len(r[j]) for r in cells), default=0) for j in range(len(headers))]
        split = [h if j < n_key or len(h) <= longest[j] else _two_lines(h)
                 for j, h in enumerate(headers)]
        narrow = [w if j < n_key else min(w, max(longest[j], *map(len, split[j].split("\n"))))
                  for j, w in enumerate(widths)]
        if kept(narrow) > keep:
            headers, widths, keep = split, narrow, kept(narrow)
    if keep == 0:  # even the first column is wider than the terminal: cut it to fit
        keep, widths = 1, [max(MIN_WIDTH, width - 4)]
    elif keep < len(widths):  # use the room left for one more column, cut, if it is readable
        room = width - (sum(widths[:keep]) + 3 * (keep + 1) + 1)
        if room >= max(MIN_WIDTH, min(len(rows.columns[keep]), MAX_HEADER)):  # header whole
            widths = widths[:keep] + [room]
            keep += 1
    _print_table(headers[:keep], [r[:keep] for r in cells], widths[:keep], width, title,
                 wrap=n_key, fixed=fixed)
    hidden = len(rows.columns) - keep
    if hidden:
        stderr.print(wrapped(
            f"note: {hidden} of {len(rows.columns)} columns not shown at width {width} "
            f"({', '.join(rows.columns[keep:keep + 5])}{', ...' if hidden > 5 else ''}); "
            "--format csv or --format json prints every column", width), markup=False,
            highlight=False, soft_wrap=True)


def one_line(text: str) -> str:
    """`text` for one terminal line: whitespace runs (newlines too) one space, any other
    control character written out (`validate.text.visible`), so data in a message can
    neither split it nor reach the terminal as a command."""
    return visible(" ".join(str(text).split()))


def split_list(text: str | None) -> list[str] | None:
    """"a, b" -> ["a", "b"]; empty or None -> None."""
    return [s.strip() for s in text.split(",") if s.strip()] if text else None


def handle_errors(f):
    """Library errors become `Error: ...` on stderr with exit 1 (2 for usage errors); so
    does the import of an optional dependency that is not installed (naming its extra)."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except UsageError as exc:
            click.echo(f"Error: {one_line(str(exc))}", err=True)
            sys.exit(2)
        except BenchPressError as exc:
            for line in getattr(exc, "lines", None) or [str(exc)]:  # BadRowsError: a line each
                click.echo(f"Error: {one_line(line)}", err=True)
            sys.exit(1)
        except ImportError as exc:
            missing = missing_extra(exc)
            if missing is None:
                raise
            click.echo(f"Error: {missing}", err=True)
            sys.exit(1)
    return wrapper


def executor_option(f):
    """`--executor local|ADDRESS` (env: BENCHPRESS_EXECUTOR) -> `executor`, an
    :class:`~benchpress.executor.Executor`: for an address, connected for the command's
    duration (a one-line error, exit 2, when the scheduler cannot be reached) and named on
    stderr with its number of workers; closed afterwards. Goes below `handle_errors` (or
    `matrix_options`), so that its errors become one line."""
    from benchpress.executor import ENV

    @click.option("--executor", "executor_spec", default="local", show_default=True,
                  envvar=ENV, metavar="local|processes[:N]|ADDRESS",
                  help="Where the independent work runs (folds, probe fits, replay dates, "
                       "sources, drift's versions): 'local' (this process), 'processes' or "
                       "'processes:N' (worker processes on this machine: every core, or N), "
                       "or a Dask scheduler address, e.g. tcp://127.0.0.1:8786 "
                       f"(docs/guide/cluster.md; env: {ENV}). The results are the same.")
    @functools.wraps(f)
    def wrapper(*args, executor_spec, **kwargs):
        from benchpress.executor import LocalExecutor, get_executor

        with get_executor(executor_spec) as executor:
            if not isinstance(executor, LocalExecutor):
                stderr.print(f"executor: {executor.describe()}", markup=False)
            return f(*args, executor=executor, **kwargs)
    return wrapper
