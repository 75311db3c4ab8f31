"""The app's JSON API and pages through Starlette's test client, on a small registry with
two snapshots (the 2026-05 matrix, then the 2026-02 matrix added)."""

from __future__ import annotations

import csv
import io
import json
import logging
import time

import polars as pl
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from benchpress.app import build_state, create_app
from benchpress.cli import main
from benchpress.errors import UsageError
from benchpress.predict.intervals.features import point_size
from benchpress.store.diff import diff as registry_diff
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.tables import read_table
from benchpress.api.typed_scores import parse_scores
from tests.conftest import BP_2026_05, MATRIX_2026_02, make_home


# about 11 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=11)


def make_app_home(root):
    """A workspace with two snapshots, `first` (2026-05) and `second` (plus 2026-02)."""
    home = make_home(root)
    ingest(home, str(BP_2026_05), source_id="benchpress-2026-05")
    create_snapshot(home, tag="first")
    ingest(home, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    create_snapshot(home, tag="second")
    return home


@pytest.fixture(scope="module")
def app_home(tmp_path_factory, shared_data):
    return make_app_home(tmp_path_factory.mktemp("app") / "ws")


@pytest.fixture(scope="module")
def state(app_home):
    return build_state(app_home)


@pytest.fixture(scope="module")
def client(state):
    with TestClient(create_app(state), base_url="http://127.0.0.1") as c:
        yield c


def get(client, url, status=200):
    r = client.get(url)
    assert r.status_code == status, (url, r.status_code, r.text[:300])
    return r.json()


# -- predict ---------------------------------------------------------------------------------
def test_predict_fills_the_row_with_intervals(client, state):
    d = get(client, "/api/predict?scores=gpqa_diamond:71.2,hle:20.1")
    preds = {p["benchmark_id"]: p for p in d["predictions"]}
    assert set(preds) == set(state.engine.bp.matrix.benchmark_ids)
    assert preds["gpqa_diamond"]["given"] == 71.2 and preds["gpqa_diamond"]["lower"] is None
    rest = [p for p in d["predictions"] if p["given"] is None and p["lower"] is not None]
    assert len(rest) > 100
    assert all(p["lower"] <= p["predicted"] <= p["upper"] and 0 <= p["trust"] <= 1 for p in rest)
    # the same numbers as the library's own predict
    lib = state.engine.bp.predict({"gpqa_diamond": 71.2, "hle": 20.1}).frame
    mmlu = lib.filter(pl.col("benchmark_id") == "mmlu_pro").row(0, named=True)
    assert preds["mmlu_pro"]["predicted"] == pytest.approx(mmlu["predicted"])
    assert preds["mmlu_pro"]["upper"] == pytest.approx(mmlu["upper"])


def test_predict_names_a_given_score_the_others_contradict(client, state):
    typo = "gpqa_diamond:7.1,mmlu_pro:80,hle:20,aime_2025:85"
    d = get(client, "/api/predict?scores=" + typo)
    assert d["contradicted"]["benchmark_id"] == "gpqa_diamond"
    lib = state.engine.bp.predict({"gpqa_diamond": 7.1, "mmlu_pro": 80, "hle": 20,
                                   "aime_2025": 85})
    assert d["contradicted_note"] == lib.contradicted_note
    assert d["contradicted_note"].startswith("gpqa_diamond=7.1 is far from")
    fine = get(client, "/api/predict?scores=" + typo.replace("7.1", "71"))
    assert fine["contradicted"] is None and fine["contradicted_note"] is None


def test_predict_resolves_aliases_and_names_unknowns(client, state, recwarn):
    alias = (state.registry.aliases.filter(pl.col("kind") == "benchmark")
             .filter(pl.col("canonical_id").is_in(state.engine.bp.matrix.benchmark_ids))
             .row(0, named=True))
    d = get(client, f"/api/predict?scores={alias['alias']}:50,not_a_bench:3,hle:20")
    assert d["resolved"][alias["alias"]] == alias["canonical_id"]
    assert d["unknown"] == ["not_a_bench"]
    given = {p["benchmark_id"] for p in d["predictions"] if p["given"] is not None}
    assert given == {alias["canonical_id"], "hle"}
    names = get(client, f"/api/resolve?names={alias['alias']},nope_bench")["resolved"]
    assert names == {alias["alias"]: alias["canonical_id"], "nope_bench": None}
    listed = {b["benchmark_id"]: b for b in get(client, "/api/benchmarks")["benchmarks"]}
    assert alias["alias"] in listed[alias["canonical_id"]]["aliases"]
    # the answers list the unknown names; the server's stderr gets no Python warning
    assert [str(w.message) for w in recwarn if "ignored" in str(w.message)] == []


@pytest.mark.parametrize("scores, status, message", [
    ("gpqa_diamond:abc", 400, "not a number"),
    ("gpqa_diamond:140", 400, "outside gpqa_diamond's percent range"),
    ("only_unknown:3", 400, "none of the given benchmarks is in the matrix"),
    ("gpqa_diamond", 400, "is not BENCHMARK=VALUE"),
    ("hle:20,hle=21", 400, "names benchmark 'hle' more than once"),
])
def test_predict_bad_input_is_one_line(client, scores, status, message):
    d = get(client, f"/api/predict?scores={scores}", status)
    assert message in d["error"] and "\n" not in d["error"]


@pytest.fixture(scope="module")
def side_state(app_home):
    return build_state(app_home, "first", method="side")


META = "model_id:acme-3-mini,provider:OpenAI,release_date:2025-09-01,is_reasoning:true"


def test_predict_with_the_models_details_under_side(side_state, client):
    scores = {"gpqa_diamond": 71.2, "hle": 20.1}
    with TestClient(create_app(side_state), base_url="http://127.0.0.1") as side:
        d = get(side, f"/api/predict?scores=gpqa_diamond:71.2,hle:20.1&metadata={META}")
        plain = get(side, "/api/predict?scores=gpqa_diamond:71.2,hle:20.1")
        late = get(side, "/api/predict?scores=gpqa_diamond:71.2&metadata=release_date:2031-01-01")
        bad = get(side, "/api/predict?scores=gpqa_diamond:71.2&metadata=is_reasoning:perhaps", 400)
    assert d["with_covariates"] is True and d["metadata_note"] is None
    assert plain["with_covariates"] is False and plain["metadata_note"] is None
    # the same numbers as the library's predict with the same metadata
    meta = dict(part.split(":", 1) for part in META.split(","))
    lib = side_state.engine.bp.predict(scores, metadata=meta).frame
    got = {p["benchmark_id"]: p for p in d["predictions"]}
    for row in lib.filter(pl.col("kind") == "predicted").head(20).iter_rows(named=True):
        assert got[row["benchmark_id"]]["predicted"] == pytest.approx(row["predicted"])
        assert got[row["benchmark_id"]]["upper"] == pytest.approx(row["upper"])
    # without the details: the library's predict from the scores alone, cell for cell
    bare = side_state.engine.bp.predict(scores).frame
    plain_got = {p["benchmark_id"]: p["predicted"] for p in plain["predictions"]}
    assert plain_got == pytest.approx(dict(zip(bare["benchmark_id"], bare["predicted"])))
    assert late["with_covariates"] is True  # a release after every model's: date clipped
    assert "release_date 2031-01-01 is after every registered model's" in late["metadata_note"]
    assert "clipped" in late["metadata_note"]
    assert "is_reasoning='perhaps': expected true or false" in bad["error"]
    # the default takes them too (side information under the nearest models)
    default = get(client, f"/api/predict?scores=gpqa_diamond:71.2&metadata={META}")
    assert default["with_covariates"] is True and default["metadata_note"] is None


def test_run_next_is_the_largest_honest_narrowing(client, state):
    d = get(client, "/api/predict?scores=gpqa_diamond:71.2,hle:20.1,mmlu_pro:80")
    ranked = d["run_next"]["ranked"]
    gains = [r["width_reduction_points"] for r in ranked]
    assert gains == sorted(gains, reverse=True) and gains[0] > 0
    best = d["run_next"]["best"]["benchmark_id"]
    assert best not in ("gpqa_diamond", "hle", "mmlu_pro")
    # recompute: add the best benchmark at its predicted value, sum the other widths
    pred = {p["benchmark_id"]: p for p in d["predictions"]}
    again = get(client, "/api/predict?scores=gpqa_diamond:71.2,hle:20.1,mmlu_pro:80,"
                        f"{best}:{pred[best]['predicted']!r}")
    m = state.engine.bp.matrix
    pts = dict(zip(m.benchmark_ids, point_size(m.scales, m.values)))
    after = {p["benchmark_id"]: p for p in again["predictions"]}
    others = [b for b, p in pred.items() if p["lower"] is not None and b != best]
    gain = sum((pred[b]["upper"] - pred[b]["lower"] - after[b]["upper"] + after[b]["lower"]) / pts[b]
               for b in others)
    assert gain == pytest.approx(gains[0], rel=1e-6)


def test_nearest_models_are_measured_and_sorted(client):
    d = get(client, "/api/predict?scores=gpqa_diamond:71.2,hle:20.1")
    near = d["nearest"]
    assert len(near) == 5 and all(0 <= n["n_measured"] <= n["n_given"] == 2 for n in near)
    assert [n["distance_z"] for n in near] == sorted(n["distance_z"] for n in near)


def test_predict_answers_from_the_loaded_fit(client, state):
    """Each new model is folded into the fit made at startup: no call fits again (how fast
    that is: benchmarks/predict_latency.py, not a timed test)."""
    fits = state.engine.bp.store.n_fits
    rows = [get(client, f"/api/predict?scores=gpqa_diamond:{70 + k},hle:20.1,"
                        "swe_bench_verified:60") for k in range(5)]
    assert state.engine.bp.store.n_fits == fits
    # five different inputs, five different answers
    assert len({json.dumps(r, sort_keys=True) for r in rows}) == 5


def test_parse_scores_rules():
    assert parse_scores("a:1, b=2.5,") == {"a": 1.0, "b": 2.5}
    with pytest.raises(UsageError, match="not a finite"):
        parse_scores("a:nan")
    with pytest.raises(UsageError, match="more than once"):  # the app kept the last one
        parse_scores("a:1,a=2")


# -- model, compare, matrix ----------------------------------------------------------------
def test_model_page_data_has_citations_predictions_and_history(client, state, app_home):
    d = get(client, "/api/model/gpt-4.5")
    cells = read_table(app_home.registry, "cells").filter(pl.col("model_id") == "gpt-4.5")
    assert {c["benchmark_id"] for c in d["observed"]} == set(cells["benchmark_id"].to_list())
    url = dict(zip(cells["benchmark_id"].to_list(), cells["reference_url"].to_list()))
    assert all(c["reference_url"] == url[c["benchmark_id"]] for c in d["observed"])
    assert d["predicted"] and all(p["lower"] <= p["predicted"] <= p["upper"] for p in d["predicted"])
    assert d["history"]["versions"][:2] == ["first", "second"]
    assert get(client, "/api/model/no-such-model", 404)["error"].startswith(
        "unknown model 'no-such-model'")
    # names resolve as the CLI's `predict --model` resolves them: one resolver
    assert get(client, "/api/model/GPT 4.5")["predicted"] == d["predicted"]
    html = client.get("/model/gpt-4.5").text
    assert 'class="citation"' in html and cells["reference_url"][0] in html


def test_compare_two_models_and_a_typed_in_one(client, state):
    d = get(client, "/api/compare?models=gpt-4.5,o3-mini-high&new=acme%3Dgpqa_diamond:90,hle:30")
    assert d["models"] == ["gpt-4.5", "o3-mini-high", "acme"]
    row = next(r for r in d["rows"] if r["benchmark_id"] == "gpqa_diamond")
    assert row["acme"] == 90 and row["leader"] == "acme" and row["acme_src"] == "observed"
    m = state.engine
    both = [r for r in d["rows"] if r["gpt-4.5_src"] == r["o3-mini-high_src"] == "observed"]
    assert both
    for r in d["rows"]:
        if r["p_ahead"] is not None:
            assert 0.5 <= r["p_ahead"] <= 1.0
    assert "error" in get(client, "/api/compare?models=gpt-4.5", 400)
    assert "unknown model 'zzz'" in get(client, "/api/compare?models=gpt-4.5,zzz", 400)["error"]
    assert len(d["rows"]) == len(m.col)


def test_compare_names_a_typed_in_models_contradicted_score(client):
    typo = "acme%3Dgpqa_diamond:7.1,mmlu_pro:80,hle:20,aime_2025:85"
    d = get(client, "/api/compare?models=gpt-4.5&new=" + typo)
    assert d["contradicted"]["acme"]["benchmark_id"] == "gpqa_diamond"
    assert d["contradicted_notes"] == [d["contradicted_notes"][0]]
    assert d["contradicted_notes"][0].startswith("acme: gpqa_diamond=7.1 is far from")
    page = client.get("/compare?models=gpt-4.5&new=" + typo)
    assert page.status_code == 200 and "acme: gpqa_diamond=7.1 is far from" in page.text
    fine = get(client, "/api/compare?models=gpt-4.5&new=" + typo.replace("7.1", "71"))
    assert fine["contradicted"] == {} and fine["contradicted_notes"] == []


def test_matrix_filters_sorts_and_opens_a_cell(client, state):
    d = get(client, "/api/matrix?provider=OpenAI&sort=gpqa_diamond&benchmarks=gpqa_diamond,hle&limit=10")
    assert d["benchmarks"] == ["gpqa_diamond", "hle"] and len(d["models"]) == 10
    assert set(d["providers_of_rows"]) == {"OpenAI"}
    col = [row[0] for row in d["value"]]
    assert col == sorted(col, reverse=True)
    assert get(client, "/api/matrix?after=2026-01-01&sort=release_date&desc=0")["release_dates"][0] >= "2026-01-01"
    assert "sort by" in get(client, "/api/matrix?sort=bogus", 400)["error"]
    c = get(client, "/api/cell?model=gpt-4.5&benchmark=gpqa_diamond")
    assert c["observed"] and any(o["resolved"] for o in c["observations"])


# -- versions, SQL, probes, pages ----------------------------------------------------------
def test_versions_and_diff_with_causes(client, app_home):
    v = get(client, "/api/versions")
    assert [s["label"] for s in v["snapshots"]] == ["first", "second"]
    d = get(client, "/api/diff?from=first&to=second")
    lib = registry_diff(app_home, "first", "second")
    assert d["summary"] == lib.counts()
    assert all(c["cause"] for c in d["cells"]["changed"])
    for change in ("added", "removed", "changed"):  # the library's causes, row for row
        app = {(c["model_id"], c["benchmark_id"], c["cause"]) for c in d["cells"][change]}
        rows = set(lib.cells.filter(change=change).select("model_id", "benchmark_id", "cause").rows())
        assert app <= rows and len(app) == min(len(rows), 500)
    assert "choose two versions" in get(client, "/api/diff?from=first", 400)["error"]
    assert "not found" in get(client, "/api/diff?from=first&to=nope", 400)["error"]


def test_sql_console_table_and_csv(client):
    q = "SELECT benchmark_id, count(*) AS n FROM cells GROUP BY 1 ORDER BY n DESC, 1 LIMIT 5"
    d = get(client, f"/api/sql?q={q}")
    assert d["columns"] == ["benchmark_id", "n"] and len(d["rows"]) == 5
    r = client.get("/api/sql.csv", params={"q": q})
    assert r.headers["content-disposition"].startswith("attachment")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == d["columns"] and [[a, int(b)] for a, b in rows[1:]] == d["rows"]
    assert "read-only" in get(client, "/api/sql?q=DROP TABLE cells", 400)["error"]
    assert "not available" in get(client, "/api/sql?q=SELECT current_setting('memory_limit')", 400)["error"]


@pytest.mark.slow(seconds=5)  # seconds of fits; `make test` runs it
def test_probes_search_runs_in_the_background(client):
    # the app's search on a sample of 20 models (`max_models`, as `probes --max-models`: 10
    # held-out fits), so the job runs in seconds; the background job, its states and its
    # result are those of the whole search
    url = "/api/probes?k=2&max_models=20"
    d = get(client, url, 202)
    assert d["status"] in ("queued", "running")
    deadline = time.time() + 120
    while d.get("status") != "done" and time.time() < deadline:
        time.sleep(0.5)
        d = client.get(url).json()
    assert d["status"] == "done", d
    assert len(d["result"]["probes"]) == 2 and len(d["result"]["steps"]) == 2
    assert d["result"]["n_models"] == 20  # the sample was searched, and the header says so
    assert d["origin"].endswith("(k=2, a sample of 20 models)")
    assert "choose 1 to 10" in get(client, "/api/probes?k=99", 400)["error"]
    assert "0 (every model) or at least 3" in get(client, "/api/probes?max_models=2", 400)["error"]
    assert "not a whole number" in get(client, "/api/probes?max_models=many", 400)["error"]


def test_every_page_renders(client):
    for url in ["/predict", "/models", "/model/gpt-4.5", "/compare?models=gpt-4.5,o3-mini-high",
                "/matrix", "/versions?from=first&to=second", "/sql?q=SELECT 1", "/probes"]:
        r = client.get(url)
        assert r.status_code == 200 and "<nav>" in r.text, url
    bad = client.get("/compare?models=gpt-4.5,zzz")
    assert bad.status_code == 400 and "unknown model" in bad.text
    assert client.get("/").url.path == "/predict"
    assert client.post("/api/predict").status_code == 405  # read-only
    js = client.get("/static/plotly.min.js")
    assert js.status_code == 200 and len(js.content) > 1_000_000


def test_serve_command_options():
    for args in (["serve", "--help"],):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0
        assert all(o in out.output for o in ("--host", "--port", "--snapshot", "--home"))
        assert "127.0.0.1" in out.output and "8050" in out.output


def test_a_cold_start_logs_each_fitting_step(app_home, tmp_path, monkeypatch, caplog):
    """No stored fit yet: the app fits before it answers, and says so step by step; the
    next start reuses the stored fit and fits nothing."""
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", str(tmp_path / "fits"))
    steps, n_fits, ready = [], [], []
    for _ in range(2):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="benchpress.app"):
            state = build_state(app_home, "first", method="als4")
        steps.append([r.getMessage() for r in caplog.records if "(step " in r.getMessage()])
        n_fits.append(state.engine.bp.store.n_fits)
        ready += [r.getMessage() for r in caplog.records if r.getMessage().startswith("model ready")]
    # the second start read the stored fit (a count, not a time: a read under load once
    # took half a cold fit's seconds), and "model ready" times the fitting step by name
    assert n_fits == [1, 0]
    fit_s = state.engine.timings["fit"]
    assert len(ready) == 2 and f"(fit {fit_s:.1f} s, calibrate " in ready[1]
    kept = "the fit is kept for the next start"
    assert steps == [[f"startup: fit (step 1 of 4; {kept})",
                      f"startup: interval features (step 2 of 4; {kept})",
                      f"startup: calibrating intervals (cells) (step 3 of 4; {kept})",
                      f"startup: calibrating intervals (new_models) (step 4 of 4; {kept})"], []]
