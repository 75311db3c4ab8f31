"""Every size threshold in one documented object (`benchpress.predict.size_limits`, issue 25)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import benchpress.api.next_steps as next_steps
from benchpress.predict.evaluation import new_models
from benchpress.predict.intervals import calibration as intervals
from benchpress.predict.intervals import cells_support
from benchpress.predict.models import als_predictor as predictor
from benchpress.predict.models import blend, knn, sparse_als
from benchpress.predict.probes import fits as probe_fits
from benchpress.predict.probes import search as probes
from benchpress.predict.size_limits import LIMITS, SizeLimits

PREDICT = Path(predictor.__file__).resolve().parents[1]


def test_each_threshold_is_documented_once_and_frozen():
    doc = SizeLimits.__doc__
    for f in dataclasses.fields(SizeLimits):
        assert doc.count(f"\n    {f.name} : int\n") == 1, f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        LIMITS.cells_solver_min_cells = 1


@pytest.mark.parametrize("module, name, field", [
    (sparse_als, "SPARSE_MIN_CELLS", "cells_solver_min_cells"),
    (intervals, "EXACT_MAX_MODELS", "support_exact_max_models"),
    (intervals, "MAX_CANDIDATES", "support_max_candidates"),
    (intervals, "BLOCK_ROWS", "support_block_rows"),
    (intervals, "CALIBRATION_MAX_MODELS", "calibration_max_models"),
    (cells_support, "SPARSE_CANDIDATES", "support_cells_candidates"),
    (blend, "KNN_CANDIDATES", "knn_candidates"),
    (knn, "_BLOCK_FLOATS", "knn_block_floats"),
    (predictor, "_BLOCK_FLOATS", "completion_block_floats"),
    (probes, "MAX_MODELS", "probe_max_models"),
    (probes, "N_GROUPS", "probe_groups"),
    (probes, "MAX_TRAIN", "probe_max_train"),
    (probes, "CHUNK_CELLS", "probe_chunk_cells"),
    (probe_fits, "MIN_SCORES", "probe_min_benchmark_scores"),
    (new_models, "MIN_SCORES", "new_model_min_scores"),
    (next_steps, "MAX_CANDIDATES", "next_step_candidates"),
])
def test_modules_apply_the_one_value(module, name, field):
    assert getattr(module, name) == getattr(LIMITS, field)


def test_no_size_threshold_is_written_outside_the_limits_object():
    """A module constant of 100 or more in benchpress.predict is a size threshold: it
    belongs in SizeLimits, unless it is a modelling choice (listed here)."""
    modelling = {"COLUMN_PRIOR"}  # intervals: a per-benchmark factor's prior weight, in cells
    found = []
    for path in PREDICT.rglob("*.py"):
        if path.name == "size_limits.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, int) and not isinstance(node.value.value, bool) \
                    and node.value.value >= 100 and not (
                        isinstance(node, ast.Assign) and node.targets[0].id in modelling):
                found.append(f"{path.name}:{node.lineno}")
    assert not found
