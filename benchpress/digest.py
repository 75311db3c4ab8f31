"""Content hashes: the sha256 of bytes or of a file, read in fixed-size chunks.

The raw cache, source pins and snapshot manifests all name content by its sha256 hex
digest; this module is the one place that computes it (no other benchpress imports, so
any layer may use it).

>>> sha256_bytes(b"abc")[:16]
'ba7816bf8f01cfea'
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["sha256_bytes", "sha256_of", "CHUNK"]

CHUNK = 1 << 16  # bytes read at a time from files and streams


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of `data` (64 lowercase hex characters)."""
    return hashlib.sha256(data).hexdigest()


def sha256_of(path: Path) -> str:
    """Hex sha256 of the file at `path`, read in chunks (constant memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
