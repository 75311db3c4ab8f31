"""Limits on untrusted input, in one place: downloads, archives and their members.

Each limit has a default sized for real leaderboard exports (the largest is a few MB) and can
be lowered (or raised) per process with an environment variable of the same name prefixed
``BENCHPRESS_`` (``BENCHPRESS_MAX_MEMBER_BYTES=1000000``). Code reads them as
``limits.NAME`` at call time, so tests may also ``monkeypatch.setattr(limits, NAME, ...)``.
"""

from __future__ import annotations

import os

from benchpress.errors import UsageError

__all__ = ["MAX_DOWNLOAD_BYTES", "MAX_MEMBER_BYTES", "MAX_TOTAL_UNPACKED", "MAX_UNPACK_RATIO",
           "RATIO_EXEMPT_BYTES", "MAX_MEMBERS",
           "MAX_SCORES_FILE_BYTES", "DOWNLOAD_DEADLINE_S", "READ_TIMEOUT_S", "MAX_REDIRECTS"]


def _env(name: str, default: float, kind=int):
    text = os.environ.get(f"BENCHPRESS_{name}")
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"BENCHPRESS_{name}={text!r}: expected a positive number") from None
    if value <= 0:
        raise UsageError(f"BENCHPRESS_{name}={text!r}: expected a positive number")
    return value


#: bytes one download (or one local file copied into the cache) may hold
MAX_DOWNLOAD_BYTES: int = _env("MAX_DOWNLOAD_BYTES", 256 * 1024 * 1024)
#: bytes one archive member may unpack to (declared size and bytes actually streamed)
MAX_MEMBER_BYTES: int = _env("MAX_MEMBER_BYTES", 256 * 1024 * 1024)
#: bytes all members read from one archive may unpack to together
MAX_TOTAL_UNPACKED: int = _env("MAX_TOTAL_UNPACKED", 1024 * 1024 * 1024)
#: times its compressed size an archive may unpack to (beyond `RATIO_EXEMPT_BYTES`): real
#: score tables compress 3-20 times; a small archive of huge, repetitive members (1 MB
#: holding 4 x 255 MB) is refused before a member is read, not parsed for minutes
MAX_UNPACK_RATIO: int = _env("MAX_UNPACK_RATIO", 100)
#: bytes an archive may unpack to whatever its compression ratio
RATIO_EXEMPT_BYTES: int = _env("RATIO_EXEMPT_BYTES", 16 * 1024 * 1024)
#: entries (files and folders) one archive may list
MAX_MEMBERS: int = _env("MAX_MEMBERS", 10_000)
#: bytes one model's scores file (`predict` / `compare --scores-file`) may hold
MAX_SCORES_FILE_BYTES: int = _env("MAX_SCORES_FILE_BYTES", 1024 * 1024)
#: bytes one file of several new models (`predict --file`) may hold, and the models it may list
MAX_MODELS_FILE_BYTES: int = _env("MAX_MODELS_FILE_BYTES", 16 * 1024 * 1024)
MAX_MODELS_FILE_ROWS: int = _env("MAX_MODELS_FILE_ROWS", 10_000)
__all__ += ["MAX_MODELS_FILE_BYTES", "MAX_MODELS_FILE_ROWS"]
#: seconds one `fetch` may take over the network in all, retries included
DOWNLOAD_DEADLINE_S: float = _env("DOWNLOAD_DEADLINE_S", 600.0, float)
#: seconds one network read may wait (within the deadline)
READ_TIMEOUT_S: float = _env("READ_TIMEOUT_S", 30.0, float)
#: redirects one download may follow
MAX_REDIRECTS: int = _env("MAX_REDIRECTS", 5)
#: observations a registry may hold for `ingest` to print what it changed, by cause (a larger
#: registry is not read twice for it: `benchpress diff` gives the same between snapshots)
MAX_INGEST_DIFF_SCORES: int = _env("MAX_INGEST_DIFF_SCORES", 2_000_000)
__all__ += ["MAX_INGEST_DIFF_SCORES"]
#: cells (models x benchmarks) of the wide `matrix` a SQL query may have built whole, for a
#: query that reads it twice (one read streams it at any size); larger: `matrix_of`
MATRIX_MAX_CELLS: int = _env("MATRIX_MAX_CELLS", 20_000_000)
__all__ += ["MATRIX_MAX_CELLS"]
#: models and cells (models x benchmarks, observed or not) of the score matrix the
#: predictor is given: the largest measured to fit within 10 minutes and 8 GB (100k models
#: x 1000 benchmarks, README "Scale"). Past them a fit is refused in one line: a million
#: single-score models asked 7.5 GB for the dense matrix alone with 1,000 benchmarks, and
#: with 100 the fit asked 4.25 GB for one product of the models' factor features
MAX_FIT_MODELS: int = _env("MAX_FIT_MODELS", 100_000)
MAX_FIT_CELLS: int = _env("MAX_FIT_CELLS", 100_000_000)
__all__ += ["MAX_FIT_MODELS", "MAX_FIT_CELLS"]
#: bytes one YAML settings file (a source config, a replay plan, `scales.yaml`) may hold: the
#: largest in the repository is 39 kB; a 146 MB one took 2 s and 830 MB to parse
MAX_CONFIG_BYTES: int = _env("MAX_CONFIG_BYTES", 8 * 1024 * 1024)
__all__ += ["MAX_CONFIG_BYTES"]


def current() -> tuple:
    """Every limit's value now, as (name, value) pairs: part of the key under which a
    prepared file is memoized (`store.build.reuse_prepared`), since a file read under one
    cap may be refused under another.

    >>> ("MAX_MEMBERS", MAX_MEMBERS) in current()
    True
    """
    return tuple((name, globals()[name]) for name in __all__ if name.isupper())


__all__ += ["current"]
