"""Hostile inputs on the wire and in the cache (issue 14, items 3, 6 and 10).

Servers are real HTTP servers on 127.0.0.1 that these tests start (trickling, redirecting,
never answering); hostile files are generated here (archives: test_hostile_archives.py).
Limits are lowered with monkeypatch or arguments so every case stays fast.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchpress.adapters.fetch import fetch, tree_sha256
from benchpress.cli import main
from benchpress.errors import BadInputError, FetchError, UnknownFormatError
from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests.conftest import REPO, SHARED_DATA, make_home

# about 18 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=18)


BODY = b'{"models": [], "benchmarks": [], "scores": []}' * 20
AIDER_PIN = "85a50b25953512d18ba4bb0c23c0b8e626fcf9a5b52d287644b8a0b44b9535de"
EPOCH_MIRROR = SHARED_DATA / "epoch-2025-12"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status: int, headers: dict, body: bytes = b"") -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        port = self.server.server_address[1]
        try:
            if self.path.startswith("/trickle/"):  # one byte, then a pause, forever
                pause = float(self.path.rsplit("/", 1)[1])
                self._send(200, {"Content-Length": "1000"})
                for _ in range(1000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(pause)
            elif self.path == "/same-host":
                self._send(302, {"Location": "/data.json", "Content-Length": "0"})
            elif self.path == "/other-host":
                self._send(302, {"Location": f"http://localhost:{port}/data.json",
                                 "Content-Length": "0"})
            elif self.path == "/to-ftp":
                self._send(302, {"Location": "ftp://127.0.0.1/data.json", "Content-Length": "0"})
            elif self.path == "/loop":
                self._send(302, {"Location": "/loop", "Content-Length": "0"})
            elif self.path == "/bp/data.json":
                body = (SHARED_DATA / "benchpress-2026-05" / "data.json").read_bytes()
                self._send(200, {"Content-Length": str(len(body))}, body)
            elif self.path == "/to-bp":
                self._send(301, {"Location": f"http://localhost:{port}/bp/data.json",
                                 "Content-Length": "0"})
            else:
                self._send(200, {"Content-Length": str(len(BODY))}, BODY)
        except OSError:
            pass  # the client gave up (the point of the trickle tests)


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def silent_port():
    """A port that accepts connections (the kernel's backlog) but never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def raw_server():
    """A loopback server whose answer a test writes byte by byte: `serve(script)` where
    `script(conn)` talks to each connection; yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    scripts = []

    def loop():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            threading.Thread(target=_talk, args=(scripts[0], conn), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    yield scripts, f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def _talk(script, conn):
    try:
        conn.recv(65536)
        script(conn)
    except OSError:
        pass
    finally:
        conn.close()


def _trickle_headers(conn):
    conn.sendall(b"HTTP/1.0 200 OK\r\n")
    for _ in range(1000):
        conn.sendall(b"X-Slow: y\r\n")
        time.sleep(0.2)


def _short_body(conn):
    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)


def _parts(cache: Path) -> list[Path]:
    return list(cache.glob(".part-*")) if cache.exists() else []


# -- downloads: deadline, schemes, redirects, partial files -----------------------------------

@pytest.mark.parametrize("pause", [0.2, 10.0])
def test_a_trickling_server_is_cut_at_the_overall_deadline(server, tmp_path, pause):
    # 0.2 s: every read succeeds; 10 s: no read finishes before the deadline (read timeout 30 s)
    start = time.monotonic()
    with pytest.raises(FetchError, match="2-second download deadline"):
        fetch(f"{server}/trickle/{pause}", tmp_path, deadline=2.0, timeout=30.0, retries=3)
    assert time.monotonic() - start < 3.0
    assert _parts(tmp_path) == []


def test_a_fetch_killed_outright_leaves_a_part_that_the_next_fetch_removes(server, tmp_path):
    """SIGKILL mid-download leaves `.part-<pid>-*` (nothing can run); the next fetch removes
    it, since its writer is gone, and then works."""
    script = (f"from pathlib import Path\nfrom benchpress.adapters.fetch import fetch\n"
              f"fetch({server + '/trickle/0.05'!r}, Path({str(tmp_path)!r}), deadline=60.0)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    try:
        # until the partial file is there, then a few trickled bytes more (they stay in the
        # writer's buffer: waiting for bytes on disk ran out its 10 s every time)
        for _ in range(200):
            if _parts(tmp_path):
                break
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    left = _parts(tmp_path)
    assert len(left) == 1 and left[0].name.startswith(f".part-{proc.pid}-")
    got = fetch(f"{server}/data.json", tmp_path)
    assert got.path.read_bytes() == BODY and _parts(tmp_path) == []


def test_only_abandoned_parts_are_swept(server, tmp_path):
    """A live writer's partial file stays; one of a dead pid, or any older than an hour, goes
    (files and folders alike)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=30)
    mine = tmp_path / f".part-{os.getpid()}-live"
    orphan = tmp_path / f".part-{dead.pid}-orphan"
    orphan_dir = tmp_path / f".part-{dead.pid}-tree"
    old_unnamed, new_unnamed = tmp_path / ".part-legacy-old", tmp_path / ".part-legacy-new"
    for path in (mine, orphan, old_unnamed, new_unnamed):
        path.write_bytes(b"partial")
    orphan_dir.mkdir()
    (orphan_dir / "member.csv").write_text("a,b\n")
    two_hours_ago = time.time() - 7200
    os.utime(old_unnamed, (two_hours_ago, two_hours_ago))
    fetch(f"{server}/data.json", tmp_path)
    assert sorted(p.name for p in _parts(tmp_path)) == sorted([mine.name, new_unnamed.name])


