"""Berkeley Function-Calling Leaderboard (github.com/ShishirPatil/gorilla, branch gh-pages): one
CSV per release at the site's root, renamed over time (``data.csv`` -> ``data_combined.csv`` ->
``data_combined_Sep_20_2024.csv`` -> ``data_overall.csv``), its header changing at most
releases. `read` takes the CSV or the folder holding it; every variant is recognised by its
header (``Rank,Overall Acc,...``), not by its name.

- **Entries.** A row is a model under one calling mode, written in parentheses: ``GPT-4o-
  2024-08-06 (FC)`` (native function calling), ``(Prompt)``, ``(FC Auto)``, ``(Prompt +
  Thinking)`` ... The mode is an evaluation setting (``setting.mode``), kept in the id, so the
  FC and Prompt rows of one model stay two rows unless reviewed aliases join them.
  ``Organization`` is the provider, ``License`` says whether the weights are open
  (``Proprietary``: no), ``Model Link`` goes into the setting.
- **Values.** Every accuracy column (``84.28%``) is a benchmark ``bfcl_<column>``
  (``bfcl_non_live_simple_ast``; ``Overall Acc`` is ``bfcl_overall``), declared here as
  percent; cost and latency are their own benchmarks where lower is better (dollars and
  seconds: ``bfcl_cost_per_1k_calls`` until 2025-06, then ``bfcl_total_cost``;
  ``bfcl_latency_mean``, ``_sd``, ``_p95``), as are the format-sensitivity spreads (percentage
  points, v4). ``N/A`` and blank cells are missing values, counted in a note. ``Rank`` is
  not a value.
- **Scoring regimes.** Overall accuracy is a different weighted mean in each generation of the
  leaderboard (v1; v2 with live data, 2024-08-19; v3 multi-turn, 2024-09-20; v4 web search,
  memory and format sensitivity, 2025-08-28): the source config declares those dates as
  changes of method (`store.methods`), so each generation's values are a benchmark version
  (``bfcl_overall@2025-08-28``) and never revisions of the one before.
- **Quirk.** The first release (2024-03-20) has a 16-column header over 17-field rows: the
  model's name under ``Overall Acc``, its link under ``Model``. Rows one field longer than a
  header that starts ``Rank,Overall Acc,Model`` are read as ``Rank, Model, Model Link,
  Organization, License, Overall Acc, ...`` (the next release's order), which the values
  confirm (a name, a URL, then percentages).
- **Citation.** The leaderboard runs every model itself (``leaderboard``); a value cites the
  CSV (read from a folder: by its name in the folder, which the build resolves against the
  version's URL, `validate.prepare.cited_url`; the file alone: the source's URL).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import polars as pl

from benchpress.adapters._files import decode_text, head_bytes, read_members
from benchpress.adapters._frames import conform, json_object, open_weights
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, Adapter, AdapterOutput,
)
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "benchmark_id", "parse_name", "SCALED_COLUMNS", "GENERATIONS",
           "MODE"]

HEAD = ("Rank", "Overall Acc")
# columns that describe the row rather than measure it
DESCRIPTIVE = ("Rank", "Model", "Model Link", "Organization", "License")
# a column measured on another scale than accuracy: (benchmark id, metric label); lower is
# better for each, which only the contract (schemas/benchmarks.csv) declares, so a column
# missing there is quarantined for its unknown scale rather than declared the wrong way up
SCALED_COLUMNS: dict[str, tuple[str, str]] = {
    "Overall Acc": ("bfcl_overall", "% overall accuracy"),
    "Cost ($ Per 1k Function Calls)": ("bfcl_cost_per_1k_calls", "US dollars per 1,000 calls"),
    "Total Cost ($)": ("bfcl_total_cost", "US dollars for the whole evaluation"),
    "Latency Mean (s)": ("bfcl_latency_mean", "seconds per call, mean"),
    "Latency Standard Deviation (s)": ("bfcl_latency_sd", "seconds per call, standard deviation"),
    "Latency 95th Percentile (s)": ("bfcl_latency_p95", "seconds per call, 95th percentile"),
    "Format Sensitivity Max Delta": ("bfcl_format_sensitivity_max_delta",
                                     "percentage points of accuracy, largest spread"),
    "Format Sensitivity Standard Deviation": ("bfcl_format_sensitivity_sd",
                                              "percentage points of accuracy, standard deviation"),
}
# the first release of each generation of the overall score (see the module docstring)
GENERATIONS = {"v1": "2024-03-20", "v2": "2024-08-19", "v3": "2024-09-20", "v4": "2025-08-28"}
_MISSING = ("", "N/A", "NA", "-", "nan")
MODE = r"\(([^()]*)\)\s*$"  # the calling mode: the name's last parentheses


def benchmark_id(column: str) -> str:
    """The benchmark id of a BFCL column.

    >>> benchmark_id("Non-Live Simple AST"), benchmark_id("Latency Mean (s)")
    ('bfcl_non_live_simple_ast', 'bfcl_latency_mean')
    """
    if column in SCALED_COLUMNS:
        return SCALED_COLUMNS[column][0]
    return "bfcl_" + re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_")


def parse_name(name: str) -> dict:
    """The calling mode a BFCL name states in its last parentheses.

    >>> parse_name("GPT-4o-2024-08-06 (FC)")
    {'mode': 'FC'}
    >>> parse_name("o1-2024-12-17 (Prompt + Thinking)")
    {'mode': 'Prompt + Thinking'}
    """
    found = re.search(MODE, name)
    return {"mode": found.group(1).strip()} if found else {}


def _is_bfcl_header(head: bytes) -> bool:
    """Whether the first line of `head` (a file's first bytes) is a BFCL header."""
    first = head[:4000].decode("utf-8-sig", "replace").split("\n", 1)[0]
    cells = [c.strip() for c in first.split(",")]
    return tuple(cells[:2]) == HEAD and "Model" in cells


def _wanted(name: str) -> bool:
    return name.lower().endswith(".csv")


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        files = [p for p in path.iterdir() if p.is_file() and _wanted(p.name)]
        return any(_is_bfcl_header(head_bytes(p, 4000)) for p in files)
    return _is_bfcl_header(content)


def _records(name: str, raw: bytes) -> tuple[list[str], list[list[str]], list[int]]:
    """(header, rows, line numbers) of one CSV, the 2024-03-20 layout set right."""
    reader = csv.reader(io.StringIO(decode_text(raw, name), newline=""))
    try:
        header = [h.strip() for h in next(reader, [])]
        rows, lines, start = [], [], reader.line_num + 1
        for values in reader:
            if any(v.strip() for v in values):
                rows.append([v.strip() for v in values])
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise BadInputError(f"{name} line {reader.line_num}: malformed CSV ({exc})") from exc
    if not header or tuple(header[:2]) != HEAD:
        raise BadInputError(f"{name}: expected a BFCL table whose header starts "
                            f"{','.join(HEAD)}")
    widths = {len(r) for r in rows}
    if header[2:3] == ["Model"] and widths == {len(header) + 1} and "Model Link" not in header:
        # the name under `Overall Acc`, the link under `Model`: the next release's order
        header = ["Rank", "Model", "Model Link", *header[3:5], "Overall Acc", *header[5:]]
    bad = next((k for k, r in enumerate(rows) if len(r) != len(header)), None)
    if bad is not None:
        raise BadInputError(f"{name} line {lines[bad]}: {len(rows[bad])} fields but the header "
                            f"has {len(header)}")
    if len(set(header)) != len(header):
        raise BadInputError(f"{name}: a column is named twice in the header")
    return header, rows, lines


def _read_table(name: str, raw: bytes, cite: str | None) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                   pl.DataFrame, int]:
    header, rows, lines = _records(name, raw)
    table = pl.DataFrame(rows, schema={h: pl.String for h in header}, orient="row").with_columns(
        pl.Series("_line", lines, dtype=pl.Int64))
    if "Model" not in table.columns:
        raise BadInputError(f"{name}: expected a 'Model' column")
    for col in DESCRIPTIVE:
        if col not in table.columns:
            table = table.with_columns(pl.lit(None, dtype=pl.String).alias(col))
    where = pl.format(f"{name} line {{}}", "_line")
    models = table.select(
        pl.col("Model").alias("model_id"), pl.col("Model").alias("name"),
        pl.col("Organization").replace({"N/A": None}).alias("provider"),
        open_weights(pl.col("License")).alias("open_weights"),
        json_object(mode=pl.col("Model").str.extract(MODE, 1).str.strip_chars(),
                    url=pl.col("Model Link"), license=pl.col("License")).alias("setting"),
        where.alias("row"),
    ).unique("model_id", keep="first", maintain_order=True)
    values = [c for c in header if c not in DESCRIPTIVE]
    long = (table.select("Model", "Rank", "_line", *values)
            .unpivot(index=["Model", "Rank", "_line"], variable_name="column", value_name="raw"))
    missing = long.filter(pl.col("raw").is_null() | pl.col("raw").is_in(list(_MISSING))).height
    long = long.filter(pl.col("raw").is_not_null() & ~pl.col("raw").is_in(list(_MISSING)))
    ids = {c: benchmark_id(c) for c in values}
    scores = long.select(
        pl.col("Model").alias("model_id"),
        pl.col("column").replace_strict(ids, return_dtype=pl.String).alias("benchmark_id"),
        pl.col("raw").alias("score_raw"),
        pl.lit(cite, dtype=pl.String).alias("reference_url"),
        pl.lit("leaderboard").alias("source_type"),
        json_object(file=pl.lit(name), rank=pl.col("Rank")).alias("reported_setting"),
        pl.lit(False).alias("derived"),
        pl.format(f"{name} line {{}} '{{}}'", "_line", "column").alias("row"),
    )
    benchmarks = pl.DataFrame({
        "benchmark_id": [ids[c] for c in values],
        "name": [f"BFCL {c}" + (f" ({SCALED_COLUMNS[c][1]})" if c in SCALED_COLUMNS else "")
                 for c in values],
        "category": ["Tool Use"] * len(values),
        "metric": [None if c in SCALED_COLUMNS else "% accuracy" for c in values],
        "row": [f"{name} column '{c}'" for c in values],
    })
    return models, benchmarks, scores, missing


def read(path: Path) -> AdapterOutput:
    members = read_members(path, _wanted)
    tables = {n: raw for n, raw in members.items() if _is_bfcl_header(raw)}
    if not tables:
        raise BadInputError(f"{path}: expected a BFCL leaderboard CSV (header "
                            f"{','.join(HEAD)},...)")
    parts, notes = [], []
    for name, raw in sorted(tables.items()):
        cite = name if path.is_dir() else None
        models, benchmarks, scores, missing = _read_table(name, raw, cite)
        parts.append((models, benchmarks, scores))
        if missing:
            notes.append(f"{missing} blank or N/A cells of {name} left out")
    models = pl.concat([p[0] for p in parts]).unique("model_id", keep="first", maintain_order=True)
    return AdapterOutput(
        conform(models, MODEL_COLUMNS), conform(pl.concat([p[1] for p in parts]), BENCHMARK_COLUMNS),
        conform(pl.concat([p[2] for p in parts]), SCORE_COLUMNS), notes)


ADAPTER = Adapter(name="bfcl", detect=detect, read=read, cites_source=True)
