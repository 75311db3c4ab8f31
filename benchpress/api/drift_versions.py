"""Which matrix versions a drift run compares, and loading them from their folders
(store wiring for :meth:`benchpress.api.BenchPress.drift`).

A version is named by a snapshot reference (id, tag, unique id prefix, ``latest``),
``current`` (the live registry) or a path to a folder of registry tables. Without
``--from``/``--to`` every snapshot is taken, oldest first (the live registry alone when
there is none), and with ``sources`` every snapshot that holds one of them (a registry
built through time has snapshots from before a source's first version); with them, the
snapshots from ``--from`` to ``--to`` inclusive, in creation order (a ``current`` or
folder endpoint is appended as given), each holding every one of ``sources``. ``monthly``
takes only the monthly snapshots (tagged ``YYYY-MM`` by ``snapshot create --monthly``, see
`store.history`), each labelled by its (oldest) month, and with ``sources`` only the months
that hold at least one of them (a history's sources start at different months).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.errors import UsageError
from benchpress.home import Home
from benchpress.store.matrix import ScoreMatrix, load_matrix

__all__ = ["load_versions", "select_versions", "has_monthly"]


def _is_folder(ref: str | None) -> bool:
    return ref is not None and Path(ref).is_dir() and (Path(ref) / "cells.parquet").is_file()


def _month(snapshot) -> str | None:
    """The month a monthly snapshot stands for: its oldest month tag (a month that brought
    no new version keeps the month before's snapshot, which then carries both tags); None
    for a snapshot without one."""
    from benchpress.store.history import is_month_tag

    months = sorted(t for t in snapshot.tags if is_month_tag(t))
    return months[0] if months else None


def has_monthly(home: Home) -> bool:
    """Whether `home` holds monthly snapshots (`snapshot create --monthly`)."""
    from benchpress.store.snapshot import list_snapshots

    return any(_month(s) is not None for s in list_snapshots(home))


def select_versions(home: Home, from_ref: str | None = None,
                    to_ref: str | None = None, *, monthly: bool = False,
                    sources: list[str] | None = None) -> list[tuple[str, Path]]:
    """``(label, folder)`` of the versions to compare, oldest first (see module doc)."""
    from benchpress.store.snapshot import get_snapshot, list_snapshots

    if monthly:
        return _monthly(home, from_ref, to_ref, sources)

    def single(ref: str) -> tuple[str, Path]:
        if _is_folder(ref):
            return str(ref), Path(ref)
        if ref == "current":
            return "current", home.registry
        s = get_snapshot(home, ref)
        return (s.tags[-1] if s.tags else s.id[:12]), s.path

    snaps = list_snapshots(home)
    if from_ref is None and to_ref is None:
        every = ([(s.tags[-1] if s.tags else s.id[:12], s.path) for s in snaps] if snaps
                 else [single("current")])
        return _holding(every, sources) if sources else every
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


def _monthly(home: Home, from_ref: str | None, to_ref: str | None,
             sources: list[str] | None) -> list[tuple[str, Path]]:
    """The monthly snapshots from `from_ref` to `to_ref` (month tags, ids or any snapshot
    reference), oldest first, labelled by month; with `sources`, the months holding one."""
    from benchpress.store.snapshot import get_snapshot, list_snapshots

    snaps = [(m, s) for s in list_snapshots(home) if (m := _month(s)) is not None]
    if not snaps:
        raise UsageError(f"no monthly snapshots in {home.snapshots}; make them with "
                         "`benchpress snapshot create --monthly`")
    ids = [s.id for _, s in snaps]

    def at(ref: str) -> int:
        sid = get_snapshot(home, ref).id
        if sid not in ids:
            raise UsageError(f"snapshot '{ref}' is not a monthly snapshot (tagged YYYY-MM)")
        return ids.index(sid)

    lo = at(from_ref) if from_ref else 0
    hi = at(to_ref) if to_ref else len(ids) - 1
    if lo > hi:
        raise UsageError(f"--from {from_ref} is newer than --to {to_ref}")
    chosen = [(m, s.path) for m, s in snaps[lo:hi + 1]]
    return _holding(chosen, sources) if sources else chosen


def _holding(chosen: list[tuple[str, Path]], sources: list[str]) -> list[tuple[str, Path]]:
    """The versions of `chosen` that hold at least one of `sources` (each is then read with
    those it holds, `store.matrix.present_sources`); when none does, the UsageError of
    `store.matrix.match_sources` naming the newest version's sources."""
    from benchpress.store.matrix import held_sources, match_sources

    kept = [(label, folder) for label, folder in chosen if held_sources(folder, sources)[0]]
    if not kept:  # the newest holds none of them either: this raises, naming what it holds
        match_sources(held_sources(chosen[-1][1], sources)[1], sources)
    return kept


def load_versions(home: Home, from_ref: str | None = None, to_ref: str | None = None,
                  sources: list[str] | None = None, *, monthly: bool = False) -> list[ScoreMatrix]:
    """The matrices of the versions chosen by :func:`select_versions`, oldest first, each
    labelled (only the observations of `sources` when given; of a monthly series, those of
    them each month holds)."""
    from benchpress.store.matrix import present_sources

    chosen = select_versions(home, from_ref, to_ref, monthly=monthly, sources=sources)
    if monthly or (from_ref is None and to_ref is None):  # chosen for holding one of them
        # (each read with the sources it holds)
        return [load_matrix(Path(folder), label=label, sources=present_sources(Path(folder), sources))
                for label, folder in chosen]
    versions = []
    for label, folder in chosen:  # versions the user named: each must hold every source
        try:
            versions.append(load_matrix(Path(folder), label=label, sources=sources))
        except UsageError as exc:
            raise UsageError(f"{label}: {exc}") from None
    return versions