def test_the_deadline_defaults_to_the_input_limits(server, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHPRESS_DOWNLOAD_DEADLINE_S", str(1.0))
    start = time.monotonic()
    with pytest.raises(FetchError, match="1-second download deadline"):
        fetch(f"{server}/trickle/10", tmp_path)
    assert time.monotonic() - start < 2.0 and _parts(tmp_path) == []


def test_a_server_that_never_answers_is_cut_at_the_deadline(silent_port, tmp_path):
    start = time.monotonic()
    with pytest.raises(FetchError, match="deadline"):
        fetch(f"http://127.0.0.1:{silent_port}/x.json", tmp_path, deadline=1.5, timeout=30.0,
              backoff=0.01)
    assert time.monotonic() - start < 2.5 and _parts(tmp_path) == []


def test_a_server_trickling_its_headers_is_cut_at_the_deadline(raw_server, tmp_path):
    scripts, base = raw_server
    scripts.append(_trickle_headers)
    start = time.monotonic()
    with pytest.raises(FetchError, match="1.5-second download deadline"):
        fetch(f"{base}/slow", tmp_path, deadline=1.5, timeout=30.0)
    assert time.monotonic() - start < 2.5 and _parts(tmp_path) == []


def test_a_body_cut_short_is_retried_and_never_cached(raw_server, tmp_path):
    scripts, base = raw_server
    scripts.append(_short_body)
    with pytest.raises(FetchError, match="download failed after 2 tries: IncompleteRead"):
        fetch(f"{base}/short", tmp_path, retries=2, backoff=0.01)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/data.json", "gopher://127.0.0.1/x",
                                 "file:///etc/passwd"])
def test_only_http_and_https_are_fetched(tmp_path, url):
    with pytest.raises(FetchError, match="only http and https URLs") as err:
        fetch(url, tmp_path)
    assert "\n" not in str(err.value) and list(tmp_path.iterdir()) == []


def test_a_same_host_redirect_is_recorded_without_a_warning(server, tmp_path, caplog):
    got = fetch(f"{server}/same-host", tmp_path)
    assert got.final_url == f"{server}/data.json" and got.path.read_bytes() == BODY
    assert not [r for r in caplog.records if "another host" in r.getMessage()]


def test_a_cross_host_redirect_is_recorded_and_reported(server, tmp_path, caplog):
    got = fetch(f"{server}/other-host", tmp_path)
    port = server.rsplit(":", 1)[1]
    assert got.final_url == f"http://localhost:{port}/data.json"
    [line] = [r.getMessage() for r in caplog.records if "another host" in r.getMessage()]
    assert f"{server}/other-host" in line and got.final_url in line


@pytest.mark.parametrize("path, message", [("/to-ftp", "only http"), ("/loop", "redirect")])
def test_bad_redirects_are_refused_and_leave_nothing(server, tmp_path, path, message):
    with pytest.raises(FetchError, match=message):
        fetch(f"{server}{path}", tmp_path, retries=1)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_ingest_records_the_final_url_of_a_redirect(server, home):
    sid, _ = ingest(home, f"{server}/to-bp", source_id="bp")
    saved = yaml.safe_load((home.sources / "bp.yaml").read_text())
    port = server.rsplit(":", 1)[1]
    assert saved["url"] == f"{server}/to-bp"
    assert saved["final_url"] == f"http://localhost:{port}/bp/data.json"


# -- the raw cache is checked against its names -----------------------------------------------

def _mirror(tmp_path: Path) -> Path:
    mirror = tmp_path / "mirror"
    (mirror / "x").mkdir(parents=True)
    (mirror / "x" / "data.json").write_bytes(BODY)
    return mirror


