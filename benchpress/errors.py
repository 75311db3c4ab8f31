"""Exceptions raised by the library; the CLI turns them into one-line messages."""

from __future__ import annotations

import errno
import os
import re
import sys

__all__ = [
    "BenchPressError",
    "BadInputError", "TooLittleData",
    "UnknownFormatError",
    "BadRowsError",
    "FetchError",
    "RegistryError",
    "SnapshotNotFound",
    "NotFittedError",
    "UsageError",
    "MissingExtraError",
    "missing_extra",
    "import_extra",
    "EXIT_BAD_INPUT",
    "EXIT_USAGE",
    "EXIT_LANDED_WITH_REJECTS",
    "describe_os_error",
    "run_script",
    "shown", "typed_number",
    "listed",
    "as_os_error",
]

EXIT_BAD_INPUT = 1            # refused: nothing changed (or a fault: disk full, read-only)
EXIT_USAGE = 2                # arguments that do not fit together
EXIT_LANDED_WITH_REJECTS = 3  # ingest: the good rows landed, the rest are in quarantine


class BenchPressError(Exception):
    """Base class for every error the library raises on purpose."""


class BadInputError(BenchPressError):
    """An input file or value breaks a contract (names the file, row and field)."""


class BadRowsError(BadInputError):
    """Several rows of one file break its contract: one line each (`lines`)."""

    def __init__(self, lines: list[str]):
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


class TooLittleData(BadInputError):
    """The matrix holds too little data for what was asked (intervals on one or two models)."""


class UnknownFormatError(BadInputError):
    """No adapter recognises the file."""


class FetchError(BenchPressError):
    """A download failed, was too large, or did not match its pinned hash."""


class RegistryError(BenchPressError):
    """The registry is missing, locked or inconsistent."""


class SnapshotNotFound(RegistryError):
    """No snapshot matches the given id or tag."""


class NotFittedError(BenchPressError):
    """A predictor was used before `fit`."""


class UsageError(BenchPressError):
    """Arguments that do not fit together."""


class MissingExtraError(BenchPressError, ImportError):
    """A feature needs an optional part of the distribution (a pip extra) not installed."""


#: the optional dependencies (top-level import names) and the extra of pyproject.toml that
#: brings each; the core (`pip install benchpress-llm`) predicts from the pre-fit model
EXTRA_OF = {
    "duckdb": "registry", "pyarrow": "registry", "pandera": "registry", "dvc": "registry",
    "scipy": "registry",
    "starlette": "app", "uvicorn": "app", "jinja2": "app", "plotly": "app",
    "matplotlib": "report",
    "distributed": "dask", "dask": "dask",
}


def missing_extra(exc: BaseException) -> MissingExtraError | None:
    """The one-line error for `exc` when it is the import of an optional dependency that is
    not installed (else None): which extra brings it, and the command that installs it.

    >>> print(missing_extra(ModuleNotFoundError("No module named 'duckdb'", name="duckdb")))
    this needs duckdb, from the 'registry' extra: pip install 'benchpress-llm[registry]'
    >>> missing_extra(ModuleNotFoundError("No module named 'numpyy'", name="numpyy")) is None
    True
    """
    if not isinstance(exc, ImportError) or isinstance(exc, MissingExtraError):
        return exc if isinstance(exc, MissingExtraError) else None
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return MissingExtraError(f"this needs {top}, from the '{extra}' extra: "
                             f"pip install 'benchpress-llm[{extra}]'", name=top)


def import_extra(name: str):
    """The module `name` of an optional dependency, imported (where it is first needed, as
    the core install lacks it); not installed: MissingExtraError naming the extra.

    >>> import_extra("json").dumps(1)
    '1'
    """
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        raise missing from None


_OS_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EFBIG: "file too large (a file size limit such as `ulimit -f`)",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EDQUOT: "disk quota exceeded",
}


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters with an ellipsis,
    so a huge value typed or read cannot flood the one line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def typed_number(value) -> float:
    """``float(value)`` for a number a user wrote, refusing JSON's ``true`` / ``false``
    (which ``float`` reads as 1 and 0) with the TypeError ``float`` gives other non-numbers,
    so a score or cost of ``true`` is an error, never a silent 1.

    >>> typed_number("71.2"), typed_number(3)
    (71.2, 3.0)
    >>> typed_number(True)
    Traceback (most recent call last):
    TypeError: True is not a number
    """
    if isinstance(value, bool):
        raise TypeError(f"{value!r} is not a number")
    return float(value)


def listed(names, limit: int = 10, *, quote: bool = True) -> str:
    """`names` for a one-line message: the first `limit`, each cut (`shown`), then how many
    more, so that a list of 50,000 unknown names stays one short line.

    >>> listed(["a", "b", "c"], 2)
    "'a', 'b' ... and 1 more"
    """
    names = list(names)
    head = [shown(n, 40) if quote else str(n)[:40] for n in names[:limit]]
    more = len(names) - len(head)
    return ", ".join(head) + (f" ... and {more:,} more" if more > 0 else "")


def describe_os_error(exc: OSError) -> str:
    """One line naming the path and the operating system's reason.

    >>> describe_os_error(OSError(28, "No space left on device", "/ws/registry/x.parquet"))
    'could not write /ws/registry/x.parquet: no space left on the device (ENOSPC)'
    """
    reason = _OS_REASONS.get(exc.errno) or (exc.strerror or str(exc)).strip()
    code = errno.errorcode.get(exc.errno) if exc.errno is not None else None
    writing = exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EROFS, errno.EDQUOT)
    # a copy's error names (source, destination): a write fault is the destination's
    where = exc.filename2 if writing and exc.filename2 is not None else exc.filename
    if where is None:  # polars and friends put the path in the text only
        text = str(exc)
        where = next((w.strip("'\":,") for w in text.split() if os.sep in w), None)
    verb = "write" if writing else "access"
    return (f"could not {verb} {where or 'a file'}: {reason}"
            + (f" ({code})" if code else ""))


_OS_ERROR_TEXT = re.compile(r"\(os error (\d+)\)")


def as_os_error(exc: BaseException, path: os.PathLike | str | None = None) -> OSError | None:
    """`exc` as an OSError when it is one, or wraps one in its text (polars reports a failed
    write as ``ComputeError: ... File too large (os error 27)``); None otherwise.

    >>> as_os_error(RuntimeError("parquet: underlying IO error: File too large (os error 27)"), "/r").errno
    27
    """
    if isinstance(exc, OSError):
        return exc
    found = _OS_ERROR_TEXT.search(str(exc))
    if not found:
        return None
    code = int(found.group(1))
    return OSError(code, os.strerror(code), None if path is None else str(path))


def run_script(main, name: str) -> None:
    """Run a script's ``main()`` (``benchmarks/``) as a command runs: a BenchPressError (a
    mistyped parameter, no snapshot here) is one line ``name: message``, exit 1; Ctrl-C one
    line, exit 130 (such scripts only print)."""
    try:
        main()
    except BenchPressError as exc:
        sys.exit(f"{name}: {exc}")
    except KeyboardInterrupt:
        print(f"{name}: interrupted; nothing was written", file=sys.stderr)
        sys.exit(130)
