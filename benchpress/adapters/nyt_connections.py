"""NYT Connections LLM benchmark (github.com/lechmazur/nyt-connections): the leaderboard tables of
its `README.md`, extracted per commit into ``<date>/leaderboard.csv`` with the columns
``table, rank, model, score_pct, n_puzzles, commit``. `read` takes that file or its folder.

- **Benchmark versions.** The extended benchmark grew (601, 651, 759, 940 puzzles ...), and a
  row's score is comparable only with rows scored on the same puzzles; so each row of the
  table ``Leaderboard: Extended Version`` is filed under the benchmark version of its puzzle
  count, ``nyt_connections@<n_puzzles>`` (`store.methods`), never under one id whose values
  would mix counts. The ``Original Version`` table (a fixed, older puzzle set, written in the
  README as ``Model | Score``, so its model sits in ``rank`` and its score in ``model``) is the
  benchmark ``nyt_connections_original``.
- **Rows left out, each counted in a note.** Rows without a score (the commits before
  2025-06-05 list ranks only); rows without a puzzle count (the ``Older models`` table, where
  models scored on earlier counts were moved in 2026-02: their counted values stay in the
  earlier versions, which `store.resolve` keeps for a benchmark version the newest version no
  longer shows); the ``Newest 100 puzzles`` table (a window that moves with every new puzzle,
  so no fixed benchmark).
- **Models.** The README's name with its setting in parentheses: ``(high reasoning)`` is
  effort ``high`` with reasoning on, ``(no reasoning)`` reasoning off; the model id carries
  them as the other sources' ids do (``GPT-5.5 (xhigh)``, ``Claude Sonnet 4.5 (non-reasoning)``).
- **Citation.** Each score cites the README at the commit it was read from; the rows are the
  benchmark author's own runs (``leaderboard``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from benchpress.adapters._effort import setting_in_name as parse_name
from benchpress.adapters._files import csv_records
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "parse_name", "BENCHMARK", "ORIGINAL"]

FILE = "leaderboard.csv"
HEADER = ["table", "rank", "model", "score_pct", "n_puzzles", "commit"]
BENCHMARK = "nyt_connections"
ORIGINAL = "nyt_connections_original"
README_URL = "https://github.com/lechmazur/nyt-connections/blob/{commit}/README.md"
REPO_URL = "https://github.com/lechmazur/nyt-connections"
METRIC = "% of puzzles solved"
_EXTENDED, _ORIGINAL, _NEWEST, _OLDER = ("extended version", "original version", "newest",
                                         "older models")


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        path = path / FILE
        if not path.is_file():
            return False
        content = path.read_bytes()[:200]
    first = content.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    return [c.strip() for c in first.split(",")] == HEADER


def _score(text: str | None) -> str | None:
    """The score text, or None for a blank or NaN cell."""
    try:
        value = float(text) if text not in (None, "") else math.nan
    except ValueError:
        return text  # not a number: kept, so that validation says so
    return None if math.isnan(value) else text


MAX_PUZZLES = 10**6  # a puzzle count beyond is no count (a daily game: some thousands)


def _count(text: str | None) -> str | None:
    """A puzzle count as the version label it names, in plain digits without leading
    zeros ("0940" and "940", Arabic-Indic "٩٤٠" too, are one version), or None when the
    cell is no count (blank, "²", 5,000 digits, 0).

    >>> _count("0940"), _count("\u0669\u0664\u0660"), _count("\u00b2"), _count("9" * 5000)
    ('940', '940', None, None)
    """
    text = (text or "").strip()
    if not text.isdecimal() or len(text) > 7:  # (isdecimal: digits of any script, not "²")
        return None
    count = int(text)
    return str(count) if 0 < count <= MAX_PUZZLES else None


def _benchmarks(counts: set[str]) -> list[dict]:
    rows = [{"benchmark_id": f"{BENCHMARK}@{n}", "name": f"NYT Connections ({n} puzzles)",
             "category": "Reasoning", "metric": METRIC, "row": f"n_puzzles {n}"}
            for n in sorted(counts, key=int)]
    return rows + [{"benchmark_id": ORIGINAL, "name": "NYT Connections (original version)",
                    "category": "Reasoning", "metric": METRIC, "row": "Original Version"}]


def read(path: Path) -> AdapterOutput:
    file = path / FILE if path.is_dir() else path
    if not file.is_file():
        raise BadInputError(f"{path}: expected an NYT Connections {FILE} (or a folder holding one)")
    records = csv_records(file.name, file.read_bytes())
    if records and list(records[0][1])[:len(HEADER)] != HEADER:
        raise BadInputError(f"{path}: expected the columns {', '.join(HEADER)}")
    models, scores, counts, skipped = {}, [], set(), Counter()
    for line, r in records:
        table = (r.get("table") or "").lower()
        if _ORIGINAL in table:  # `Model | Score`: the model in `rank`, its score in `model`
            name, value, bench = r.get("rank"), _score(r.get("model")), ORIGINAL
            if (name or "").strip().lower() == "model":
                continue  # the table's own header row
        elif _EXTENDED in table and _NEWEST not in table:
            name, value, n = r.get("model"), _score(r.get("score_pct")), _count(r.get("n_puzzles"))
            if value is not None and n is None:
                skipped["extended rows without a puzzle count"] += 1
                continue
            bench = f"{BENCHMARK}@{n}" if value is not None else None
        else:
            what = "'Newest 100 puzzles' rows (a moving window)" if _NEWEST in table else \
                "'Older models' rows (no puzzle count)" if _OLDER in table else \
                f"rows of table {r.get('table')!r}"
            skipped[what] += 1
            continue
        if value is None:
            skipped["rows without a score"] += 1
            continue
        if bench != ORIGINAL:
            counts.add(bench.split("@", 1)[1])
        text, setting = parse_name(name or "")
        where = f"{file.name} line {line}"
        if text and text not in models:
            models[text] = {"model_id": text, "name": name.strip(), "row": where,
                            "is_reasoning": setting.get("reasoning"),
                            "setting": json.dumps(setting, sort_keys=True) if setting else None}
        commit = (r.get("commit") or "").strip()
        scores.append({
            "model_id": text or None, "benchmark_id": bench, "score_raw": value,
            "reference_url": README_URL.format(commit=commit) if commit else REPO_URL,
            "source_type": "leaderboard",
            "reported_setting": json.dumps({"table": r.get("table"), "rank": r.get("rank")}
                                           if bench != ORIGINAL else {"table": r.get("table")}),
            "derived": False, "row": where,
        })
    notes = [f"{n} {what} left out" for what, n in sorted(skipped.items())]
    return AdapterOutput.from_rows(list(models.values()), _benchmarks(counts), scores, notes)


ADAPTER = Adapter(
    name="nyt-connections",
    detect=detect,
    read=read,
)
