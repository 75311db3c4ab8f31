"""Several new models in one file: what `benchpress predict --file` and
`BenchPress.predict_file` read.

One row per model: its ``id`` (the name the answer is filed under), what is known of it
(the metadata fields of `predict --metadata`: provider, release_date, is_reasoning,
open_weights, effort, model_id) and its known scores. Two forms:

* CSV, one row per model: a column ``id``, any of the metadata columns, and one column per
  benchmark (name or alias; an empty cell is not known)::

      id,provider,release_date,gpqa_diamond,hle,ifbench
      acme-3,Acme,2026-06-01,81.2,24.0,70.5
      acme-3-mini,Acme,,72.0,,61.0

* JSON, a list of objects ``{"id": ..., "metadata": {...}, "scores": {...}}`` (metadata
  optional).

A row without any metadata is folded in from its scores alone, as `predict --scores`
folds a model in; a row with some is folded in as `predict --scores ... --metadata ...`,
so each row's numbers are those of that one-model command. Everything read is checked
here, in one line naming the file, the row and the field: a missing or repeated id, a
score that is not a number, a bad metadata value (`predict.models.covariates.checked_metadata`), a
file over `input_limits().max_models_file_bytes` or with more than `input_limits().max_models_file_rows`
models.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from benchpress.input_limits import input_limits
from benchpress.errors import BadInputError, shown, typed_number
from benchpress.predict.models.covariates import METADATA_FIELDS, checked_metadata

__all__ = ["NewModel", "read_models_file", "new_models"]


@dataclass(frozen=True)
class NewModel:
    """One new model to predict: its ``id``, known ``scores`` {benchmark: score} and
    ``metadata`` {field: value} (None: none known)."""

    id: str
    scores: dict = field(default_factory=dict)
    metadata: dict | None = None


def _number(value, where: str) -> float | None:
    """A score cell: None when empty, else a finite float (BadInputError otherwise)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = typed_number(value)
    except (TypeError, ValueError):
        raise BadInputError(f"{where}: {shown(value)} is not a number") from None
    if not math.isfinite(number):
        raise BadInputError(f"{where}: {shown(value)} is not a finite number")
    return number


def new_models(rows, *, source: str = "models") -> list[NewModel]:
    """Checked :class:`NewModel` objects from ``rows`` (NewModel objects or dicts with
    ``id``, ``scores`` and optional ``metadata``); ``source`` names them in errors."""
    out, seen = [], set()
    for n, row in enumerate(rows, start=1):
        if isinstance(row, NewModel):
            ident, scores, metadata = row.id, row.scores, row.metadata
        elif isinstance(row, dict):
            unknown = sorted(set(row) - {"id", "scores", "metadata"})
            if unknown:
                raise BadInputError(f"{source} row {n}: unknown key(s) {unknown} (use id, "
                                    "scores, metadata)")
            ident, scores, metadata = row.get("id"), row.get("scores"), row.get("metadata")
        else:
            raise BadInputError(f"{source} row {n}: expected an object with id and scores")
        ident = "" if ident is None else str(ident).strip()
        where = f"{source} row {n}" + (f" ({shown(ident)})" if ident else "")
        if not ident:
            raise BadInputError(f"{where}: no id (each model needs a name)")
        if ident in seen:
            raise BadInputError(f"{where}: id {shown(ident)} is given twice")
        seen.add(ident)
        if not isinstance(scores, dict) or not scores:
            raise BadInputError(f"{where}: no known scores")
        values = {}
        for bench, value in scores.items():
            number = _number(value, f"{where}, score {shown(str(bench))}")
            if number is not None:
                values[str(bench).strip()] = number
        if not values:
            raise BadInputError(f"{where}: no known scores")
        if metadata is not None and not isinstance(metadata, dict):
            raise BadInputError(f"{where}: metadata must be an object of fields")
        given = {k: v for k, v in (metadata or {}).items()
                 if v is not None and str(v).strip()}
        try:
            checked_metadata(given)
        except BadInputError as exc:
            raise BadInputError(f"{where}: {exc}") from None
        out.append(NewModel(ident, values, given or None))
    if len(out) > input_limits().max_models_file_rows:
        raise BadInputError(f"{source}: {len(out):,} models are more than one call may predict "
                            f"({input_limits().max_models_file_rows:,}; env "
                            "BENCHPRESS_MAX_MODELS_FILE_ROWS)")
    if not out:
        raise BadInputError(f"{source}: no models")
    return out


def read_models_file(path: Path) -> list[NewModel]:
    """The new models of a CSV or JSON file (module docstring); one line naming the file,
    row and field for anything wrong, and a file over `input_limits().max_models_file_bytes`
    refused before it is read."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > input_limits().max_models_file_bytes:
            raise BadInputError(f"{path}: {size:,} bytes is more than a models file may hold "
                                f"({input_limits().max_models_file_bytes:,}; env "
                                "BENCHPRESS_MAX_MODELS_FILE_BYTES)")
        if path.suffix.lower() == ".csv":
            frame = pl.read_csv(path, infer_schema=False)
            rows = _csv_rows(frame, path)
        else:
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list):
                raise BadInputError(f"{path}: expected a JSON list of "
                                    '{"id", "metadata", "scores"} objects')
    except (OSError, UnicodeDecodeError, ValueError, pl.exceptions.PolarsError) as exc:
        raise BadInputError(f"cannot read models file {path}: "
                            f"{' '.join(str(exc).split())}") from None
    return new_models(rows, source=str(path))


def _csv_rows(frame: pl.DataFrame, path: Path) -> list[dict]:
    """A wide CSV's rows as dicts of id, metadata and scores."""
    columns = [c.strip() for c in frame.columns]
    if "id" not in columns:
        raise BadInputError(f"{path}: a models CSV needs a column 'id' (then metadata and "
                            "benchmark columns)")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise BadInputError(f"{path}: column {shown(twice[0])} is given twice")
    frame = frame.rename(dict(zip(frame.columns, columns)))
    meta_cols = [c for c in columns if c in METADATA_FIELDS]
    score_cols = [c for c in columns if c != "id" and c not in METADATA_FIELDS]
    if not score_cols:
        raise BadInputError(f"{path}: no benchmark columns (the columns after id and the "
                            "metadata are benchmarks)")
    return [{"id": r["id"], "metadata": {c: r[c] for c in meta_cols},
             "scores": {c: r[c] for c in score_cols}} for r in frame.iter_rows(named=True)]
