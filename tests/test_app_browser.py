"""The app in a real browser: Playwright for Python driving the system Chromium (Debian's
`chromium`; Playwright's own browser download is never used) against `python -m
benchpress.app` started on 127.0.0.1 for this module and stopped after it.

Requests to any other host are answered by a local stub (no traffic leaves the machine),
so following a citation link checks where it goes without going there. Screenshots of
every page land in `screenshots/` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import polars as pl
import pytest
from playwright.sync_api import sync_playwright

from benchpress.store.tables import read_table
from tests.conftest import REPO
from tests.test_app_api import make_app_home


# about 45 s (a server start, a probe search and a drift run in the background)
pytestmark = pytest.mark.slow(seconds=75)  # a browser: 11 pages, seconds each (the module's)

SHOTS = REPO / "screenshots"


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    assert exe, "headless Chromium is needed for this test: apt-get install -y chromium"
    return exe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _app(args, cwd, log_folder):
    """`python -m benchpress.app --port P ARGS` started in `cwd` until the block ends:
    yields its base URL once /api/status answers."""
    port = _free_port()
    log = (log_folder / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "benchpress.app", *args, "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    try:
        while True:
            try:
                with urllib.request.urlopen(base + "/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, f"the app exited: {Path(log.name).read_text()}"
            assert time.time() < deadline, "the app did not start within 120 s"
            time.sleep(0.3)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, shared_data):
    home = make_app_home(tmp_path_factory.mktemp("browser") / "ws")
    with _app(["--home", str(home.root)], REPO, tmp_path_factory.mktemp("log")) as base:
        yield base, home


@pytest.fixture(scope="module")
def browser(server):
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def screenshots(request) -> bool:
    """Whether to save pages as PNG (`pytest --screenshots`): for a person to look at, and
    full-page PNGs are a sixth of the module's time, so off by default."""
    return request.config.getoption("--screenshots")


@pytest.fixture
def page(browser, server, screenshots):
    base, _ = server
    context = browser.new_context(base_url=base, accept_downloads=True,
                                  viewport={"width": 1400, "height": 900})

    def offsite(route):  # nothing leaves the machine: other hosts get a stub page
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.fulfill(status=200, content_type="text/html", body="<p>stub</p>")

    context.route("**/*", offsite)
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    pg.screenshots = screenshots
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def shot(pg, name: str) -> None:
    if not pg.screenshots:
        return
    SHOTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def fill_row(pg, k: int, name: str, value: str) -> None:
    rows = pg.locator("#score-rows tbody tr")
    if rows.count() <= k:
        pg.click("#add-row")
    rows.nth(k).locator(".bench").fill(name)
    rows.nth(k).locator(".score").fill(value)


def predicted_cell(pg, benchmark: str) -> str:
    return pg.locator(f'#predictions tr[data-benchmark="{benchmark}"] td').nth(2).inner_text()


def test_type_scores_and_read_the_predicted_row(page, server):
    base, _ = server
    page.goto("/predict")
    page.wait_for_function("document.querySelectorAll('#benchmark-names option').length > 100")
    fill_row(page, 0, "gpqa_diamond", "71.2")
    fill_row(page, 1, "hle", "20.1")
    page.wait_for_selector('#predictions tr[data-benchmark="mmlu_pro"]')
    page.wait_for_function("document.querySelectorAll('#predictions tr.given').length === 2")
    api = page.request.get(base + "/api/predict?scores=gpqa_diamond:71.2,hle:20.1").json()
    want = next(p for p in api["predictions"] if p["benchmark_id"] == "mmlu_pro")
    assert predicted_cell(page, "mmlu_pro") == f"{want['predicted']:.1f}"
    assert "scores=gpqa_diamond" in page.url  # the state is in the URL: shareable
    assert api["run_next"]["best"]["benchmark_id"] in page.inner_text("#run-next-best")
    assert page.locator("#nearest tbody tr").count() == 5
    fill_row(page, 2, "not_a_benchmark", "")
    page.wait_for_selector("#score-rows input.unknown")
    assert "unknown benchmark" in page.inner_text("#score-rows")
    shot(page, "predict")
    # the URL alone brings the same answer back
    page.goto(page.url.split("#")[0])
    page.wait_for_selector('#predictions tr[data-benchmark="mmlu_pro"]')
    assert predicted_cell(page, "mmlu_pro") == f"{want['predicted']:.1f}"


