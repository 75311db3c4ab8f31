"""Scores as people read and see them: a scores file, and the one text cell
("42.8 [34.7, 51.3]", "78.0 given") that `predict` and `compare` print (typed `--scores`
text: `benchpress.api.typed_scores`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl

from benchpress.input_limits import read_capped
from benchpress.errors import BadInputError, shown, typed_number

__all__ = ["read_scores_file", "score_with_interval", "score_text"]


def read_scores_file(path: Path) -> dict[str, float]:
    """One model's known scores from a file: JSON ``{benchmark: score}`` (or the
    ``{model: {benchmark: score}}`` form of `compare --scores-file` holding one model) or CSV
    with columns benchmark_id,score; a file over `InputLimits.max_scores_file_bytes` is refused
    before it is read."""
    try:
        data = read_capped(path, "max_scores_file_bytes", "a scores file",
                           "one model's scores are a few KB")
        if path.suffix.lower() == ".csv":
            frame = pl.read_csv(io.BytesIO(data), infer_schema=False)
            if not {"benchmark_id", "score"} <= set(frame.columns):
                raise BadInputError(f"{path}: a scores CSV needs columns benchmark_id,score")
            table = dict(zip(frame["benchmark_id"].to_list(), frame["score"].to_list()))
        else:
            table = json.loads(data.decode("utf-8"))
            if (isinstance(table, dict) and len(table) == 1
                    and isinstance(next(iter(table.values())), dict)):
                table = next(iter(table.values()))
    except (OSError, UnicodeDecodeError, ValueError, pl.exceptions.PolarsError) as exc:
        raise BadInputError(f"cannot read scores file {path}: {' '.join(str(exc).split())}") from None
    if not isinstance(table, dict) or not table:
        raise BadInputError(f"{path}: expected a JSON object {{benchmark_id: score}} (one model)")
    scores = {}
    for b, v in table.items():
        try:
            scores[str(b)] = typed_number(v)
        except (TypeError, ValueError):
            raise BadInputError(f"{path}: score of {shown(str(b))} is {shown(v)}, not a "
                                "number") from None
    return scores


def score_text(value: pl.Expr) -> pl.Expr:
    """A score as people read it: rounded to 0.1, from 1,000 up to whole numbers ("2141")."""
    whole = value.round(0).cast(pl.Int64, strict=False).cast(pl.String)
    return pl.when(value.abs() >= 1000).then(whole).otherwise(value.round(1).cast(pl.String))


def score_with_interval(score: str, known: pl.Expr, word: str, lower: str | None = None,
                        upper: str | None = None, *, plus_minus: bool = False) -> pl.Expr:
    """A text cell for people: "85.0 <word>" where ``known`` (observed or given; an empty
    `word`: "85.0"), "71.2 [65.0, 77.9]" with the 90% interval in columns ``lower`` /
    ``upper`` (None: no intervals; `plus_minus`: "71.2 ±6.5", half the interval's width),
    else "71.2" (`score_text`)."""
    text = lambda c: score_text(pl.col(c))  # noqa: E731
    shown = pl.when(known).then(text(score) + pl.lit(f" {word}" if word else ""))
    if lower is not None:
        bounds = (pl.lit(" ±") + score_text((pl.col(upper) - pl.col(lower)) / 2) if plus_minus
                  else pl.lit(" [") + text(lower) + pl.lit(", ") + text(upper) + pl.lit("]"))
        shown = shown.when(pl.col(lower).is_not_null()).then(text(score) + bounds)
    return shown.otherwise(text(score))
