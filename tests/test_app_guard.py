"""The app against hostile and careless clients (issue 27, Medium 5): a Host check (DNS
rebinding), SQL that cannot starve /api/status, bounded SQL results, the CSV formula guard,
one-line errors of a sane length, and no HTTP 500 for a result of an odd type."""

from __future__ import annotations

import json
import threading
import time

import pytest
from starlette.testclient import TestClient

from benchpress.app import build_state, create_app
from benchpress.app.guard import MAX_ERROR_CHARS, allowed_hosts
from benchpress.app.registry import SQL_MAX_BYTES
from tests.conftest import synthetic_home

N_MODELS, N_BENCH = 60, 8
# about 30 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=30)


PEER = ("127.0.0.1", 50000)  # requests as from a network peer (the Host check applies)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """A small synthetic registry (rank-2 scores), loaded as the app loads it."""
    return build_state(synthetic_home(tmp_path_factory.mktemp("guard"), N_MODELS, N_BENCH,
                                      seed=7, gap=5))


@pytest.fixture(scope="module")
def client(state):
    with TestClient(create_app(state), base_url="http://127.0.0.1", client=PEER) as c:
        yield c


def one_line_error(r, status):
    assert r.status_code == status, (r.status_code, r.text[:300])
    error = r.json()["error"]
    assert "\n" not in error and "Traceback" not in error and len(error) <= MAX_ERROR_CHARS
    return error


# -- allowed hosts -----------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:8050", "[::1]:8050", "LOCALHOST."])
def test_loopback_host_names_are_served(client, host):
    assert client.get("/api/status", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host, status", [
    ("evil.example", 403), ("evil.example:8050", 403), ("127.0.0.1.evil.example", 403),
    ("", 400), ("a b", 400)])
def test_another_host_is_refused_in_one_line(client, host, status):
    for url in ("/api/sql?q=SELECT 1", "/api/status", "/predict"):
        error = one_line_error(client.get(url, headers={"Host": host}), status)
        assert "host" in error.lower()


def test_the_bound_address_and_named_hosts_are_added(state):
    hosts = allowed_hosts("192.0.2.7", ["box.lan"])
    assert {"localhost", "127.0.0.1", "::1", "192.0.2.7", "box.lan"} <= hosts
    with TestClient(create_app(state, hosts=hosts), base_url="http://box.lan",
                    client=PEER) as c:
        assert c.get("/api/status").status_code == 200
        assert c.get("/api/status", headers={"Host": "192.0.2.7:8050"}).status_code == 200
        assert c.get("/api/status", headers={"Host": "evil.example"}).status_code == 403


def test_no_peer_name_is_exempt_from_the_host_check(state):
    """Issue 45, High: the guard skipped its check for the test client's peer name, which a
    forwarded header could claim; now every request is checked, whatever its peer."""
    with TestClient(create_app(state)) as c:  # Host: testserver, peer "testclient"
        assert one_line_error(c.get("/api/status"), 403).startswith("host 'testserver'")
        r = c.get("/api/sql", params={"q": "SELECT 1"},
                  headers={"Host": "evil.example", "X-Forwarded-For": "testclient"})
        one_line_error(r, 403)


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example"}, {"Origin": "null"},
    {"Origin": "http://127.0.0.1:9999"}])
def test_a_cross_site_caller_cannot_start_a_background_job(state, headers):
    """Issue 45, row 6: /api/probes and /api/drift start jobs, whatever the verb: a page of
    another site (Sec-Fetch-Site, Origin) is refused, before any job is queued."""
    with TestClient(create_app(state), base_url="http://127.0.0.1", client=PEER) as c:
        before = len(state.jobs)
        for url in ("/api/probes?k=3&max_models=0", "/api/drift?from=current&to=current"):
            assert "another site" in one_line_error(c.get(url, headers=headers), 403)
        assert c.post("/api/status", headers=headers).status_code == 403  # any unsafe verb
        assert len(state.jobs) == before
        # the same caller still reads pages and data (a link from elsewhere opens the app)
        assert c.get("/api/models", headers=headers).status_code == 200
        assert c.get("/probes", headers=headers).status_code == 200


def test_the_app_itself_starts_jobs(state):
    from dataclasses import replace

    from benchpress.app.jobs import Jobs

    fresh = replace(state, jobs=Jobs())  # (an earlier client's shutdown ended the module's)
    with TestClient(create_app(fresh), base_url="http://127.0.0.1", client=PEER) as c:
        for headers in ({}, {"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1"},
                        {"Sec-Fetch-Site": "none"}):
            r = c.get("/api/probes?k=4&max_models=0", headers=headers)
            assert r.status_code in (200, 202), r.text[:200]


