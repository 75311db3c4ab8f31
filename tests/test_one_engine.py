"""One engine behind every door (issue 25): the same input on one registry gives the same
numbers, to 1e-9, through `predict --scores`, `predict --model`, `compare` (the CLI), the
Python API (`predict`, `predict_model`, `compare`) and the app (`/api/predict`,
`/api/model/<id>`, `/api/compare`)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from benchpress import BenchPress
from benchpress.app import build_state, create_app
from benchpress.cli import main

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1, "mmlu_pro": 80.0}
MODEL, OTHER = "gpt-4.5", "o3-mini-high"
TOL = 1e-9


@pytest.fixture(scope="module")
def doors(built_2026_05, tmp_path_factory):
    """The answers of every door to the same three questions."""
    home = built_2026_05

    def cli(*args):
        out = CliRunner().invoke(main, [*map(str, args), "--home", str(home.root),
                                        "--format", "json"], catch_exceptions=False)
        assert out.exit_code == 0, out.stderr
        return json.loads(out.stdout)

    new_file = tmp_path_factory.mktemp("one-engine") / "new.json"
    new_file.write_text(json.dumps({"acme": SCORES}), encoding="utf-8")
    typed = "acme=" + ",".join(f"{b}:{v}" for b, v in SCORES.items())
    with TestClient(create_app(build_state(home)), base_url="http://127.0.0.1") as client:
        def app(url, **params):
            r = client.get(url, params=params)
            assert r.status_code == 200, r.text[:300]
            return r.json()
        app_doors = {
            "predict": app("/api/predict", scores=",".join(f"{b}:{v}" for b, v in SCORES.items()))["predictions"],
            "model": app(f"/api/model/{MODEL}")["predicted"],
            "compare": app("/api/compare", models=f"{MODEL},{OTHER}", new=typed)["rows"]}
    bp = BenchPress.from_snapshot(home)  # the API, fitted afresh (no stored fit)
    return {
        "cli": {"predict": cli("predict", "--scores", ",".join(f"{b}={v}" for b, v in SCORES.items()))["predictions"],
                "model": cli("predict", "--model", MODEL)["predictions"],
                "compare": cli("compare", MODEL, OTHER, "--scores-file", new_file)["rows"]},
        "api": {"predict": bp.predict(SCORES).frame.to_dicts(),
                "model": bp.predict_model(MODEL).frame.to_dicts(),
                "compare": bp.compare([MODEL, OTHER], new_models={"acme": SCORES}).frame.to_dicts()},
        "app": app_doors}


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL)
    return a == b


def _by_benchmark(rows, keys, *, predicted_only=False):
    return {r["benchmark_id"]: tuple(r[k] for k in keys) for r in rows
            if not predicted_only or r.get("kind", "predicted") == "predicted"}


def _assert_same(answers: dict, keys, **kw):
    tables = {door: _by_benchmark(rows, keys, **kw) for door, rows in answers.items()}
    (first, ref), *rest = tables.items()
    assert len(ref) > 100
    for door, table in rest:
        assert table.keys() == ref.keys(), (first, door)
        bad = [(b, ref[b], table[b]) for b in ref
               if not all(_same(x, y) for x, y in zip(ref[b], table[b]))]
        assert not bad, f"{first} and {door} differ on {len(bad)} benchmarks, e.g. {bad[:2]}"


@pytest.mark.parametrize("question, predicted_only", [("predict", False), ("model", True)])
def test_a_predicted_row_is_the_same_at_every_door(doors, question, predicted_only):
    answers = {door: doors[door][question] for door in ("cli", "api", "app")}
    _assert_same(answers, ("predicted", "lower", "upper", "trust"),
                 predicted_only=predicted_only)


def test_a_comparison_is_the_same_at_every_door(doors):
    keys = ["leader", "gap", "p_ahead"] + [f"{n}{s}" for n in (MODEL, OTHER, "acme")
                                           for s in ("", "_src", "_lower", "_upper", "_trust")]
    _assert_same({door: doors[door]["compare"] for door in ("cli", "api", "app")}, keys)
