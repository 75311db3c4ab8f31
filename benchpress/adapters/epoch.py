"""Epoch AI Benchmarking Hub: `benchmark_data.zip` (epoch.ai/data/benchmark_data.zip) or a folder
of its CSVs.

- `benchmarks_runs.csv`: Epoch's own runs, one per (task, model version); the score column
  ``Best score (across scorers)`` is a 0-1 fraction, so rows carry ``unit = "fraction"`` and
  validation converts them to percent. Model versions carry date and effort suffixes
  (``o3-2025-04-16_high``, ``claude-3-7-sonnet-20250219_32K``). A model re-run on a newer task
  version appears twice: rows are emitted newest run first, so that the resolution rule
  ("the earlier row in a source wins") shows the latest run and keeps the older one as an
  observation. A run whose ``Status`` is not ``Success`` is kept with ``audit_status =
  "dropped"``, which the resolution rule ranks last.
- `model_versions.csv`: version id -> model, release date, display name (quoted multi-line
  notes). Only versions that some score uses become model rows.
- `external_benchmark_*.csv`: third-party results Epoch collects, each with its own model,
  score and date columns (`EXTERNAL`); percent scores, sometimes written ``64.5%``. Rows
  whose model version is empty (agent systems, mixes of two models) keep a null model id and
  are quarantined by validation. An external file `EXTERNAL` does not describe has no known
  scale: its rows (first score column among `SCORE_COLUMNS_TRIED`) go to benchmark
  ``epoch_external_<name>``, which no contract declares, so they are quarantined with that
  reason instead of landing on a guessed scale; a file with no such column is skipped and
  named in `notes`.

Every file may start with a UTF-8 byte-order mark. Row pointers name the file and the line
the record starts on (``model_versions.csv line 2``), counting multi-line fields.
"""

from __future__ import annotations

import json
import zipfile
from datetime import datetime
from pathlib import Path

from benchpress.adapters._files import csv_records, read_members
from benchpress.adapters.aider import benchmark_for
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "EXTERNAL"]

RUNS = "benchmarks_runs.csv"
VERSIONS = "model_versions.csv"
HUB_URL = "https://epoch.ai/data/ai-benchmarking-dashboard"

# external file stem -> how to read it: model column, score column, benchmark (or column to
# build it from), date column and its format, and columns kept as the reported setting.
EXTERNAL: dict[str, dict] = {
    "aider_polyglot": {"model": "Model version", "score": "Percent correct",
                       "benchmark": lambda r: benchmark_for(r.get("Edit format")),
                       "setting": ["Edit format"]},
    "os_world": {"model": "Model version", "score": "Score", "benchmark": "osworld",
                 "date": ("Date added", "%d/%m/%Y"), "setting": ["Agent"]},
    "terminal_bench": {"model": "Model version", "score": "Accuracy mean",
                       "benchmark": "terminal_bench_1", "setting": ["Agent"]},
}
SCORE_COLUMNS_TRIED = ("Score", "Percent correct", "Accuracy mean", "Accuracy", "Average score",
                       "Average", "Elo", "Rating")


def _epoch_file(name: str) -> bool:
    return name in (RUNS, VERSIONS) or (name.startswith("external_benchmark_") and name.endswith(".csv"))


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        return (path / RUNS).is_file() or any(path.glob("external_benchmark_*.csv"))
    if content.startswith(b"PK"):
        return RUNS.encode() in content or b"external_benchmark_" in content
    head = content[:2000]
    return b"Best score (across scorers)" in head or (
        b"Version release date" in head and b"Unique display name" in head)


def _date(text: str | None, fmt: str) -> str | None:
    if not text:
        return None
    try:
        return datetime.strptime(text.strip(), fmt).date().isoformat()
    except ValueError:
        return None


def _run_rows(records: list[tuple[int, dict]]) -> list[dict]:
    rows = []
    for line, r in records:
        started = None
        if r.get("started_at"):
            try:
                started = datetime.strptime(r["started_at"], "%d %B %Y %I:%M%p")
            except ValueError:
                started = None
        setting = {"harness": "Epoch AI Benchmarking Hub", "task_version": r.get("task version")}
        rows.append({
            "model_id": r.get("model"),
            "benchmark_id": r.get("task"),
            "score_raw": r.get("Best score (across scorers)"),
            "unit": "fraction",
            "reference_url": r.get("log viewer") or HUB_URL,
            "source_type": "leaderboard",
            "reported_setting": json.dumps({k: v for k, v in setting.items() if v}, sort_keys=True),
            # a run that did not succeed stays an observation but never wins a cell
            "audit_status": ("dropped" if (r.get("Status") or "Success") != "Success"
                             else r.get("Manual evaluation")),
            "observed_at": started.date().isoformat() if started else None,
            "derived": False,
            "notes": r.get("Scores"),
            "row": f"{RUNS} line {line}",
            "_started": started or datetime.min,
        })
    # newest run of a (model, task) first; otherwise the file's order
    first_seen: dict[tuple, int] = {}
    for k, row in enumerate(rows):
        first_seen.setdefault((row["model_id"], row["benchmark_id"]), k)
    rows.sort(key=lambda row: (first_seen[(row["model_id"], row["benchmark_id"])],
                               -row["_started"].timestamp() if row["_started"] != datetime.min else 0))
    for row in rows:
        del row["_started"]
    return rows


