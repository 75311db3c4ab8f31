"""Checks on the text users and files give: identifiers, dates, and spreadsheet-safe cells.

An identifier is NFKC-normalised first (a full-width "ｏ３" is the ASCII "o3"), then refused
when it holds what would otherwise be dropped or merged without a word by the id rules in
`normalize`: path separators or traversal (`acme/2`, `../../etc/acme`), invisible characters
(a zero-width space inside `o3-mini-high`), letters outside ASCII (a Cyrillic "о" that looks
like a Latin "o"), control characters, or more than `MAX_ID_LENGTH` characters.

>>> check_identifier("O3 Mini (High)", "model id")
'O3 Mini (High)'
>>> check_date("2026-11-01", "release date")
'2026-11-01'
>>> csv_safe("=cmd|'/c calc'!A1")
"'=cmd|'/c calc'!A1"
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import polars as pl

from benchpress.errors import BadInputError

__all__ = ["MAX_ID_LENGTH", "visible", "identifier_problem", "check_identifier", "date_problem",
           "check_date", "csv_safe", "csv_safe_frame", "MAX_FUTURE_YEARS", "latest_release"]

MAX_ID_LENGTH = 100
#: a release date this many years after its reference day (today, a source's retrieval) is
#: refused as a typo (9999-12-31)
MAX_FUTURE_YEARS = 2

_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _invisible(ch: str) -> bool:
    # Cf: format characters (zero-width space/joiners, BOM, bidi controls); Cc: controls;
    # Zl/Zp: line and paragraph separators. A plain space is allowed (it becomes "-").
    return unicodedata.category(ch) in {"Cf", "Cc", "Zl", "Zp"} or (
        unicodedata.category(ch) == "Zs" and ch != " ")


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    r"""`text` with every control, format and separator character written out as an escape
    (ESC -> ``\x1b``, a newline -> ``\n``, U+202E -> ``\u202e``): what a terminal
    shows of text read from data, which can then neither move the cursor, clear the screen
    nor split a one-line message.

    >>> print(visible("evil\x1b[2Jname\nline\u202e"))
    evil\x1b[2Jname\nline\u202e
    """
    if text.isprintable():
        return text
    return "".join(_ESCAPES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else
                                         f"\\u{ord(ch):04x}") if _invisible(ch) else ch
                   for ch in text)


def identifier_problem(raw: str, *, paths: bool = True) -> str | None:
    """Why `raw` cannot be an id (a short phrase), or None when it is acceptable.

    Parameters
    ----------
    raw : str
        The id as given (before NFKC normalisation).
    paths : bool
        Refuse path separators and "..". A source file's ids may carry a vendor or router
        prefix ("openai/o3"), which `normalize` strips on purpose: pass False for those.

    Returns
    -------
    str or None
        e.g. "contains a path separator '/'"; None for an acceptable id.
    """
    # printable ASCII (almost every id) is its own NFKC form and holds no invisible or
    # look-alike character: only the length and path checks apply (a leaderboard of 4,500
    # models spent seconds looking at each character)
    plain = raw.isascii() and raw.isprintable()
    text = raw if plain else unicodedata.normalize("NFKC", raw)
    if not text.strip():
        return "is empty"
    if len(text) > MAX_ID_LENGTH:
        return f"is {len(text)} characters long (at most {MAX_ID_LENGTH})"
    hidden = [] if plain else [ch for ch in text if _invisible(ch)]
    if hidden:
        return (f"contains an invisible character U+{ord(hidden[0]):04X} "
                f"({unicodedata.name(hidden[0], 'unnamed')})")
    for sep in ("/", "\\") if paths else ():
        if sep in text:
            return f"contains a path separator '{sep}'"
    if paths and ".." in text:
        return "contains '..' (path traversal)"
    foreign = [ch for ch in text if not ch.isascii()]
    if foreign:
        ch = foreign[0]
        return (f"contains the non-ASCII character '{ch}' (U+{ord(ch):04X}, "
                f"{unicodedata.name(ch, 'unnamed')}); ids are ASCII so that look-alike "
                "letters cannot make a second model")
    return None


def check_identifier(raw: str, what: str) -> str:
    """`raw` NFKC-normalised; BadInputError naming `what` when `identifier_problem` finds one."""
    problem = identifier_problem(raw)
    if problem:
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise BadInputError(f"{what} {shown!r} {problem}")
    return unicodedata.normalize("NFKC", raw).strip()


def latest_release(reference: str | dt.date | None = None) -> dt.date:
    """The latest plausible release date: `MAX_FUTURE_YEARS` after `reference` (an ISO date
    or a date; default today; an unreadable one counts as today).

    >>> latest_release("2026-05-01")
    datetime.date(2028, 5, 1)
    """
    if isinstance(reference, str):
        try:
            reference = dt.date.fromisoformat(reference[:10])
        except ValueError:
            reference = None
    day = reference or dt.date.today()
    try:
        return day.replace(year=day.year + MAX_FUTURE_YEARS)
    except ValueError:  # 29 February
        return day.replace(year=day.year + MAX_FUTURE_YEARS, day=28)


def date_problem(text: str, *, latest: dt.date | None = None) -> str | None:
    """Why `text` is not a date YYYY-MM-DD (or YYYY-MM, YYYY), or None when it is one; with
    `latest`, a date after it (its first day, for YYYY and YYYY-MM) is a problem too."""
    m = _DATE.match(text.strip())
    if m:
        year, month, day = (int(g) if g else None for g in m.groups())
        try:
            first = dt.date(year, month or 1, day or 1)
        except ValueError as exc:
            return f"'{text}' is not a calendar date ({exc}); expected format YYYY-MM-DD"
        if latest is not None and first > latest:
            return (f"'{text}' is more than {MAX_FUTURE_YEARS} years ahead (after "
                    f"{latest.isoformat()}); a typo?")
        return None
    return f"'{text}' is not a date; expected format YYYY-MM-DD"


def check_date(text: str, what: str, *, latest: dt.date | None = None) -> str:
    """`text` stripped; BadInputError naming `what` when it is not a valid date (or is
    after `latest`)."""
    problem = date_problem(text, latest=latest)
    if problem:
        raise BadInputError(f"{what}: {problem}")
    return text.strip()


def csv_safe(value):
    """A cell a spreadsheet will not run as a formula: text starting with = + - @ tab or CR
    gets a leading single quote; anything else (numbers included) is returned unchanged.

    The CSV renderer (`cli.common.render`, fmt == "csv") should map this over every String
    column before writing.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_safe_frame(rows: pl.DataFrame) -> pl.DataFrame:
    """`csv_safe` over every String column of `rows` (vectorised), for a CSV writer:
    ``render(...)`` in `cli.common` and `complete --out x.csv` call it before `write_csv`.

    Parameters
    ----------
    rows : pl.DataFrame, shape (n, k)

    Returns
    -------
    pl.DataFrame, shape (n, k)
        The same frame; String cells starting with = + - @ tab or CR gain a leading "'".
    """
    risky = pl.col(pl.String).str.contains(r"^[=+\-@\t\r]")
    return rows.with_columns(pl.when(risky).then(pl.lit("'") + pl.col(pl.String))
                             .otherwise(pl.col(pl.String)).name.keep())