def test_jobs_are_bounded_per_client_and_expire():
    """Issue 45, row 6: 300 job requests of one client queue `per_client`, the rest are
    Busy (503, one line); another client still gets its job; finished results are kept up
    to `keep` and expire after `ttl`."""
    from benchpress.app.guard import Busy
    from benchpress.app.jobs import CLIENT, Jobs

    jobs = Jobs(per_client=3, keep=5, ttl=0.5)
    release = threading.Event()
    CLIENT.set("10.0.0.1")
    states, busy = [], 0
    for k in range(300):
        try:
            states.append(jobs.get(("probes", k), lambda: release.wait(10) and {"ok": 1}))
        except Busy as exc:
            busy += 1
            assert "3 background jobs of yours" in str(exc)
    assert len(states) == 3 and busy == 297 and len(jobs) == 3
    CLIENT.set("10.0.0.2")
    assert jobs.get(("drift", "a", "b"), lambda: {"ok": 2})["status"] == "queued"
    release.set()
    deadline = time.time() + 10
    while jobs.get(("drift", "a", "b"), dict)["status"] != "done":
        assert time.time() < deadline
        time.sleep(0.05)
    for k in range(10):  # finished jobs: no more than `keep` kept
        jobs.get(("more", k), lambda: {})
        time.sleep(0.02)
    assert len(jobs) <= 5 + 3
    time.sleep(0.8)
    assert jobs.get(("drift", "a", "b"), lambda: {"ok": 3})["status"] == "queued"  # expired
    jobs.shutdown()


def test_forwarding_headers_are_believed_only_behind_a_named_proxy():
    from benchpress.cli.serve_cmds import forwarding

    assert forwarding(())["proxy_headers"] is False
    assert forwarding(["10.0.0.5"]) == {"proxy_headers": True, "forwarded_allow_ips": "10.0.0.5"}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port, path, headers) -> tuple[int, dict]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers=headers)
    reply = conn.getresponse()
    body = reply.read()
    conn.close()
    return reply.status, (json.loads(body) if body.startswith(b"{") else {})


@pytest.fixture(scope="module")
def served(state, tmp_path_factory):
    """`python -m benchpress.app` on a loopback port, serving the module's registry."""
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    port = _free_port()
    log = (tmp_path_factory.mktemp("served") / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "benchpress.app", "--home",
                             str(state.home.root), "--port", str(port)], stdout=log,
                            stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    deadline = time.time() + 120
    while True:
        try:
            if _request(port, "/api/status", {"Host": f"127.0.0.1:{port}"})[0] == 200:
                break
        except OSError:
            pass
        assert proc.poll() is None, open(log.name).read()
        assert time.time() < deadline, "the app did not start within 120 s"
        time.sleep(0.3)
    yield port
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    log.close()


def test_a_rebinding_page_cannot_reach_a_real_server(served):
    """Issue 45, High, through a real server on loopback: a foreign Host with
    X-Forwarded-For naming the test client's peer was answered (uvicorn believed the
    header from a loopback peer, and the guard exempted that name); now 403, one line."""
    port = served
    for forwarded in ({"X-Forwarded-For": "testclient"}, {"Forwarded": "for=testclient"},
                      {"X-Forwarded-For": "testclient", "X-Forwarded-Host": f"127.0.0.1:{port}"}):
        status, doc = _request(port, "/api/sql?q=SELECT%201", {"Host": "evil.example",
                                                               **forwarded})
        assert status == 403 and "evil.example" in doc["error"], (status, doc)
    status, doc = _request(port, "/api/sql?q=SELECT%201", {"Host": f"127.0.0.1:{port}",
                                                          "X-Forwarded-For": "testclient"})
    assert status == 200 and doc["rows"] == [[1]]
    status, doc = _request(port, "/api/probes?k=2&max_models=0", {
        "Host": f"127.0.0.1:{port}", "Sec-Fetch-Site": "cross-site"})
    assert status == 403 and "another site" in doc["error"]
    status, doc = _request(port, "/api/probes?k=2&max_models=0", {
        "Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}",
        "Sec-Fetch-Site": "same-origin"})
    assert status in (200, 202), doc


# -- SQL results ---------------------------------------------------------------------------
def test_sql_csv_defuses_formulas_as_the_cli_does(client):
    r = client.get("/api/sql.csv", params={"q": "SELECT '=1+2' AS f, '@SUM(A1)' AS g, 'ok' AS h"})
    assert r.status_code == 200
    assert r.text.splitlines() == ["f,g,h", "'=1+2,'@SUM(A1),ok"]


@pytest.mark.parametrize("sql", ["SELECT INTERVAL 1 DAY AS i",
                                 "SELECT 1::UNION(a INT, b VARCHAR) AS u"])
def test_a_result_of_a_type_that_cannot_be_returned_is_one_line(client, sql):
    for url in ("/api/sql", "/api/sql.csv"):
        assert "cast it to VARCHAR" in one_line_error(client.get(url, params={"q": sql}), 400)


