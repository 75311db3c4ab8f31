"""Shared JSON loading for adapters: one clear error for malformed or mis-encoded files."""

from __future__ import annotations

import json
from pathlib import Path

from benchpress.errors import BadInputError

__all__ = ["load_json", "json_text"]


def load_json(path: Path):
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(
            f"{path}: not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r}); "
            "re-save the file as UTF-8"
        ) from exc
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
