"""Reading and atomically replacing the registry's Parquet tables.

A build writes every table into a fresh sibling folder and then swaps it in with two
renames; `recover` finishes or undoes a swap that a crash interrupted, so a reader always
finds one whole registry (the old one or the new one), never a mix.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from benchpress.errors import RegistryError

__all__ = ["TABLE_NAMES", "write_registry", "write_atomic", "write_json_atomic", "fsync_path",
           "read_table", "readable", "recover", "locked", "registry_exists", "require_registry"]

TABLE_NAMES = ("models", "benchmarks", "scores", "cells", "aliases", "sources", "quarantine")


def _old(registry: Path) -> Path:
    return registry.with_name(registry.name + ".old")


def recover(registry: Path) -> None:
    """Undo a half-finished swap: put the previous registry back if the new one is absent."""
    old = _old(registry)
    if old.exists():
        if registry.exists() and (registry / "build.json").is_file():
            shutil.rmtree(old)
        else:
            if registry.exists():
                shutil.rmtree(registry)
            os.replace(old, registry)
    for leftover in registry.parent.glob(f".{registry.name}.tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)


@contextmanager
def locked(lock_file: Path):
    """An exclusive lock so two builds never interleave."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RegistryError(f"{lock_file}: another build is running; try again when it ends") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_registry(registry: Path, tables: dict[str, pl.DataFrame], manifest: dict,
                   views_sql: str) -> None:
    """Write all tables to a new folder, then swap it in place of `registry`."""
    registry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=registry.parent, prefix=f".{registry.name}.tmp-"))
    try:
        for name in TABLE_NAMES:
            tables[name].write_parquet(tmp / f"{name}.parquet", statistics=False)
        (tmp / "views.sql").write_text(views_sql, encoding="utf-8")
        # build.json last: its presence marks the folder as complete
        (tmp / "build.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                        encoding="utf-8")
        for f in tmp.iterdir():
            fsync_path(f)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = _old(registry)
    if registry.exists():
        os.replace(registry, old)
    os.replace(tmp, registry)
    shutil.rmtree(old, ignore_errors=True)


def readable(registry: Path) -> Path:
    """The folder a reader should use: the registry, or during (or after a crash in) the
    swap's two renames, the previous registry still complete beside it."""
    if not (registry / "build.json").is_file() and (_old(registry) / "build.json").is_file():
        return _old(registry)
    return registry


def fsync_path(path: Path) -> None:
    """Flush a file's data (or a folder's entries) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, writer: Callable[[Path], object]) -> None:
    """Write `path` through `writer(temporary path)`, an fsync and a rename, so a reader (or
    a killed run) never sees half a file; makes the parent folder if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    writer(tmp)
    fsync_path(tmp)
    os.replace(tmp, path)


def write_json_atomic(path: Path, document, *, sort_keys: bool = False) -> None:
    """Write `document` as indented JSON atomically (see `write_atomic`)."""
    text = json.dumps(document, indent=2, sort_keys=sort_keys, default=str) + "\n"
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def registry_exists(registry: Path) -> bool:
    return (readable(registry) / "build.json").is_file()


def require_registry(registry: Path) -> Path:
    """The folder to read (see `readable`); RegistryError when no registry is built yet."""
    if not registry_exists(registry):
        raise RegistryError(f"{registry}: no registry built yet; run `benchpress ingest` or `benchpress build`")
    return readable(registry)


def read_table(registry: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(require_registry(registry) / f"{name}.parquet")
