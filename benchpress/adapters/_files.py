"""Reading raw files for the adapters: UTF-8 text (with or without a byte-order mark),
CSV records with their line numbers, and the files of a folder or zip archive.

Archives are untrusted: before any member is read, the archive as a whole is checked (at most
`InputLimits.max_members` entries, no absolute or `..` member paths, no name listed twice, declared
sizes within `InputLimits.max_member_bytes` each and `InputLimits.max_total_unpacked` together, and
together at most `InputLimits.max_unpack_ratio` times the compressed bytes beyond
`InputLimits.ratio_exempt_bytes`, since parsing is what takes time and memory); members
are then streamed in chunks and the bytes actually unpacked are counted against the same caps,
so a small zip that claims or hides a huge member fails fast in constant memory. Archives
inside an archive are never opened (nesting depth 0): a member is only ever bytes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from benchpress.input_limits import input_limits
from benchpress.digest import CHUNK
from benchpress.errors import BadInputError

__all__ = ["decode_text", "csv_records", "read_members", "open_zip", "zip_files", "member_chunks",
           "zip_digests", "head_bytes"]

# what zipfile raises on damaged, encrypted or unsupported members
_UNPACK_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
                  ValueError, OSError)
_DRIVE = re.compile(r"^[A-Za-z]:")


def head_bytes(path: Path, n: int) -> bytes:
    """The first `n` bytes of a file (what format detection looks at), without reading the
    rest."""
    with open(path, "rb") as fh:
        return fh.read(n)


def decode_text(raw: bytes, name) -> str:
    """`raw` as UTF-8 text, a leading byte-order mark dropped; a clear error otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{name}: not UTF-8 text (byte {exc.start}); re-save it as UTF-8") from exc


def csv_records(name: str, raw: bytes, required=()) -> list[tuple[int, dict]]:
    """(first line number, record) for each record of a CSV file, BOM stripped.

    Quoted fields may span lines; the line number is where the record starts. Fields are
    stripped, blank ones are None. A header without every `required` column is refused.
    """
    text = decode_text(raw, name)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header = next(reader, None)
    missing = set(required) - {h.strip() for h in header or []}
    if missing:
        raise BadInputError(f"{name}: header lacks column(s) {sorted(missing)}")
    if header is None:
        raise BadInputError(f"{name}: empty file; expected a header line")
    header = [h.strip() for h in header]
    records, start = [], reader.line_num + 1
    try:
        for values in reader:
            if any(v.strip() for v in values):
                if len(values) > len(header):
                    raise BadInputError(f"{name} line {start}: {len(values)} fields but the header "
                                        f"has {len(header)}; is a quoted field left open?")
                records.append((start, {h: (v.strip() or None) for h, v in zip(header, values)}))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise BadInputError(f"{name} line {start}: malformed CSV ({exc}; is a quoted field left "
                            "open?)") from exc
    return records


@contextmanager
def open_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    """`path` opened as a zip; a damaged archive is a one-line `BadInputError`."""
    try:
        zf = zipfile.ZipFile(path)
    except (*_UNPACK_ERRORS, IndexError) as exc:
        raise BadInputError(f"{path}: not a readable zip archive ({exc})") from exc
    with zf:
        yield zf


