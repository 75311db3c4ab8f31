"""LLM Stats (llm-stats.com): github.com/JonathanChavezTamales/LLMStats `models/<org>/<model>/
model.json`, one JSON per model (CC-BY-4.0). `read` takes the repository folder, its `models/`
folder, or one `model.json`.

- **Models.** The id is the model's folder name (``o3-2025-04-16``; a lone file that is not
  named ``model.json``, such as a cached copy, falls back to its ``name``), the provider the
  organisation folder. ``release_date`` is kept; open weights are read from the file's links
  (a ``weights_link`` means downloadable weights; a ``Proprietary`` licence means none);
  ``param_count``, context sizes, licence and multimodality go to the model's `setting` JSON
  (the models table has no columns for them).
- **Benchmark names** (``qualitative_metrics[].dataset_name``) are free text (``MMMU-Pro``,
  ``GPQA``, ``HumanEval``, ``Aider-Polyglot Edit``) and go to validation as written: a name
  resolves to a benchmark only through the ids, names and reviewed aliases of `schemas/`
  (`validate.normalize.BenchmarkResolver`). A name that does not resolve is never guessed: its
  rows are quarantined ("benchmark has no known scale"), and `benchpress aliases suggest
  --kind benchmark` lists it with the closest known benchmarks for a person to accept.
- **Scores** are 0-1 fractions (``unit = "fraction"``). A few are not (an Elo rating of
  1977, a WER of 4.1): a value above 1 is read on the benchmark's own scale, and the row's
  `notes` say so.
- **Self-reported.** ``is_self_reported`` is kept on every observation (``reported_setting``:
  ``{"self_reported": ..., "analysis_method": ...}``) and sets the source type: a
  self-reported score is the developer's own claim, so its type follows from the cited link
  (``source_link``: the developer's blog, paper or model card, by `schemas/url_source_types.csv`);
  a score that is not self-reported was measured by someone else: ``third_party``.
- ``date_recorded`` becomes ``observed_at``.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchpress.adapters._json import load_json
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "model_files"]

FILE = "model.json"


def model_files(path: Path) -> list[Path]:
    """The `model.json` files under a repository folder, its `models/` folder, or `path` itself."""
    if not path.is_dir():
        return [path]
    for pattern in ("models/*/*/" + FILE, "*/*/" + FILE, "*/" + FILE):
        found = sorted(path.glob(pattern))
        if found:
            return found
    return []


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        return bool(model_files(path))
    return content.lstrip().startswith(b"{") and b'"qualitative_metrics"' in content[:200000]


def _open_weights(doc: dict) -> bool | None:
    if doc.get("weights_link"):
        return True
    if str(doc.get("license") or "").strip().lower() == "proprietary":
        return False
    return None


def _model_row(doc: dict, model_id: str, org: str | None, where: str) -> dict:
    setting = {
        "parameters": doc.get("param_count"), "input_context_tokens": doc.get("input_context_size"),
        "output_context_tokens": doc.get("output_context_size"), "license": doc.get("license"),
        "multimodal": doc.get("multimodal"), "fine_tuned_from": doc.get("fine_tuned_from_model_id"),
        "llm_stats_canonical_model": doc.get("canonical_model_id"),
    }
    return {
        "model_id": model_id, "name": doc.get("name") or model_id, "provider": org,
        "release_date": doc.get("release_date"), "open_weights": _open_weights(doc),
        "setting": json.dumps({k: v for k, v in setting.items() if v is not None}, sort_keys=True),
        "row": where,
    }


def _score_row(q: dict, model_id: str, where: str) -> dict:
    value = q.get("score")
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    fraction = number is not None and 0 <= number <= 1
    name = q.get("dataset_name")
    name = name.strip() if isinstance(name, str) and name.strip() else None
    self_reported = q.get("is_self_reported") if isinstance(q.get("is_self_reported"), bool) else None
    setting = {"self_reported": self_reported, "analysis_method": q.get("analysis_method")}
    notes = [f"llm-stats benchmark name '{name}'"] if name else []
    if number is not None and not fraction:
        notes.append(f"score {value} is not a 0-1 fraction: read on the benchmark's own scale")
    return {
        "model_id": model_id, "benchmark_id": name,
        "score_raw": None if value is None else str(value),
        "unit": "fraction" if fraction else None,
        "reference_url": q.get("source_link") or None,
        # a developer's own claim: typed by its link (None = inferred from the URL)
        "source_type": None if self_reported or self_reported is None else "third_party",
        "reported_setting": json.dumps({k: v for k, v in setting.items() if v is not None},
                                       sort_keys=True),
        "observed_at": q.get("date_recorded"), "derived": False,
        "notes": "; ".join(notes) or None, "row": where,
    }


def read(path: Path) -> AdapterOutput:
    files = model_files(path)
    if not files:
        raise BadInputError(f"{path}: no llm-stats models/<org>/<model>/{FILE} files")
    root = path if path.is_dir() else path.parent
    models, scores = [], []
    for file in files:
        doc = load_json(file)
        if not isinstance(doc, dict):
            raise BadInputError(f"{file}: expected a JSON object (an llm-stats model file)")
        named = file.name == FILE
        model_id = file.parent.name if named else (doc.get("name") or None)
        org = file.parent.parent.name if named else None
        where = file.relative_to(root).as_posix() if path.is_dir() else file.name
        if model_id:
            models.append(_model_row(doc, model_id, org, where))
        metrics = doc.get("qualitative_metrics") or []
        if not isinstance(metrics, list):
            raise BadInputError(f"{file}: 'qualitative_metrics' is not a list")
        for j, q in enumerate(metrics):
            scores.append(_score_row(q if isinstance(q, dict) else {}, model_id,
                                     f"{where} qualitative_metrics[{j}]"))
    return AdapterOutput.from_rows(models, [], scores)


ADAPTER = Adapter(
    name="llm-stats",
    detect=detect,
    read=read,
)
