"""Where a registry workspace keeps its files.

A *home* is a folder with the project layout: `sources/` (source configs and hand-entered
CSVs), `schemas/` (contracts), `registry/` (built tables), `snapshots/` and a raw-file cache.
The repository itself is the canonical home; `benchpress init DIR` makes another.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Home", "find_home"]


@dataclass(frozen=True)
class Home:
    """Paths of one workspace (``Home(".")`` and ``Home(Path("."))`` are the same)."""

    root: Path

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root))  # a str from a user is a path too

    @property
    def sources(self) -> Path:
        return self.root / "sources"

    @property
    def specs(self) -> Path:
        """Leaderboard spec files of this home (`adapters.spec_schema`): beside the
        package's, a spec of the same name here replaces the package's."""
        return self.sources / "specs"

    @property
    def schemas(self) -> Path:
        return self.root / "schemas"

    @property
    def registry(self) -> Path:
        return self.root / "registry"

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots"

    @property
    def cache(self) -> Path:
        """Raw downloads, content-addressed by sha256; never committed."""
        override = os.environ.get("BENCHPRESS_CACHE")
        return Path(override) if override else self.root / ".cache" / "raw"

    @property
    def releases_csv(self) -> Path:
        """Hand-entered, cited releases (`benchpress add-model` appends here)."""
        return self.sources / "releases.csv"

    @property
    def lock(self) -> Path:
        return self.root / ".benchpress.lock"


def find_home(start: str | os.PathLike | None = None) -> Home:
    """The nearest folder at or above `start` that has `sources/` and `schemas/`.

    Falls back to `start` itself (the caller gets a clear error later if it is empty).
    """
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "sources").is_dir() and (folder / "schemas").is_dir():
            return Home(folder)
    return Home(here)
