"""The one place that downloads: real HTTP, cached by content hash, retried, size-capped.

Offline use: set a *mirror* directory (the `--mirror` option or `BENCHPRESS_MIRROR`); a
source whose `mirror_path` exists there is read from the mirror instead of the network.
Tests and CI point the mirror at `../shared/data`. A file already in the cache (same
sha256) is never fetched again, so a pre-seeded cache works offline too.

Multi-file sources (a leaderboard published as a zip, mirrored as its unpacked folder, such as
Epoch AI's `benchmark_data.zip`): their pin is a *tree digest* (`tree_sha256`), the sha256 of
the sorted lines ``<relative path> <sha256 of the file>``, which a folder and a zip of the same
files share. A mirror folder is copied into the cache as a folder named by that digest; a
downloaded zip whose tree digest matches the pin is accepted and cached under it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

from benchpress.errors import FetchError

__all__ = ["FetchResult", "fetch", "store_file", "store_tree", "sha256_of", "tree_sha256",
           "MAX_BYTES", "utc_now"]

MAX_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 16


@dataclass(frozen=True)
class FetchResult:
    path: Path          # the cached copy, named by its sha256
    sha256: str
    retrieved_at: str   # ISO time, UTC
    origin: str         # "cache", "mirror:<path>", "http" or "file:<path>"


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _tree_lines(entries) -> str:
    """The tree digest of (relative path, bytes-digest) pairs; one common top folder is dropped."""
    entries = sorted(entries)
    tops = {name.split("/", 1)[0] for name, _ in entries}
    if len(tops) == 1 and all("/" in name for name, _ in entries):
        entries = [(name.split("/", 1)[1], d) for name, d in entries]
    digest = hashlib.sha256()
    for name, d in entries:
        digest.update(f"{name} {d}\n".encode())
    return digest.hexdigest()


def _skip(name: str) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in name.split("/"))


def tree_sha256(path: Path) -> str:
    """Tree digest of a folder or a zip (see the module docstring); hidden files are skipped."""
    if path.is_dir():
        return _tree_lines((p.relative_to(path).as_posix(), sha256_of(p)) for p in path.rglob("*")
                           if p.is_file() and not _skip(p.relative_to(path).as_posix()))
    with zipfile.ZipFile(path) as zf:
        return _tree_lines((i.filename, hashlib.sha256(zf.read(i)).hexdigest())
                           for i in zf.infolist() if not i.is_dir() and not _skip(i.filename))


def store_tree(folder: Path, cache: Path, *, expected_sha256: str | None = None) -> tuple[Path, str]:
    """Copy a folder into the cache as `<tree digest>/`; returns (cached folder, digest)."""
    digest = tree_sha256(folder)
    if expected_sha256 and digest != expected_sha256:
        raise FetchError(f"{folder}: tree sha256 is {digest}, but the source config pins {expected_sha256}")
    target = cache / digest
    if not target.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=cache, prefix=".part-"))
        shutil.copytree(folder, tmp, dirs_exist_ok=True,
                        ignore=lambda d, names: [n for n in names if n.startswith(".")])
        try:
            os.replace(tmp, target)  # atomic: readers see the whole folder or none
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another build cached it first
    return target, digest


def _into_cache(tmp: Path, cache: Path, expected: str | None, what: str) -> tuple[Path, str]:
    digest = sha256_of(tmp)
    if expected and digest != expected and zipfile.is_zipfile(tmp) and tree_sha256(tmp) == expected:
        digest = expected  # a zip pinned by the tree digest of its files
    if expected and digest != expected:
        tmp.unlink(missing_ok=True)
        raise FetchError(f"{what}: sha256 is {digest}, but the source config pins {expected}")
    target = cache / digest
    os.replace(tmp, target)  # atomic: readers see the whole file or none
    return target, digest


def store_file(path: Path, cache: Path, *, expected_sha256: str | None = None,
               max_bytes: int = MAX_BYTES) -> tuple[Path, str]:
    """Copy a local file into the cache; returns (cached path, sha256)."""
    if not path.is_file():
        raise FetchError(f"{path}: no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise FetchError(f"{path}: {size:,} bytes is larger than the {max_bytes:,}-byte cap")
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".part-")
    os.close(fd)
    shutil.copyfile(path, tmp)
    return _into_cache(Path(tmp), cache, expected_sha256, str(path))


def _download(url: str, dest: Path, *, max_bytes: int, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "benchpress-registry/0.1"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        declared = int(response.headers.get("Content-Length") or 0)
        if declared > max_bytes:
            raise FetchError(f"{url}: {declared:,} bytes is larger than the {max_bytes:,}-byte cap")
        with open(dest, "wb") as out, Progress(
            "[progress.description]{task.description}", BarColumn(), DownloadColumn(),
            TransferSpeedColumn(), transient=True, disable=not sys.stderr.isatty(),
        ) as bar:
            task = bar.add_task(url.rsplit("/", 1)[-1], total=declared or None)
            received = 0
            while chunk := response.read(_CHUNK):
                received += len(chunk)
                if received > max_bytes:
                    raise FetchError(f"{url}: larger than the {max_bytes:,}-byte cap; stopped")
                out.write(chunk)
                bar.advance(task, len(chunk))


def fetch(url: str, cache: Path, *, expected_sha256: str | None = None,
          mirror: Path | None = None, mirror_path: str | None = None,
          max_bytes: int = MAX_BYTES, retries: int = 3, timeout: float = 30.0,
          backoff: float = 0.5) -> FetchResult:
    """Get `url` into the cache: from the cache, else the mirror, else over HTTP."""
    cache.mkdir(parents=True, exist_ok=True)
    if expected_sha256 and (cache / expected_sha256).exists():
        return FetchResult(cache / expected_sha256, expected_sha256, utc_now(), "cache")
    mirror = mirror or (Path(os.environ["BENCHPRESS_MIRROR"]) if os.environ.get("BENCHPRESS_MIRROR") else None)
    if mirror is not None and mirror_path and (mirror / mirror_path).is_dir():
        path, digest = store_tree(mirror / mirror_path, cache, expected_sha256=expected_sha256)
        return FetchResult(path, digest, utc_now(), f"mirror:{mirror / mirror_path}")
    if mirror is not None and mirror_path and (mirror / mirror_path).is_file():
        path, digest = store_file(mirror / mirror_path, cache, expected_sha256=expected_sha256,
                                  max_bytes=max_bytes)
        return FetchResult(path, digest, utc_now(), f"mirror:{mirror / mirror_path}")
    if url.startswith("file://") or "://" not in url:
        local = Path(url.removeprefix("file://"))
        path, digest = store_file(local, cache, expected_sha256=expected_sha256, max_bytes=max_bytes)
        return FetchResult(path, digest, utc_now(), f"file:{local}")

    last: Exception | None = None
    for attempt in range(retries):
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".part-")
        os.close(fd)
        try:
            _download(url, Path(tmp), max_bytes=max_bytes, timeout=timeout)
            path, digest = _into_cache(Path(tmp), cache, expected_sha256, url)
            return FetchResult(path, digest, utc_now(), "http")
        except FetchError:
            Path(tmp).unlink(missing_ok=True)
            raise
        except urllib.error.HTTPError as exc:
            Path(tmp).unlink(missing_ok=True)
            last = exc
            if 400 <= exc.code < 500 and exc.code != 429:
                break  # the server said no; asking again will not help
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            Path(tmp).unlink(missing_ok=True)
            last = exc
        time.sleep(backoff * 2**attempt)
    hint = " (offline? set --mirror DIR or BENCHPRESS_MIRROR)" if mirror is None else ""
    raise FetchError(f"{url}: download failed after {retries} tries: {last}{hint}")
