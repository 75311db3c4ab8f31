"""Reading fold files: the file side of :mod:`benchpress.predict.evaluation.folds`, kept out of the
numeric core (which decodes an already-parsed JSON object)."""

from __future__ import annotations

import json
from pathlib import Path

from benchpress.errors import BadInputError
from benchpress.predict.evaluation.folds import Folds, parse_folds

__all__ = ["read_folds"]


def read_folds(path, model_ids=None, benchmark_ids=None) -> Folds:
    """Read a fold JSON file (index or id form); ids are needed for the id form."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise BadInputError(f"cannot read fold file {path}: {exc}") from None
    return parse_folds(obj, model_ids, benchmark_ids)
