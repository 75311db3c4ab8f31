"""Content hashes: the sha256 of bytes or of a file, read in fixed-size chunks.

The raw cache, source pins and snapshot manifests all name content by its sha256 hex
digest; this module is the one place that computes it (no other benchpress imports, so
any layer may use it).

>>> sha256_bytes(b"abc")[:16]
'ba7816bf8f01cfea'
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

__all__ = ["sha256_bytes", "sha256_of", "json_digest", "HashingWriter", "CHUNK"]

CHUNK = 1 << 16  # bytes read at a time from files and streams


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of `data` (64 lowercase hex characters)."""
    return hashlib.sha256(data).hexdigest()


def sha256_of(path: Path) -> str:
    """Hex sha256 of the file at `path`, read in chunks (constant memory).

    Only a regular file is read: a FIFO (or socket, or device) under the name raises
    OSError (EINVAL) at once instead of blocking on its open or read for ever."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO: no wait
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)",
                          str(path))
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def json_digest(doc, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``doc`` as JSON with sorted keys
    (values JSON cannot hold are written as ``str``): one name for one content, however
    the dict was built.

    >>> json_digest({"b": 1, "a": 2}) == json_digest({"a": 2, "b": 1})
    True
    """
    return sha256_bytes(json.dumps(doc, sort_keys=True, default=str).encode())[:length]


class HashingWriter:
    """A file opened for binary writing that hashes what passes through it, so a copy or a
    download is read once: ``with HashingWriter(path) as out: out.write(chunk)``, then
    ``out.hexdigest()`` is :func:`sha256_of` of the written file."""

    def __init__(self, path: Path):
        self._file = open(path, "wb")
        self._digest = hashlib.sha256()

    def write(self, chunk: bytes) -> int:
        self._digest.update(chunk)
        return self._file.write(chunk)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def __enter__(self) -> "HashingWriter":
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()