def test_the_models_details_reach_the_request_and_the_url(page):
    """The 'what you know about the model' fields go with every request and into the URL;
    this app runs the default method, which uses them, and the page says so."""
    page.goto("/predict?scores=gpqa_diamond:71.2")
    page.wait_for_selector('#predictions tr[data-benchmark="mmlu_pro"]')
    page.click("#model-details summary")
    page.fill("#meta-provider", "OpenAI")
    page.select_option("#meta-is_reasoning", "true")
    page.wait_for_function(
        "document.getElementById('meta-note').textContent.includes('takes these details')")
    assert "metadata=provider%3AOpenAI%2Cis_reasoning%3Atrue" in page.url
    page.goto(page.url)  # the URL restores the details
    page.wait_for_function("document.getElementById('meta-provider').value === 'OpenAI'")
    assert page.eval_on_selector("#model-details", "d => d.open")
    assert page.input_value("#meta-is_reasoning") == "true"
    assert not page.errors, page.errors


def test_a_contradicted_score_is_named_and_the_note_goes_when_it_is_mended(page):
    page.goto("/predict?scores=gpqa_diamond:7.1,mmlu_pro:80,hle:20,aime_2025:85")
    page.wait_for_selector("#contradicted-note:not([hidden])")
    assert page.inner_text("#contradicted-note").startswith("gpqa_diamond=7.1 is far from")
    shot(page, "predict-contradicted")
    page.locator("#score-rows tbody tr").nth(0).locator(".score").fill("71")
    page.wait_for_selector("#contradicted-note", state="hidden")
    assert not page.errors, page.errors


def test_bad_input_shows_a_message_and_the_page_keeps_working(page):
    page.goto("/predict")
    fill_row(page, 0, "gpqa_diamond", "abc")
    page.wait_for_selector("#error:not([hidden])")
    assert "not a number" in page.inner_text("#error")
    shot(page, "predict-bad-input")
    page.locator("#score-rows tbody tr").nth(0).locator(".score").fill("150")
    page.wait_for_function("document.getElementById('error').textContent.includes('outside')")
    page.locator("#score-rows tbody tr").nth(0).locator(".score").fill("71")
    page.wait_for_selector("#error", state="hidden")
    page.wait_for_selector('#predictions tr[data-benchmark="hle"]')
    page.goto("/sql?q=DROP TABLE cells")
    assert "read-only" in page.inner_text("#error")
    page.fill("#q", "SELECT count(*) AS n FROM models")
    page.click("#run")
    page.wait_for_selector("#sql-result")
    assert page.locator("#error").is_hidden()


def test_model_page_and_its_citation_link(page, server):
    _, home = server
    page.goto("/models")
    page.fill("#filter", "gpt-4.5")
    page.click("#model-list a[href='/model/gpt-4.5']")
    page.wait_for_url("**/model/gpt-4.5")
    link = page.locator("#observed a.citation").first
    bench = page.locator("#observed tbody tr").first.locator("td").first.inner_text()
    cells = read_table(home.registry, "cells").filter(
        (pl.col("model_id") == "gpt-4.5") & (pl.col("benchmark_id") == bench))
    href = link.get_attribute("href")
    assert href == cells["reference_url"][0] and href.startswith("https://")
    assert link.get_attribute("target") == "_blank"
    assert page.locator("#predicted tbody tr").count() > 50
    assert page.locator("#history th").count() >= 3  # benchmark + the two snapshots
    shot(page, "model")
    with page.expect_popup() as popup:
        link.click()
    assert popup.value.url == href  # followed, answered by the local stub


def test_compare_two_models(page):
    page.goto("/compare")
    page.fill("#models", "gpt-4.5, o3-mini-high")
    page.click("#compare-form button")
    page.wait_for_selector("#comparison")
    assert "models=gpt-4.5" in page.url
    row = page.locator("#comparison tbody tr", has_text="gpqa_diamond").first
    cells = row.locator("td")
    leader = cells.nth(3).inner_text()
    a, b = float(cells.nth(1).inner_text().split()[0]), float(cells.nth(2).inner_text().split()[0])
    assert leader == ("gpt-4.5" if a > b else "o3-mini-high")
    assert cells.nth(5).inner_text().endswith("%")
    shot(page, "compare")


