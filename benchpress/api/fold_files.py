"""Reading fold files: the file side of :mod:`benchpress.predict.evaluation.folds`, kept out of the
numeric core (which decodes an already-parsed JSON object)."""

from __future__ import annotations

import json
from pathlib import Path

from benchpress.errors import BadInputError
from benchpress.input_limits import read_capped
from benchpress.predict.evaluation.folds import Folds, parse_folds

__all__ = ["read_folds"]


def read_folds(path, model_ids=None, benchmark_ids=None) -> Folds:
    """Read a fold JSON file (index or id form); ids are needed for the id form. A file
    over ``max_folds_file_bytes`` (:mod:`benchpress.input_limits`) is refused unread."""
    try:
        obj = json.loads(read_capped(Path(path), "max_folds_file_bytes", "a fold file"))
    except (OSError, ValueError) as exc:
        raise BadInputError(f"cannot read fold file {path}: {exc}") from None
    try:
        return parse_folds(obj, model_ids, benchmark_ids)
    except BadInputError as exc:
        raise BadInputError(f"{path}: {exc}") from None