def zip_files(zf: zipfile.ZipFile, name) -> list[zipfile.ZipInfo]:
    """The file (not folder) members of `zf`, once the archive as a whole passes the checks in
    the module docstring; `name` is what error messages call the archive."""
    limits = input_limits()
    infos = zf.infolist()
    if len(infos) > limits.max_members:
        raise BadInputError(f"{name}: the archive lists {len(infos):,} members; at most "
                            f"{limits.max_members:,} are read")
    seen: set[str] = set()
    total = packed = 0
    for info in infos:
        member = info.filename
        parts = member.replace("\\", "/").split("/")
        if member.startswith(("/", "\\")) or _DRIVE.match(member) or ".." in parts:
            raise BadInputError(f"{name}: archive member {member!r} has an absolute path or '..'; "
                                "refused")
        if member in seen:
            raise BadInputError(f"{name}: archive member {member!r} is listed twice; refused as "
                                "ambiguous")
        seen.add(member)
        if info.file_size > limits.max_member_bytes:
            raise BadInputError(f"{name}: archive member {member!r} unpacks to {info.file_size:,} "
                                f"bytes, more than the {limits.max_member_bytes:,}-byte cap")
        total += info.file_size
        packed += info.compress_size
    if total > limits.max_total_unpacked:
        raise BadInputError(f"{name}: the archive unpacks to {total:,} bytes, more than the "
                            f"{limits.max_total_unpacked:,}-byte cap")
    if zf.filename:  # a member's declared compressed size cannot count past the file's
        packed = min(packed, Path(zf.filename).stat().st_size)
    if total > max(limits.max_unpack_ratio * packed, limits.ratio_exempt_bytes):
        raise BadInputError(f"{name}: the archive unpacks to {total:,} bytes, more than "
                            f"{limits.max_unpack_ratio} times its {packed:,} compressed bytes; "
                            "refused as a likely zip bomb (BENCHPRESS_MAX_UNPACK_RATIO to "
                            "allow more)")
    return [i for i in infos if not i.is_dir()]


def member_chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name,
                  unpacked: list[int]) -> Iterator[bytes]:
    """The bytes of one member in chunks, counted against the member cap and (through the
    one-element running total `unpacked`, shared by the members of one archive) the total cap."""
    limits = input_limits()
    size = 0
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(CHUNK):
                size += len(chunk)
                unpacked[0] += len(chunk)
                if size > limits.max_member_bytes:
                    raise BadInputError(f"{name}: archive member {info.filename!r} unpacks to more "
                                        f"than the {limits.max_member_bytes:,}-byte cap; stopped")
                if unpacked[0] > limits.max_total_unpacked:
                    raise BadInputError(f"{name}: the archive unpacks to more than the "
                                        f"{limits.max_total_unpacked:,}-byte cap; stopped")
                yield chunk
    except _UNPACK_ERRORS as exc:
        raise BadInputError(f"{name}: archive member {info.filename!r} cannot be unpacked "
                            f"({exc})") from exc


def zip_digests(path: Path, keep: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(member path, sha256) of each file member of the zip at `path` whose path passes `keep`,
    streamed under the caps (the input of a tree digest)."""
    out, unpacked = [], [0]
    with open_zip(path) as zf:
        for info in zip_files(zf, path):
            if keep(info.filename):
                digest = hashlib.sha256()
                for chunk in member_chunks(zf, info, path, unpacked):
                    digest.update(chunk)
                out.append((info.filename, digest.hexdigest()))
    return out


def _unique(pairs, path: Path) -> dict[str, bytes]:
    """Members keyed by base name; two members with one base name make the input ambiguous."""
    members: dict[str, bytes] = {}
    for member, base, read in pairs:
        if base in members:
            raise BadInputError(f"{path}: two members are named {base!r} ({member!r} is the "
                                "second); refused as ambiguous")
        members[base] = read()
    return members


def _read_capped(file: Path, folder: Path) -> bytes:
    limits = input_limits()
    size = file.stat().st_size
    if size > limits.max_member_bytes:
        member = file.relative_to(folder).as_posix()
        raise BadInputError(f"{folder}: {member} holds {size:,} bytes, "
                            f"more than the {limits.max_member_bytes:,}-byte cap")
    return file.read_bytes()


def read_members(path: Path, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """Files whose base name passes `wanted`, from a folder, a zip, or the file itself, keyed by
    base name (a base name found twice is refused as ambiguous)."""
    if path.is_dir():
        return _unique(((p.relative_to(path).as_posix(), p.name, lambda p=p: _read_capped(p, path))
                        for p in sorted(path.rglob("*"))
                        if p.is_file() and not p.name.startswith(".") and wanted(p.name)), path)
    if zipfile.is_zipfile(path):
        unpacked = [0]
        with open_zip(path) as zf:
            return _unique(((i.filename, PurePosixPath(i.filename).name,
                             lambda i=i: b"".join(member_chunks(zf, i, path, unpacked)))
                            for i in zip_files(zf, path)
                            if "__MACOSX" not in i.filename
                            and wanted(PurePosixPath(i.filename).name)), path)
    return {path.name: path.read_bytes()}
