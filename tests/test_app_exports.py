"""The app as a place to work: CSV and JSON downloads of Predict and Compare, the model
page's compare link, and the help page with the served model's own figures. Served here
from the pre-fit model (no registry to build); the pages behave alike over a registry."""

from __future__ import annotations

import io

import polars as pl
import pytest
from starlette.testclient import TestClient

from benchpress.app import build_state, create_app
from benchpress.home import Home
from benchpress.predict.intervals.calibrator import TRUST_POINTS

SCORES = "gpqa_diamond:71.2,hle:20.1"


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return build_state(Home(tmp_path_factory.mktemp("empty")))


@pytest.fixture(scope="module")
def client(state):
    with TestClient(create_app(state), base_url="http://127.0.0.1") as c:
        yield c


def test_predict_csv_holds_the_rows_of_the_json(client):
    doc = client.get(f"/api/predict?scores={SCORES}").json()
    r = client.get(f"/api/predict.csv?scores={SCORES}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert 'filename="benchpress-prediction.csv"' in r.headers["content-disposition"]
    frame = pl.read_csv(io.StringIO(r.text))
    assert frame["benchmark_id"].to_list() == [p["benchmark_id"] for p in doc["predictions"]]
    got = dict(zip(frame["benchmark_id"], frame["upper"]))
    for p in doc["predictions"]:
        assert got[p["benchmark_id"]] == pytest.approx(p["upper"]) if p["upper"] is not None \
            else got[p["benchmark_id"]] is None


def test_compare_csv_holds_the_rows_of_the_json_and_errors_stay_one_line(client):
    doc = client.get("/api/compare?models=o3-high,gpt-4.1").json()
    frame = pl.read_csv(io.StringIO(client.get("/api/compare.csv?models=o3-high,gpt-4.1").text))
    assert frame.height == len(doc["rows"]) > 0
    assert frame["p_ahead"].to_list() == pytest.approx([r["p_ahead"] for r in doc["rows"]],
                                                       nan_ok=True)
    bad = client.get("/api/compare.csv?models=o3-high,no-such-model")
    assert bad.status_code == 400 and "no-such-model" in bad.json()["error"]


def test_compare_page_links_its_downloads(client):
    page = client.get("/compare?models=o3-high,gpt-4.1").text
    assert 'href="/api/compare.csv?models=o3-high,gpt-4.1"' in page
    assert 'href="/api/compare?models=o3-high,gpt-4.1"' in page


def test_compare_with_one_model_is_the_form_filled_in(client):
    """The model page links to /compare?models=<id>: the form with that model, asking for
    more, not an error."""
    r = client.get("/compare?models=o3-high")
    assert r.status_code == 200 and 'id="error" class="error" role="alert" hidden' in r.text
    assert 'value="o3-high"' in r.text and 'id="add-models"' in r.text


def test_help_explains_the_terms_with_the_served_numbers(client, state):
    doc = client.get("/api/help").json()
    assert doc["cells"]["q"] == pytest.approx(state.engine.cal_cells.q_)
    assert doc["new_models"]["n_cal"] == state.engine.cal_new.n_cal_
    assert doc["trust_points"] == TRUST_POINTS
    page = client.get("/help").text
    for term in ("interval", "trust", "points", "p_ahead", "z"):
        assert f'<dt id="{term}">' in page, term
    assert f"q = {state.engine.cal_cells.q_:.1f} from {state.engine.cal_cells.n_cal_}" in page
    # the matrix's rows, named so that they are not read as the registry's model count
    assert f"{doc['n_models']} models with scores x {doc['n_benchmarks']} benchmarks" in page
    # the pre-fit model has one source: no cell is out of a model's source reach
    assert doc["cells"]["q_out"] is None and "no score in yet" not in page
    assert '<a href="/help"' in client.get("/predict").text  # every page links to it
