"""Frozen, content-addressed registry versions under `snapshots/`.

A snapshot is a folder `snapshots/<id>/` holding a byte-for-byte copy of the registry's
Parquet tables (plus `build.json`, so it reads like a registry folder) and a `manifest.json`:
id, tags, creation time, the content hash, file hash and row count of every table, the
sources with their raw-file hashes, and the registry's headline figures. Reading a table
checks its file hash (`tables.read_table`); no SQL text is kept in or run from a snapshot
(a `views.sql` left by older versions is ignored: the views come from the package).

The id is the first 16 hex digits of a sha256 over the tables' *content* (each table sorted
on all its columns and dumped as CSV, with its schema), so the same data gives the same id and
one changed cell gives a new one. Columns that record when a file was fetched
(`retrieved_at`) are left out of the hash: fetching the same file again is not new data.

Creation is atomic (`tables.write_folder_atomic`): the files are written into
`snapshots/.tmp-*`, fsynced, and the folder is renamed into place as the last step; a run killed half-way leaves only a hidden temporary
folder, which the next `create_snapshot` removes. The data of an existing snapshot never
changes; only its manifest's `tags` list changes (rewritten atomically).

A tag names one snapshot: tagging another snapshot with a tag in use is refused unless the
tag is moved (`move_tag=True`: added to the new snapshot, then taken off the old one), and
a tag found on two snapshots (left by older versions) is an error naming both, never a
silent pick.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.clock import manifest_time
from benchpress.digest import json_digest, sha256_of
from benchpress.errors import RegistryError, SnapshotNotFound, UsageError
from benchpress.home import Home
from benchpress.store.journal import settle
from benchpress.store.tables import (
    TABLE_NAMES, locked, read_table, recover, registry_exists, write_folder_atomic,
    write_json_atomic,
)
from benchpress.version import __version__

__all__ = [
    "Snapshot",
    "create_snapshot",
    "freeze",
    "add_tag",
    "creation_time",
    "list_snapshots",
    "get_snapshot",
    "tagged",
    "resolve_snapshot",
    "verify_snapshot",
    "table_digest",
    "content_id",
    "registry_metrics",
]

MANIFEST = "manifest.json"
_EXTRA_FILES = ("build.json",)
_VOLATILE = {"retrieved_at"}           # when a file was fetched, not what it says
_RESERVED = {"latest", "current"}
_DIGEST_ROWS = 200_000                 # rows per CSV slice hashed by `table_digest`
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$")


@dataclass(frozen=True)
class Snapshot:
    """One snapshot folder and its manifest."""

    id: str
    path: Path
    created_at: str
    tags: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    manifest: dict = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> "Snapshot":
        try:
            doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            return cls(doc["id"], folder, doc["created_at"], list(doc.get("tags", [])),
                       dict(doc.get("counts", {})), doc)
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RegistryError(f"{folder / MANIFEST}: unreadable manifest ({exc}); restore it "
                                "with `dvc checkout snapshots`") from None


def table_digest(df: pl.DataFrame) -> str:
    """sha256 of a table's content: its schema plus its rows sorted on every column.

    Row order and Parquet encoding details do not matter; a changed value, row or column
    does. Columns in `_VOLATILE` are left out.
    """
    df = df.select([c for c in df.columns if c not in _VOLATILE])
    h = hashlib.sha256(json.dumps([[c, str(t)] for c, t in df.schema.items()]).encode())
    if df.width and df.height:
        for k, chunk in enumerate(_sorted_chunks(df)):
            buf = io.BytesIO()  # the CSV's UTF-8 bytes, without a str copy of them
            chunk.write_csv(buf, include_header=k == 0)
            h.update(buf.getbuffer())
    return h.hexdigest()


def _sorted_chunks(df: pl.DataFrame):
    """The rows of `df` sorted on all its columns (nulls last), as consecutive frames of
    about `_DIGEST_ROWS` rows: their CSVs (the header once) are the bytes of one
    ``df.sort(df.columns).write_csv()``, without a sorted copy of the whole table.

    The rows are ordered on the first column alone (an index, not a copy); a chunk ends
    where that column's value changes, so sorting each chunk on every column gives the
    global order. A value that fills more than a chunk makes a larger chunk.
    """
    first = df.columns[0]
    order = df[first].arg_sort(nulls_last=True)
    keys = df[first].gather(order)
    starts = keys.ne_missing(keys.shift(1)).fill_null(True).arg_true().to_numpy()
    starts = np.append(starts, df.height)
    starts[0] = 0
    lo = 0
    while lo < df.height:
        hi = int(starts[np.searchsorted(starts, lo + _DIGEST_ROWS)]) if lo + _DIGEST_ROWS < df.height \
            else df.height
        yield df[order[lo:hi]].sort(df.columns, nulls_last=True)
        lo = hi


def content_id(digests: dict[str, str]) -> str:
    """The snapshot id: 16 hex digits of a sha256 over the per-table digests."""
    return json_digest({name: digests[name] for name in TABLE_NAMES})


def registry_metrics(folder: Path) -> dict:
    """Headline figures of a registry (or snapshot) folder; what `metrics/registry.json` holds.

    Returns a flat-ish dict: `n_models`, `n_models_scored` (those with at least one cell:
    the rows of the score matrix that predictors fit), `n_benchmarks`, `n_cells`,
    `n_scores`, `n_sources` (source ids), `n_source_versions` (their versions: one source
    ingested twice is 1 source, 2 versions), `n_quarantined`, `n_conflicting_cells`, `fill` (cells over
    models x benchmarks) and `per_source` (scores per source).
    """
    return _metrics({name: read_table(folder, name) for name in TABLE_NAMES})


def _metrics(tables: dict[str, pl.DataFrame]) -> dict:
    models, benchmarks, cells, scores = (tables[n] for n in ("models", "benchmarks", "cells", "scores"))
    per_source = scores.group_by("source_id").len().sort("source_id")
    size = models.height * benchmarks.height
    return {
        "n_models": models.height,
        "n_models_scored": cells["model_id"].n_unique() if cells.height else 0,
        "n_benchmarks": benchmarks.height,
        "n_cells": cells.height,
        "n_scores": scores.height,
        "n_sources": tables["sources"]["source_id"].n_unique(),
        "n_source_versions": tables["sources"].height,  # a row per version of a source
        "n_quarantined": tables["quarantine"].height,
        "n_conflicting_cells": int((cells["n_disagreeing"] > 0).sum()) if cells.height else 0,
        "fill": round(cells.height / size, 6) if size else 0.0,
        "per_source": dict(zip(per_source["source_id"], per_source["len"])),
    }


def _digested(folder: Path) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    """(tables, content digests) of a registry folder, read one table at a time; of the
    large tables only what the manifest needs is kept (`cells`: `model_id`, `n_disagreeing`;
    `scores`: `source_id`; their row counts are those of the full tables)."""
    keep = {"cells": ["model_id", "n_disagreeing"], "scores": ["source_id"]}
    tables, digests = {}, {}
    for name in TABLE_NAMES:
        df = read_table(folder, name)
        digests[name] = table_digest(df)
        tables[name] = df.select(keep[name]) if name in keep else df
        del df
    return tables, digests


def _check_tag(tag: str) -> None:
    if not _TAG.match(tag) or tag.lower() in _RESERVED:
        raise UsageError(f"tag '{tag}' is not allowed: use letters, digits, '.', '_' or '-' "
                         f"(at most 64), and not {' or '.join(sorted(_RESERVED))}")


def creation_time(home: Home, at: datetime | None = None, *, after_all: bool = True) -> str:
    """The `created_at` of a snapshot made now: `at` (default `manifest_time()`: now, or
    SOURCE_DATE_EPOCH), moved a microsecond past every snapshot already there
    (`after_all`), so that `latest` is the one made now even when two are dated alike; or
    with `after_all=False` (a snapshot of the registry as it stood on a past day, see
    `store.history`) only past the snapshots of the same day at or after `at`."""
    at = manifest_time() if at is None else at
    for s in list_snapshots(home):
        then = datetime.fromisoformat(s.created_at)
        then = then if then.tzinfo else then.replace(tzinfo=timezone.utc)
        if after_all or (then >= at and then.date() == at.date()):
            at = max(at, then + timedelta(microseconds=1))
    return at.isoformat(timespec="microseconds")


def _manifest(sid: str, folder: Path, tables: dict[str, pl.DataFrame], digests: dict[str, str],
              tag: str | None, created_at: str, inputs: str | None = None) -> dict:
    return {
        **({"inputs": inputs} if inputs else {}),
        "id": sid,
        "tags": [tag] if tag else [],
        "created_at": created_at,
        "benchpress_version": __version__,
        "tables": {
            name: {"content_sha256": digests[name],
                   "file": f"{name}.parquet",
                   "file_sha256": sha256_of(folder / f"{name}.parquet")}
            for name in TABLE_NAMES
        },
        "counts": {name: tables[name].height for name in TABLE_NAMES},
        "metrics": _metrics(tables),
        "sources": tables["sources"].select("source_id", "adapter", "url", "path", "sha256", "retrieved_at",
                                  "licence").to_dicts(),
    }


def _clean_leftovers(snapshots: Path) -> None:
    for leftover in snapshots.glob(".tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def tagged(home: Home, tag: str) -> list[Snapshot]:
    """The snapshots whose manifest carries `tag` (one, or none; more only from old versions)."""
    return [s for s in list_snapshots(home) if tag in s.tags]


def _set_tags(snapshot: Snapshot, tags: list[str]) -> Snapshot:
    write_json_atomic(snapshot.path / MANIFEST, dict(snapshot.manifest, tags=tags), sort_keys=True)
    return Snapshot.load(snapshot.path)


def create_snapshot(home: Home, *, tag: str | None = None,
                    move_tag: bool = False) -> tuple[Snapshot, bool]:
    """Freeze `home.registry` into `home.snapshots/<id>/`.

    Parameters
    ----------
    home : Home
        The workspace; its registry must be built.
    tag : str, optional
        A name for the version. A tag names one snapshot: a tag already on another
        snapshot is refused unless `move_tag`.
    move_tag : bool
        Move `tag` here from the snapshot that has it (`tagged` tells which, beforehand).

    Returns
    -------
    snapshot : Snapshot
    created : bool
        False when a snapshot with the same content already existed; then only `tag` (if
        new) is added to its manifest.

    Raises
    ------
    RegistryError
        No registry yet, or another build or snapshot holds the lock.
    UsageError
        The tag is malformed or reserved (`latest`, `current`), or names another snapshot
        and `move_tag` is False (nothing is written then).
    """
    if tag is not None:
        _check_tag(tag)
    with locked(home.lock):
        recover(home.registry)
        settle(home)  # a killed add-model: releases.csv catches up with the registry first
        if not registry_exists(home.registry):
            raise RegistryError(f"{home.registry}: no registry built yet; run `benchpress build`")
        return freeze(home, home.registry, tag=tag, move_tag=move_tag)


def freeze(home: Home, folder: Path, *, tag: str | None = None, move_tag: bool = False,
           created_at: str | None = None, inputs: str | None = None) -> tuple[Snapshot, bool]:
    """`create_snapshot` of the registry folder `folder` (a built registry: its tables and
    `build.json`) for a caller that holds the workspace's lock; `created_at` (default
    `creation_time(home)`) dates a new snapshot, and `inputs` (a digest of what the tables
    were made from, see `store.history`) is recorded in its manifest."""
    if tag is not None:
        _check_tag(tag)
    home.snapshots.mkdir(parents=True, exist_ok=True)
    _clean_leftovers(home.snapshots)
    tables, digests = _digested(folder)
    sid = content_id(digests)
    target = home.snapshots / sid
    holders = [s for s in tagged(home, tag) if s.id != sid] if tag else []
    if holders and not move_tag:
        raise UsageError(f"tag '{tag}' already names snapshot "
                         + ", ".join(s.id for s in holders)
                         + "; choose another tag, or --move-tag to move it to this one")
    if (target / MANIFEST).is_file():
        return add_tag(home, Snapshot.load(target), tag), False
    if target.exists():
        raise RegistryError(f"{target}: a folder without {MANIFEST} is in the way; "
                            "move it out of snapshots/ and try again")

    def fill(tmp: Path) -> None:
        for name in (*(f"{t}.parquet" for t in TABLE_NAMES), *_EXTRA_FILES):
            shutil.copyfile(folder / name, tmp / name)

    created_at = created_at or creation_time(home)
    write_folder_atomic(target, fill, MANIFEST,
                        lambda tmp: _manifest(sid, tmp, tables, digests, tag, created_at,
                                              inputs),
                        prefix=".tmp-")
    for old in holders:  # only after the new holder has it: a tag is never lost
        _set_tags(old, [t for t in old.tags if t != tag])
    return Snapshot.load(target), True


def add_tag(home: Home, snapshot: Snapshot, tag: str | None) -> Snapshot:
    """`snapshot` with `tag` added, taken off any other snapshot that had it (first added
    here, then taken off: a tag is never lost); for a caller that holds the lock."""
    if not tag:
        return snapshot
    _check_tag(tag)
    holders = [s for s in tagged(home, tag) if s.id != snapshot.id]
    if tag not in snapshot.tags:
        snapshot = _set_tags(snapshot, [*snapshot.tags, tag])
    for old in holders:
        _set_tags(old, [t for t in old.tags if t != tag])
    return snapshot


def list_snapshots(home: Home) -> list[Snapshot]:
    """Every complete snapshot, oldest first (half-written temporary folders are skipped)."""
    if not home.snapshots.is_dir():
        return []
    found = [Snapshot.load(d) for d in home.snapshots.iterdir()
             if d.is_dir() and not d.name.startswith(".") and (d / MANIFEST).is_file()]
    return sorted(found, key=lambda s: (s.created_at, s.id))


def get_snapshot(home: Home, ref: str) -> Snapshot:
    """The snapshot named by `ref`: `latest`, an id, a tag (which must name one snapshot)
    or a unique id prefix."""
    snapshots = list_snapshots(home)
    where = f"in {home.snapshots}; `benchpress snapshot list` shows them"
    if not snapshots:
        raise SnapshotNotFound(f"snapshot '{ref}' not found: no snapshots yet {where}")
    if ref == "latest":
        return snapshots[-1]
    for s in reversed(snapshots):
        if s.id == ref:
            return s
    holders = [s for s in snapshots if ref in s.tags]
    if len(holders) > 1:
        raise UsageError(f"tag '{ref}' is on {len(holders)} snapshots: "
                         + ", ".join(s.id for s in holders)
                         + "; name one by id (`snapshot create --tag "
                         + f"{ref} --move-tag` puts it on the current registry's snapshot alone)")
    if holders:
        return holders[0]
    prefixed = [s for s in snapshots if len(ref) >= 4 and s.id.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        raise UsageError(f"snapshot '{ref}' is ambiguous: "
                         + ", ".join(s.id for s in prefixed) + "; give more digits")
    raise SnapshotNotFound(f"snapshot '{ref}' not found {where}")


def resolve_snapshot(home: Home, ref: str | None) -> Path:
    """The folder of tables behind `ref`; None or `current` is the live registry."""
    if ref is None or ref == "current":
        return home.registry
    return get_snapshot(home, ref).path


def verify_snapshot(snapshot: Snapshot) -> list[str]:
    """Problems found when checking a snapshot (empty when sound), one line each.

    Every table must match the file and content hashes in the manifest, the id must match
    the content, and every table must still meet its contract (pandera, `lazy=True`). A
    file that cannot be decoded is one problem, not an exception.
    """
    import pandera.errors

    from benchpress.validate.schemas import validate_table

    problems = []
    digests = {}
    for name in TABLE_NAMES:
        entry = snapshot.manifest.get("tables", {}).get(name, {})
        path = snapshot.path / f"{name}.parquet"
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.append(f"{path}: cannot be read ({exc.strerror})")
            continue
        if hashlib.sha256(data).hexdigest() != entry.get("file_sha256"):
            problems.append(f"{path}: file hash differs from the manifest")
        try:
            df = pl.read_parquet(io.BytesIO(data))
        except (Exception, pl.exceptions.PanicException) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            problems.append(f"{path}: not readable Parquet ({reason})")
            continue
        digests[name] = table_digest(df)
        try:
            validate_table(name, df)
        except (pandera.errors.SchemaErrors, pandera.errors.SchemaError) as exc:
            cases = getattr(exc, "failure_cases", None)
            count = cases.height if isinstance(cases, pl.DataFrame) else 1
            problems.append(f"{path}: {count} contract failure(s) under the current schemas")
        if digests[name] != entry.get("content_sha256"):
            problems.append(f"{path}: content hash differs from the manifest")
    if len(digests) == len(TABLE_NAMES) and content_id(digests) != snapshot.id:
        problems.append(f"{snapshot.path}: id {snapshot.id} does not match the content "
                        f"({content_id(digests)})")
    return problems
