"""LMArena (ex LMSYS Chatbot Arena) ratings, from two public scrapers, in three layouts that
`read` tells apart by content (a file, or the folder of one version):

- ``lmsys.csv`` (github.com/fboulnois/llm-leaderboard-csv ``csv/``, 2024-06 .. 2025-06): the
  text arena, ``rank,model,arena_elo,95_pct_ci,votes,organization,license,knowledge_cutoff,
  url`` (``arena_score`` from 2024-07-07, ``rank_stylectrl`` added 2024-10-16);
- ``lmarena_<board>.csv`` (same repository, 2025-07-27 on): one file per board (``text``,
  ``vision``, ``image``, the text-to-image arena), the same columns;
- ``<board>.json`` (github.com/oolong-tea-2026/arena-ai-leaderboards ``data/<day>/``, 2026-03
  on): ``{meta: {leaderboard, fetched_at, ...}, models: [{rank, model, vendor, license, score,
  ci, votes}]}`` per board (text, code, vision, document, search, text-to-image, image-edit,
  video boards ...), only the top rows the page showed that day; ``_index.json`` is skipped.

- **Ratings.** Each board is a benchmark ``lmarena_<board>`` (``lmarena_text``,
  ``lmarena_text_to_image`` ...) on the ``elo`` scale: a Bradley-Terry rating anchored per
  board and per release, so a model's rating moves when others join. It is never pooled with
  percentages (its own scale in `schemas/benchmarks.csv`), and a change of how the boards are
  published is a change of method declared in the source config (`store.methods`). The
  confidence interval, the votes, the rank and the style-control rank go into
  ``reported_setting``; they are not values.
- **Models.** A row is a model under the name the arena gives it (``GPT-4o-2024-05-13``,
  ``claude-opus-4-6-thinking``, ``gemini-3-flash (thinking-minimal)``): thinking and effort
  variants stay their own rows unless reviewed aliases (`schemas/aliases.csv`) join them.
  ``organization``/``vendor`` is the provider; a licence other than ``Proprietary`` marks
  open weights; knowledge cutoff and URL go into the setting. A model listed twice on one
  board (``Yi-34B-Chat`` in 2025-07/08) keeps both rows (an identical second one is a
  duplicate for the quarantine).
- **Citation.** The arena measures every model itself (``leaderboard``); a value cites its
  board's file (by its name in the folder,
  resolved against the version's URL by `validate.prepare.cited_url`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from benchpress.adapters._files import decode_text, head_bytes, read_members
from benchpress.adapters._frames import conform, json_object, open_weights
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, Adapter, AdapterOutput,
)
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "board_id", "board_of_file"]

METRIC = "Arena rating (Bradley-Terry, Elo scale)"
_CSV_HEADS = (("rank", "model", "arena_elo"), ("rank", "model", "arena_score"),
              ("rank", "rank_stylectrl", "model", "arena_score"))
# fboulnois' file names -> the arena's board names
_CSV_BOARDS = {"lmsys": "text", "image": "text-to-image"}
_INDEX = "_index.json"


def board_id(board: str) -> str:
    """The benchmark id of an arena board.

    >>> board_id("text-to-image")
    'lmarena_text_to_image'
    """
    return "lmarena_" + re.sub(r"[^a-z0-9]+", "_", board.strip().lower()).strip("_")


def board_of_file(name: str) -> str:
    """The board of a CSV export by its file name (``lmsys.csv``: the text arena; a name that
    says none, such as a cached copy's digest, is read as ``lmsys.csv``, the one single-file
    layout).

    >>> board_of_file("lmarena_vision.csv"), board_of_file("lmsys.csv"), board_of_file("9f3c")
    ('vision', 'text', 'text')
    """
    stem = Path(name).stem.lower()
    if not stem.startswith("lmarena_"):
        return "text"
    stem = stem.removeprefix("lmarena_")
    return _CSV_BOARDS.get(stem, stem)


def _csv_header(raw: bytes) -> tuple[str, ...]:
    first = raw[:2000].decode("utf-8-sig", "replace").split("\n", 1)[0]
    return tuple(c.strip().lower() for c in first.split(","))


def _is_csv(raw: bytes) -> bool:
    head = _csv_header(raw)
    return any(head[:len(h)] == h for h in _CSV_HEADS)


def _is_board_json(raw: bytes) -> bool:
    head = raw[:4000]
    return raw.lstrip().startswith(b"{") and b'"leaderboard"' in head and b'"models"' in raw \
        and b'"score"' in raw


def _wanted(name: str) -> bool:
    return name != _INDEX and name.lower().endswith((".csv", ".json"))


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        files = [p for p in path.iterdir() if p.is_file() and _wanted(p.name)]
        return any(_is_csv(head) or _is_board_json(head)
                   for head in (head_bytes(p, 20000) for p in files))
    return _is_csv(content) or _is_board_json(content[:200000])


def _from_csv(name: str, raw: bytes) -> tuple[pl.DataFrame, str | None]:
    """The board's rows as (model, provider, licence, score, rank, rank_style, ci, votes,
    cutoff, url, line) text, and the date the file carries (none)."""
    text = decode_text(raw, name)
    try:
        table = pl.read_csv(text.encode(), infer_schema=False, truncate_ragged_lines=False)
    except pl.exceptions.PolarsError as exc:
        raise BadInputError(f"{name}: malformed CSV ({str(exc).splitlines()[0]})") from exc
    table = table.rename({c: c.strip().lower() for c in table.columns})
    score = "arena_score" if "arena_score" in table.columns else "arena_elo"
    get = lambda c: pl.col(c) if c in table.columns else pl.lit(None, dtype=pl.String)  # noqa: E731
    return table.select(
        get("model").str.strip_chars().alias("model"), get("organization").alias("provider"),
        get("license").alias("licence"), get(score).str.strip_chars().alias("score"),
        get("rank").alias("rank"), get("rank_stylectrl").alias("rank_style"),
        get("95_pct_ci").alias("ci"), get("votes").alias("votes"),
        get("knowledge_cutoff").alias("cutoff"), get("url").alias("url"),
        (pl.int_range(pl.len()) + 2).alias("line"),
    ), None


def _from_json(name: str, raw: bytes) -> tuple[pl.DataFrame, str, str | None]:
    try:
        doc = json.loads(decode_text(raw, name))
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{name}: malformed JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}") from exc
    meta = doc.get("meta") if isinstance(doc, dict) and isinstance(doc.get("meta"), dict) else {}
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, list) or not meta.get("leaderboard"):
        raise BadInputError(f"{name}: expected an arena board {{meta: {{leaderboard}}, models: [...]}}")
    text = lambda v: None if v is None or isinstance(v, (dict, list)) else str(v)  # noqa: E731
    rows = [{"model": text(m.get("model")), "provider": text(m.get("vendor")),
             "licence": text(m.get("license")), "score": text(m.get("score")),
             "rank": text(m.get("rank")), "rank_style": None, "ci": text(m.get("ci")),
             "votes": text(m.get("votes")), "cutoff": None, "url": None, "line": k}
            for k, m in enumerate(models) if isinstance(m, dict)]
    frame = pl.DataFrame(rows, schema={**{c: pl.String for c in (
        "model", "provider", "licence", "score", "rank", "rank_style", "ci", "votes", "cutoff",
        "url")}, "line": pl.Int64})
    fetched = str(meta.get("fetched_at") or "")[:10] or None
    return frame, str(meta["leaderboard"]), fetched


def _board(name: str, raw: bytes, cite: str | None):
    """(models, scores) of one board file."""
    if _is_csv(raw):
        rows, observed = _from_csv(name, raw)
        board, where = board_of_file(name), pl.format(f"{name} line {{}}", "line")
    else:
        rows, board, observed = _from_json(name, raw)
        where = pl.format(f"{name} models[{{}}]", "line")
    bench = board_id(board)
    models = rows.filter(pl.col("model").is_not_null()).select(
        pl.col("model").alias("model_id"), pl.col("model").alias("name"),
        pl.col("provider"), open_weights(pl.col("licence")).alias("open_weights"),
        json_object(license=pl.col("licence"), knowledge_cutoff=pl.col("cutoff"),
                    url=pl.col("url")).alias("setting"),
        pl.lit("model").alias("entry_kind"), where.alias("row"))
    scores = rows.filter(pl.col("score").is_not_null() & (pl.col("score") != "")).select(
        pl.col("model").alias("model_id"), pl.lit(bench).alias("benchmark_id"),
        pl.col("score").alias("score_raw"), pl.lit(cite, dtype=pl.String).alias("reference_url"),
        pl.lit("leaderboard").alias("source_type"),
        json_object(board=pl.lit(board), rank=pl.col("rank"), rank_style_control=pl.col("rank_style"),
                    ci=pl.col("ci"), votes=pl.col("votes")).alias("reported_setting"),
        pl.lit(observed, dtype=pl.String).alias("observed_at"), pl.lit(False).alias("derived"),
        pl.format("{} score", where).alias("row"))
    benchmark = pl.DataFrame({"benchmark_id": [bench], "name": [f"LMArena {board} arena"],
                              "category": ["Human Preference"], "metric": [METRIC],
                              "row": [name]})
    return models, scores, benchmark


def read(path: Path) -> AdapterOutput:
    members = read_members(path, _wanted)
    boards = {n: raw for n, raw in members.items() if _is_csv(raw) or _is_board_json(raw[:200000])}
    if not boards:
        raise BadInputError(f"{path}: expected LMArena board files (lmsys.csv, lmarena_<board>"
                            ".csv or <board>.json)")
    parts = [_board(n, raw, n if path.is_dir() else None)
             for n, raw in sorted(boards.items())]
    models = pl.concat([p[0] for p in parts]).unique("model_id", keep="first", maintain_order=True)
    return AdapterOutput(conform(models, MODEL_COLUMNS),
                         conform(pl.concat([p[2] for p in parts]), BENCHMARK_COLUMNS),
                         conform(pl.concat([p[1] for p in parts]), SCORE_COLUMNS))


ADAPTER = Adapter(name="lmarena", detect=detect, read=read, cites_source=True)
