"""The one place that downloads: real HTTP, cached by content hash, retried, bounded.

Offline use: set a *mirror* directory (the `--mirror` option or `BENCHPRESS_MIRROR`); a
source whose `mirror_path` exists there is read from the mirror instead of the network.
Tests and CI point the mirror at `../shared/data`. A file already in the cache (same
sha256) is not fetched again, so a pre-seeded cache works offline too.

The cache is not trusted by its file names: every time a cache entry is used, its content is
checked against its name (memoised per process by path, size and modification time). An entry
that does not match is reported in one line (a warning on the `benchpress` logger), removed,
and fetched again from the mirror or the URL; if neither can give it, the fetch fails.

Only http and https URLs are downloaded; a `file://` URL is read only to restore a pinned copy
(what `ingest` records for a local file), other schemes are refused. Redirects are followed
(at most `InputLimits.max_redirects`, never to another scheme or from https to http); one that ends
on another host is followed but reported in one line, and the final address is returned as
`FetchResult.final_url`, which `ingest` records with the source. A pinned source stays safe
across a redirect because its content is checked against the pin. Each `fetch` has an overall
deadline (`InputLimits.download_deadline_s`, retries included) besides the per-read timeout, kept
by a watchdog in every phase of a download (see `_http`), so a server that trickles bytes
cannot hold it; partial files (`.part-*`) are removed on every failure. A process killed
outright (SIGKILL) cannot do that, so a partial file's name carries its writer's pid
(`.part-<pid>-*`), and every fetch first removes the partial files whose writer is gone or
that are older than `STALE_PART_S` (a reused pid, or a name from before the pid was kept).

Multi-file sources (a leaderboard published as a zip, mirrored as its unpacked folder, such as
Epoch AI's `benchmark_data.zip`): their pin is a *tree digest* (`tree_sha256`), the sha256 of
the sorted lines ``<relative path> <sha256 of the file>``, which a folder and a zip of the same
files share. A mirror folder is copied into the cache as a folder named by that digest; a
downloaded zip whose tree digest matches the pin is accepted and cached under it.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import re
import shutil
import tempfile
import time
import urllib.error
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from benchpress.input_limits import input_limits
from benchpress.adapters._files import zip_digests
from benchpress.adapters._http import download, url_scheme
from benchpress.digest import CHUNK, HashingWriter, sha256_of
from benchpress.errors import BadInputError, FetchError

__all__ = ["FetchResult", "fetch", "store_file", "store_tree", "tree_sha256", "url_scheme",
           "utc_now"]

log = logging.getLogger(__name__)
_HEX64 = re.compile(r"[0-9a-f]{64}")
_VERIFIED: dict[tuple, bool] = {}  # (path, size, mtime_ns ...) -> content matched its name
STALE_PART_S = 3600.0  # a partial file this old is abandoned whoever wrote it
_PART_PID = re.compile(r"\.part-(\d+)-")


@dataclass(frozen=True)
class FetchResult:
    path: Path          # the cached copy, named by its sha256
    sha256: str
    retrieved_at: str   # ISO time, UTC
    origin: str         # "cache", "mirror:<path>", "http" or "file:<path>"
    final_url: str | None = None  # where an HTTP download ended after redirects


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


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


def tree_sha256(path: Path, leave_out: frozenset[str] = frozenset()) -> str:
    """Tree digest of a folder or a zip (see the module docstring); hidden files are skipped,
    and so are the files whose relative path is in `leave_out`. A zip is streamed under the
    archive caps of `benchpress.input_limits`."""
    if path.is_dir():
        files = ((p.relative_to(path).as_posix(), p) for p in path.rglob("*") if p.is_file())
        return _tree_lines((rel, sha256_of(p)) for rel, p in files
                           if not _skip(rel) and rel not in leave_out)
    return _tree_lines(zip_digests(path, lambda name: not _skip(name) and name not in leave_out))


def _signature(path: Path) -> tuple:
    """What changes when a cache entry's content may have changed (size, mtime, ctime per
    file: a rewrite that puts the size and mtime back still moves the ctime)."""
    if path.is_dir():
        return (str(path), tuple(sorted((p.relative_to(path).as_posix(), s.st_size, s.st_mtime_ns,
                                         s.st_ctime_ns)
                                        for p in path.rglob("*") if p.is_file()
                                        for s in (p.stat(),))))
    s = path.stat()
    return (str(path), s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def _intact(entry: Path) -> bool:
    """Whether a cache entry's content still matches its name (its sha256 or tree digest)."""
    key = _signature(entry)
    if key not in _VERIFIED:
        try:
            if entry.is_dir():
                ok = tree_sha256(entry) == entry.name
            else:
                ok = sha256_of(entry) == entry.name or (
                    zipfile.is_zipfile(entry) and tree_sha256(entry) == entry.name)
        except (BadInputError, OSError):
            ok = False  # a damaged zip under a tree digest's name; a FIFO under a file's
        _VERIFIED[key] = ok
    return _VERIFIED[key]


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or no way to tell: keep its file
    return True


