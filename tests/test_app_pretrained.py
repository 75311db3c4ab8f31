"""The app in a folder with no registry serves the pre-fit model shipped in the package:
predict and compare with the library's numbers, the header naming what is served, and the
pages that need a registry saying so in one line."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from benchpress import BenchPress
from benchpress.app import build_state, create_app
from benchpress.app.pretrained import NO_REGISTRY
from benchpress.errors import UsageError
from benchpress.home import Home

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    state = build_state(Home(tmp_path_factory.mktemp("empty")))
    with TestClient(create_app(state), base_url="http://127.0.0.1") as c:
        yield c


@pytest.fixture(scope="module")
def shipped():
    return BenchPress.from_pretrained()


def test_predict_and_compare_give_the_pre_fit_models_numbers(client, shipped):
    doc = client.get("/api/predict?scores=gpqa_diamond:71.2,hle:20.1").json()
    want = shipped.predict(SCORES).frame
    got = {r["benchmark_id"]: r for r in doc["predictions"]}
    assert len(got) == want.height
    for row in want.iter_rows(named=True):
        if row["kind"] == "predicted":
            assert got[row["benchmark_id"]]["predicted"] == pytest.approx(row["predicted"])
            assert got[row["benchmark_id"]]["upper"] == pytest.approx(row["upper"])
    compared = client.get("/api/compare?models=o3-high,gpt-4.1").json()
    assert compared["models"] == ["o3-high", "gpt-4.1"]
    lib = shipped.compare(["o3-high", "gpt-4.1"]).frame
    assert len(compared["rows"]) == lib.height > 0


def test_every_page_header_names_the_pre_fit_model(client, shipped):
    snap = shipped.artifact["snapshot"]["id"]
    label = f"serving: pre-fit model (default, snapshot {snap}, sources benchpress,releases; no registry)"
    for page in ("/predict", "/compare?models=o3-high,gpt-4.1", "/probes", "/versions"):
        r = client.get(page)
        assert r.status_code == 200 and label in r.text, page


def test_registry_pages_say_they_need_one(client):
    for url in ("/api/model/o3-high", "/api/sql?q=SELECT+1"):
        r = client.get(url)
        assert r.status_code == 400 and r.json() == {"error": NO_REGISTRY}, url
    assert client.get("/api/versions").json()["snapshots"] == []


def test_other_predictors_need_a_registry(tmp_path):
    with pytest.raises(UsageError, match="serves the pre-fit model"):
        build_state(Home(tmp_path), method="knn")
