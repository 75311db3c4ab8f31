"""The spec adapter: one adapter reads every leaderboard described by a spec file.

`spec_adapter(spec)` turns a checked spec (`adapters.spec_schema`) into an `Adapter`:
`detect` applies the spec's detect rules to a file (or to the files of a folder), `read`
picks the spec's tables out of one version (a file, or a folder of files such as EvalPlus's
``humaneval.csv`` + ``mbpp.csv``) and reshapes them into the interchange frames.

Reading is vectorized: each table becomes one polars frame of text columns (a CSV is read
by polars; a markdown table or a JSON document, small by nature, is parsed in Python), then
one set of expressions names the models, parses the values (``1.8 %``, ``84.28%``,
``1,234``; blank, ``-``, ``n/a`` mean "not reported"; anything else is kept as written so
that validation quarantines it with its reason) and unpivots the benchmark columns.
Per-name work (markup removal, settings in parentheses) runs once per distinct name.

Every score cites the version's own file: the adapter leaves `reference_url` empty and the
build fills in the version's URL (`cites_source`), or, for a file of a multi-file version,
the file's name, which the build resolves against that URL (``.../blob/<commit>/mbpp.csv``).
The benchmarks the spec declares carry their scale kind, unit, direction and bounds; each
regime adds the benchmark versions ``<id>@<from>`` it starts (`store.methods`), described
with the regime's name and the fields it changes.
"""

from __future__ import annotations

import csv
import fnmatch
import html
import io
import json
import re
from functools import partial
from pathlib import Path

import polars as pl

from benchpress import limits
from benchpress.adapters._effort import setting_in_name
from benchpress.adapters._files import decode_text
from benchpress.adapters._markdown import markdown_tables
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, Adapter, AdapterOutput,
)
from benchpress.adapters.spec_schema import (
    MODEL_KEY, DetectRule, Spec, TableSpec, header_key,
)
from benchpress.errors import BadInputError

__all__ = ["spec_adapter", "read_spec", "detect_spec", "benchmark_rows", "MISSING"]

#: cells that mean "not reported" (lower-cased)
MISSING = ["", "-", "--", "—", "–", "n/a", "na", "nan", "none", "null", "?", "tbd"]
_NUMBER = r"^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)\s*%?\s*[*†‡]*$"
_MARKUP = r"<[^>]+>|\*\*|__|`"
_DETECT_BYTES = 1024 * 1024   # how much of a file a detect rule reads (its tables, its header)
_DETECT_TEXT = 64 * 1024      # ... and where its `contains` and `pattern` are looked for
_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0"}


def _version_files(path: Path) -> list[tuple[str | None, Path]]:
    """(name inside the version's folder, file) of one version: a folder's regular files
    (hidden ones skipped), or the file itself (its name unknown: a cached copy)."""
    if not path.is_dir():
        return [(None, path)]
    files = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")),
                   key=lambda p: p.name)
    if len(files) > limits.MAX_MEMBERS:
        raise BadInputError(f"{path}: {len(files):,} files; a version folder may hold "
                            f"{limits.MAX_MEMBERS:,} (env BENCHPRESS_MAX_MEMBERS)")
    return [(p.name, p) for p in files]


def _read_bytes(file: Path, label: str) -> bytes:
    size = file.stat().st_size
    if size > limits.MAX_MEMBER_BYTES:
        raise BadInputError(f"{label}: {size:,} bytes; one file may hold "
                            f"{limits.MAX_MEMBER_BYTES:,} (env BENCHPRESS_MAX_MEMBER_BYTES)")
    return file.read_bytes()


def _bool(value) -> bool | None:
    text = str(value).strip().lower() if value is not None else ""
    return True if text in _TRUE else False if text in _FALSE else None


_LINK = r"\[([^\]]*)\]\([^)]*\)"


def _clean(text: str | None) -> str:
    """A cell's text without markup: links keep their label, HTML tags and emphasis go."""
    text = html.unescape(text or "")
    text = re.sub(_MARKUP, "", re.sub(_LINK, r"\1", text))
    return re.sub(r"\s+", " ", text).strip()


def _cleaned(column: str) -> pl.Expr:
    """`_clean` as an expression (HTML entities aside: see `_models_and_scores`)."""
    return (pl.col(column).str.replace_all(_LINK, "${1}").str.replace_all(_MARKUP, "")
            .str.replace_all(r"\s+", " ").str.strip_chars())


