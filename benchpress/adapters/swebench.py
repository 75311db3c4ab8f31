"""SWE-bench leaderboards (github.com/SWE-bench/swe-bench.github.io): one JSON file per version,
``template/data.json`` (2024-04 .. 2025-03), then ``data/leaderboards.json``. `read` takes the
file or the folder holding it. Three layouts, told apart by their keys:
``{"test_leaderboard": [...], "lite_leaderboard": [...]}`` (2024-04), the same with ``test``
and ``lite`` beside them (2024-07-29: the same lists twice, read once), and
``{"leaderboards": [{"name": "Test"|"Verified"|"Lite"|"Multimodal"|"bash-only"|..., "results":
[...]}]}`` (2024-08-11 on).

- **Entries are agent systems.** A row is a scaffold running one or more models (``TRAE +
  Doubao-Seed-Code``), never a bare model: each is an entry of kind ``agent``, its id the
  run's upstream folder (``20250928_trae_doubao_seed_code``; early versions name it only in
  the ``logs``/``trajs`` paths; a row with neither is named by its display name), its name
  the display name. The model it runs comes from its tags (``Model: claude-opus-4-5-
  20251101``) as ``base_model_id`` when there is exactly one; several models, or none named,
  leave it null and the tags go into the setting. One folder on several boards (a system
  submitted to Lite and Test) is one entry with several benchmarks; two folders with one
  display name (re-runs of ``devlo``) are two entries.
- **Benchmarks.** Each board is a benchmark: ``Test`` -> ``swe_bench_full``, ``Lite`` ->
  ``swe_bench_lite``, ``Verified`` -> ``swe_bench_verified``, ``Multimodal`` ->
  ``swe_bench_multimodal``, ``bash-only`` (every model under one minimal scaffold,
  mini-SWE-agent, on Verified) -> ``swe_bench_verified_bash_only``, another board ->
  ``swe_bench_<name>``. ``resolved`` is percent of the board's instances (text in 2024 files, a
  number later). Where a run states them, ``cost`` (US dollars for the whole run),
  ``instance_cost`` (dollars per instance) and ``instance_calls`` (model calls per instance)
  are benchmarks ``<board>_cost``, ``<board>_cost_per_instance`` and
  ``<board>_calls_per_instance``, lower is better (only the contract declares them).
- **Setting.** ``checked`` / ``verified`` (the SWE-bench team checked the run), ``oss``,
  ``os_model`` / ``os_system``, the mini-SWE-agent version and the ``warning`` go into
  ``reported_setting``; the entry's ``date`` (early ones unpadded, ``2024-4-2``) is
  ``observed_at``.
- **Citation.** The SWE-bench team evaluates every submitted run itself (``leaderboard``); a
  value cites the JSON file (by its name in the folder,
  resolved against the version's URL by `validate.prepare.cited_url`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchpress.adapters._files import head_bytes
from benchpress.adapters._json import load_json
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "board_id", "entry_id", "BOARDS"]

FILES = ("leaderboards.json", "data.json")
BOARDS = {"test": "swe_bench_full", "lite": "swe_bench_lite", "verified": "swe_bench_verified",
          "multimodal": "swe_bench_multimodal", "bash-only": "swe_bench_verified_bash_only"}
_EXTRA = {"cost": "_cost", "instance_cost": "_cost_per_instance",
          "instance_calls": "_calls_per_instance"}
_RUN = re.compile(r"([^/]+)/(?:logs|trajs)/?$")


def board_id(name: str) -> str:
    """The benchmark id of a board, by its name in any of the three layouts.

    >>> board_id("test_leaderboard"), board_id("Verified"), board_id("verified-mini")
    ('swe_bench_full', 'swe_bench_verified', 'swe_bench_verified_mini')
    """
    key = name.strip().lower().removesuffix("_leaderboard")
    return BOARDS.get(key) or "swe_bench_" + re.sub(r"[^a-z0-9]+", "_", key).strip("_")


def entry_id(entry: dict) -> str | None:
    """The run's upstream folder: `folder`, else the folder in its logs or trajs path, else
    its display name.

    >>> entry_id({"name": "RAG + GPT 4", "logs": "test/20240402_rag_gpt4/logs"})
    '20240402_rag_gpt4'
    """
    if isinstance(entry.get("folder"), str) and entry["folder"].strip():
        return entry["folder"].strip()
    for key in ("logs", "trajs"):
        found = _RUN.search(str(entry.get(key) or "").strip())
        if found:
            return found.group(1)
    name = entry.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else None


def _boards(doc, name: str) -> tuple[list[tuple[str, str, list]], list[str]]:
    """[(board name, where in the file, entries)] of any layout, and notes."""
    if not isinstance(doc, dict):
        raise BadInputError(f"{name}: expected a SWE-bench leaderboard object")
    if isinstance(doc.get("leaderboards"), list):
        return [(str(b.get("name") or ""), f"leaderboards[{k}]", b.get("results") or [])
                for k, b in enumerate(doc["leaderboards"]) if isinstance(b, dict)], []
    lists = {k: v for k, v in doc.items() if isinstance(v, list)}
    if not lists:
        raise BadInputError(f"{name}: expected 'leaderboards' or '<board>_leaderboard' lists")
    # 2024-07-29 holds each board twice ("test" and "test_leaderboard"): read it once
    twice = [k for k in lists if k.endswith("_leaderboard") and k.removesuffix("_leaderboard") in lists]
    notes = [f"{len(twice)} board(s) listed twice in {name} ({', '.join(sorted(twice))}) read once"] \
        if twice else []
    return [(k, k, v) for k, v in lists.items() if k not in twice], notes


def _date(value) -> str | None:
    found = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", str(value or "").strip())
    return f"{found.group(1)}-{int(found.group(2)):02d}-{int(found.group(3)):02d}" if found else None


def _tags(entry: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for tag in entry.get("tags") or []:
        if isinstance(tag, str) and ":" in tag:
            key, value = tag.split(":", 1)
            out.setdefault(key.strip().lower(), []).append(value.strip())
    return out


def _value(value) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float):
        return repr(value)
    text = str(value).strip()
    return text or None


def _setting(entry: dict, board: str) -> dict:
    keep = ("checked", "verified", "oss", "os_model", "os_system", "mini-swe-agent_version",
            "warning")
    out = {k: entry[k] for k in keep if entry.get(k) not in (None, "", [])}
    return {"board": board, **out}


def _read_file(name: str, doc, cite: str | None):
    boards, notes = _boards(doc, name)
    models: dict[str, dict] = {}
    scores, unnamed = [], 0
    for board, where_board, entries in boards:
        bench = board_id(board)
        for k, entry in enumerate(entries):
            where = f"{name} {where_board}.results[{k}]" if where_board.startswith("leaderboards") \
                else f"{name} {where_board}[{k}]"
            if not isinstance(entry, dict):
                continue
            eid = entry_id(entry)
            if eid is None:
                unnamed += 1
            tags = _tags(entry)
            if eid is not None and eid not in models:
                named = tags.get("model", [])
                models[eid] = {
                    "model_id": eid, "name": str(entry.get("name") or eid).strip(),
                    "provider": (tags.get("org") or [None])[0],
                    "setting": json.dumps({k: v for k, v in (
                        ("models", named), ("system", tags.get("system")),
                        ("site", entry.get("site"))) if v}, sort_keys=True),
                    "entry_kind": "agent",
                    "base_model_id": named[0] if len(named) == 1 else None,
                    "row": where,
                }
            reported = json.dumps(_setting(entry, board), sort_keys=True, default=str)
            for field, suffix in (("resolved", ""), *_EXTRA.items()):
                raw = _value(entry.get(field))
                if raw is None:
                    continue
                scores.append({
                    "model_id": eid, "benchmark_id": bench + suffix, "score_raw": raw,
                    "reference_url": cite, "source_type": "leaderboard",
                    "reported_setting": reported, "observed_at": _date(entry.get("date")),
                    "derived": False, "row": f"{where}.{field}",
                })
    if unnamed:
        notes.append(f"{unnamed} entries of {name} name no run (kept for the quarantine)")
    return list(models.values()), scores, notes


def _benchmarks(scores: list[dict]) -> list[dict]:
    rows, seen = [], set()
    for s in scores:
        bench = s["benchmark_id"]
        if bench in seen:
            continue
        seen.add(bench)
        extra = any(bench.endswith(x) for x in _EXTRA.values())
        # costs and calls are lower-is-better: only the contract may declare them
        rows.append({"benchmark_id": bench, "name": bench.replace("_", " "), "category": "Coding",
                     "metric": None if extra else "% of issues resolved", "row": s["row"]})
    return rows


def _members(path: Path) -> list[tuple[str, Path]]:
    if path.is_dir():
        found = [(f, path / f) for f in FILES if (path / f).is_file()]
        if not found:
            raise BadInputError(f"{path}: expected a SWE-bench {' or '.join(FILES)}")
        return found
    return [(path.name, path)]


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        files = [path / f for f in FILES if (path / f).is_file()]
        return bool(files) and detect(files[0], head_bytes(files[0], 200000))
    head = content[:200000]
    return (content.lstrip().startswith(b"{") and b'"resolved"' in head
            and (b'"leaderboards"' in head or b'"test_leaderboard"' in head
                 or b'"lite_leaderboard"' in head))


def read(path: Path) -> AdapterOutput:
    models, scores, notes = [], [], []
    for name, file in _members(path):
        doc = load_json(file)
        cite = name if path.is_dir() else None
        m, s, n = _read_file(name, doc, cite)
        seen = {r["model_id"] for r in models}
        models += [r for r in m if r["model_id"] not in seen]
        scores += s
        notes += n
    return AdapterOutput.from_rows(models, _benchmarks(scores), scores, notes)


ADAPTER = Adapter(name="swe-bench", detect=detect, read=read, cites_source=True)
