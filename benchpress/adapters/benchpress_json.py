"""The BenchPress JSON schema: `models[]`, `benchmarks[]`, `scores[]`.

Used by the Hugging Face dataset `microsoft/benchpress-score-matrix`
(`data/llm_benchmark_data.json`) and by github.com/anadim/llm-benchmark-matrix.
Each score: model_id, benchmark_id, score, reference_url (and optionally source_type,
reported_setting, audit_status, notes).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters._json import benchmark_rows, json_text, load_json, model_rows, text_or_none
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read"]


def detect(path: Path, content: bytes) -> bool:
    return (
        content.lstrip().startswith(b"{")
        and b'"scores"' in content
        and b'"observed"' not in content
    )


def read(path: Path) -> AdapterOutput:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("scores"), list):
        raise BadInputError(f"{path}: expected an object with a 'scores' list")
    scores = [
        {
            "model_id": text_or_none(s.get("model_id")),
            "benchmark_id": text_or_none(s.get("benchmark_id")),
            "score_raw": text_or_none(s.get("score")),
            "reference_url": s.get("reference_url") or None,
            "source_type": s.get("source_type") or None,
            "reported_setting": json_text(s.get("reported_setting")),
            "audit_status": s.get("audit_status") or None,
            "notes": s.get("notes") or None,
            "row": f"scores[{k}]",
        }
        for k, s in enumerate(s if isinstance(s, dict) else {} for s in doc["scores"])
    ]
    return AdapterOutput.from_rows(model_rows(doc.get("models")),
                                   benchmark_rows(doc.get("benchmarks")), scores)


ADAPTER = Adapter(
    name="benchpress-json",
    detect=detect,
    read=read,
)