def _column(columns: list[str], alternatives) -> str | None:
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


# ---- one file -> frames ----------------------------------------------------------------

def _markdown_frames(text: str, table: TableSpec, prefix: str) -> list[pl.DataFrame]:
    frames = []
    for found in markdown_tables(text):
        if not _has_header(found.header, table.header):
            continue
        heading = _clean(found.heading)
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
        pointers = [f"{prefix}[{json.dumps(k)}]" for k, _ in items]
    else:
        if not isinstance(doc, list):
            return None
        kept = [(k, v) for k, v in enumerate(doc) if isinstance(v, dict)]
        rows = [_flat(v, {}) for _, v in kept]
        pointers = [f"{prefix}[{k}]" for k, _ in kept]
    header = list(dict.fromkeys(key for row in rows for key in row))
    return _text_frame(header, [[row.get(h) for h in header] for row in rows], pointers)


def _frames(spec: Spec, name: str | None, file: Path, label: str) -> list[tuple[TableSpec, pl.DataFrame]]:
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
                        and _column(frame.columns, t.model.columns):
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


# ---- frames -> interchange rows ---------------------------------------------------------

def _short(value: pl.Expr) -> pl.Expr:
    """A variant's value in a model id: a commit hash shortened as git does."""
    return pl.when(value.str.contains(r"^[0-9a-f]{20,}$")).then(value.str.slice(0, 7)) \
        .otherwise(value)


def _models_and_scores(table: TableSpec, frame: pl.DataFrame, notes: list[str]):
    """(models frame, scores frame) of one table's frame (see the module docstring)."""
    model = table.model
    name_col = _column(frame.columns, model.columns)
    if name_col is None:
        return None
    settings = {key: _column(frame.columns, alts) for key, alts in
                (*model.setting, *model.qualifiers)}
    official = _column(frame.columns, model.official) if model.official else None
    frame = frame.filter(pl.col(name_col).is_not_null()).with_columns(
        _cleaned(name_col).alias("_name"),
        *(pl.col(col).alias(f"_set_{key}") if col else pl.lit(None, pl.String).alias(f"_set_{key}")
          for key, col in settings.items()))
    entities = {n: _clean(n) for n in frame.filter(pl.col("_name").str.contains("&", literal=True))
                ["_name"].unique().to_list()}
    if entities:  # (rare) HTML entities in a name: "&amp;"
        frame = frame.with_columns(pl.col("_name").replace(entities))
    empty = frame.filter(pl.col("_name") == "").height
    if empty:
        notes.append(f"{empty} row(s) without a model name left out")
    frame = frame.filter(pl.col("_name") != "")
    parsed = ({n: setting_in_name(n) for n in frame["_name"].unique().to_list()}
              if model.settings_in_name else {})
    frame = frame.with_columns(pl.col("_name").replace_strict(
        {n: p[0] for n, p in parsed.items()}, default=pl.col("_name"), return_dtype=pl.String)
        .alias("_id"))
    if model.namespace:
        is_official = (pl.col(official).str.strip_chars().str.to_lowercase()
                       .is_in(sorted(_TRUE)).fill_null(False) if official else pl.lit(False))
        parts = pl.col("_id").str.splitn("/", 2).struct
        frame = frame.with_columns(
            pl.when(pl.col("_id").str.contains("/", literal=True) & ~is_official)
            .then(pl.format("{} ({})", parts.field("field_1"), parts.field("field_0")))
            .otherwise(pl.col("_id")).alias("_id"))
    suffix = pl.lit("")
    if model.variants:
        spread = [pl.when(pl.col(f"_set_{k}").n_unique().over("_id") > 1)
                  .then(_short(pl.col(f"_set_{k}").fill_null("none")))
                  for k in model.variants]
        suffix = pl.concat_str(spread, separator=", ", ignore_nulls=True).fill_null("")
    frame = frame.with_columns(suffix.alias("_suffix")).with_columns(
        pl.when(pl.col("_suffix") != "").then(pl.format("{} ({})", "_id", "_suffix"))
        .otherwise("_id").alias("_id"),
        pl.when(pl.col("_suffix") != "").then(pl.format("{} ({})", "_name", "_suffix"))
        .otherwise("_name").alias("_display"),
    )
    frame = frame.with_columns(*_setting_json(frame, model, parsed))
    models = frame.unique("_id", keep="first", maintain_order=True).select(
        pl.col("_id").alias("model_id"), pl.col("_display").alias("name"),
        pl.col("_setting").alias("setting"),
        pl.col("_setting").str.json_path_match("$.reasoning").replace_strict(
            {"true": True, "false": False}, default=None, return_dtype=pl.Boolean)
        .alias("is_reasoning"),
        pl.lit(model.open_weights, dtype=pl.Boolean).alias("open_weights"),
        pl.col("_row").alias("row"))
    return models, _scores(table, frame)


