"""Reading raw files for the adapters: UTF-8 text (with or without a byte-order mark),
CSV records with their line numbers, and the files of a folder or zip archive."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path, PurePosixPath

from benchpress.errors import BadInputError

__all__ = ["decode_text", "csv_records", "read_members"]


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


def read_members(path: Path, wanted) -> dict[str, bytes]:
    """Files whose base name passes `wanted`, from a folder, a zip, or the file itself."""
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.rglob("*"))
                if p.is_file() and not p.name.startswith(".") and wanted(p.name)}
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return {PurePosixPath(i.filename).name: zf.read(i) for i in zf.infolist()
                    if not i.is_dir() and "__MACOSX" not in i.filename
                    and wanted(PurePosixPath(i.filename).name)}
    return {path.name: path.read_bytes()}
