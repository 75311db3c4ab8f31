"""`FittedModel` (immutable, the one home of predict_rows / complete / compare / nearest),
`FitStore` (one fit per matrix, method and params) and the facade `BenchPress` over them
(issue 25)."""

from __future__ import annotations

import ast
import dataclasses
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from benchpress import BenchPress
from benchpress.errors import BadInputError
from benchpress.api.fit_store import FitStore
from benchpress.api.fitted_model import FitIdentity, FittedModel
from benchpress.predict import make_predictor

# about 7 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=7)

PACKAGE = Path(__file__).resolve().parents[1] / "benchpress"
SCORES = {"gpqa_diamond": 71.2, "hle": 20.1, "mmlu_pro": 80.0}


@pytest.fixture(scope="module")
def bp(built_2026_05):
    return BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=4))


def test_a_fitted_model_is_immutable(bp):
    fit = bp.fitted
    with pytest.raises(AttributeError, match="immutable"):
        fit.predictor = None
    with pytest.raises(AttributeError, match="immutable"):
        del fit.matrix
    with pytest.raises(TypeError):
        fit.calibrators["cells"] = None  # a read-only mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.identity.method = "als4"
    calibrated = fit.calibrated(["new_models"])
    assert calibrated is not fit and "new_models" in calibrated.calibrators
    assert calibrated.predictor is fit.predictor  # shared, never refitted
    assert calibrated.calibrated(["new_models"]) is calibrated  # nothing missing: itself


def test_a_fitted_model_says_what_made_it(bp):
    fit = bp.fitted
    assert fit.identity == FitIdentity("default", {"low_rank__n_starts": 4}, ("benchpress-2026-05",),
                                       None, "current")
    assert repr(fit).startswith("FittedModel(method='default', params={'low_rank__n_starts': 4}, "
                                "sources=benchpress-2026-05, snapshot='current', 84 models x "
                                "133 benchmarks, calibrated=")
    assert fit.identity.to_dict() == bp.provenance() == {
        "sources": ["benchpress-2026-05"], "snapshot": "current", "method": "default",
        "params": {"low_rank__n_starts": 4}}


def test_the_fitted_model_answers_what_the_facade_answers(bp):
    fit = bp.fitted_with("new_models")
    row = bp.predict(SCORES).frame
    S = np.full((1, len(bp.matrix.benchmark_ids)), np.nan)
    for b, v in SCORES.items():
        S[0, bp.matrix.benchmark_ids.index(b)] = v
    out = fit.predict_rows(S)
    np.testing.assert_allclose(out["predicted"][0], row["predicted"].to_numpy(), rtol=0, atol=1e-12)
    near = fit.nearest(S[0], 3)
    assert near.equals(bp.nearest_models(SCORES, 3))
    assert near["distance"].is_sorted() and (near["n_measured"] <= len(SCORES)).all()
    assert fit.complete().equals(bp.complete())


def test_the_store_fits_once_per_key(built_2026_05, count_fits, tmp_path):
    store = FitStore(tmp_path / "fits")
    one = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=3),
                                   store=store)
    two = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=3),
                                   store=store)
    assert one.predict(SCORES).frame.equals(two.predict(SCORES).frame)
    assert len(count_fits) == 1 and store.n_fits == 1  # the second object took the first's fit
    assert two.fitted is one.fitted
    other = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=4),
                                     store=store)
    other.fitted
    assert store.n_fits == 2  # other params: another key
    # a new store over the same folder reads the fit from disk: no fit at all
    again = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=3),
                                     store=FitStore(tmp_path / "fits"))
    assert again.predict(SCORES).frame.equals(one.predict(SCORES).frame)
    assert again.store.n_fits == 0 and len(count_fits) == 2
    key = FitStore.key(one.matrix, one.estimator, one.covariates)  # (the default takes them)
    assert (tmp_path / "fits" / key / "manifest.json").is_file()


def test_a_store_keeps_only_its_newest_fits(built_2026_05, tmp_path):
    store = FitStore(tmp_path / "fits", keep=1)
    (tmp_path / "fits").mkdir()
    (tmp_path / "fits" / "mine").mkdir()  # not a fit of ours: never removed
    for n in (2, 3):
        BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("default", n_starts=n),
                                 store=store).fit()
    kept = sorted(p.name for p in (tmp_path / "fits").iterdir() if not p.name.startswith("."))
    assert len(kept) == 2 and "mine" in kept


def test_a_regime_too_small_to_calibrate_is_left_out_and_then_explained():
    import polars as pl

    from benchpress.store.matrix import ScoreMatrix

    rng = np.random.default_rng(0)
    Y = np.clip(rng.normal(60, 15, size=(4, 3)), 1, 99)
    Y[0, 1] = Y[2, 2] = Y[3, 0] = np.nan
    bench = pl.DataFrame({"benchmark_id": ["b0", "b1", "b2"], "scale": ["percent"] * 3,
                          "lower": [0.0] * 3, "upper": [100.0] * 3, "higher_is_better": [True] * 3})
    m = ScoreMatrix(Y, ["m0", "m1", "m2", "m3"], ["b0", "b1", "b2"], bench,
                    pl.DataFrame({"model_id": ["m0", "m1", "m2", "m3"]}))
    bp = BenchPress(m, make_predictor("default", n_starts=2))
    assert "new_models" not in bp.fit(("new_models",)).fitted.calibrators  # kept without
    with pytest.raises(BadInputError, match="calibrating intervals needs at least 3 models .* and 20 scores; the matrix has 4 and 9"):
        bp.calibrator("new_models")  # asked for: its own reason
    assert bp.store.n_fits == 1


# -- the facade's shape -----------------------------------------------------------------------
def test_benchpress_has_no_mixin_bases():
    assert BenchPress.__mro__ == (BenchPress, object)
    assert FittedModel.__mro__ == (FittedModel, object)


@cache  # the package's syntax trees, parsed once for the three tests below (read only)
def _sources():
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}


def test_no_module_writes_into_another_objects_dict():
    bad = []
    for path, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__":
                bad.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("pop", "update", "setdefault") \
                    and isinstance(node.func.value, ast.Attribute) \
                    and node.func.value.attr == "__dict__":
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad


def test_the_app_imports_nothing_private():
    bad = []
    for path, tree in _sources().items():
        if "app" not in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
                parts = node.module.split(".") + [a.name for a in node.names]
                if any(p.startswith("_") for p in parts):
                    bad.append(f"{path.name}:{node.lineno} {node.module}")
    assert not bad


def test_nothing_sets_a_benchpress_attribute_from_outside():
    """The CLI used to set bp.ignore_unknown, bp.on_unknown, bp.probe_max_models, bp.lite."""
    bad = []
    for path, tree in _sources().items():
        if path.name == "facade.py":
            continue
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) \
                            and el.value.id == "bp":
                        bad.append(f"{path.name}:{node.lineno} bp.{el.attr}")
    assert not bad


def test_a_home_given_as_text_is_a_path(tmp_path, monkeypatch):
    """`Home(".")`, as a user types it, gives the same store and paths as `Home(Path("."))`
    (it used to fail at the first path it made: str / str)."""
    from benchpress.home import Home

    monkeypatch.chdir(tmp_path)
    assert Home(".") == Home(Path(".")) and Home(".").registry == Path("registry")
    assert FitStore.for_home(Home(".")).folder == FitStore.for_home(Home(Path("."))).folder
