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

# about 7 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=7)

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1, "mmlu_pro": 80.0}
MODEL, OTHER = "gpt-4.5", "o3-mini-high"
TOL = 1e-9


def _cli(home, *args):
    out = CliRunner().invoke(main, [*map(str, args), "--home", str(home.root),
                                    "--format", "json"], catch_exceptions=False)
    assert out.exit_code == 0, out.stderr
    return json.loads(out.stdout), out.stderr


@pytest.fixture(scope="module")
def docs(built_2026_05, tmp_path_factory):
    """The whole answers of every door to the same three questions, and the API's object."""
    home = built_2026_05
    new_file = tmp_path_factory.mktemp("one-engine") / "new.json"
    new_file.write_text(json.dumps({"acme": SCORES}), encoding="utf-8")
    typed = "acme=" + ",".join(f"{b}:{v}" for b, v in SCORES.items())
    with TestClient(create_app(build_state(home)), base_url="http://127.0.0.1") as client:
        def app(url, **params):
            r = client.get(url, params=params)
            assert r.status_code == 200, r.text[:300]
            return r.json()
        app_docs = {
            "predict": app("/api/predict", scores=",".join(f"{b}:{v}" for b, v in SCORES.items())),
            "model": app(f"/api/model/{MODEL}"),
            "compare": app("/api/compare", models=f"{MODEL},{OTHER}", new=typed)}
    bp = BenchPress.from_snapshot(home)  # the API, fitted afresh (no stored fit)
    return {
        "cli": {"predict": _cli(home, "predict", "--scores",
                                ",".join(f"{b}={v}" for b, v in SCORES.items())),
                "model": _cli(home, "predict", "--model", MODEL),
                "compare": _cli(home, "compare", MODEL, OTHER, "--scores-file", new_file)},
        "api": {"predict": bp.predict(SCORES), "model": bp.predict_model(MODEL),
                "compare": bp.compare([MODEL, OTHER], new_models={"acme": SCORES})},
        "app": app_docs, "bp": bp}


@pytest.fixture(scope="module")
def doors(docs):
    """Each door's rows: predicted rows (predict, model) and compared rows (compare)."""
    rows = {"predict": "predictions", "model": "predictions", "compare": "rows"}
    return {"cli": {q: d[rows[q]] for q, (d, _) in docs["cli"].items()},
            "api": {q: r.frame.to_dicts() for q, r in docs["api"].items()},
            "app": {"predict": docs["app"]["predict"]["predictions"],
                    "model": docs["app"]["model"]["predicted"],
                    "compare": docs["app"]["compare"]["rows"]}}


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


# -- provenance: which sources, snapshot, method and params made each answer ---------------
WHAT = {"sources": ["benchpress-2026-05"], "snapshot": "current", "method": "default",
        "params": {}}


@pytest.mark.parametrize("question", ["predict", "model", "compare"])
def test_every_answer_says_what_made_it(docs, question):
    cli_doc, _ = docs["cli"][question]
    assert {k: cli_doc[k] for k in WHAT} == WHAT
    assert docs["api"][question].provenance == WHAT
    assert docs["app"][question]["provenance"] == WHAT
    assert repr(docs["bp"]).startswith("BenchPress(snapshot='current', sources=benchpress-2026-05,")


def test_a_snapshot_and_a_pretrained_fit_are_named(docs, built_2026_05, tmp_path):
    from benchpress.store.snapshot import create_snapshot

    snap, _ = create_snapshot(built_2026_05, tag="v1")
    doc, _ = _cli(built_2026_05, "predict", "--scores", "hle=20", "--snapshot", "v1",
                  "--sources", "benchpress", "--method", "als4")
    assert {k: doc[k] for k in WHAT} == {**WHAT, "snapshot": snap.id, "method": "als4"}
    fit = docs["bp"].save_pretrained(tmp_path / "fit")
    loaded = BenchPress.from_pretrained(fit)
    assert loaded.predict(SCORES).provenance == {**WHAT, "snapshot": "pretrained",
                                                 "fitted_on": "current"}
    assert "sources=benchpress-2026-05" in repr(loaded) and "pretrained" in repr(loaded)


