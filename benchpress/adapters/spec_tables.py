"""Spec'd files as tables: the first half of the spec adapter (`adapters.spec_reader`).

A version of a spec'd leaderboard is a file or a folder of files. `version_tables` picks the
spec's tables out of it as polars frames of text columns (header cells as column names, plus
`_row`, each row's place in its file: "line 29", "mbpp.csv line 3", `results.json ["x"]`):
a CSV is read by polars; a markdown table or a JSON document, small by nature, is parsed in
Python. `detect_spec` applies the spec's detect rules to a file (or to the files of a
folder). Header cells are compared by `spec_schema.header_key` (markup, HTML entities, case
and extra spaces aside).
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
from pathlib import Path

import polars as pl

from benchpress.adapters._files import decode_text
from benchpress.adapters._markdown import markdown_tables
from benchpress.adapters.spec_schema import MODEL_KEY, DetectRule, Spec, TableSpec, header_key
from benchpress.errors import BadInputError
from benchpress.input_limits import InputLimits, input_limits

__all__ = ["version_tables", "version_files", "detect_spec", "column_of"]

_DETECT_BYTES = 1024 * 1024   # how much of a file a detect rule reads (its tables, its header)
_DETECT_TEXT = 64 * 1024      # ... and where its `contains` and `pattern` are looked for


def version_files(path: Path) -> list[tuple[str | None, Path]]:
    """(name inside the version's folder, file) of one version: a folder's regular files
    (hidden ones skipped), or the file itself (its name unknown: a cached copy)."""
    if not path.is_dir():
        return [(None, path)]
    files = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")),
                   key=lambda p: p.name)
    most = input_limits().max_members
    if len(files) > most:
        raise BadInputError(f"{path}: {len(files):,} files; a version folder may hold "
                            f"{most:,} (env {InputLimits.variable('max_members')})")
    return [(p.name, p) for p in files]


def _read_bytes(file: Path, label: str) -> bytes:
    size, most = file.stat().st_size, input_limits().max_member_bytes
    if size > most:
        raise BadInputError(f"{label}: {size:,} bytes; one file may hold "
                            f"{most:,} (env {InputLimits.variable('max_member_bytes')})")
    return file.read_bytes()


def column_of(columns: list[str], alternatives) -> str | None:
    """The first of `alternatives` among `columns` (compared by `header_key`)."""
    keyed = {header_key(c): c for c in reversed(columns)}
    return next((keyed[header_key(a)] for a in alternatives if header_key(a) in keyed), None)


def _has_header(columns: list[str], wanted) -> bool:
    keys = {header_key(c) for c in columns}
    return all(header_key(w) in keys for w in wanted)


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out


def _text_frame(header: list[str], rows: list[list], pointers: list[str]) -> pl.DataFrame:
    header = _unique_names(header)
    data = {h: [r[k] if k < len(r) else None for r in rows] for k, h in enumerate(header)}
    data["_row"] = pointers
    return pl.DataFrame(data, schema={**{h: pl.String for h in header}, "_row": pl.String})


def _markdown_frames(text: str, table: TableSpec, prefix: str) -> list[pl.DataFrame]:
    frames = []
    for found in markdown_tables(text):
        if not _has_header(found.header, table.header):
            continue
        heading = header_key(found.heading)
        if table.heading is not None and not table.heading.search(heading):
            continue
        if table.not_heading is not None and table.not_heading.search(heading):
            continue
        frames.append(_text_frame(found.header, [c for _, c in found.rows],
                                  [f"{prefix}line {n}" for n, _ in found.rows]))
        if not table.every:
            break
    return frames


def _csv_frame(raw: bytes, label: str, prefix: str) -> pl.DataFrame:
    text = decode_text(raw, label)
    try:
        frame = pl.read_csv(io.StringIO(text), infer_schema=False, truncate_ragged_lines=False)
    except Exception as exc:  # polars raises several types for malformed CSV
        raise BadInputError(f"{label}: not a readable CSV ({str(exc).splitlines()[0][:160]})") \
            from exc
    frame = frame.rename({c: c.strip() for c in frame.columns})
    # a record is a line unless a quoted field spans lines: then rows are counted instead
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines == frame.height + 1:
        pointer = pl.format(prefix + "line {}", pl.int_range(2, frame.height + 2))
    else:
        pointer = pl.format(prefix + "row {}", pl.int_range(1, frame.height + 1))
    return frame.with_columns(pl.col(c).str.strip_chars() for c in frame.columns) \
        .with_columns(pointer.alias("_row"))


def _flat(record: dict, into: dict, prefix: str = "") -> dict:
    for key, value in record.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            _flat(value, into, path + "/")
        elif isinstance(value, bool):
            into[path] = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            into[path] = str(value)
    return into


def _json_frame(raw: bytes, label: str, table: TableSpec, prefix: str) -> pl.DataFrame | None:
    try:
        doc = json.loads(decode_text(raw, label))
    except ValueError as exc:
        raise BadInputError(f"{label}: not JSON ({exc})") from exc
    if table.records == "object":
        if not isinstance(doc, dict):
            return None
        items = [(str(k), v) for k, v in doc.items() if isinstance(v, dict)]
        rows = [_flat(v, {MODEL_KEY: k}) for k, v in items]
        pointers = [f"{prefix}[{json.dumps(k, ensure_ascii=False)}]" for k, _ in items]
    else:
        if not isinstance(doc, list):
            return None
        kept = [(k, v) for k, v in enumerate(doc) if isinstance(v, dict)]
        rows = [_flat(v, {}) for _, v in kept]
        pointers = [f"{prefix}[{k}]" for k, _ in kept]
    header = list(dict.fromkeys(key for row in rows for key in row))
    return _text_frame(header, [[row.get(h) for h in header] for row in rows], pointers)


def _file_tables(spec: Spec, name: str | None, file: Path, label: str) -> list[tuple[TableSpec, pl.DataFrame]]:
    """The (table, frame) pairs one file holds. A markdown file: every table spec picks its
    table(s). A CSV or JSON file is one table: the first table spec that fits it (its file
    name, its header), so that the specs of a file's header variants are tried in order."""
    tables = [t for t in spec.tables if name is None or t.file is None
              or fnmatch.fnmatch(name, t.file)]
    prefix = f"{name} " if name else ""
    raw = _read_bytes(file, label)
    out = []
    for fmt in dict.fromkeys(t.format for t in tables):
        group = [t for t in tables if t.format == fmt]
        if fmt == "markdown":
            text = decode_text(raw, label)
            out += [(t, f) for t in group for f in _markdown_frames(text, t, prefix)]
        elif _looks_like(raw, fmt):
            csv_frame = _csv_frame(raw, label, prefix) if fmt == "csv" else None
            for t in group:
                frame = csv_frame if fmt == "csv" else _json_frame(raw, label, t, prefix)
                if frame is not None and _has_header(frame.columns, t.header) \
                        and column_of(frame.columns, t.model.columns):
                    out.append((t, frame))
                    break
        if out and name is None:
            break  # a lone file is read in one format
    return out


def _looks_like(raw: bytes, fmt: str) -> bool:
    head = raw[:4096].lstrip(b"\xef\xbb\xbf").lstrip()
    if fmt == "json":
        return head[:1] in (b"{", b"[")
    first = head.split(b"\n", 1)[0]
    return b"," in first and head[:1] not in (b"{", b"[", b"#", b"|", b"<")


def _rule_holds(spec: Spec, rule: DetectRule, name: str | None, content: bytes) -> bool:
    if rule.file and name is not None and not fnmatch.fnmatch(name, rule.file):
        return False
    fmt = rule.format or spec.format
    head = content[:_DETECT_BYTES]
    if fmt != "markdown" and not _looks_like(head, fmt):
        return False
    top = head[:_DETECT_TEXT].decode("utf-8", "replace").lstrip("\ufeff")
    if not all(c in top for c in rule.contains):
        return False
    if rule.pattern is not None and not rule.pattern.search(top):
        return False
    if rule.header and fmt == "markdown":
        text = head.decode("utf-8", "replace")
        if not any(_has_header(t.header, rule.header) for t in markdown_tables(text)):
            return False
    if rule.header and fmt == "csv":
        first = next(csv.reader(io.StringIO(top.split("\n", 1)[0])), [])
        if not _has_header([c.strip() for c in first], rule.header):
            return False
    if rule.keys:
        if fmt != "json" or len(content) > input_limits().max_member_bytes:
            return False
        try:
            doc = json.loads(content.decode("utf-8-sig"))
        except ValueError:
            return False
        first = next(iter(doc.values()), None) if isinstance(doc, dict) else \
            (doc[0] if isinstance(doc, list) and doc else None)
        if not isinstance(first, dict) or not all(k in _flat(first, {}) or k in first
                                                  for k in rule.keys):
            return False
    return True


def detect_spec(spec: Spec, path: Path, content: bytes) -> bool:
    """Whether the file (or a file of the folder) `path` is one of the spec's leaderboard."""
    if not path.is_dir():
        return any(_rule_holds(spec, rule, None, content) for rule in spec.detect)
    for name, file in version_files(path)[:50]:
        with file.open("rb") as fh:
            head = fh.read(_DETECT_BYTES)
        if any(_rule_holds(spec, rule, name, head) for rule in spec.detect):
            return True
    return False


def version_tables(spec: Spec, path: Path):
    """(file name or None, table spec, frame) of every table the spec picks out of one
    version (a file, or a folder of files)."""
    for name, file in version_files(path):
        label = f"{path}/{name}" if name else str(path)
        for table, frame in _file_tables(spec, name, file, label):
            yield name, table, frame