def test_run_sql_and_download_csv(page):
    page.goto("/sql")
    page.fill("#q", "SELECT benchmark_id, count(*) AS n FROM cells GROUP BY 1 ORDER BY n DESC, 1 LIMIT 7")
    page.click("#run")
    page.wait_for_selector("#sql-result")
    shown = [[c.inner_text() for c in r.locator("td").all()]
             for r in page.locator("#sql-result tbody tr").all()]
    assert len(shown) == 7
    with page.expect_download() as dl:
        page.click("#csv")
    rows = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text())))
    assert rows[0] == ["benchmark_id", "n"] and rows[1:] == shown
    shot(page, "sql")


def test_matrix_heatmap_and_a_cell(page):
    page.goto("/matrix?provider=OpenAI&benchmarks=gpqa_diamond,hle,mmlu_pro&limit=8")
    page.wait_for_selector("#heatmap .main-svg")
    box = page.locator("#heatmap .nsewdrag").first.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.06)
    page.wait_for_selector("#cell:not([hidden]) table, #cell:not([hidden]) p")
    assert "·" in page.inner_text("#cell-title")
    shot(page, "matrix")


def test_probes_page(page):
    # a search of one probe on a sample of 20 models (a few seconds: the page, the job and
    # the table are those of the whole search; the other test below asks for the same
    # search, done by then)
    page.goto("/probes?k=1&max_models=20")
    page.wait_for_selector("#probes-result:not([hidden])", timeout=120_000)
    assert page.locator("#steps tbody tr").count() == 1
    assert "a sample of 20 models" in page.inner_text("#status")
    page.wait_for_selector("#curve .main-svg")
    shot(page, "probes")


def test_no_console_errors_on_any_page(page):
    for url, ready in [("/predict?scores=gpqa_diamond:71.2", "#predictions tbody tr"),
                       ("/models", "#model-list"), ("/model/o3-mini-high", "#observed"),
                       ("/compare?models=gpt-4.5,o3-mini-high", "#comparison"),
                       ("/matrix", "#heatmap .main-svg"), ("/versions", "#timeline"),
                       ("/sql?q=SELECT 1", "#sql-result"), ("/probes?k=1&max_models=20", "#probes-result:not([hidden])")]:
        page.goto(url)
        page.wait_for_selector(ready)
        page.wait_for_load_state("networkidle")
        assert page.errors == [], (url, page.errors)
        shot(page, "page-" + url.strip("/").split("?")[0].replace("/", "-"))


def test_predict_filter_and_downloads(page, server):
    """The Predict page's filter keeps the rows whose id or name holds the text; its CSV
    download holds the same numbers as the JSON."""
    base, _ = server
    page.goto("/predict?scores=gpqa_diamond:71.2,hle:20.1")
    page.wait_for_selector('#predictions tr[data-benchmark="mmlu_pro"]')
    total = page.locator("#predictions tbody tr").count()
    page.fill("#filter", "aime")
    visible = page.locator("#predictions tbody tr:not([hidden])")
    page.wait_for_function("document.querySelectorAll('#predictions tbody tr:not([hidden])').length"
                           f" < {total}")
    ids = [visible.nth(i).get_attribute("data-benchmark") for i in range(visible.count())]
    api = page.request.get(base + "/api/predict?scores=gpqa_diamond:71.2,hle:20.1").json()
    want = sorted(p["benchmark_id"] for p in api["predictions"]
                  if "aime" in (p["benchmark_id"] + " " + (p["name"] or "")).lower())
    assert sorted(ids) == want and want
    assert page.inner_text("#filter-count") == f"{len(want)} of {total} benchmarks"
    with page.expect_download() as got:
        page.click("#download-csv")
    rows = list(csv.DictReader(open(got.value.path(), encoding="utf-8")))
    by_id = {p["benchmark_id"]: p for p in api["predictions"]}
    assert len(rows) == total
    for r in rows:
        if r["predicted"]:
            assert float(r["predicted"]) == pytest.approx(by_id[r["benchmark_id"]]["predicted"])
    assert page.errors == []


