"""Hand-entered releases: the project's own cited facts, one score per CSV line.

Columns: model_id, name, provider, release_date, is_reasoning, benchmark_id, score,
reference_url, source_type, reported_setting, notes. Model fields repeat on each line of
the same model. `benchpress add-model` appends to `sources/releases.csv`.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from benchpress.adapters._files import csv_records, decode_text
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "RELEASE_COLUMNS", "read"]

RELEASE_COLUMNS = [
    "model_id", "name", "provider", "release_date", "is_reasoning",
    "benchmark_id", "score", "reference_url", "source_type", "reported_setting", "notes",
]


def detect(path: Path, content: bytes) -> bool:
    first = content.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    return {"model_id", "benchmark_id", "score"} <= {c.strip() for c in first.split(",")}


def _bool(text: str | None) -> bool | None:
    if text is None or text.strip() == "":
        return None
    return text.strip().lower() in {"true", "1", "yes", "y"}


def read(path: Path) -> AdapterOutput:
    raw = path.read_bytes()
    header = next(csv.reader(io.StringIO(decode_text(raw, path), newline="")), [])
    missing = {"model_id", "benchmark_id", "score"} - {h.strip() for h in header}
    if missing:
        raise BadInputError(f"{path}: header lacks column(s) {sorted(missing)}")
    models, scores = {}, []
    # line numbers are where each record starts (a quoted note may span lines)
    for n, line in csv_records(str(path), raw):
        where = f"line {n}"
        mid = (line.get("model_id") or "").strip() or None
        if mid and mid not in models:
            models[mid] = {
                "model_id": mid,
                "name": line.get("name") or mid,
                "provider": line.get("provider") or None,
                "release_date": line.get("release_date") or None,
                "is_reasoning": _bool(line.get("is_reasoning")),
                "row": where,
            }
        scores.append(
            {
                "model_id": mid,
                "benchmark_id": (line.get("benchmark_id") or "").strip() or None,
                "score_raw": line.get("score"),
                "reference_url": (line.get("reference_url") or "").strip() or None,
                "source_type": line.get("source_type") or None,
                "reported_setting": line.get("reported_setting") or None,
                "notes": line.get("notes") or None,
                "row": where,
            }
        )
    return AdapterOutput.from_rows(models=models.values(), scores=scores)


ADAPTER = Adapter(
    name="releases-csv",
    description="hand-entered releases: CSV with model_id, benchmark_id, score, reference_url",
    detect=detect,
    read=read,
)
