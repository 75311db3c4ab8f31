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
  score and date columns (`EXTERNAL` describes all 37 files of the 2025-12 commit, and says
  which figure is read where a file has several); percent scores, sometimes written
  ``64.5%``, except where the benchmark's scale says otherwise (Elo, minutes, 0-10). A blank
  score cell emits nothing. Only the file's name says which benchmark it holds (BoolQ, PIQA
  and LAMBADA share one header), so external files are ingested as a folder or zip; a lone
  copy in the download cache has lost its name and is read as undescribed (see below). Rows
  whose model version is empty (agent systems, mixes of two models; also the older models of
  papers' and HELM's tables, named only in a display-name column) keep a null model id and
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

# external file stem -> how to read it: model column ("Model version" unless named), score
# column and benchmark (or a function of the row giving it) -- or `scores`, a list of (score
# column, benchmark) pairs for a file with several headline figures --, date column and its
# format, and columns kept as the reported setting. Every `external_benchmark_*.csv` of the
# 2025-12 commit is described here (tests/test_adapters_epoch_external.py checks the list);
# where a file has several figures, the comment says which is read.
_DMY = ("Date added", "%d/%m/%Y")
EXTERNAL: dict[str, dict] = {
    "aider_polyglot": {"model": "Model version", "score": "Percent correct",
                       "benchmark": lambda r: benchmark_for(r.get("Edit format")),
                       "setting": ["Edit format"]},
    "os_world": {"model": "Model version", "score": "Score", "benchmark": "osworld",
                 "date": _DMY, "setting": ["Agent"]},
    "terminal_bench": {"model": "Model version", "score": "Accuracy mean",
                       "benchmark": "terminal_bench_1", "setting": ["Agent"]},
    # ARC Prize leaderboard, semi-private ARC-AGI-1 (o3 medium 54%, GPT-5 high 66%)
    "arc_agi": {"score": "Score", "benchmark": "arc_agi_1"},
    "anli": {"score": "Score", "benchmark": "anli", "setting": ["Shots"]},  # R1-R3 are empty
    "arc_ai2": {"scores": [("Challenge score", "arc_challenge"), ("Easy score", "arc_easy")],
                "setting": ["Shots"]},
    "balrog": {"score": "Average progress", "benchmark": "balrog", "date": _DMY},
    "bbh": {"score": "Average", "benchmark": "bigbench_hard", "setting": ["Shots"]},
    "boolq": {"score": "Score", "benchmark": "boolq", "setting": ["Shots"]},
    "cadeval": {"score": "Overall pass (%)", "benchmark": "cadeval", "setting": ["Prompt"]},
    "csqa2": {"score": "Score", "benchmark": "csqa2", "setting": ["Shots"]},
    # the headline: tasks solved without subtask guidance
    "cybench": {"score": "Unguided % Solved", "benchmark": "cybench"},
    "deepresearch": {"score": "Average score", "benchmark": "deepresearch_bench", "setting": ["Agent"]},
    # the share of lab-play tasks solved, and the open-play production score (unbounded)
    "factorio_learning_environment": {
        "scores": [("Lab Success %", "factorio_lab_success"),
                   ("Production score", "factorio_production_score")],
        "date": _DMY, "setting": ["Tools"]},
    # one figure per context length; the 120k-token column is the long-context headline
    "fictionlivebench": {"score": "120k token score", "benchmark": "fictionlivebench_120k"},
    # country accuracy on the ACW set, the one every row has (the other sets have 3-15 rows)
    "geobench": {"score": "ACW Country %", "benchmark": "geobench_acw_country", "setting": ["Tools"]},
    "gsm8k": {"score": "EM", "benchmark": "gsm8k", "setting": ["Shots"]},
    "gso_bench": {"score": "Score OPT@1", "benchmark": "gso_bench", "setting": ["Scaffold"]},
    "hellaswag": {"score": "Overall accuracy", "benchmark": "hellaswag", "setting": ["Shots"]},
    "lambada": {"score": "Score", "benchmark": "lambada", "setting": ["Shots"]},
    "lech_mazur_writing": {"score": "Mean score", "benchmark": "lech_mazur_writing"},  # 0-10
    # LiveBench's overall and category averages, on the release the row names
    "livebench": {"scores": [("Global average", "livebench"),
                             ("Reasoning average", "livebench_reasoning_avg"),
                             ("Coding average", "livebench_coding_avg"),
                             ("Mathematics average", "livebench_mathematics_avg"),
                             ("Data analysis average", "livebench_data_analysis_avg"),
                             ("Language average", "livebench_language_avg"),
                             ("IF Average", "livebench_if_avg")],
                  "setting": ["LiveBench Version"]},
    "mcbench": {"score": "ELO", "benchmark": "mcbench_elo"},
    # the 50% time horizon in minutes (METR's headline), not the 0-1 average score
    "metr": {"score": "Time horizon", "benchmark": "metr_time_horizon"},
    "mmlu": {"score": "EM", "benchmark": "mmlu", "setting": ["Shots"]},
    "openbookqa": {"score": "Accuracy", "benchmark": "openbookqa", "setting": ["Shots"]},
    "osuniverse": {"score": "Weighted Score", "benchmark": "osuniverse", "setting": ["Agent"]},
    "piqa": {"score": "Score", "benchmark": "piqa", "setting": ["Shots"]},
    "scienceqa": {"score": "Score", "benchmark": "scienceqa", "setting": ["Shots"]},
    "simple_bench": {"score": "Score (AVG@5)", "benchmark": "simplebench"},
    "superglue": {"score": "Score", "benchmark": "superglue"},
    # tasks fully resolved (the partial-credit "% Score" is a second, looser figure)
    "the_agent_company": {"score": "% Resolved", "benchmark": "the_agent_company",
                          "date": ("Date", "%d/%m/%Y"), "setting": ["Environment model"]},
    "triviaqa": {"score": "EM", "benchmark": "triviaqa", "setting": ["Shots"]},
    "videomme": {"scores": [("Overall (no subtitles)", "video_mme"),
                            ("Overall (with subtitles)", "video_mme_with_subtitles")],
                 "setting": ["Frames"]},
    "vpct": {"score": "Correct", "benchmark": "vpct"},
    "weirdml": {"score": "Accuracy", "benchmark": "weirdml"},
    "winogrande": {"score": "Accuracy", "benchmark": "winogrande", "setting": ["Shots"]},
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
    pairs = spec.get("scores") or [(spec["score"], spec["benchmark"])]
    date_col, fmt = spec.get("date", (None, None))
    rows = []
    for line, r in records:
        setting = {c.lower().replace(" ", "_"): r.get(c) for c in spec.get("setting", []) if r.get(c)}
        for score_col, benchmark in pairs:
            if r.get(score_col) is None:
                continue  # a blank cell is a figure not reported (a file may hold several)
            rows.append({
                "model_id": r.get(spec.get("model", "Model version")),
                "benchmark_id": benchmark(r) if callable(benchmark) else benchmark,
                "score_raw": r.get(score_col),
                "unit": None,
                "reference_url": r.get("Source link") or r.get("Source link (site from table)"),
                "source_type": "leaderboard",
                "reported_setting": json.dumps(setting, sort_keys=True) if setting else None,
                "observed_at": _date(r.get(date_col), fmt) if date_col else None,
                "derived": False,
                "notes": (f"{name} is not described in epoch.EXTERNAL, so its scale is unknown"
                          if unknown else "; ".join(
                              x for x in (r.get("Source"), r.get("Notes") or r.get("Notes (details)")) if x)
                          or None),
                "row": f"{name} line {line}" + (f" column {score_col}" if len(pairs) > 1 else ""),
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