def _external_rows(name: str, records: list[tuple[int, dict]], notes: list[str]) -> list[dict]:
    stem = name.removeprefix("external_benchmark_").removesuffix(".csv")
    spec = EXTERNAL.get(stem)
    columns = set(records[0][1]) if records else set()
    unknown = spec is None
    if unknown:
        score_col = next((c for c in SCORE_COLUMNS_TRIED if c in columns), None)
        if score_col is None:
            notes.append(f"{name}: skipped, no score column among {list(SCORE_COLUMNS_TRIED)}")
            return []
        # its scale is not known: never attach it to a benchmark on a guess
        spec = {"model": "Model version", "score": score_col,
                "benchmark": f"epoch_external_{stem}", "setting": ["Agent"]}
    rows = []
    for line, r in records:
        bench = spec["benchmark"](r) if callable(spec["benchmark"]) else spec["benchmark"]
        date_col, fmt = spec.get("date", (None, None))
        setting = {c.lower().replace(" ", "_"): r.get(c) for c in spec["setting"] if r.get(c)}
        rows.append({
            "model_id": r.get(spec["model"]),
            "benchmark_id": bench,
            "score_raw": r.get(spec["score"]),
            "unit": None,
            "reference_url": r.get("Source link"),
            "source_type": "leaderboard",
            "reported_setting": json.dumps(setting, sort_keys=True) if setting else None,
            "observed_at": _date(r.get(date_col), fmt) if date_col else None,
            "derived": False,
            "notes": (f"{name} is not described in epoch.EXTERNAL, so its scale is unknown"
                      if unknown else "; ".join(
                          x for x in (r.get("Source"), r.get("Notes") or r.get("Notes (details)")) if x)
                      or None),
            "row": f"{name} line {line}",
        })
    return rows


def _model_rows(records: list[tuple[int, dict]], used: set[str]) -> list[dict]:
    rows = []
    for line, r in records:
        vid = r.get("id")
        if vid not in used:
            continue
        rows.append({
            "model_id": vid,
            "name": r.get("Display name") or r.get("Unique display name") or r.get("Model") or vid,
            "release_date": r.get("Version release date"),
            "setting": json.dumps({"epoch_model": r.get("Model"), "link": r.get("Link")},
                                  sort_keys=True) if r.get("Model") else None,
            "row": f"{VERSIONS} line {line}",
        })
    return rows


def read(path: Path) -> AdapterOutput:
    members = read_members(path, _epoch_file)
    if not path.is_dir() and not zipfile.is_zipfile(path):
        # a lone CSV (a cached copy has no telling name): recognise it by its header
        raw = members.popitem()[1]
        head = raw[:2000]
        name = (RUNS if b"Best score (across scorers)" in head else
                VERSIONS if b"Version release date" in head else "external_benchmark_unknown.csv")
        members = {name: raw}
    if not members:
        raise BadInputError(f"{path}: no Epoch files ({RUNS}, {VERSIONS}, external_benchmark_*.csv)")
    notes: list[str] = []
    scores: list[dict] = []
    if RUNS in members:
        scores += _run_rows(csv_records(RUNS, members[RUNS]))
    for name in sorted(n for n in members if n.startswith("external_benchmark_")):
        scores += _external_rows(name, csv_records(name, members[name]), notes)
    used = {s["model_id"] for s in scores if s["model_id"]}
    models = _model_rows(csv_records(VERSIONS, members[VERSIONS]), used) if VERSIONS in members else []
    # Epoch's own tasks are all accuracy on a 0-1 scale: a new task gets the percent scale
    tasks = sorted({s["benchmark_id"] for s in scores if s["benchmark_id"] and s["unit"] == "fraction"})
    benchmarks = [{"benchmark_id": t, "name": t, "metric": "accuracy (fraction solved, 0-1)",
                   "row": f"{RUNS} task"} for t in tasks]
    return AdapterOutput.from_rows(models, benchmarks, scores, notes)


ADAPTER = Adapter(
    name="epoch",
    detect=detect,
    read=read,
)
