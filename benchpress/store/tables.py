"""Reading and atomically replacing the registry's Parquet tables.

A build writes every table into a fresh sibling folder and then swaps it in with two
renames (`write_folder_atomic`, which snapshots use too); `recover` finishes or undoes a swap
that a crash interrupted, so a reader always finds one whole registry (the old one or the new
one), never a mix. `read_table` serves a table only when its bytes match the digest its
folder recorded (a snapshot's manifest, a registry's build.json).
"""

from __future__ import annotations

import fcntl
import functools
import glob
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from benchpress.digest import sha256_of
from benchpress.errors import RegistryError

__all__ = ["views_sql", "TABLE_NAMES", "write_registry", "write_folder_atomic", "settle_swap",
           "write_atomic",
           "write_json_atomic", "fsync_path", "read_table", "read_arrow", "table_schema",
           "readable", "recover", "locked", "registry_exists", "require_registry"]

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
    for pattern in (".{}.tmp-*", ".{}.trash-*"):
        for leftover in registry.parent.glob(pattern.format(glob.escape(registry.name))):
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


def write_folder_atomic(target: Path, fill: Callable[[Path], object], marker: str,
                        document: Callable[[Path], dict], *, prefix: str | None = None,
                        durable: bool = True) -> None:
    """Make the folder `target` whole or not at all.

    `fill(tmp)` writes the files into a fresh hidden sibling folder; `document(tmp)` then
    gives the JSON written last as `marker` (a folder holding its marker is complete).
    Every file and the folder are fsynced, and the folder is renamed into place: onto a
    missing `target` with one rename, else by two renames (the old folder waits in
    `<target>.old` until the new one is in, then is renamed aside to a hidden
    `.<target name>.trash-*` and removed). A swap cut short is finished or undone by the
    next write of `target` (`settle_swap`, as `recover` does for the registry), which also
    removes the trash of earlier writes. The temporary folder is removed when any step
    before the renames fails.

    Parameters
    ----------
    target : Path
        The folder to create or replace.
    fill : callable
        Writes the folder's files into the path it is given.
    marker : str
        File name of the completion marker (``build.json``, ``manifest.json``).
    document : callable
        Returns the marker's JSON document, given the filled temporary folder.
    prefix : str, optional
        Name prefix of the temporary folder (default ``.<target name>.tmp-``).
    durable : bool
        Fsync the files and folders (default). A scratch folder or a cache entry that is
        checked before use skips it: still whole or absent after a crash of the process,
        not after one of the machine.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    settle_swap(target, marker)
    tmp = Path(tempfile.mkdtemp(dir=target.parent,
                                prefix=prefix or f".{target.name}.tmp-{os.getpid()}-"))
    try:
        fill(tmp)
        doc = document(tmp)
        (tmp / marker).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if durable:
            for f in tmp.iterdir():
                fsync_path(f)
        os.chmod(tmp, 0o755)
        if durable:
            fsync_path(tmp)
        if not target.exists():
            os.rename(tmp, target)
            if durable:
                fsync_path(target.parent)
            return
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = _old(target)
    try:
        os.replace(target, old)
    except BaseException as exc:  # the old folder could not move aside: nothing changed
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and old.exists():
            raise RegistryError(f"{old}: in the way of replacing {target} (not a folder "
                                "benchpress set aside); move or remove it") from None
        raise
    os.replace(tmp, target)
    if durable:
        fsync_path(target.parent)
    _trash(old, target)


def _trash(folder: Path, target: Path) -> None:
    """Remove `folder` by renaming it aside first (a kill during the removal leaves a
    hidden `.<target name>.trash-*` that the next write of `target` removes, never a
    half-removed `<target>.old` in the way of the next swap)."""
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.trash-"))
    os.replace(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (a write's temporary folder names its writer)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def settle_swap(target: Path, marker: str) -> None:
    """Finish or undo a swap of `write_folder_atomic` into `target` that was cut short, and
    remove the trash of earlier writes: `<target>.old` holding its `marker` is a folder a
    swap set aside (a `<target>.old` without one is not ours, and is left alone: the swap
    then stops on it); with `target` whole it goes, else it is put back. The temporary
    folder of a write whose process is gone (its name carries the writer's pid) goes too."""
    for trash in target.parent.glob(f".{glob.escape(target.name)}.trash-*"):
        shutil.rmtree(trash, ignore_errors=True)
    for tmp in target.parent.glob(f".{glob.escape(target.name)}.tmp-*"):
        writer = re.match(r"\d+-", tmp.name[len(target.name) + 6:])
        if writer and not _alive(int(writer.group()[:-1])):  # a killed write's folder
            shutil.rmtree(tmp, ignore_errors=True)
    old = _old(target)
    if old.is_symlink() or not (old / marker).is_file():
        return
    if (target / marker).is_file():
        _trash(old, target)
        return
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        _trash(target, target)
    os.replace(old, target)


def write_registry(registry: Path, tables: dict[str, pl.DataFrame], manifest: dict,
                   views_sql: str, *, durable: bool = True) -> None:
    """Write all tables to a new folder, then swap it in place of `registry`.

    `build.json` (the marker) is `manifest` plus ``files``: the sha256 of every file written,
    which `read_table` checks before it serves a table. `views.sql` is a reference copy of
    the package's view definitions; nothing ever executes it. `durable=False`: a scratch
    registry, not fsynced (see `write_folder_atomic`).
    """
    def fill(tmp: Path) -> None:
        for name in TABLE_NAMES:
            tables[name].write_parquet(tmp / f"{name}.parquet", statistics=False)
        (tmp / "views.sql").write_text(views_sql, encoding="utf-8")

    def document(tmp: Path) -> dict:
        return dict(manifest, files={f.name: sha256_of(f) for f in sorted(tmp.iterdir())})

    write_folder_atomic(registry, fill, "build.json", document, durable=durable)


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


@functools.cache
def views_sql() -> str:
    """The SQL of the registry's views, shipped with the package (`store/views.sql`): the
    only SQL the sandbox runs besides the user's query, read once per process."""
    return Path(__file__).with_name("views.sql").read_text(encoding="utf-8")


def require_registry(registry: Path) -> Path:
    """The folder to read (see `readable`); RegistryError when no registry is built yet."""
    if not registry_exists(registry):
        raise RegistryError(f"{registry}: no registry built yet; run `benchpress ingest` or `benchpress build`")
    return readable(registry)


# sha256 of files already hashed in this process, by (path, size, mtime_ns, inode,
# ctime_ns): a rewrite in place that puts the size and the mtime back still changes the
# ctime, which no user call can set
_DIGESTS: dict[tuple, str] = {}


def _expected_digests(folder: Path) -> tuple[str, dict[str, str]]:
    """(label, {file name: sha256}) for a registry or snapshot folder.

    A snapshot's `manifest.json` holds the digest of every table it froze; a registry's
    `build.json` holds them under ``files``. A `build.json` without them (removed, or
    written by a version before digests were recorded) is refused: serving its tables
    unchecked would turn every check off.
    """
    manifest = folder / "manifest.json"
    if manifest.is_file():
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
            label = f"snapshot {doc['id']}"
            return label, {entry["file"]: entry["file_sha256"] for entry in doc["tables"].values()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise RegistryError(f"{manifest}: unreadable manifest ({exc}); restore it with "
                                "`dvc checkout snapshots`") from None
    try:
        files = json.loads((folder / "build.json").read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError, RecursionError) as exc:
        raise RegistryError(f"{folder / 'build.json'}: unreadable ({exc}); rebuild with "
                            "`benchpress build`") from None
    if not isinstance(files, dict) or not files:
        raise RegistryError(f"{folder / 'build.json'}: lists no file digests ('files'), so its "
                            "tables cannot be checked; rebuild with `benchpress build`")
    return f"registry {folder}", files


def _verified(registry: Path, name: str) -> tuple[bytes, str, str]:
    """(bytes, label, restore hint) of one table file, checked against its recorded digest
    (hashed once per process for the same path, size, mtime, inode and ctime)."""
    folder = require_registry(registry)
    label, expected = _expected_digests(folder)
    path = folder / f"{name}.parquet"
    restore = ("restore it with `dvc checkout snapshots`" if label.startswith("snapshot")
               else "rebuild with `benchpress build`")
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except OSError as exc:
        raise RegistryError(f"{label}: {path.name} cannot be read ({exc.strerror}); {restore}") from None
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    digest = _DIGESTS.get(key) or hashlib.sha256(data).hexdigest()
    if digest != expected.get(path.name):
        raise RegistryError(f"{label}: {path.name} does not match its manifest digest "
                            f"(damaged or edited: {path}); {restore}")
    _DIGESTS[key] = digest
    return data, label, restore


def _decoded(read, name: str, label: str, restore: str):
    try:
        return read()
    except (Exception, pl.exceptions.PanicException) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RegistryError(f"{label}: {name}.parquet is not readable Parquet ({reason}); "
                            f"{restore}") from None


def read_table(registry: Path, name: str, columns: list[str] | None = None) -> pl.DataFrame:
    """One table of a registry or snapshot folder, checked against its recorded digest.

    The bytes read are the bytes hashed and parsed, so what is served is what was checked.
    A file is hashed once per process: later reads of the same (path, size, mtime, inode,
    ctime) reuse the digest. `columns` decodes only those columns (the file is still checked whole).

    Raises
    ------
    RegistryError
        No registry yet; the file is missing, differs from its manifest digest, or cannot
        be decoded as Parquet (always one line).
    """
    data, label, restore = _verified(registry, name)
    return _decoded(lambda: pl.read_parquet(io.BytesIO(data), columns=columns), name, label,
                    restore)


def read_arrow(registry: Path, name: str):
    """`read_table` as a pyarrow Table, decoded straight from the checked bytes (for DuckDB,
    which reads Arrow in place: no polars frame beside it, no conversion; 12 million scores
    took 3.4 GB more through polars)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, label, restore = _verified(registry, name)
    return _decoded(lambda: pq.read_table(pa.py_buffer(data)), name, label, restore)


def table_schema(registry: Path, name: str) -> dict[str, pl.DataType]:
    """The column names and types of one table, from its footer, once the file's bytes have
    been checked as in `read_table` (the rows are not decoded)."""
    data, label, restore = _verified(registry, name)
    return _decoded(lambda: dict(pl.read_parquet_schema(io.BytesIO(data))), name, label, restore)