def test_an_edited_cache_entry_is_replaced_from_the_mirror(tmp_path, caplog):
    cache, mirror, pin = tmp_path / "cache", _mirror(tmp_path), hashlib.sha256(BODY).hexdigest()
    first = fetch("https://example.invalid/data.json", cache, expected_sha256=pin, mirror=mirror,
                  mirror_path="x/data.json")
    first.path.write_bytes(BODY.replace(b"[]", b"[1]", 1))
    again = fetch("https://example.invalid/data.json", cache, expected_sha256=pin, mirror=mirror,
                  mirror_path="x/data.json")
    assert again.origin.startswith("mirror:") and again.path.read_bytes() == BODY
    [line] = [r.getMessage() for r in caplog.records if "does not match" in r.getMessage()]
    assert "https://example.invalid/data.json" in line


def test_an_edited_cache_entry_with_nowhere_to_refetch_fails_and_is_removed(tmp_path):
    cache, pin = tmp_path / "cache", hashlib.sha256(BODY).hexdigest()
    cache.mkdir()
    (cache / pin).write_bytes(b"not the pinned content")
    with pytest.raises(FetchError, match="download failed"):
        fetch("http://127.0.0.1:9/data.json", cache, expected_sha256=pin, retries=1, backoff=0)
    assert list(cache.iterdir()) == []


def test_an_edited_cached_folder_is_replaced_from_the_mirror(tmp_path):
    pin, cache = tree_sha256(EPOCH_MIRROR), tmp_path / "cache"
    args = dict(expected_sha256=pin, mirror=SHARED_DATA, mirror_path="epoch-2025-12")
    first = fetch("https://epoch.ai/data/benchmark_data.zip", cache, **args)
    victim = next(p for p in sorted(first.path.iterdir()) if p.suffix == ".csv")
    victim.write_text(victim.read_text().replace("0.", "0.9", 1))
    assert tree_sha256(first.path) != pin
    again = fetch("https://epoch.ai/data/benchmark_data.zip", cache, **args)
    assert again.origin.startswith("mirror:") and tree_sha256(again.path) == pin


def test_cache_checks_are_memoised_per_size_and_mtime(tmp_path, monkeypatch):
    import benchpress.adapters.fetch as fetch_module

    calls = []
    real = fetch_module.sha256_of
    monkeypatch.setattr(fetch_module, "sha256_of", lambda p: calls.append(p) or real(p))
    cache, mirror, pin = tmp_path / "cache", _mirror(tmp_path), hashlib.sha256(BODY).hexdigest()
    args = dict(expected_sha256=pin, mirror=mirror, mirror_path="x/data.json")
    fetch("https://example.invalid/data.json", cache, **args)
    calls.clear()
    for _ in range(3):
        assert fetch("https://example.invalid/data.json", cache, **args).origin == "cache"
    assert len(calls) == 1  # hashed once, then trusted while size and mtime stand
    os.utime(cache / pin, ns=(1, 1))
    fetch("https://example.invalid/data.json", cache, **args)
    assert len(calls) == 2


NOWHERE = "http://127.0.0.1:9/polyglot_leaderboard.yml"  # refused at once: no internet in tests


def _aider_home(tmp_path: Path) -> Path:
    """A workspace with the Aider source, its URL pointed at a closed loopback port."""
    root = tmp_path / "ws"
    make_home(root)
    config = yaml.safe_load((REPO / "sources" / "aider-2026-05.yaml").read_text())
    (root / "sources" / "aider-2026-05.yaml").write_text(yaml.safe_dump(dict(config, url=NOWHERE)))
    return root


def _tamper(entry: Path) -> None:
    text = entry.read_text()
    assert "pass_rate_2: 35.6" in text
    entry.write_text(text.replace("pass_rate_2: 35.6", "pass_rate_2: 99.9", 1))


