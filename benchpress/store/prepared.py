"""Prepared source versions, kept on disk by content: each version is read and checked once.

Preparing one version of a source (its adapter's `read`, then `validate.prepare_source`)
depends only on the file's bytes (its sha256), the contracts (`schemas/`, by tree digest,
less the reviewed verdicts of `cell_reviews.csv`, which act on the assembled observations),
the source info the rows are stamped with (id, url, retrieval date, ingest id), the limits
in force and the package's code. `version_key` names all of them; the result is kept under
that key in `<home>/.cache/prepared/<key>/`: the four frames as Parquet (models, declared
benchmarks, scores, quarantine) and `part.json` with the counts, the benchmark list, the
adapter's notes and the sha256 of every Parquet file. So a build after a new version (or a
through-time build, month after month) prepares only what it has not seen, and a rerun
prepares nothing.

An entry is written into a hidden temporary folder and renamed into place, so a killed
build leaves no half entry; it is served only when `part.json` parses and every file matches
its recorded digest, else it is prepared again. Parquet and JSON only: nothing read here
runs as code. A full build prunes the entries it did not use, so the folder holds one
registry's worth (a few hundred KB per version).
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path

import polars as pl

from benchpress.digest import sha256_of
from benchpress.store.tables import write_folder_atomic
from benchpress.validate.prepare import PreparedSource
from benchpress.version import __version__

__all__ = ["PreparedCache", "version_key", "code_digest"]

_FRAMES = ("models", "benchmarks", "scores", "quarantine")
_MARKER = "part.json"
_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def code_digest() -> str:
    """sha256 of the code that shapes a prepared version: the adapters, the contracts code
    (`validate/`) and the package's top-level modules they lean on (errors, limits, digests,
    YAML, scales), computed once per process. A change in the store, the predictor or a
    front end leaves prepared versions valid."""
    h = hashlib.sha256(__version__.encode())
    files = [*_PACKAGE.glob("*.py"), *(_PACKAGE / "adapters").rglob("*.py"),
             *(_PACKAGE / "validate").rglob("*.py")]
    for f in sorted(files):
        h.update(f.relative_to(_PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def version_key(parts: tuple) -> str:
    """The folder name of one prepared version: 32 hex digits of a sha256 over `parts`
    (contracts digest, adapter, file digest, source info, limits) and `code_digest()`."""
    text = json.dumps([list(map(str, parts)), code_digest()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class PreparedCache:
    """The prepared versions of one workspace, in `folder` (None: keep nothing)."""

    def __init__(self, folder: Path | None):
        self.folder = None if folder is None else Path(folder)

    def get(self, key: str) -> tuple[PreparedSource, list[str]] | None:
        """(prepared source, the adapter's notes) stored under `key`, or None (absent,
        unreadable or not matching its digests)."""
        if self.folder is None:
            return None
        entry = self.folder / key
        try:
            doc = json.loads((entry / _MARKER).read_text(encoding="utf-8"))
            frames = {}
            for name in _FRAMES:
                path = entry / f"{name}.parquet"
                if sha256_of(path) != doc["files"][f"{name}.parquet"]:
                    return None
                frames[name] = pl.read_parquet(path)
            got = PreparedSource(frames["models"], frames["benchmarks"], frames["scores"],
                                 frames["quarantine"], int(doc["rows_read"]),
                                 int(doc["rows_merged"]), [str(b) for b in doc["listed"]])
            notes = [str(n) for n in doc["notes"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError,
                pl.exceptions.PolarsError):
            return None
        return got, notes

    def put(self, key: str, prepared: PreparedSource, notes: list[str]) -> None:
        """Store one prepared version under `key` (atomically; a failure to write is only a
        missed saving, never an error of the build)."""
        if self.folder is None:
            return
        frames = dict(zip(_FRAMES, (prepared.models, prepared.benchmarks, prepared.scores,
                                    prepared.quarantine)))

        def fill(tmp: Path) -> None:
            for name, frame in frames.items():
                frame.write_parquet(tmp / f"{name}.parquet", statistics=False)

        def document(tmp: Path) -> dict:
            return {"rows_read": prepared.rows_read, "rows_merged": prepared.rows_merged,
                    "listed": list(prepared.listed), "notes": list(notes),
                    "files": {f"{n}.parquet": sha256_of(tmp / f"{n}.parquet") for n in frames}}

        try:
            # a cache entry is checked before use: no fsync (a whole entry or none after a
            # killed process; a torn file after a crash of the machine fails its digest)
            write_folder_atomic(self.folder / key, fill, _MARKER, document, durable=False)
        except OSError:
            pass

    def prune(self, keep: set[str]) -> int:
        """Remove every entry but those named in `keep` (the keys a build used); returns
        how many went."""
        if self.folder is None or not self.folder.is_dir():
            return 0
        gone = 0
        for entry in self.folder.iterdir():
            if entry.is_dir() and entry.name not in keep:
                shutil.rmtree(entry, ignore_errors=True)
                gone += 1
        return gone
