"""Every size threshold in one documented object, passed where it applies
(`benchpress.predict.size_limits`, issues 25 and 44)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import benchpress
from benchpress.predict.size_limits import LIMITS, SizeLimits

PACKAGE = Path(benchpress.__file__).resolve().parent
PREDICT = PACKAGE / "predict"


def _modules(root: Path):
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))}


def test_each_threshold_is_documented_once_and_frozen():
    doc = SizeLimits.__doc__
    for f in dataclasses.fields(SizeLimits):
        assert doc.count(f"\n    {f.name} : int\n") == 1, f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        LIMITS.cells_solver_min_cells = 1


def test_no_module_copies_a_limit_into_a_name_of_its_own():
    """`X = LIMITS.field` at a module's top level (or as a class attribute) was how 14
    modules held their bounds: two names for one value, and a test narrowing one module's
    copy. Now the object itself is read, or passed."""
    copies = []
    for path, tree in _modules(PACKAGE).items():
        # (an annotated field of a class is a dataclass's parameter default, as a function's)
        classes = [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        for body, kinds in [(tree.body, (ast.Assign, ast.AnnAssign))] + [
                (c, ast.Assign) for c in classes]:
            for node in body:
                value = node.value if isinstance(node, kinds) else None
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                        and value.value.id == "LIMITS":
                    copies.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not copies


def test_every_limit_is_applied_somewhere():
    read = {node.attr for tree in _modules(PACKAGE).values() for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)}
    unused = [f.name for f in dataclasses.fields(SizeLimits) if f.name not in read]
    assert not unused


def test_no_size_threshold_is_written_outside_the_limits_object():
    """A module constant of 100 or more in benchpress.predict is a size threshold: it
    belongs in SizeLimits, unless it is a modelling choice (listed here)."""
    modelling = {"COLUMN_PRIOR"}  # intervals: a per-benchmark factor's prior weight, in cells
    found = []
    for path, tree in _modules(PREDICT).items():
        if path.name == "size_limits.py":
            continue
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, int) and not isinstance(node.value.value, bool) \
                    and node.value.value >= 100 and not (
                        isinstance(node, ast.Assign) and node.targets[0].id in modelling):
                found.append(f"{path.name}:{node.lineno}")
    assert not found


def test_a_limit_passed_in_changes_the_path_not_the_numbers():
    """The nearest-model feature under tiny bounds (blocks of 3 rows, the block path from 5
    models on) equals the one-product path; a candidate cap of 4 changes it (a sample)."""
    from benchpress.predict.intervals.features import nearest_similarity

    rng = np.random.default_rng(7)
    Z = rng.normal(size=(30, 6)) + rng.normal(size=(30, 1))
    Z[rng.random(Z.shape) < 0.3] = np.nan
    obs = ~np.isnan(Z)
    exact = nearest_similarity(Z, Z, obs, exclude_self=True)
    small = SizeLimits(support_block_rows=3, support_exact_max_models=5)
    np.testing.assert_allclose(nearest_similarity(Z, Z, obs, exclude_self=True, limits=small),
                               exact, rtol=1e-12, atol=1e-12)
    sampled = nearest_similarity(Z, Z, obs, exclude_self=True,
                                 limits=SizeLimits(support_max_candidates=4))
    assert np.all(sampled <= exact + 1e-12) and not np.allclose(sampled, exact)


def test_read_capped_reads_a_file_within_its_bound_and_refuses_one_over_it(tmp_path,
                                                                         monkeypatch):
    from benchpress.errors import BadInputError
    from benchpress.input_limits import read_capped

    path = tmp_path / "settings.yaml"
    path.write_bytes(b"x" * 100)
    monkeypatch.setenv("BENCHPRESS_MAX_CONFIG_BYTES", "100")
    assert read_capped(path, "max_config_bytes", "a settings file") == b"x" * 100
    path.write_bytes(b"x" * 101)
    with pytest.raises(BadInputError) as refused:
        read_capped(path, "max_config_bytes", "a settings file", "they are a few kB")
    assert str(refused.value) == (f"{path}: 101 bytes is more than a settings file may hold "
                                  "(100; they are a few kB; env BENCHPRESS_MAX_CONFIG_BYTES)")