def _as_json(fields: dict[str, pl.Expr]) -> pl.Expr:
    """The fields as one JSON object per row (sorted keys, null fields left out; null when
    none is left)."""
    if not fields:
        return pl.lit(None, pl.String)
    encoded = pl.struct(**{k: fields[k] for k in sorted(fields)}).struct.json_encode()
    text = encoded.str.replace_all(r'"[^"]*":null,?', "").str.replace(r",\}$", "}")
    return pl.when(text == "{}").then(None).otherwise(text)


def _setting_json(frame: pl.DataFrame, model, parsed: dict) -> tuple[pl.Expr, pl.Expr]:
    """Each row's setting as JSON text: the settings its name carries and the setting
    columns (a column of true/false values as booleans); the model's setting adds its
    upstream id (`store.renames`: the name and the keys the spec lists, setting or
    qualifier), the score's (`reported_setting`) does not."""
    fields: dict[str, pl.Expr] = {}
    for key in dict.fromkeys(k for _, sets in parsed.values() for k in sets):
        values = {n: p[1].get(key) for n, p in parsed.items()}
        dtype = pl.Boolean if all(isinstance(v, bool) or v is None for v in values.values()) \
            else pl.String
        fields[key] = pl.col("_name").replace_strict(values, default=None, return_dtype=dtype)
    for key, _ in model.setting:
        column = pl.col(f"_set_{key}")
        low = frame[f"_set_{key}"].drop_nulls().str.strip_chars().str.to_lowercase()
        flags = low.len() > 0 and low.is_in(["true", "false"]).all()
        fields[key] = (column.str.strip_chars().str.to_lowercase() == "true") if flags else column
    reported = _as_json(fields)
    if not model.upstream_id:
        return reported.alias("_setting"), reported.alias("_reported")
    parts = [pl.col("_name") if k == "name" else pl.col(f"_set_{k}") for k in model.upstream_id]
    upstream = pl.concat_str([p.fill_null("") for p in parts], separator="|")
    return _as_json({**fields, "upstream_id": upstream}).alias("_setting"), \
        reported.alias("_reported")


def _scores(table: TableSpec, frame: pl.DataFrame) -> pl.DataFrame:
    found = [(b, _column(frame.columns, b.columns)) for b in table.benchmarks]
    found = [(b, col) for b, col in found if col is not None]
    if not found:
        return pl.DataFrame(schema=SCORE_COLUMNS)
    wide = frame.select(pl.col("_id").alias("model_id"), pl.col("_row").alias("_base_row"),
                        pl.col("_reported").alias("reported_setting"),
                        *(pl.col(col).alias(b.id) for b, col in found))
    units = {b.id: b.values for b in table.benchmarks}
    derived = {b.id: b.derived for b in table.benchmarks}
    headers = {b.id: col for b, col in found}
    cell = pl.col("_cell").str.replace_all(_MARKUP, "").str.strip_chars()
    number = cell.str.extract(_NUMBER, 1)
    long = (wide.unpivot(index=["model_id", "_base_row", "reported_setting"],
                         on=[b.id for b, _ in found], variable_name="benchmark_id",
                         value_name="_cell")
            .filter(cell.is_not_null() & ~cell.str.to_lowercase().is_in(MISSING)))
    return long.select(
        "model_id", "benchmark_id",
        pl.when(number.is_not_null()).then(number.str.replace_all(",", "")).otherwise(cell)
        .alias("score_raw"),
        pl.col("benchmark_id").replace_strict(units, default=None, return_dtype=pl.String)
        .alias("unit"),
        pl.lit(None, pl.String).alias("reference_url"),
        pl.lit(None, pl.String).alias("source_type"),
        "reported_setting",
        pl.lit(None, pl.String).alias("audit_status"),
        pl.lit(None, pl.String).alias("observed_at"),
        pl.col("benchmark_id").replace_strict(derived, return_dtype=pl.Boolean).alias("derived"),
        pl.when(number.is_null()).then(pl.format("cell {}", pl.col("_cell")))
        .alias("notes"),
        pl.format("{}, column '{}'", "_base_row",
                  pl.col("benchmark_id").replace_strict(headers, return_dtype=pl.String))
        .alias("row"),
    )


