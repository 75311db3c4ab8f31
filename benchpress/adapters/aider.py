"""Aider polyglot leaderboard: `polyglot_leaderboard.yml` (github.com/Aider-AI/aider,
`aider/website/_data/`), a YAML list of runs.

- The score is ``pass_rate_2`` (percent of the 225 exercises solved within two tries), the
  benchmark is chosen by ``edit_format``: ``diff`` and ``diff-fenced`` -> ``aider_polyglot_diff``,
  ``whole`` -> ``aider_polyglot_whole``. ``architect`` runs pair two models (a planner and an
  editor), so they are no one model's score: they are emitted as ``aider_polyglot_architect``,
  which the contracts do not declare, and quarantined with that reason.
- ``model`` is free text (``o3-mini (high)``, ``claude-3-7-sonnet-20250219 (32k thinking
  tokens)``); the API model id and the reasoning effort sit in ``command`` (``aider --model
  openrouter/openai/o1 --reasoning-effort high``) or in the ``reasoning_effort`` and
  ``thinking_tokens`` fields. The model id is the free-text name, plus the effort or thinking
  budget in brackets when the name does not state them, so that different efforts stay
  different rows (``o3`` and ``o3 (high)``); the API id, effort and command are kept in the
  reported setting.
- Several runs of one model and edit format are several observations. Rows are emitted newest
  run first (by ``date``), so the resolution rule ("the earlier row in a source wins") shows
  the latest run; the others stay in `scores`.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml

from benchpress import yaml_text
from benchpress.adapters._effort import EFFORT_LEVELS, thinking_budget
from benchpress.adapters._files import decode_text
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "parse_command", "benchmark_for"]

URL = "https://aider.chat/docs/leaderboards/"


def detect(path: Path, content: bytes) -> bool:
    head = content[:4000]
    return (path.suffix.lower() in {".yml", ".yaml"} or head.lstrip().startswith(b"- ")) and \
        b"pass_rate_2" in head and b"edit_format" in head


def parse_command(command: str | None) -> dict:
    """API model id, effort and thinking tokens from an aider command line."""
    if not command:
        return {}
    text = command.split("#", 1)[0]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    out: dict = {}
    for flag, key in (("--model", "api_model"), ("--reasoning-effort", "effort"),
                      ("--thinking-tokens", "thinking_tokens"), ("--editor-model", "editor_model")):
        if flag in words and words.index(flag) + 1 < len(words):
            out[key] = words[words.index(flag) + 1]
    if "--architect" in words:
        out["architect"] = True
    return out


def _fmt(run: dict) -> str:
    return str(run.get("edit_format") or "").strip().lower()


def benchmark_for(edit_format: str | None) -> str | None:
    """The benchmark of an Aider polyglot run in `edit_format` (see the module docstring);
    None when the format is not given. Epoch AI's copy of the leaderboard uses it too."""
    fmt = (edit_format or "").strip().lower()
    if fmt.startswith("diff"):
        return "aider_polyglot_diff"
    return f"aider_polyglot_{re.sub(r'[^a-z0-9]+', '_', fmt)}" if fmt else None


def _model_id(name: str, effort: str | None, thinking) -> str:
    """The free-text name, with effort / thinking budget appended when it does not say them."""
    lowered = name.lower()
    extra = []
    if effort and effort.lower() in EFFORT_LEVELS and not re.search(rf"\b{effort.lower()}\b", lowered):
        extra.append(effort.lower())
    budget = thinking_budget(thinking) if thinking is not None else None
    if str(thinking).strip() == "0" and "think" not in lowered:
        extra.append("no thinking")
    elif budget and "think" not in lowered:
        extra.append(f"{budget} thinking")
    return f"{name} ({', '.join(extra)})" if extra else name


def read(path: Path) -> AdapterOutput:
    raw = path.read_bytes()
    try:
        # libyaml's safe loader where PyYAML has it: the pure-Python one took 8 s to
        # parse (and refuse) a 1 MB JSON file given to this adapter
        doc = yaml_text.safe_load(decode_text(raw, path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise BadInputError(f"{path}: malformed YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(doc, list):
        raise BadInputError(f"{path}: expected a YAML list of leaderboard runs")
    runs = []
    for k, run in enumerate(doc):
        if not isinstance(run, dict):
            runs.append((k, {}, {}))
            continue
        runs.append((k, run, parse_command(run.get("command"))))
    # newest run first; stable, so the file's order breaks ties
    runs.sort(key=lambda t: str(t[1].get("date") or ""), reverse=True)
    models, scores = {}, []
    for k, run, cmd in runs:
        where = f"[{k}] {run.get('dirname') or ''}".strip()
        name = str(run["model"]).strip() if run.get("model") is not None else ""
        effort = run.get("reasoning_effort") or cmd.get("effort")
        thinking = run.get("thinking_tokens", cmd.get("thinking_tokens"))
        mid = _model_id(name, effort, thinking) if name else None
        setting = {
            "api_model": cmd.get("api_model"), "edit_format": run.get("edit_format"),
            "reasoning_effort": effort, "thinking_tokens": thinking,
            "editor_model": run.get("editor_model") or cmd.get("editor_model"),
            "command": run.get("command"), "aider_version": run.get("versions"),
        }
        setting_text = json.dumps({a: b for a, b in setting.items() if b is not None},
                                  sort_keys=True, default=str)
        fmt = _fmt(run)
        if mid and mid not in models and fmt != "architect":
            models[mid] = {"model_id": mid, "name": name, "setting": setting_text, "row": where}
        scores.append({
            "model_id": mid,
            "benchmark_id": benchmark_for(fmt),
            "score_raw": None if run.get("pass_rate_2") is None else str(run["pass_rate_2"]),
            "reference_url": URL,
            "source_type": "leaderboard",
            "reported_setting": setting_text,
            "observed_at": str(run["date"]) if run.get("date") else None,
            "derived": False,
            "notes": ("architect mode: two models (planner and editor), no single model's score"
                      if fmt == "architect" else None),
            "row": where,
        })
    return AdapterOutput.from_rows(list(models.values()), [], scores)


ADAPTER = Adapter(
    name="aider",
    detect=detect,
    read=read,
)
