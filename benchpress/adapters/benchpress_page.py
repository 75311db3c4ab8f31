"""The BenchPress project-page matrix (microsoft.github.io/benchpress/data.json).

Format: `models[]`, `benchmarks[]`, a dense `observed` matrix (models x benchmarks, null
for missing) and a parallel `sources` matrix whose cells carry url, type,
reported_setting, audit_status and notes. The publisher's own `predictions` are ignored:
the registry holds observations only.
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters._json import benchmark_rows, json_text, load_json, model_rows
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read"]


def detect(path: Path, content: bytes) -> bool:
    return content.lstrip().startswith(b"{") and b'"observed"' in content


def _fail(path: Path, what: str) -> BadInputError:
    return BadInputError(f"{path}: {what}")


def read(path: Path) -> AdapterOutput:
    doc = load_json(path)
    if not isinstance(doc, dict) or not {"models", "benchmarks", "observed"} <= doc.keys():
        raise _fail(path, "expected an object with 'models', 'benchmarks' and 'observed'")
    models, benchmarks, observed = doc["models"], doc["benchmarks"], doc["observed"]
    sources = doc.get("sources") or [[None] * len(benchmarks)] * len(models)
    if len(observed) != len(models) or any(len(r) != len(benchmarks) for r in observed):
        raise _fail(
            path,
            f"'observed' must be {len(models)} rows of {len(benchmarks)} values "
            "(one per model and benchmark)",
        )

    model_list, benchmark_list = model_rows(models), benchmark_rows(benchmarks)
    score_rows = []
    for i, row in enumerate(observed):
        for j, value in enumerate(row):
            if value is None:
                continue
            cite = (sources[i][j] if i < len(sources) and j < len(sources[i]) else None) or {}
            score_rows.append(
                {
                    "model_id": model_list[i]["model_id"],
                    "benchmark_id": benchmark_list[j]["benchmark_id"],
                    "score_raw": str(value),
                    "reference_url": cite.get("url") or None,
                    "source_type": cite.get("type") or None,
                    "reported_setting": json_text(cite.get("reported_setting")),
                    "audit_status": cite.get("audit_status") or None,
                    "notes": cite.get("notes") or None,
                    "row": f"observed[{i}][{j}]",
                }
            )
    return AdapterOutput.from_rows(model_list, benchmark_list, score_rows)


ADAPTER = Adapter(
    name="benchpress-page",
    detect=detect,
    read=read,
)
