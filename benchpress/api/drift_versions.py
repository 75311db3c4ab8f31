"""Which matrix versions a drift run compares, and loading them from their folders
(store wiring for :meth:`benchpress.api.BenchPress.drift`).

A version is named by a snapshot reference (id, tag, unique id prefix, ``latest``),
``current`` (the live registry) or a path to a folder of registry tables. Without
``--from``/``--to`` every snapshot is taken, oldest first (the live registry alone when
there is none); with them, the snapshots from ``--from`` to ``--to`` inclusive, in
creation order (a ``current`` or folder endpoint is appended as given).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.errors import UsageError
from benchpress.home import Home
from benchpress.store.matrix import ScoreMatrix, load_matrix

__all__ = ["load_versions", "select_versions"]


def _is_folder(ref: str | None) -> bool:
    return ref is not None and Path(ref).is_dir() and (Path(ref) / "cells.parquet").is_file()


def select_versions(home: Home, from_ref: str | None = None,
                    to_ref: str | None = None) -> list[tuple[str, Path]]:
    """``(label, folder)`` of the versions to compare, oldest first (see module doc)."""
    from benchpress.store.snapshot import get_snapshot, list_snapshots

    def single(ref: str) -> tuple[str, Path]:
        if _is_folder(ref):
            return str(ref), Path(ref)
        if ref == "current":
            return "current", home.registry
        s = get_snapshot(home, ref)
        return (s.tags[-1] if s.tags else s.id[:12]), s.path

    snaps = list_snapshots(home)
    if from_ref is None and to_ref is None:
        if not snaps:
            return [single("current")]
        return [(s.tags[-1] if s.tags else s.id[:12], s.path) for s in snaps]
    special = [r for r in (from_ref, to_ref) if r is not None and (r == "current" or _is_folder(r))]
    if special or not snaps:
        chosen = [single(r) for r in (from_ref, to_ref) if r is not None]
        return chosen if len({c[1] for c in chosen}) == len(chosen) else chosen[:1]
    ids = [s.id for s in snaps]
    lo = ids.index(get_snapshot(home, from_ref).id) if from_ref else 0
    hi = ids.index(get_snapshot(home, to_ref).id) if to_ref else len(ids) - 1
    if lo > hi:
        raise UsageError(f"--from {from_ref} is newer than --to {to_ref}")
    return [(s.tags[-1] if s.tags else s.id[:12], s.path) for s in snaps[lo:hi + 1]]


def load_versions(home: Home, from_ref: str | None = None, to_ref: str | None = None,
                  sources: list[str] | None = None) -> list[ScoreMatrix]:
    """The matrices of the versions chosen by :func:`select_versions`, oldest first, each
    labelled (only the observations of `sources` when given)."""
    return [load_matrix(Path(folder), sources=sources, label=label)
            for label, folder in select_versions(home, from_ref, to_ref)]
