"""LiveBench: one wide CSV per release (`table_YYYY_MM_DD.csv`: ``model`` + one 0-100 column
per task) and `categories_YYYY_MM_DD.json` (category -> tasks), as served by livebench.ai from
github.com/LiveBench/livebench.github.io `public/`.

`read` takes a folder or zip holding releases (every release is read, newest first, so that
under the resolution rule "the earlier row in a source wins" a cell shows the latest release
and keeps the older ones as observations), or one table CSV (its categories file is looked
for beside it; a cached copy has none, and then nothing is derived).

- Task scores become benchmarks ``livebench_<task>``; task names change between releases, so
  renames are mapped by the alias table (``livebench_lcb_generation`` -> ``livebench_code_
  generation``), never by a new benchmark. A column the release's categories file does not
  list is an *unknown task*: its rows are emitted without a declared scale and quarantined
  unless the contracts know the benchmark.
- Derived rows, computed the way LiveBench defines its leaderboard: each category's score is
  the mean of its tasks (``livebench_<category>_avg``), and the overall ``livebench`` score is
  the mean of the category means. They are marked ``derived = true`` and only computed when
  the model has every task of the category (LiveBench leaves such a cell blank too).
- A model listed beside effort variants of itself (``gpt-5-mini`` next to ``gpt-5-mini-high``)
  runs at the provider's default effort; its id says so (``gpt-5-mini-default-effort``), so it
  is not merged with another source's ``gpt-5-mini`` at a stated effort.
- A row with an empty model name is kept (model null) for the quarantine; blank cells are
  missing tasks and emit nothing.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from benchpress.adapters._effort import EFFORT_LEVELS
from benchpress.adapters._files import csv_records, decode_text, read_members
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "task_benchmark_id", "category_benchmark_id"]

URL = "https://livebench.ai/"
_TABLE = re.compile(r"^table_(\d{4})_(\d{2})_(\d{2})\.csv$")
_CATEGORIES = re.compile(r"^categories_(\d{4})_(\d{2})_(\d{2})\.json$")
METRIC = "% correct (LiveBench task score, 0-100)"


def task_benchmark_id(task: str) -> str:
    return "livebench_" + re.sub(r"[^a-z0-9]+", "_", task.lower()).strip("_")


def category_benchmark_id(category: str) -> str:
    return task_benchmark_id(category) + "_avg"


def _wanted(name: str) -> bool:
    return bool(_TABLE.match(name) or _CATEGORIES.match(name))


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        return any(_TABLE.match(p.name) for p in path.glob("table_*.csv"))
    if content.startswith(b"PK"):
        return b"table_" in content and b"categories_" in content
    first = content.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    cols = [c.strip() for c in first.split(",")]
    return (bool(_TABLE.match(path.name)) or (
        cols[:1] == ["model"] and len(cols) > 3 and "benchmark_id" not in cols
        and {"zebra_puzzle", "connections", "typos", "tablejoin"} & set(cols) != set()))


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _default_effort(model: str | None, names: set) -> str | None:
    """``gpt-5-mini`` listed beside ``gpt-5-mini-high`` is the provider's default effort: say so,
    so that it is not taken for another source's ``gpt-5-mini`` at a stated effort."""
    if model and any(f"{model}-{level}" in names for level in EFFORT_LEVELS):
        return f"{model}-default-effort"
    return model


