"""Hand-entered releases: the project's own cited facts, one score per CSV line.

Columns: model_id, name, provider, release_date, is_reasoning, benchmark_id, score,
reference_url, source_type, reported_setting, notes, and (optional) audit_status: empty for
a live value, `superseded` or `retracted` for one kept for audit only (it makes no cell; see
`store.resolve`). Model fields repeat on each line of the same model. `benchpress add-model`
appends to `sources/releases.csv`.
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters._files import csv_records
from benchpress.adapters.base import Adapter, AdapterOutput

__all__ = ["ADAPTER", "RELEASE_COLUMNS", "read"]

RELEASE_COLUMNS = [
    "model_id", "name", "provider", "release_date", "is_reasoning",
    "benchmark_id", "score", "reference_url", "source_type", "reported_setting", "notes", "audit_status",
]


def detect(path: Path, content: bytes) -> bool:
    first = content.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    return {"model_id", "benchmark_id", "score"} <= {c.strip() for c in first.split(",")}


def _bool(text: str | None) -> bool | None:
    return None if text is None else text.lower() in {"true", "1", "yes", "y"}


def read(path: Path) -> AdapterOutput:
    models, scores = {}, []
    # fields come stripped, blanks as None; line numbers are where each record starts (a
    # quoted note may span lines)
    for n, line in csv_records(str(path), path.read_bytes(),
                               required=("model_id", "benchmark_id", "score")):
        where = f"line {n}"
        mid = line.get("model_id")
        if mid and mid not in models:
            models[mid] = {
                "model_id": mid,
                "name": line.get("name") or mid,
                "provider": line.get("provider"),
                "release_date": line.get("release_date"),
                "is_reasoning": _bool(line.get("is_reasoning")),
                "row": where,
            }
        scores.append(
            {
                "model_id": mid,
                "benchmark_id": line.get("benchmark_id"),
                "score_raw": line.get("score"),
                "reference_url": line.get("reference_url"),
                "source_type": line.get("source_type"),
                "reported_setting": line.get("reported_setting"),
                "notes": line.get("notes"),
                "audit_status": line.get("audit_status"),
                "row": where,
            }
        )
    return AdapterOutput.from_rows(models=models.values(), scores=scores)


ADAPTER = Adapter(
    name="releases-csv",
    detect=detect,
    read=read,
)
