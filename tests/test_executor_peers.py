"""`--executor ADDRESS` against peers that are not Dask schedulers (issue 27, Medium 7): one
that accepts and stays silent, one that sends garbage or announces a huge frame, one that
hangs up; a tls:// address without TLS settings; a 5,000-character host. Each ends in one
line within the connect deadline. The peers are loopback sockets that stop by themselves."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import UsageError
from benchpress.executor import DaskExecutor, get_executor

DEADLINE = 1.0


class Peer:
    """A loopback listener that accepts up to 4 connections, sends `greeting` (None: says
    nothing; b"": hangs up at once) and holds each open until `close` or 20 s."""

    def __init__(self, greeting: bytes | None):
        self.greeting, self.stop = greeting, threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conns, end = [], time.monotonic() + 20
        while not self.stop.is_set() and time.monotonic() < end and len(conns) < 4:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            if self.greeting == b"":
                conn.close()
                continue
            if self.greeting:
                conn.sendall(self.greeting)
            conns.append(conn)
        self.stop.wait(max(0.0, end - time.monotonic()))
        for conn in conns:
            conn.close()
        self.sock.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


@pytest.fixture
def peer(request):
    p = Peer(request.param)
    yield p
    p.close()


def _connect(address: str) -> str:
    t0 = time.perf_counter()
    with pytest.raises(UsageError) as info:
        DaskExecutor(address, connect_timeout=DEADLINE).connect()
    assert time.perf_counter() - t0 < DEADLINE + 3
    message = str(info.value)
    assert "\n" not in message and len(message) < 300
    return message


@pytest.mark.parametrize("peer, expected", [
    (None, "said nothing"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "not a Dask scheduler"),
    (struct.pack("Q", 2**60) + b"\xff" * 64, "announces"),
    (struct.pack("Q", 16) + b"\x00" * 16, "not a Dask greeting"),
    (b"", "closed the connection"),
], indirect=["peer"], ids=["silent", "garbage", "huge-frame", "not-a-greeting", "hang-up"])
def test_a_peer_that_is_not_a_scheduler_is_one_line_within_the_deadline(peer, expected):
    assert expected in _connect(f"tcp://127.0.0.1:{peer.port}")


@pytest.mark.parametrize("peer", [None], indirect=True)
def test_a_tls_address_without_tls_settings_is_one_line(peer):
    assert "TLS" in _connect(f"tls://127.0.0.1:{peer.port}")


@pytest.mark.parametrize("address", [
    "tcp://" + "a" * 5000 + ":8786", "a" * 5000 + ":8786",
    "tcp://" + "a" * 100 + ".example:8786"])
def test_an_overlong_host_is_one_line(address):
    t0 = time.perf_counter()
    with pytest.raises(UsageError) as info:
        get_executor(address, connect_timeout=DEADLINE).connect()
    assert time.perf_counter() - t0 < DEADLINE + 3
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize("peer", [None], indirect=True)
def test_the_cli_ends_a_silent_peer_in_one_line_exit_2(peer, home, monkeypatch):
    monkeypatch.setattr(DaskExecutor.__init__, "__kwdefaults__",
                        {"connect_timeout": DEADLINE, "timeout": 3600.0})
    address = f"tcp://127.0.0.1:{peer.port}"
    plan = home.root / "plan.yaml"
    plan.write_text("name: x\nversions: []\n", encoding="utf-8")
    t0 = time.perf_counter()
    result = CliRunner().invoke(main, ["replay", str(plan), "--home", str(home.root),
                                       "--executor", address])
    assert time.perf_counter() - t0 < DEADLINE + 5
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: --executor ") and "said nothing" in lines[0]
