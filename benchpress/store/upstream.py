"""Where a local copy of a published file came from: the `VERSIONS.csv` beside a mirror's
dated copies.

The shared histories (`../shared/data/<source>-history/`) hold one folder per version, named
by its date, with a `VERSIONS.csv` at the top: ``date, upstream_repo, commit, paths, ...``
(and ``repo_name`` when one folder holds several repositories, as Lech Mazur's 13 benchmarks:
``<repo>/<date>/README.md``). A file ingested from such a folder is cited as the upstream
file at its commit (``https://github.com/<repo>/blob/<commit>/<path>``), never as a local
``file://`` path, and its version is labelled by the folder's date. A version listed as a
whole upstream folder (``web/leaderboard/public/submissions/**``, tau2-bench; ``data/<day>/**``,
LMArena's boards) is cited as that folder at the commit (a ``tree`` URL), and each of its
files as its path in the folder (`validate.prepare.cited_url`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Upstream", "upstream_of", "VERSIONS_FILE"]

VERSIONS_FILE = "VERSIONS.csv"
_MAX_VERSIONS_BYTES = 4 * 1024 * 1024
_BLOB = "https://github.com/{repo}/blob/{commit}/{path}"
_TREE = "https://github.com/{repo}/tree/{commit}/{path}"


@dataclass(frozen=True)
class Upstream:
    """The upstream file behind a local copy: its citation URL and the version's date."""

    url: str
    version: str


def _rows(versions: Path) -> list[dict]:
    if versions.stat().st_size > _MAX_VERSIONS_BYTES:
        return []
    text = versions.read_bytes().decode("utf-8-sig", "replace")
    return list(csv.DictReader(io.StringIO(text)))


def _tree(paths: str, folder: Path) -> str | None:
    """For a version listed as a whole upstream folder (``web/public/submissions/** (15
    files)``), the repository folder its local copy mirrors: the listed folder's parent when
    the copy kept that folder by name (``<date>/submissions/...``), else the folder itself."""
    listed = (paths or "").split(" (")[0].strip()
    if not listed.endswith("/**"):
        return None
    top = PurePosixPath(listed.removesuffix("/**"))
    root = top.parent if (folder / top.name).is_dir() else top
    return "" if str(root) == "." else str(root)


def _cited_path(paths: str, name: str | None) -> str | None:
    """The upstream path among `paths` (``a.csv;b.csv``) of the file called `name` (a
    folder: its first file)."""
    listed = [p.strip() for p in (paths or "").split(";") if p.strip()]
    if name is None:
        return listed[0] if listed else None
    return next((p for p in listed if PurePosixPath(p).name == name), None)


def upstream_of(path: Path) -> Upstream | None:
    """The upstream file of a version's local copy (a file in a dated folder, or the dated
    folder itself) from the nearest `VERSIONS.csv` up to three folders above; None when
    there is none or it does not list the copy."""
    path = Path(path).resolve()
    folder, name = (path, None) if path.is_dir() else (path.parent, path.name)
    for depth, root in enumerate([folder.parent, folder.parent.parent]):
        versions = root / VERSIONS_FILE
        if not versions.is_file():
            continue
        repo_name = folder.parent.name if depth == 1 else None
        for row in _rows(versions):
            if row.get("date") != folder.name or not row.get("commit") \
                    or not row.get("upstream_repo"):
                continue
            if row.get("repo_name") != repo_name:  # (a one-repository list has none)
                continue
            tree = _tree(row.get("paths", ""), folder) if name is None else None
            if tree is not None:  # a folder of files: the folder at the commit
                return Upstream(_TREE.format(repo=row["upstream_repo"], commit=row["commit"],
                                             path=tree).rstrip("/"), row["date"])
            cited = _cited_path(row.get("paths", ""), name)
            if cited is None:
                continue
            return Upstream(_BLOB.format(repo=row["upstream_repo"], commit=row["commit"],
                                         path=cited), row["date"])
    return None