def _sweep_parts(cache: Path) -> None:
    """Remove the partial files (`.part-*`) of killed fetches: writer gone or too old."""
    now = time.time()
    for entry in cache.glob(".part-*"):
        found = _PART_PID.match(entry.name)
        try:
            old = now - entry.lstat().st_mtime > STALE_PART_S
        except OSError:
            continue  # gone already (its writer finished)
        if old or (found and not _alive(int(found.group(1)))):
            _remove(entry)


def _part_prefix() -> str:
    return f".part-{os.getpid()}-"


def _remove(entry: Path) -> None:
    if entry.is_dir():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def store_tree(folder: Path, cache: Path, *, expected_sha256: str | None = None) -> tuple[Path, str]:
    """Copy a folder into the cache as `<tree digest>/`; returns (cached folder, digest)."""
    digest = tree_sha256(folder)
    if expected_sha256 and digest != expected_sha256:
        raise FetchError(f"{folder}: tree sha256 is {digest}, but the source config pins {expected_sha256}")
    target = cache / digest
    if target.exists() and not _intact(target):
        _remove(target)
    if not target.is_dir():
        tmp = _part(cache, folder=True)
        try:
            shutil.copytree(folder, tmp, dirs_exist_ok=True,
                            ignore=lambda d, names: [n for n in names if n.startswith(".")])
            os.replace(tmp, target)  # atomic: readers see the whole folder or none
        except OSError:
            if not target.is_dir():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # gone unless the rename failed (cached first)
    return target, digest


def _into_cache(tmp: Path, cache: Path, expected: str | None, what: str,
                digest: str) -> tuple[Path, str]:
    """Move ``tmp`` (whose sha256 is ``digest``, hashed while it was written) into the
    cache under its digest, after checking it against the pin ``expected``."""
    if expected and digest != expected and zipfile.is_zipfile(tmp):
        try:
            if tree_sha256(tmp) == expected:
                digest = expected  # a zip pinned by the tree digest of its files
        except BadInputError as exc:  # a hostile archive: name what was asked for, not the copy
            raise FetchError(f"{what}: " + str(exc).replace(f"{tmp}: ", "")) from exc
    if expected and digest != expected:
        raise FetchError(f"{what}: sha256 is {digest}, but the source config pins {expected}")
    target = cache / digest
    os.replace(tmp, target)  # atomic: readers see the whole file or none
    return target, digest


def _part(cache: Path, *, folder: bool = False) -> Path:
    """A new partial file (or folder) in the cache, named for this process; the one place
    that first sweeps away the partial files of dead writers (see `_sweep_parts`)."""
    cache.mkdir(parents=True, exist_ok=True)
    _sweep_parts(cache)
    if folder:
        return Path(tempfile.mkdtemp(dir=cache, prefix=_part_prefix()))
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=_part_prefix())
    os.close(fd)
    return Path(tmp)


def store_file(path: Path, cache: Path, *, expected_sha256: str | None = None,
               max_bytes: int | None = None, name: str | None = None) -> tuple[Path, str]:
    """Copy a local file into the cache; returns (cached path, sha256). `name` is what messages
    call the file (default: `path`); the copy stops at `max_bytes` whatever the file claims."""
    limits = input_limits()
    name = name or str(path)
    max_bytes = limits.max_download_bytes if max_bytes is None else max_bytes
    if not path.is_file():
        raise FetchError(f"{name}: no such file")
    tmp = _part(cache)
    try:
        with open(path, "rb") as src, HashingWriter(tmp) as out:
            size = 0
            while chunk := src.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"{name}: larger than the {max_bytes:,}-byte cap (a large "
                                     "export can be ingested as a folder of files under the "
                                     "cap, such as part-000.json, part-001.json ...; or raise "
                                     "BENCHPRESS_MAX_DOWNLOAD_BYTES)")
                out.write(chunk)
        return _into_cache(tmp, cache, expected_sha256, name, out.hexdigest())
    finally:
        tmp.unlink(missing_ok=True)  # gone already when it landed in the cache