def _where(spec: Spec) -> str:
    """How a message names the spec file: as it sits in a home (`sources/specs/NAME.yaml`)."""
    return f"sources/specs/{spec.path.name}"


def benchmark_rows(spec: Spec) -> list[dict]:
    """The benchmarks the spec declares, then the versions its regimes start (each named
    for its regime, with the fields the regime changes)."""
    base = {}
    for table in spec.tables:
        for b in table.benchmarks:
            base.setdefault(b.id, {
                "benchmark_id": b.id, "name": b.name or b.id, "category": b.category,
                "metric": b.unit, "scale": b.scale, "unit": b.unit,
                "higher_is_better": b.higher_is_better, "lower": b.lower, "upper": b.upper,
                "row": f"{_where(spec)} line {b.line}"})
    rows = list(base.values())
    current = {bid: dict(row) for bid, row in base.items()}
    for regime in spec.regimes:
        changes = dict(regime.overrides)
        for bid in regime.benchmarks or list(base):
            row = {**current[bid], **changes.get(bid, {})}
            current[bid] = row  # a later regime starts from this one's fields
            rows.append({**row, "benchmark_id": f"{bid}@{regime.start}",
                         "name": f"{row['name']} ({regime.name}, from {regime.start})",
                         "metric": row["unit"], "row": f"{_where(spec)} line {regime.line}"})
    return rows


def read_spec(spec: Spec, path: Path) -> AdapterOutput:
    """One version of the spec's leaderboard (a file or a folder of files)."""
    model_parts, score_parts, notes = [], [], []
    multi = path.is_dir()
    read_any = False
    for name, file in _version_files(path):
        label = f"{path}/{name}" if name else str(path)
        for table, frame in _frames(spec, name, file, label):
            read_any = True
            got = _models_and_scores(table, frame, notes)
            if got is None:
                continue
            models, scores = got
            model_parts.append(models)
            if multi:  # cited as the file of the version's folder
                scores = scores.with_columns(pl.lit(name, pl.String).alias("reference_url"))
            score_parts.append(scores.with_columns(
                pl.lit(spec.source_type, pl.String).alias("source_type")))
    if not read_any:
        notes.append(f"no table of spec '{spec.name}' in this version")
    models = (pl.concat([m for m in model_parts], how="diagonal_relaxed")
              .unique("model_id", keep="first", maintain_order=True)
              if model_parts else pl.DataFrame(schema=MODEL_COLUMNS))
    models = pl.DataFrame(schema=MODEL_COLUMNS).vstack(
        models.select([pl.col(c).cast(t) if c in models.columns else pl.lit(None, t).alias(c)
                       for c, t in MODEL_COLUMNS.items()]))
    scores = (pl.concat([s.select(list(SCORE_COLUMNS)) for s in score_parts])
              if score_parts else pl.DataFrame(schema=SCORE_COLUMNS))
    benchmarks = pl.DataFrame(benchmark_rows(spec), schema=BENCHMARK_COLUMNS)
    return AdapterOutput(models, benchmarks, scores.cast(SCORE_COLUMNS), notes)


# ---- detection --------------------------------------------------------------------------

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
        if fmt != "json" or len(content) > limits.MAX_MEMBER_BYTES:
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
    for name, file in _version_files(path)[:50]:
        with file.open("rb") as fh:
            head = fh.read(_DETECT_BYTES)
        if any(_rule_holds(spec, rule, name, head) for rule in spec.detect):
            return True
    return False


def spec_adapter(spec: Spec) -> Adapter:
    """The adapter that reads `spec`'s leaderboard (named as the spec)."""
    return Adapter(name=spec.name, detect=partial(detect_spec, spec),
                   read=partial(read_spec, spec), cites_source=True,
                   method_changes=spec.method_changes() or None)
