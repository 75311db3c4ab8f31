"""Limits on untrusted input, in one object: downloads, archives and their members, the files
and registries a command is given.

`InputLimits` holds each bound once, named for what it bounds. Each has a default sized for
real leaderboard exports (the largest is a few MB) and can be lowered (or raised) per process
with an environment variable of the same name in capitals, prefixed ``BENCHPRESS_``
(``BENCHPRESS_MAX_MEMBER_BYTES=1000000``). The environment is read when a bound is applied
(:meth:`InputLimits.from_environment`, by the code that checks it), never at import: a test
or a query process may set a variable and the next check sees it.

>>> InputLimits.from_environment({"BENCHPRESS_MAX_MEMBERS": "7"}).max_members
7
>>> InputLimits.from_environment({"BENCHPRESS_MAX_MEMBERS": "lots"})
Traceback (most recent call last):
benchpress.errors.UsageError: BENCHPRESS_MAX_MEMBERS='lots': expected a positive number
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

from benchpress.errors import BadInputError, UsageError

__all__ = ["InputLimits", "input_limits", "read_capped", "read_capped_text"]


@dataclass(frozen=True)
class InputLimits:
    """The bounds on untrusted input (see the module docstring for the environment).

    Parameters
    ----------
    max_download_bytes : int
        Bytes one download (or one local file copied into the cache) may hold.
    max_member_bytes : int
        Bytes one archive member may unpack to (declared size and bytes actually streamed),
        and one file of a folder source may hold.
    max_total_unpacked : int
        Bytes all members read from one archive may unpack to together.
    max_unpack_ratio : int
        Times its compressed size an archive may unpack to (beyond ``ratio_exempt_bytes``):
        real score tables compress 3-20 times; a small archive of huge, repetitive members
        (1 MB holding 4 x 255 MB) is refused before a member is read, not parsed for minutes.
    ratio_exempt_bytes : int
        Bytes an archive may unpack to whatever its compression ratio.
    max_members : int
        Entries (files and folders) one archive may list.
    max_scores_file_bytes : int
        Bytes one model's scores file (``predict`` / ``compare --scores-file``) may hold.
    max_models_file_bytes, max_models_file_rows : int
        Bytes one file of several new models (``predict --file``) may hold, and the models
        it (or a ``compare --scores-file``) may list.
    download_deadline_s : float
        Seconds one ``fetch`` may take over the network in all, retries included.
    read_timeout_s : float
        Seconds one network read may wait (within the deadline).
    max_redirects : int
        Redirects one download may follow.
    max_ingest_diff_scores : int
        Observations a registry may hold for ``ingest`` to print what it changed, by cause (a
        larger registry is not read twice for it: ``benchpress diff`` gives the same between
        snapshots).
    matrix_max_cells : int
        Cells (models x benchmarks) of the wide ``matrix`` a SQL query may have built whole,
        for a query that reads it twice (one read streams it at any size); larger:
        ``matrix_of``.
    max_fit_models, max_fit_cells : int
        Models and cells (models x benchmarks, observed or not) of the score matrix the
        predictor is given: the largest measured to fit within 10 minutes and 8 GB (100k
        models x 1000 benchmarks). Past them a fit is refused in one line: a million
        single-score models asked 7.5 GB for the dense matrix alone with 1,000 benchmarks,
        and with 100 the fit asked 4.25 GB for one product of the models' factor features.
    max_folds_file_bytes : int
        Bytes one fold file (``--folds``) may hold: the published one is 261 kB; one in id
        form for every cell of a 100,000-cell registry, ten seeds, about 60 MB.
    max_config_bytes : int
        Bytes one settings file (a source config, a replay plan, ``scales.yaml``, the
        ``probes --out`` file that ``fit --probes-from`` reads, a ``--costs`` file or a
        benchmark list such as ``--allowlist``) may hold: the largest in
        the repository is 39 kB; a 146 MB one took 2 s and 830 MB to parse.
    """

    max_download_bytes: int = 256 * 1024 * 1024
    max_member_bytes: int = 256 * 1024 * 1024
    max_total_unpacked: int = 1024 * 1024 * 1024
    max_unpack_ratio: int = 100
    ratio_exempt_bytes: int = 16 * 1024 * 1024
    max_members: int = 10_000
    max_scores_file_bytes: int = 1024 * 1024
    max_models_file_bytes: int = 16 * 1024 * 1024
    max_models_file_rows: int = 10_000
    download_deadline_s: float = 600.0
    read_timeout_s: float = 30.0
    max_redirects: int = 5
    max_ingest_diff_scores: int = 2_000_000
    matrix_max_cells: int = 20_000_000
    max_fit_models: int = 100_000
    max_fit_cells: int = 100_000_000
    max_folds_file_bytes: int = 128 * 1024 * 1024
    max_config_bytes: int = 8 * 1024 * 1024

    @staticmethod
    def variable(name: str) -> str:
        """The environment variable of the bound ``name`` (``max_members`` ->
        ``BENCHPRESS_MAX_MEMBERS``)."""
        return f"BENCHPRESS_{name.upper()}"

    @classmethod
    def from_environment(cls, environ=None) -> "InputLimits":
        """The limits in force: each default, or the positive number its variable in
        ``environ`` (default: this process's environment, read now) gives; UsageError (one
        line) for a variable that is not one."""
        environ = os.environ if environ is None else environ
        given = {}
        for f in fields(cls):
            text = environ.get(cls.variable(f.name))
            if not text:
                continue
            kind = float if isinstance(f.default, float) else int
            try:
                value = kind(text)
            except ValueError:
                value = 0
            if value <= 0:
                raise UsageError(f"{cls.variable(f.name)}={text!r}: expected a positive number")
            given[f.name] = value
        return cls(**given)

    def items(self) -> tuple:
        """Every limit's value, as (name, value) pairs: part of the key under which a
        prepared file is memoized (`store.build.reuse_prepared`), since a file read under
        one cap may be refused under another.

        >>> ("max_members", 10_000) in InputLimits().items()
        True
        """
        return tuple((f.name, getattr(self, f.name)) for f in fields(self))


def input_limits() -> InputLimits:
    """The limits in force now: :meth:`InputLimits.from_environment` of this process."""
    return InputLimits.from_environment()


def read_capped(path, bound: str, what: str, why: str = "") -> bytes:
    """The bytes of the file at ``path``, refused in one line naming it (BadInputError)
    when it holds more than the bound named ``bound`` (a field of :class:`InputLimits`,
    read now); ``what`` names the kind of file in that line, ``why`` adds a reason. At most
    the bound plus one byte is read, so a file that grows after its size was looked at is
    refused too. OSError (unreadable) is the caller's to name."""
    limit = getattr(input_limits(), bound)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        shown = max(size, len(data))
        raise BadInputError(f"{Path(path)}: {shown:,} bytes is more than {what} may hold "
                            f"({limit:,}{'; ' + why if why else ''}; env "
                            f"{InputLimits.variable(bound)})")
    return data


def read_capped_text(path, bound: str, what: str, why: str = "") -> str:
    """:func:`read_capped`, decoded as UTF-8: a file that is not text is refused in one line
    naming it and the first bad byte (BadInputError); OSError is the caller's to name."""
    data = read_capped(path, bound, what, why)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{Path(path)}: not UTF-8 text (byte {exc.start})") from None
