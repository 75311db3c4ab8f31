"""The BenchPress JSON schema: `models[]`, `benchmarks[]`, `scores[]`.

Used by the Hugging Face dataset `microsoft/benchpress-score-matrix`
(`data/llm_benchmark_data.json`) and by github.com/anadim/llm-benchmark-matrix.
Each score: model_id, benchmark_id, score, reference_url (and optionally source_type,
reported_setting, audit_status, notes).

A folder of such files (``part-000.json``, ``part-001.json`` ... : a large export split so
that each file stays under `InputLimits.max_member_bytes`) is one source: its files are read one
at a time in name order, each parsed, turned into columns and released before the next, and
a row pointer names its file (``part-001.json scores[12]``). A single file's pointers stay
``scores[12]``.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from benchpress.input_limits import input_limits
from benchpress.adapters._json import benchmark_rows, json_text, load_json, model_rows, text_or_none
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, Adapter, AdapterOutput, frame,
)
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "detect", "part_files"]


def _is_json(content: bytes) -> bool:
    return (
        content.lstrip().startswith(b"{")
        and b'"scores"' in content
        and b'"observed"' not in content
    )


def part_files(folder: Path) -> list[Path]:
    """The visible files directly in `folder`, in name order (empty unless every one is
    a ``.json`` file)."""
    files = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    if not files or not all(p.is_file() and p.suffix == ".json" for p in files):
        return []
    return files


def _part_bytes(file: Path, folder: Path) -> bytes:
    limits = input_limits()
    size = file.stat().st_size
    if size > limits.max_member_bytes:
        raise BadInputError(f"{folder}: {file.name} holds {size:,} bytes, more than the "
                            f"{limits.max_member_bytes:,}-byte cap per file; split it into "
                            "several files")
    return file.read_bytes()


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        files = part_files(path)
        return bool(files) and _is_json(_part_bytes(files[0], path))
    return _is_json(content)


# the score fields as (column, key in the file, conversion); the rest of SCORE_COLUMNS
# stay null
_SCORE_FIELDS = (
    ("model_id", "model_id", text_or_none),
    ("benchmark_id", "benchmark_id", text_or_none),
    ("score_raw", "score", text_or_none),
    ("reference_url", "reference_url", lambda v: v or None),
    ("source_type", "source_type", lambda v: v or None),
    ("reported_setting", "reported_setting", json_text),
    ("audit_status", "audit_status", lambda v: v or None),
    ("notes", "notes", lambda v: v or None),
)


def _scores_frame(scores: list, prefix: str) -> pl.DataFrame:
    """The `scores[]` list as a frame, built column by column (no dict per row).

    Returns a frame of shape (len(scores), len(SCORE_COLUMNS)); ``row`` is
    ``f"{prefix}scores[{k}]"``.
    """
    items = [s if isinstance(s, dict) else {} for s in scores]
    data = {col: [convert(s.get(key)) for s in items] for col, key, convert in _SCORE_FIELDS}
    del items
    df = pl.DataFrame(data, schema={col: SCORE_COLUMNS[col] for col in data})
    return df.with_columns(
        *(pl.lit(None, dtype=t).alias(c) for c, t in SCORE_COLUMNS.items()
          if c not in data and c != "row"),
        pl.format(prefix + "scores[{}]", pl.int_range(pl.len())).alias("row"),
    ).select(list(SCORE_COLUMNS))


def _read_doc(doc, where: Path, prefix: str = "") -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    if not isinstance(doc, dict) or not isinstance(doc.get("scores"), list):
        raise BadInputError(f"{where}: expected an object with a 'scores' list")
    models = [dict(m, row=prefix + m["row"]) for m in model_rows(doc.get("models"))]
    benchmarks = [dict(b, row=prefix + b["row"]) for b in benchmark_rows(doc.get("benchmarks"))]
    return (frame(models, MODEL_COLUMNS), frame(benchmarks, BENCHMARK_COLUMNS),
            _scores_frame(doc["scores"], prefix))


def read(path: Path) -> AdapterOutput:
    if not path.is_dir():
        return AdapterOutput(*_read_doc(load_json(path), path))
    files = part_files(path)
    if not files:
        raise BadInputError(f"{path}: expected a folder of BenchPress JSON files (*.json)")
    parts = []
    for file in files:
        raw = _part_bytes(file, path)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadInputError(f"{path}: {file.name}: not UTF-8 text (byte {exc.start}); "
                                "re-save it as UTF-8") from exc
        del raw
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}: {file.name}: malformed JSON at line {exc.lineno}, "
                                f"column {exc.colno}: {exc.msg}") from exc
        del text
        parts.append(_read_doc(doc, file, f"{file.name} "))
        del doc
    return AdapterOutput(*(pl.concat([p[k] for p in parts]) for k in range(3)))


ADAPTER = Adapter(
    name="benchpress-json",
    detect=detect,
    read=read,
)
