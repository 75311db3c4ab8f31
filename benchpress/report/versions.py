"""Which matrix versions a drift run compares, and loading them from their folders.

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
from benchpress.predict.drift import DriftReport, DriftThresholds, MatrixVersion, drift
from benchpress.predict.transform import BenchmarkScales
from benchpress.store.matrix import load_matrix

__all__ = ["load_version", "select_versions", "drift_report"]


def load_version(folder: Path, label: str, sources: list[str] | None = None) -> MatrixVersion:
    """The resolved matrix of a registry or snapshot folder as a :class:`MatrixVersion`
    (only the observations of `sources` when given; see `store.matrix.load_matrix`)."""
    m = load_matrix(Path(folder), sources=sources)
    scales = BenchmarkScales.from_records(m.benchmarks.to_dicts(), m.benchmark_ids)
    return MatrixVersion(label, m.values, m.model_ids, m.benchmark_ids, scales)


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


def drift_report(home: Home, from_ref: str | None = None, to_ref: str | None = None,
                 cfg: DriftThresholds | None = None,
                 sources: list[str] | None = None) -> DriftReport:
    """Profile and compare the versions chosen by :func:`select_versions`."""
    versions = [load_version(folder, label, sources) for label, folder in
                select_versions(home, from_ref, to_ref)]
    return drift(versions, cfg or DriftThresholds())
