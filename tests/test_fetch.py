"""The fetch layer against a real HTTP server on loopback."""

from __future__ import annotations

import hashlib
import http.server
import threading

import pytest

from benchpress.adapters.fetch import fetch
from benchpress.digest import CHUNK, sha256_bytes, sha256_of
from benchpress.errors import FetchError
from tests.conftest import BP_2026_05

BODY = b'{"models": [], "benchmarks": [], "scores": []}' * 50


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: dict[str, int] = {}

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        if self.path == "/flaky" and self.hits[self.path] < 3:
            self.send_response(503)
            self.end_headers()
            return
        if self.path == "/benchpress/data.json":
            body = BP_2026_05.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path == "/missing":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        if self.path != "/chunked":
            self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_download_lands_in_the_cache_named_by_hash(server, tmp_path):
    got = fetch(f"{server}/data.json", tmp_path)
    assert got.origin == "http"
    assert got.sha256 == hashlib.sha256(BODY).hexdigest()
    assert got.path == tmp_path / got.sha256 and got.path.read_bytes() == BODY


def test_cached_file_is_not_fetched_again(server, tmp_path):
    first = fetch(f"{server}/again.json", tmp_path)
    second = fetch(f"{server}/again.json", tmp_path, expected_sha256=first.sha256)
    assert second.origin == "cache"
    assert _Handler.hits["/again.json"] == 1


def test_transient_errors_are_retried(server, tmp_path):
    got = fetch(f"{server}/flaky", tmp_path, retries=3, backoff=0.01)
    assert got.path.read_bytes() == BODY
    assert _Handler.hits["/flaky"] == 3


def test_client_errors_are_not_retried(server, tmp_path):
    with pytest.raises(FetchError, match="404"):
        fetch(f"{server}/missing", tmp_path, retries=3, backoff=0.01)
    assert _Handler.hits["/missing"] == 1


@pytest.mark.parametrize("path", ["/declared", "/chunked"])
def test_size_cap_stops_large_downloads(server, tmp_path, path):
    with pytest.raises(FetchError, match="cap"):
        fetch(f"{server}{path}", tmp_path, max_bytes=100)
    assert [p for p in tmp_path.iterdir()] == []  # no partial file left behind


def test_pinned_hash_mismatch_is_refused(server, tmp_path):
    with pytest.raises(FetchError, match="pins"):
        fetch(f"{server}/pinned.json", tmp_path, expected_sha256="0" * 64)


def test_mirror_serves_offline(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "x").mkdir(parents=True)
    (mirror / "x" / "data.json").write_bytes(BODY)
    got = fetch("https://unreachable.invalid/data.json", tmp_path / "cache", mirror=mirror,
                mirror_path="x/data.json")
    assert got.origin.startswith("mirror:") and got.path.read_bytes() == BODY


def test_unreachable_host_says_how_to_work_offline(tmp_path):
    with pytest.raises(FetchError, match="BENCHPRESS_MIRROR"):
        fetch("http://127.0.0.1:9/nothing.json", tmp_path, retries=1, backoff=0, timeout=2)


def test_ingest_from_a_url_records_where_the_file_came_from(server, home):
    from benchpress.store.ingest import ingest
    from benchpress.store.tables import read_table

    url = f"{server}/benchpress/data.json"
    sid, report = ingest(home, url)
    source = read_table(home.registry, "sources").row(0, named=True)
    assert (source["source_id"], source["url"]) == (sid, url)
    assert source["sha256"] == hashlib.sha256(BP_2026_05.read_bytes()).hexdigest()
    assert source["retrieved_at"].startswith("20")
    assert report.counts["cells"] == 2604
    # the raw file is cached by hash, so a rebuild needs no network
    assert (home.cache / source["sha256"]).is_file()


def test_file_digest_streams_and_matches_the_bytes_digest(tmp_path):
    data = bytes(range(256)) * (3 * CHUNK // 256 + 7)  # several chunks and a partial one
    (tmp_path / "f").write_bytes(data)
    assert sha256_of(tmp_path / "f") == sha256_bytes(data) == hashlib.sha256(data).hexdigest()