def _release(name: str, raw: bytes, categories: dict | None, date: str | None):
    """(models, benchmarks, scores) rows of one release table."""
    records = csv_records(name, raw)
    header = list(records[0][1]) if records else []
    tasks = [c for c in header if c != "model"]
    task_category = {t: c for c, ts in (categories or {}).items() for t in ts}
    setting = json.dumps({"release": date}) if date else None
    names = {r.get("model") for _, r in records}
    models, scores = {}, []
    for line, r in records:
        model = _default_effort(r.get("model"), names)
        where = f"{name} line {line}"
        if model is None:
            # an empty model name cannot be attributed: keep the row for the quarantine
            scores.append({"model_id": None, "benchmark_id": "livebench", "score_raw": None,
                           "row": where, "notes": "empty model name"})
            continue
        models.setdefault(model, {"model_id": model, "name": model, "row": where})
        base = {"model_id": model, "reference_url": URL, "source_type": "leaderboard",
                "reported_setting": setting, "observed_at": date}
        for task in tasks:
            if r.get(task) is None:
                continue
            scores.append({**base, "benchmark_id": task_benchmark_id(task), "score_raw": r[task],
                           "derived": False, "row": f"{where} column {task}",
                           "notes": None if task in task_category or not categories
                           else "unknown task: not in the release's categories file"})
        if not categories:
            continue
        cat_means = {}
        for category, members in categories.items():
            values = [_number(r.get(t)) for t in members]
            if members and all(v is not None for v in values):
                cat_means[category] = sum(values) / len(values)
                scores.append({**base, "benchmark_id": category_benchmark_id(category),
                               "score_raw": f"{cat_means[category]:.4f}", "derived": True,
                               "row": f"{where} category {category}",
                               "notes": "mean of " + ", ".join(members)})
        if cat_means and len(cat_means) == len(categories):
            overall = sum(cat_means.values()) / len(cat_means)
            scores.append({**base, "benchmark_id": "livebench", "score_raw": f"{overall:.4f}",
                           "derived": True, "row": f"{where} overall",
                           "notes": "mean of the category means (LiveBench's overall score)"})
    benchmarks = [{"benchmark_id": task_benchmark_id(t), "name": f"LiveBench {t}",
                   "category": f"LiveBench {task_category[t]}", "metric": METRIC,
                   "row": f"{name} column {t}"} for t in tasks if t in task_category]
    benchmarks += [{"benchmark_id": category_benchmark_id(c), "name": f"LiveBench {c} (average)",
                    "category": f"LiveBench {c}", "metric": METRIC, "row": f"categories {c}"}
                   for c in (categories or {})]
    return list(models.values()), benchmarks, scores


def read(path: Path) -> AdapterOutput:
    lone = not path.is_dir() and not zipfile.is_zipfile(path)
    members = read_members(path, _wanted)  # a single file is read whatever its name
    # table name -> its name's date match (None for a single table of another name)
    tables = {n: m for n in members if (m := _TABLE.match(n)) or lone}
    if lone:  # a single table: its categories file sits beside it, when it does
        m = tables[path.name]
        sibling = path.with_name(f"categories_{'_'.join(m.groups())}.json") if m else None
        if sibling is not None and sibling.is_file():
            members[sibling.name] = sibling.read_bytes()
    if not tables:
        raise BadInputError(f"{path}: no LiveBench table_YYYY_MM_DD.csv found")
    notes: list[str] = []
    models, benchmarks, scores = {}, {}, []
    for name in sorted(tables, reverse=True):  # newest release first
        m = tables[name]
        date = "-".join(m.groups()) if m else None
        cat_name = f"categories_{'_'.join(m.groups())}.json" if m else None
        categories = None
        if cat_name in members:
            try:
                categories = json.loads(decode_text(members[cat_name], cat_name))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BadInputError(f"{cat_name}: not a JSON object of category -> tasks ({exc})") from exc
            if not isinstance(categories, dict) or not all(isinstance(v, list) for v in categories.values()):
                raise BadInputError(f"{cat_name}: expected an object of category -> list of tasks")
        else:
            notes.append(f"{name}: no categories file beside it; category and overall scores not "
                         "derived (ingest the folder or zip that holds the release's table_*.csv "
                         "and categories_*.json to derive them)")
        ms, bs, ss = _release(name, members[name], categories, date)
        for row in ms:
            models.setdefault(row["model_id"], row)
        for row in bs:
            benchmarks.setdefault(row["benchmark_id"], row)
        scores += ss
    return AdapterOutput.from_rows(list(models.values()), list(benchmarks.values()), scores, notes)


ADAPTER = Adapter(
    name="livebench",
    detect=detect,
    read=read,
)