def test_nested_and_binary_values_export_as_json_text(client):
    r = client.get("/api/sql.csv", params={"q": "SELECT [1, 2] AS l, MAP {'k': 1} AS m, "
                                                 "'\\x00'::BLOB AS b"})
    assert r.status_code == 200, r.text[:300]
    assert r.text.splitlines()[1].startswith('"[1, 2]","{""k"": 1}",')


def test_a_huge_value_is_refused_and_a_large_result_capped(client):
    error = one_line_error(client.get("/api/sql", params={
        "q": f"SELECT repeat('x', {SQL_MAX_BYTES + 2**20}) AS big"}), 400)
    assert "MB" in error and "benchpress sql" in error
    many = "SELECT repeat('x', 10000) AS s, range AS k FROM range(4000)"
    r = client.get("/api/sql", params={"q": many})
    assert r.status_code == 200 and r.json()["truncated"] is True
    assert 0 < r.json()["n_rows"] < 4000 and len(r.content) < 1.2 * SQL_MAX_BYTES
    assert r.json()["rows"][-1][1] == r.json()["n_rows"] - 1  # the first rows, in order
    csv = client.get("/api/sql.csv", params={"q": many})
    assert csv.headers["X-BenchPress-Truncated"] == "1" and len(csv.content) < 1.2 * SQL_MAX_BYTES


def test_the_console_holds_the_memory_limit_and_deadline_of_benchpress_sql(client, monkeypatch):
    """/api/sql runs through `store.sql.execute` as `benchpress sql` does: a string DuckDB
    builds outside its buffer manager fails in one line, and a query that does not stop at
    DuckDB's interrupt ends at the deadline (its process killed)."""
    from benchpress.app import registry

    error = one_line_error(client.get("/api/sql", params={
        "q": "SELECT length(repeat('x', 2000000000 + 0)) AS n"}), 400)
    assert error.startswith("SQL error: the query needs more memory than its limit")
    monkeypatch.setattr(registry, "SQL_TIMEOUT", 1.5)
    t0 = time.perf_counter()
    error = one_line_error(client.get("/api/sql", params={
        "q": "SELECT length(repeat('x', 500000000 + 0)) AS n"}), 400)
    assert "time limit of 1.5 s" in error and time.perf_counter() - t0 < 2.5


def test_an_error_naming_a_huge_value_is_cut(client):
    huge = "x" * 30_000
    error = one_line_error(client.get(f"/api/model/{huge}"), 404)
    assert "…" in error and len(error) <= 300 and huge not in error
    page = client.get(f"/model/{huge}")
    assert page.status_code == 404 and huge not in page.text


# -- SQL cannot starve the rest --------------------------------------------------------------
def _slow_sql(monkeypatch, seconds):
    from benchpress.store import sql as sandbox

    real = sandbox.execute

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)

    monkeypatch.setattr(sandbox, "execute", slow)


def _fire(client, n, results):
    def go():
        r = client.get("/api/sql", params={"q": "SELECT 1 AS one"})
        results.append(r.status_code)

    threads = [threading.Thread(target=go) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def test_status_answers_while_slow_queries_wait(state, monkeypatch):
    """Few worker threads (3), six slow queries: /api/status answers at once, not after them."""
    import anyio.to_thread

    _slow_sql(monkeypatch, 0.8)
    with TestClient(create_app(state), base_url="http://127.0.0.1") as c:
        c.portal.call(lambda: setattr(anyio.to_thread.current_default_thread_limiter(),
                                      "total_tokens", 3))
        results: list[int] = []
        threads = _fire(c, 6, results)
        time.sleep(0.3)  # every query has arrived; one runs
        t0 = time.perf_counter()
        assert c.get("/api/status").status_code == 200
        waited = time.perf_counter() - t0
        for t in threads:
            t.join(timeout=30)
    assert waited < 0.4, f"/api/status waited {waited:.2f} s behind the SQL queries"
    assert sorted(results) == [200] * 6


def test_too_many_waiting_queries_get_busy_in_one_line(state, monkeypatch):
    _slow_sql(monkeypatch, 0.3)
    with TestClient(create_app(state), base_url="http://127.0.0.1") as c:
        results: list[int] = []
        threads = _fire(c, 14, results)
        for t in threads:
            t.join(timeout=60)
        busy = c.get("/api/status")
    assert busy.status_code == 200
    assert results.count(503) >= 1 and results.count(200) >= 5 and len(results) == 14


def test_an_unforeseen_error_is_one_line_not_a_traceback(state, monkeypatch, caplog):
    from benchpress.app import views

    def broken(*args, **kwargs):
        raise ZeroDivisionError("x" * 5000)

    monkeypatch.setattr(views, "models", broken)
    with TestClient(create_app(state), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as c:
        error = one_line_error(c.get("/api/models"), 500)
        page = c.get("/models")
    assert error.startswith("internal error (ZeroDivisionError: xxx")
    assert page.status_code == 500 and "internal error (ZeroDivisionError" in page.text
    assert "Traceback" not in caplog.text and "x" * 400 not in caplog.text
