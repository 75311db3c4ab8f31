"""Which folder of tables a command reads: the live registry or a snapshot."""

from __future__ import annotations

from pathlib import Path

from benchpress.home import Home

__all__ = ["registry_dir"]


def registry_dir(home: Home, snapshot: str | None) -> Path:
    """The live registry when `snapshot` is None, else the snapshot's folder."""
    if snapshot is None:
        return home.registry
    from benchpress.store.snapshot import resolve_snapshot

    return resolve_snapshot(home, snapshot)