def test_the_cli_says_when_its_sources_are_not_the_shipped_fits(built_2026_05):
    from benchpress.api.artifact import DEFAULT_ARTIFACT, read_manifest

    shipped = ",".join(read_manifest(DEFAULT_ARTIFACT)["sources"])
    said = f"BenchPress.from_pretrained() was fitted on {shipped}"
    doc, err = _cli(built_2026_05, "predict", "--scores", "hle=20")
    assert said in doc["pretrained_note"] and err == ""  # JSON: in the document
    doc, _ = _cli(built_2026_05, "compare", MODEL, OTHER)
    assert said in doc["pretrained_note"]
    table = CliRunner().invoke(main, ["predict", "--scores", "hle=20", "--home",
                                      str(built_2026_05.root)])
    assert table.exit_code == 0 and said in " ".join(table.stderr.split())  # people: stderr
    doc, err = _cli(built_2026_05, "predict", "--scores", "hle=20", "--sources", "benchpress")
    assert "pretrained_note" not in doc and "from_pretrained" not in err  # sources chosen


def test_the_fitted_model_is_the_engine_behind_every_door(docs, doors):
    """`FittedModel.predict_rows`, the one definition the doors call, gives their numbers."""
    import numpy as np

    bp = docs["bp"]
    row = np.full((1, len(bp.matrix.benchmark_ids)), np.nan)
    for b, v in SCORES.items():
        row[0, bp.matrix.benchmark_ids.index(b)] = v
    out = bp.fitted_with("new_models").predict_rows(row)
    engine = [{"benchmark_id": b, **{k: (None if np.isnan(out[k][0, j]) else float(out[k][0, j]))
                                     for k in ("predicted", "lower", "upper", "trust")}}
              for j, b in enumerate(bp.matrix.benchmark_ids)]
    _assert_same({"engine": engine, "cli": doors["cli"]["predict"], "app": doors["app"]["predict"]},
                 ("predicted", "lower", "upper", "trust"))


def test_the_nearest_models_are_the_same_at_every_door(docs):
    """One definition of "nearest" (`FittedModel.nearest`): the API's and the app's panel."""
    api = docs["bp"].nearest_models(SCORES, 5)
    app = docs["app"]["predict"]["nearest"]
    assert [n["model_id"] for n in app] == api["model_id"].to_list()
    assert all(math.isclose(n["distance_z"], d, rel_tol=0.0, abs_tol=TOL)
               for n, d in zip(app, api["distance"]))
    assert [n["n_measured"] for n in app] == api["n_measured"].to_list()


def test_the_cli_answers_from_the_shipped_fit_with_no_registry(tmp_path):
    """`predict --pretrained` and `compare --pretrained`: `BenchPress.from_pretrained()`'s
    numbers, in a folder with no registry; without the flag the error says it exists; the
    options a pre-fit model fixes are refused, naming them."""
    home = tmp_path / "empty"
    home.mkdir()
    typed = ",".join(f"{b}={v}" for b, v in SCORES.items())
    doc = CliRunner().invoke(main, ["predict", "--pretrained", "--scores", typed, "--home",
                                    str(home), "--format", "json"])
    assert doc.exit_code == 0, doc.stderr
    shipped = BenchPress.from_pretrained()
    api = shipped.predict(SCORES)
    _assert_same({"api": api.frame.to_dicts(), "cli": json.loads(doc.stdout)["predictions"]},
                 ("predicted", "lower", "upper", "trust"))
    assert json.loads(doc.stdout)["snapshot"] == "pretrained"
    compared = CliRunner().invoke(main, ["compare", MODEL, OTHER, "--pretrained", "--home",
                                         str(home), "--format", "json"])
    assert compared.exit_code == 0, compared.stderr
    keys = ["leader", "gap", "p_ahead"] + [f"{n}{s}" for n in (MODEL, OTHER)
                                           for s in ("", "_src", "_lower", "_upper", "_trust")]
    _assert_same({"api": shipped.compare([MODEL, OTHER]).frame.to_dicts(),
                  "cli": json.loads(compared.stdout)["rows"]}, keys)
    for command in (["predict", "--scores", typed], ["compare", MODEL, OTHER]):
        bare = CliRunner().invoke(main, [*command, "--home", str(home)])
        assert bare.exit_code == 1 and bare.stderr.count("\n") == 1
        assert "no registry built yet" in bare.stderr and "--pretrained" in bare.stderr
    fixed = CliRunner().invoke(main, ["predict", "--pretrained", "--scores", typed, "--sources",
                                      "benchpress", "--param", "rank=3", "--home", str(home)])
    assert fixed.exit_code == 2 and fixed.stderr == (
        "Error: --pretrained predicts from a fit made on its own snapshot, sources and method: "
        "give it without --sources, --param\n")