def test_a_typo_in_a_benchmark_name_gets_the_resolvers_suggestion(page, server):
    """As the CLI and the API say it: "did you mean 'gpqa_diamond'?", beside the row as it is
    typed and in the answer's note (the typo is left out, the rest predicted)."""
    base, _ = server
    page.goto("/predict")
    page.wait_for_function("document.querySelectorAll('#benchmark-names option').length > 100")
    fill_row(page, 0, "gpqa_diamnd", "71.2")
    fill_row(page, 1, "hle", "20.1")
    page.wait_for_function("document.querySelector('#score-rows .flag').textContent"
                           ".includes('did you mean gpqa_diamond')")
    page.wait_for_selector('#predictions tr[data-benchmark="mmlu_pro"]')
    page.wait_for_selector("#error:not([hidden])")
    api = page.request.get(base + "/api/predict?scores=gpqa_diamnd:71.2,hle:20.1").json()
    assert api["suggestions"] == {"gpqa_diamnd": ["gpqa_diamond"]}
    assert api["unknown_note"] == "unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?"
    assert api["unknown_note"] in page.inner_text("#error")
    alone = page.request.get(base + "/api/predict?scores=gpqa_diamnd:71.2")
    assert alone.status == 400 and "did you mean 'gpqa_diamond'?" in alone.json()["error"]
    shot(page, "predict-typo")
    # the page asked once with the typo alone (before hle was typed): that answer is a 400
    assert not [e for e in page.errors if "status of 400" not in e], page.errors


def test_a_large_heatmap_labels_every_row_and_its_columns_at_the_top(page, server):
    """Every model of a tall heatmap keeps its label, none cut at the left edge, and the
    benchmarks are named above the first row (in view without scrolling) as well as below."""
    base, _ = server
    page.goto("/matrix?limit=2000")
    page.wait_for_selector("#heatmap .main-svg")
    api = page.request.get(base + "/api/matrix?limit=2000").json()
    assert len(api["models"]) > 60
    labels = page.evaluate("[...document.querySelectorAll('#heatmap .ytick text')]"
                           ".map(t => [t.textContent, t.getBoundingClientRect().left])")
    assert sorted(t for t, _ in labels) == sorted(api["models"])
    assert min(left for _, left in labels) >= 0
    top = page.evaluate("[...document.querySelectorAll('#heatmap .x2tick text')]"
                        ".map(t => [t.textContent, t.getBoundingClientRect().bottom])")
    first_row = page.evaluate("document.querySelector('#heatmap .ytick text')"
                              ".getBoundingClientRect().top")
    assert sorted(t for t, _ in top) == sorted(api["benchmarks"])
    assert max(bottom for _, bottom in top) < min(900, first_row + 20)
    shot(page, "matrix-large")
    assert not page.errors, page.errors


def test_p_ahead_counts_measurement_noise_between_two_observed_scores(page, server):
    """Two observed scores a fraction of a point apart: p_ahead is the normal chance of the
    gap under each benchmark's measurement noise (not 100%), the same on the page."""
    import math

    from benchpress.store.matrix import load_matrix

    base, home = server
    noise = dict(load_matrix(home.registry).benchmarks.select("benchmark_id", "noise").rows())
    doc = page.request.get(base + "/api/compare?models=gpt-4.5,o3-mini-high").json()
    close = [r for r in doc["rows"] if r["gpt-4.5_src"] == r["o3-mini-high_src"] == "observed"
             and r["gap"] and noise.get(r["benchmark_id"]) and r["gap"] < noise[r["benchmark_id"]]]
    assert close, "no benchmark where both are observed less than a noise apart"
    row = close[0]
    sd = math.sqrt(2.0) * noise[row["benchmark_id"]]
    want = 0.5 * (1 + math.erf(row["gap"] / sd / math.sqrt(2.0)))
    assert row["p_ahead"] == pytest.approx(want) and row["p_ahead"] < 0.9
    page.goto("/compare?models=gpt-4.5,o3-mini-high")
    page.wait_for_selector("#comparison")
    cells = page.locator("#comparison tbody tr", has_text=row["benchmark_id"]).first.locator("td")
    assert cells.nth(5).inner_text() == f"{round(100 * row['p_ahead'])}%"
    assert "measurement noise" in page.inner_text("#uncertainty")
    assert not page.errors, page.errors