def _from_cache(cache: Path, expected: str, label: str) -> FetchResult | None:
    entry = cache / expected
    if not entry.exists():
        return None
    if _intact(entry):
        return FetchResult(entry, expected, utc_now(), "cache")
    log.warning("warning: %s: the cached copy %s does not match its sha256; removed, fetching "
                "it again", label, entry)
    _remove(entry)
    return None


def fetch(url: str, cache: Path, *, expected_sha256: str | None = None,
          mirror: Path | None = None, mirror_path: str | None = None,
          max_bytes: int | None = None, retries: int = 3, timeout: float | None = None,
          backoff: float = 0.5, deadline: float | None = None,
          name: str | None = None) -> FetchResult:
    """Get `url` (an http(s) URL or a local path) into the cache: from the cache (verified),
    else the mirror, else the file or the network.

    `max_bytes`, `timeout` (per read) and `deadline` (seconds for the whole network fetch,
    retries included) default to `benchpress.input_limits`; `name` is what messages call the input
    (default: `url`).
    """
    limits = input_limits()
    label = name or url
    scheme = url_scheme(url)
    if scheme not in ("", "http", "https", "file") or (scheme == "file" and not expected_sha256):
        raise FetchError(f"{label}: only http and https URLs are fetched; give a local file "
                         "as a plain path")
    if expected_sha256 is not None and not _HEX64.fullmatch(expected_sha256):
        raise FetchError(f"{label}: the pinned sha256 {expected_sha256!r} is not 64 hex digits")
    max_bytes = limits.max_download_bytes if max_bytes is None else max_bytes
    if expected_sha256 and (hit := _from_cache(cache, expected_sha256, label)):
        return hit
    mirror = mirror or (Path(os.environ["BENCHPRESS_MIRROR"]) if os.environ.get("BENCHPRESS_MIRROR") else None)
    if mirror_path and (".." in PurePosixPath(mirror_path).parts or Path(mirror_path).is_absolute()):
        raise FetchError(f"{label}: mirror_path {mirror_path!r} leads out of the mirror; refused")
    src = mirror / mirror_path if mirror is not None and mirror_path else None
    if src is not None and src.exists():
        path, digest = (store_tree(src, cache, expected_sha256=expected_sha256) if src.is_dir()
                        else store_file(src, cache, expected_sha256=expected_sha256,
                                        max_bytes=max_bytes))
        return FetchResult(path, digest, utc_now(), f"mirror:{src}")
    if scheme in ("", "file"):
        local = Path(url.removeprefix("file://"))
        path, digest = store_file(local, cache, expected_sha256=expected_sha256,
                                  max_bytes=max_bytes, name=name)
        return FetchResult(path, digest, utc_now(), f"file:{local}")

    timeout = limits.read_timeout_s if timeout is None else timeout
    deadline_s = limits.download_deadline_s if deadline is None else deadline
    ends = time.monotonic() + deadline_s
    last: Exception | None = None
    for attempt in range(retries):
        tmp = _part(cache)
        try:
            final, digest = download(url, tmp, max_bytes=max_bytes, timeout=timeout, ends=ends,
                                     deadline_s=deadline_s)
            path, digest = _into_cache(tmp, cache, expected_sha256, url, digest)
            return FetchResult(path, digest, utc_now(), "http", final_url=final)
        except urllib.error.HTTPError as exc:
            last = exc
            if 400 <= exc.code < 500 and exc.code != 429:
                break  # the server said no; asking again will not help
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            last = exc
        finally:
            tmp.unlink(missing_ok=True)  # a partial file never outlives a failed try
        if attempt == retries - 1:
            break
        pause = backoff * 2**attempt
        if time.monotonic() + pause >= ends:
            raise FetchError(f"{url}: no complete answer within the {deadline_s:g}-second "
                             f"download deadline ({' '.join(str(last).split())}); stopped")
        time.sleep(pause)
    hint = " (offline? set --mirror DIR or BENCHPRESS_MIRROR)" if mirror is None else ""
    why = " ".join(str(last).split())  # some urllib messages span lines
    raise FetchError(f"{url}: download failed after {retries} tries: {why}{hint}")