def test_build_and_pull_never_use_an_edited_cache_entry(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    monkeypatch.delenv("BENCHPRESS_CACHE", raising=False)
    root = _aider_home(tmp_path)
    run = CliRunner().invoke
    assert run(main, ["pull", "--mirror", str(SHARED_DATA), "--home", str(root)]).exit_code == 0
    entry = root / ".cache" / "raw" / AIDER_PIN
    _tamper(entry)
    # no mirror, no network: the build refuses in one line and the entry is gone
    failed = run(main, ["build", "--home", str(root)])
    assert failed.exit_code == 1 and not entry.exists()
    [line] = failed.stderr.strip().splitlines()
    assert line.startswith(f"Error: {NOWHERE}: download failed")
    assert "download failed" in line
    # with the mirror: fetched again, the built scores are the published ones
    assert run(main, ["pull", "--mirror", str(SHARED_DATA), "--home", str(root)]).exit_code == 0
    _tamper(entry)
    built = run(main, ["build", "--mirror", str(SHARED_DATA), "--home", str(root)])
    assert built.exit_code == 0
    scores = read_table(root / "registry", "scores")
    assert scores.height > 0 and 99.9 not in scores["score"].to_list()
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == AIDER_PIN
    assert any("does not match its sha256" in r.getMessage() for r in caplog.records)


def test_pull_reports_an_edited_entry_in_one_line_and_prints_the_true_digest(tmp_path):
    root = _aider_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHPRESS_")}
    code = "import sys; from benchpress.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "pull", "--mirror", str(SHARED_DATA), "--home", str(root)]
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 0
    _tamper(root / ".cache" / "raw" / AIDER_PIN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.split("\t")[:2] == ["aider-2026-05", AIDER_PIN[:12]]
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith(f"warning: {NOWHERE}: the cached copy")
    assert AIDER_PIN in warning
    entry = root / ".cache" / "raw" / AIDER_PIN
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == AIDER_PIN


# -- refused files leave nothing, and messages name the file as given -------------------------

def test_an_unrecognised_file_is_refused_by_its_given_name_and_not_cached(home, tmp_path,
                                                                        monkeypatch):
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.chdir(tmp_path / "a" / "b" / "c")
    with pytest.raises(UnknownFormatError) as err:
        ingest(home, "../../../passwd")
    assert str(err.value).startswith("../../../passwd: no adapter recognises this file")
    assert ".cache" not in str(err.value) and str(tmp_path) not in str(err.value)
    assert not home.cache.exists() or [p for p in home.cache.iterdir()] == []


def test_a_file_the_build_refuses_is_named_as_given_and_not_cached(home, tmp_path, monkeypatch):
    (tmp_path / "w").mkdir()
    (tmp_path / "weird.json").write_bytes(b'\xff\xfe{"models": []}')
    monkeypatch.chdir(tmp_path / "w")
    with pytest.raises(BadInputError) as err:
        ingest(home, "../weird.json", adapter="benchpress-json")
    assert "(../weird.json): not UTF-8 text" in str(err.value)
    assert ".cache" not in str(err.value) and "file://" not in str(err.value)
    assert [p for p in home.cache.iterdir()] == []
    assert list(home.sources.glob("*.yaml")) == []


def test_a_refused_file_keeps_a_cache_entry_another_source_pins(home, tmp_path):
    from tests.conftest import BP_2026_05

    ingest(home, str(BP_2026_05), source_id="bp")
    pinned = hashlib.sha256(BP_2026_05.read_bytes()).hexdigest()
    with pytest.raises(BadInputError):
        ingest(home, str(BP_2026_05), adapter="aider", source_id="again")
    assert (home.cache / pinned).is_file()


def test_ingest_refuses_other_schemes_in_one_line(home):
    for location in ("ftp://127.0.0.1/data.json", "file:///etc/passwd"):
        with pytest.raises(FetchError, match=f"^{location}: only http and https URLs"):
            ingest(home, location)
    assert not home.cache.exists() or list(home.cache.iterdir()) == []


def test_a_bad_csv_line_is_named_by_the_file_given(home, tmp_path, monkeypatch):
    (tmp_path / "w").mkdir()
    header = (REPO / "sources" / "releases.csv").read_text().splitlines()[0]
    (tmp_path / "r.csv").write_text(f'{header}\n"open quote,x\n')
    monkeypatch.chdir(tmp_path / "w")
    with pytest.raises(BadInputError) as err:
        ingest(home, "../r.csv", adapter="releases-csv")
    assert "../r.csv line 2" in str(err.value) and ".cache" not in str(err.value)


@pytest.mark.parametrize("pin", ["../../outside", "ABC", "0" * 63 + "/"])
def test_a_pin_that_is_no_digest_never_names_a_file(tmp_path, pin):
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep me")
    with pytest.raises(FetchError, match="is not 64 hex digits"):
        fetch("https://example.invalid/x", tmp_path / "a" / "b", expected_sha256=pin)
    assert outside.read_bytes() == b"keep me"


def test_a_mirror_path_that_leaves_the_mirror_is_refused(tmp_path):
    mirror = _mirror(tmp_path)
    (tmp_path / "secret.json").write_bytes(BODY)
    with pytest.raises(FetchError, match="leads out of the mirror"):
        fetch("https://example.invalid/x", tmp_path / "cache", mirror=mirror,
              mirror_path="../secret.json")


def test_a_source_config_with_a_pin_that_is_no_digest_is_refused(home):
    from benchpress.store.sources import load_configs

    (home.sources / "x.yaml").write_text("id: x\nadapter: aider\nurl: https://e.invalid/x\n"
                                         "sha256: ../../../etc/passwd\n")
    with pytest.raises(BadInputError, match=r"x.yaml: field 'sha256' is '\.\./\.\./\.\./etc/pa"):
        load_configs(home.sources)
