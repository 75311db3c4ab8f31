"""Where a file of a leaderboard's history came from: the upstream file at its commit.

The shared histories (`../shared/data/<name>-history/`) keep one folder per version, named by
its date, each holding the publisher's files byte for byte, and a ``VERSIONS.csv`` beside the
folders naming, per version, the repository, the commit and the upstream paths
(``date,upstream_repo,commit,commit_time,paths,...``; a history of several repositories adds
``repo_name`` and nests the versions one folder deeper, ``<repo_name>/<date>/``).

- `upstream_url(path)` gives the address a version folder (or a file in one) has upstream: a
  GitHub ``tree`` URL of the folder at the commit, or the ``blob`` URL of the file. `ingest`
  records it as the source's URL, so that no value cites a local ``file://`` path.
- `member_url(base, member)` resolves a file of a folder source against the folder's URL:
  adapters that read a folder cite each value's file by its path in the folder,
  ``member_reference("submissions/o3_openai_2025-01-15/submission.json")`` (text
  ``member:submissions/...``), and `validate.prepare` turns it into that file's URL at the
  source's address (None when the source has no http(s) address).

Nothing here reads beyond the history's ``VERSIONS.csv`` (at most `MAX_VERSIONS_BYTES`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Upstream", "upstream_of", "upstream_url", "member_url", "member_reference",
           "is_member_reference", "MEMBER", "MAX_VERSIONS_BYTES"]

MAX_VERSIONS_BYTES = 4 * 1024 * 1024
MEMBER = "member:"  # the prefix of a citation that names a file of the source's folder
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_REPO = re.compile(r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class Upstream:
    """One version of a history: the repository, the commit, and the folder of the repository
    that the version folder mirrors (`root`, "" for the repository's top)."""

    repo: str
    commit: str
    root: str
    version: str

    def url(self, member: str | None = None) -> str:
        """The folder at the commit (``tree``), or one file in it (``blob``)."""
        path = "/".join(p for p in (self.root, member or "") if p)
        kind = "blob" if member else "tree"
        return f"https://github.com/{self.repo}/{kind}/{self.commit}" + (f"/{path}" if path else "")


def member_reference(path: str) -> str:
    """The citation of a file of the folder an adapter reads, by its path in the folder."""
    return MEMBER + path


def is_member_reference(text: str | None) -> bool:
    """Whether a citation names a file of the source's folder (`member_reference`)."""
    return isinstance(text, str) and text.startswith(MEMBER)


def member_url(base: str | None, member: str) -> str | None:
    """The URL of `member` (a path inside the folder whose URL is `base`; a
    `member_reference` is read as its path): a GitHub ``tree`` URL becomes the file's
    ``blob`` URL; any other http(s) base gets the path appended. None when `base` is no
    http(s) URL (a folder with no known address cites nothing) or the path climbs out.

    >>> member_url("https://github.com/o/r/tree/abc/web/subs", "member:x/submission.json")
    'https://github.com/o/r/blob/abc/web/subs/x/submission.json'
    >>> member_url("https://example.org/board/", "text.json")
    'https://example.org/board/text.json'
    """
    member = member.removeprefix(MEMBER)
    if not base or not re.match(r"^https?://", base) or ".." in PurePosixPath(member).parts:
        return None
    member = member.lstrip("/")
    found = re.match(r"^(https://github\.com/[^/]+/[^/]+)/tree/(.+?)/?$", base)
    if found:
        return f"{found.group(1)}/blob/{found.group(2)}/{member}"
    return base.rstrip("/") + "/" + member


def _rows(history: Path) -> list[dict]:
    file = history / "VERSIONS.csv"
    try:
        if not file.is_file() or file.stat().st_size > MAX_VERSIONS_BYTES:
            return []
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return []
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _root(paths: str, folder: Path) -> str:
    """The repository folder a version folder mirrors, from the upstream `paths` field
    (``a/b.csv``, ``a/b.csv;a/c.csv``, ``web/public/submissions/** (15 files)``)."""
    listed = [p.strip().split(" (")[0] for p in paths.split(";") if p.strip()]
    if any(p.endswith("/**") for p in listed):
        tree = PurePosixPath(listed[0].removesuffix("/**"))
        # the folder kept its own top folder (submissions/...) or only its files
        return str(tree.parent) if (folder / tree.name).is_dir() else str(tree)
    parents = {str(PurePosixPath(p).parent) for p in listed}
    root = parents.pop() if len(parents) == 1 else ""
    return "" if root == "." else root


def upstream_of(path: Path) -> Upstream | None:
    """The upstream version a mirror folder (or a file directly in one) is, from the
    ``VERSIONS.csv`` of its history; None outside a history."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    for history, repo_name in ((folder.parent, None), (folder.parent.parent, folder.parent.name)):
        for row in _rows(history):
            if (row.get("date") or "").strip() != folder.name:
                continue
            if repo_name is not None and (row.get("repo_name") or "").strip() != repo_name:
                continue
            repo, commit = (row.get("upstream_repo") or "").strip(), (row.get("commit") or "").strip()
            if not (_REPO.match(repo) and _COMMIT.match(commit) and _DATE.match(folder.name)):
                return None
            return Upstream(repo, commit, _root(row.get("paths") or "", folder), folder.name)
    return None


def upstream_url(path: Path) -> str | None:
    """The upstream URL of a mirror folder (``tree``) or of one file in it (``blob``)."""
    found = upstream_of(path)
    if found is None:
        return None
    return found.url(None if Path(path).is_dir() else Path(path).name)
