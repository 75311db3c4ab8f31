"""One bounded HTTP(S) download, for `fetch`: a size cap, a per-read timeout, an overall
deadline, and a redirect policy.

The deadline is kept by a watchdog timer that shuts down the download's sockets when it
passes, so it holds in every phase (connecting, headers, body) however slowly a server
trickles bytes; the per-read timeout alone would let a server that sends one byte every few
seconds hold a download forever. Redirects are followed at most `InputLimits.max_redirects` times,
only to http or https and never from https to http; the final address is returned, and one
that lies on another host is reported on the `benchpress.adapters.fetch` logger.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import sys
import threading
import time
import urllib.request
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

from benchpress.input_limits import input_limits
from benchpress.digest import CHUNK, HashingWriter
from benchpress.errors import FetchError

__all__ = ["download", "url_scheme"]

log = logging.getLogger("benchpress.adapters.fetch")


def url_scheme(location: str) -> str:
    """The lower-case scheme of a URL ("https"), or "" for a plain path."""
    return location.split("://", 1)[0].lower() if "://" in location else ""


class _Watchdog:
    """Shuts down the sockets registered with it once `seconds` have passed."""

    def __init__(self, seconds: float):
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                self._shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked read, which then sees the end
        except OSError:
            pass

    def __enter__(self) -> "_Watchdog":
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


def _watched(connection: type) -> type:
    """A subclass of the connection class `connection` (HTTP or HTTPS) whose socket, once
    connected (for HTTPS: once wrapped in TLS), the watchdog given to its constructor shuts
    at the deadline."""

    class Watched(connection):
        def __init__(self, *args, watchdog: _Watchdog, **kwargs):
            super().__init__(*args, **kwargs)
            self._watchdog = watchdog

        def connect(self):
            super().connect()
            self._watchdog.add(self.sock)

    Watched.__name__ = Watched.__qualname__ = f"Watched{connection.__name__}"
    return Watched


_WatchedHTTP = _watched(http.client.HTTPConnection)
_WatchedHTTPS = _watched(http.client.HTTPSConnection)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog):
        super().__init__()
        self.watchdog = watchdog

    def http_open(self, req):
        return self.do_open(partial(_WatchedHTTP, watchdog=self.watchdog), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog):
        self.tls = ssl.create_default_context()
        super().__init__(context=self.tls)
        self.watchdog = watchdog

    def https_open(self, req):
        return self.do_open(partial(_WatchedHTTPS, watchdog=self.watchdog), req, context=self.tls)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follow at most `InputLimits.max_redirects` redirects, only to http(s), never https -> http."""

    def __init__(self):
        limits = input_limits()
        super().__init__()
        self.max_redirections = limits.max_redirects

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = url_scheme(req.full_url), url_scheme(newurl)
        if new not in ("http", "https") or (old == "https" and new == "http"):
            fp.close()
            raise FetchError(f"{req.full_url}: redirected to {newurl}; only http(s) redirects "
                             "that keep https are followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(url: str, dest: Path, *, max_bytes: int, timeout: float, ends: float,
             deadline_s: float) -> tuple[str, str]:
    """Stream `url` into `dest`; returns the final URL after redirects and the sha256 of
    the bytes written (hashed on the way, not read again).

    `timeout` bounds each read, `ends` (a `time.monotonic()` value, `deadline_s` seconds after
    the fetch began) the whole download; past it a `FetchError` names the deadline.
    """
    late = FetchError(f"{url}: no complete answer within the {deadline_s:g}-second download "
                      "deadline; stopped")
    left = ends - time.monotonic()
    if left <= 0:
        raise late
    with _Watchdog(left) as watchdog:
        opener = urllib.request.build_opener(_HTTPHandler(watchdog), _HTTPSHandler(watchdog),
                                             _Redirects)
        request = urllib.request.Request(url, headers={"User-Agent": "benchpress-registry/0.1"})
        try:
            final, digest = _stream(opener, request, dest, max_bytes, min(timeout, left))
        except (OSError, http.client.HTTPException):
            if watchdog.fired:
                raise late from None
            raise
        if watchdog.fired:  # a shut-down socket reads as a (short) end of the body
            raise late
    if urlsplit(final).hostname != urlsplit(url).hostname:
        log.warning("warning: %s redirected to another host: %s (recorded as the final URL)",
                    url, final)
    return final, digest


def _stream(opener, request, dest: Path, max_bytes: int, timeout: float) -> tuple[str, str]:
    url = request.full_url
    with opener.open(request, timeout=timeout) as response:
        declared = int(response.headers.get("Content-Length") or 0)
        if declared > max_bytes:
            raise FetchError(f"{url}: {declared:,} bytes is larger than the {max_bytes:,}-byte cap")
        with HashingWriter(dest) as out, Progress(
            "[progress.description]{task.description}", BarColumn(), DownloadColumn(),
            TransferSpeedColumn(), transient=True, disable=not sys.stderr.isatty(),
        ) as bar:
            task = bar.add_task(url.rsplit("/", 1)[-1], total=declared or None)
            received = 0
            while chunk := response.read1(CHUNK):
                received += len(chunk)
                if received > max_bytes:
                    raise FetchError(f"{url}: larger than the {max_bytes:,}-byte cap; stopped")
                out.write(chunk)
                bar.advance(task, len(chunk))
        if declared and received < declared:  # the connection ended early: worth another try
            raise http.client.IncompleteRead(b"", declared - received)
        return response.geturl(), out.hexdigest()
