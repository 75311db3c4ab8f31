"""Shared JSON loading for adapters: one clear error for malformed or mis-encoded files."""

from __future__ import annotations

import json
from pathlib import Path

from benchpress.adapters._files import decode_text
from benchpress.errors import BadInputError

__all__ = ["load_json", "json_text", "text_or_none", "model_rows", "benchmark_rows"]


def load_json(path: Path):
    text = decode_text(path.read_bytes(), path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc


def json_text(value) -> str | None:
    """Compact, key-sorted JSON text for nested fields (settings), None for empty."""
    if value in (None, "", {}, []):
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def text_or_none(value) -> str | None:
    """`value` as text (an id may be written as a number), None when missing."""
    return None if value is None else str(value)


def model_rows(models: list) -> list[dict]:
    """`models[]` of both BenchPress formats (they differ only in a few key names)."""
    return [
        {
            "model_id": text_or_none(m.get("id")),
            "name": m.get("name"),
            "provider": m.get("provider"),
            "release_date": text_or_none(m.get("release_date")),
            "is_reasoning": m.get("is_reasoning", m.get("reasoning")),
            "open_weights": m.get("open_weights"),
            "setting": json_text(m.get("canonical_setting") or m.get("setting")),
            "row": f"models[{i}]",
        }
        for i, m in enumerate(m if isinstance(m, dict) else {} for m in models or [])
    ]


def benchmark_rows(benchmarks: list) -> list[dict]:
    """`benchmarks[]` of both BenchPress formats."""
    return [
        {
            "benchmark_id": text_or_none(b.get("id")),
            "name": b.get("name"),
            "category": b.get("category"),
            "metric": b.get("metric"),
            "row": f"benchmarks[{j}]",
        }
        for j, b in enumerate(b if isinstance(b, dict) else {} for b in benchmarks or [])
    ]
