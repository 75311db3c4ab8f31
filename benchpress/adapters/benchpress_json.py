"""The BenchPress JSON schema: `models[]`, `benchmarks[]`, `scores[]`.

Used by the Hugging Face dataset `microsoft/benchpress-score-matrix`
(`data/llm_benchmark_data.json`) and by github.com/anadim/llm-benchmark-matrix.
Each score: model_id, benchmark_id, score, reference_url (and optionally source_type,
reported_setting, audit_status, notes).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters._json import json_text, load_json
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS,
    MODEL_COLUMNS,
    SCORE_COLUMNS,
    Adapter,
    AdapterOutput,
    frame,
)
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read"]


def detect(path: Path, content: bytes) -> bool:
    return (
        content.lstrip().startswith(b"{")
        and b'"scores"' in content
        and b'"observed"' not in content
    )


def _text(value) -> str | None:
    return None if value is None else str(value)


def read(path: Path) -> AdapterOutput:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("scores"), list):
        raise BadInputError(f"{path}: expected an object with a 'scores' list")
    model_rows = [
        {
            "model_id": _text(m.get("id")),
            "name": m.get("name"),
            "provider": m.get("provider"),
            "release_date": _text(m.get("release_date")),
            "is_reasoning": m.get("is_reasoning", m.get("reasoning")),
            "open_weights": m.get("open_weights"),
            "setting": json_text(m.get("canonical_setting") or m.get("setting")),
            "row": f"models[{i}]",
        }
        for i, m in enumerate(doc.get("models") or [])
    ]
    bench_rows = [
        {
            "benchmark_id": _text(b.get("id")),
            "name": b.get("name"),
            "category": b.get("category"),
            "metric": b.get("metric"),
            "row": f"benchmarks[{j}]",
        }
        for j, b in enumerate(doc.get("benchmarks") or [])
    ]
    score_rows = [
        {
            "model_id": _text(s.get("model_id")),
            "benchmark_id": _text(s.get("benchmark_id")),
            "score_raw": _text(s.get("score")),
            "reference_url": s.get("reference_url") or None,
            "source_type": s.get("source_type") or None,
            "reported_setting": json_text(s.get("reported_setting")),
            "audit_status": s.get("audit_status") or None,
            "notes": s.get("notes") or None,
            "row": f"scores[{k}]",
        }
        for k, s in enumerate(s if isinstance(s, dict) else {} for s in doc["scores"])
    ]
    return AdapterOutput(
        models=frame(model_rows, MODEL_COLUMNS),
        benchmarks=frame(bench_rows, BENCHMARK_COLUMNS),
        scores=frame(score_rows, SCORE_COLUMNS),
    )


ADAPTER = Adapter(
    name="benchpress-json",
    description="BenchPress JSON schema (models[], benchmarks[], scores[]), as on Hugging Face",
    detect=detect,
    read=read,
)
