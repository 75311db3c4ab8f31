"""The four shared histories read with the standard library only, independently of the adapters:
what each version publishes (entry name -> values, the file each value is in) and the upstream
URL of each file at its commit (from the history's VERSIONS.csv). The adapter tests compare the
registry against these."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from tests.conftest import SHARED_DATA

HISTORIES = {"bfcl": "bfcl-history", "tau2-bench": "tau2-bench-history",
             "swe-bench": "swebench-history", "lmarena": "lmarena-history"}


def folder(source: str) -> Path:
    return SHARED_DATA / HISTORIES[source]


def versions(source: str) -> list[dict]:
    """The rows of the history's VERSIONS.csv, oldest first."""
    with open(folder(source) / "VERSIONS.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def blob(source: str, version: str, path: str) -> str:
    """The GitHub blob URL of `path` (relative to the version's upstream folder) at the
    version's commit."""
    row = next(r for r in versions(source) if r["date"] == version)
    listed = row["paths"].split(" (")[0]
    if listed.endswith("/**"):  # a folder: the mirror keeps its last component or only its files
        top = listed.removesuffix("/**")
        root = top.rsplit("/", 1)[0] if (folder(source) / version / top.rsplit("/", 1)[-1]).is_dir() \
            else top
    else:
        root = listed.split(";")[0].rsplit("/", 1)[0] if "/" in listed else ""
    return f"https://github.com/{row['upstream_repo']}/blob/{row['commit']}/" + \
        "/".join(p for p in (root, path) if p)


def _number(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().rstrip("%")
    try:
        return float(text)
    except ValueError:
        return None


def published(source: str, version: str) -> Counter:
    """Counter of (entry name as upstream writes it, file in the version folder, value)."""
    root = folder(source) / version
    out: Counter = Counter()
    if source == "bfcl":
        (file,) = [p for p in root.iterdir() if p.suffix == ".csv"]
        rows = list(csv.reader(open(file, newline="", encoding="utf-8")))
        header = rows[0]
        for row in rows[1:]:
            if len(row) == len(header) + 1:  # 2024-03-20: name and link shifted in
                header = ["Rank", "Model", "Model Link", *rows[0][3:5], "Overall Acc", *rows[0][5:]]
            record = dict(zip(header, row))
            for column, text in record.items():
                if column in ("Rank", "Model", "Model Link", "Organization", "License"):
                    continue
                if (value := _number(text)) is not None:
                    out[(record["Model"], file.name, value)] += 1
    elif source == "tau2-bench":
        manifest = json.loads((root / "submissions" / "manifest.json").read_text())
        listed = {s for ids in manifest.values() if isinstance(ids, list) for s in ids}
        for sid in sorted(listed):
            file = root / "submissions" / sid / "submission.json"
            if not file.is_file():
                continue
            doc = json.loads(file.read_text())
            for values in doc["results"].values():
                for key in ("pass_1", "pass_2", "pass_3", "pass_4", "cost"):
                    if isinstance(values, dict) and (v := _number(values.get(key))) is not None:
                        out[(sid, f"submissions/{sid}/submission.json", v)] += 1
    elif source == "swe-bench":
        (file,) = [p for p in root.iterdir() if p.suffix == ".json"]
        doc = json.loads(file.read_text())
        for board in doc["leaderboards"]:
            for entry in board["results"]:
                for key in ("resolved", "cost", "instance_cost", "instance_calls"):
                    if (v := _number(entry.get(key))) is not None:
                        out[(entry["folder"], file.name, v)] += 1
    elif source == "lmarena":
        for file in sorted(root.iterdir()):
            if file.suffix == ".json" and file.name != "_index.json":
                for m in json.loads(file.read_text())["models"]:
                    if (v := _number(m.get("score"))) is not None:
                        out[(m["model"], file.name, v)] += 1
            elif file.suffix == ".csv":
                with open(file, newline="", encoding="utf-8") as fh:
                    for r in csv.DictReader(fh):
                        v = _number(r.get("arena_score") or r.get("arena_elo"))
                        if v is not None:
                            out[(r["model"], file.name, v)] += 1
    return out