def test_a_model_page_names_another_makers_blog_as_such(page, server):
    """GLM-4.7's blog quotes GPT-5's BrowseComp-ZH: GPT-5's page calls it Zhipu AI's blog
    (another maker), never GPT-5's official blog; OpenAI's own posts stay "official blog"."""
    _, home = server
    page.goto("/model/gpt-5")
    page.wait_for_selector("#observed")
    kinds = {}
    for r in page.locator("#observed tbody tr").all():
        cells = r.locator("td")
        kinds[cells.nth(0).inner_text()] = (cells.nth(3).inner_text(),
                                            cells.nth(5).locator("a").get_attribute("href"))
    glm = [b for b, (_, url) in kinds.items() if url and "z.ai/" in url]
    assert glm, kinds
    for b in glm:
        assert kinds[b][0] == "official blog of Zhipu AI (another maker)", kinds[b]
    own = [k for k, url in kinds.values() if url and url.startswith("https://openai.com/")]
    assert own and set(own) <= {"official blog", "model card", "tech report"}
    shot(page, "model-gpt-5")


def test_the_diff_view_counts_right_and_opens_no_empty_table(page, server):
    """One model with one score added after the last snapshot: "1 cell added", "1 model",
    and the kinds with no cell say so in a line, with no table."""
    _, home = server
    from click.testing import CliRunner

    from benchpress.cli import main

    added = CliRunner().invoke(main, ["add-model", "acme-diff-1", "--scores", "hle=20.1",
                                      "--source", "https://acme.example/blog",
                                      "--home", str(home.root)])
    assert added.exit_code == 0, added.stderr
    page.goto("/versions?from=second&to=current")
    page.wait_for_selector("#diff-summary")
    assert page.inner_text("#cells-added summary") == "1 cell added"
    assert page.inner_text("#models-changed summary") == "1 model added, removed or renamed"
    for kind in ("changed", "removed"):
        assert page.inner_text(f"#no-cells-{kind}") == f"No cells {kind}."
        assert page.locator(f"table.diff-{kind}").count() == 0
    assert page.locator("details[open] table tbody:empty").count() == 0
    assert "1 cells" not in page.inner_text("main") and "1 models" not in page.inner_text("main")
    shot(page, "versions-one-cell")


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory):
    """The app started in a folder with no registry: it serves the pre-fit model."""
    folder = tmp_path_factory.mktemp("bare")
    with _app([], folder, folder) as base:
        yield base


def test_the_sql_page_says_it_needs_a_registry_before_run(browser, bare_server, screenshots):
    """Serving the pre-fit model (no registry), the SQL and Versions pages say so as they
    open, and Run is disabled: nothing to type and run before learning it cannot work."""
    context = browser.new_context(base_url=bare_server)
    pg = context.new_page()
    pg.screenshots = screenshots
    pg.goto("/sql")
    note = pg.locator("#needs-registry")
    assert note.is_visible() and "needs a registry" in note.inner_text()
    assert pg.locator("#run").is_disabled() and pg.locator("#error").is_hidden()
    assert pg.locator("#sql-result").count() == 0
    pg.goto("/versions")
    assert "needs a registry" in pg.inner_text("#needs-registry")
    shot(pg, "sql-no-registry")
    context.close()


# last in the module: the drift it starts runs on in the server's background (fits of both
# versions and their probe searches), and nothing after it waits on that server's one job thread
def test_versions_diff_and_drift_loading(page):
    page.goto("/versions")
    page.select_option("#from", label="first")
    page.select_option("#to", label="second")
    page.click("#diff-form button")
    page.wait_for_selector("#diff-summary")
    assert "from=" in page.url and page.locator("table.diff-changed tbody tr").count() > 0
    page.click("#drift-run")
    # drift fits both snapshots' predictors and probe searches in the background (about 40 s
    # on this registry on 2 cores): the page shows a loading state until then
    page.wait_for_function("/drift|done/.test(document.getElementById('drift-status').textContent)",
                           timeout=300_000)
    shot(page, "versions")
