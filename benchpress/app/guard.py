"""What stands between the app and a hostile or careless client.

* :class:`AllowedHosts`: an ASGI wrapper that answers a request whose ``Host`` header names
  another machine with 403 (400 without a usable header), so that a web page elsewhere
  cannot reach the app through DNS rebinding. The loopback names are allowed by default;
  ``benchpress serve --host`` adds the address it binds (see :func:`allowed_hosts`). Only
  requests that came over a network connection are checked (an in-process transport such
  as Starlette's test client has no browser behind it).
* :class:`SqlGate`: one SQL query at a time, the others waiting in the event loop rather
  than in worker threads (so a queue of slow queries never starves ``/api/status`` or the
  pages), and no more than ``queue`` waiting: beyond that, :class:`Busy`.
* :func:`cut`: an error message cut to a length a page or a JSON reply can carry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket

from benchpress.errors import BenchPressError

__all__ = ["LOOPBACK_HOSTS", "AllowedHosts", "allowed_hosts", "host_name", "SqlGate", "Busy",
           "cut", "MAX_ERROR_CHARS"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
#: the peer name of an in-process ASGI transport (no network connection)
IN_PROCESS_PEER = "testclient"
MAX_ERROR_CHARS = 300


def cut(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut).

    >>> cut("model 'xxxxxxxxxx' not found", 16)
    "model 'xxxxxxxx…"
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def host_name(header: str) -> str | None:
    """The host of a ``Host`` header without its port, lowercased ("[::1]:8050" -> "::1");
    None when it is not a plausible host name.

    >>> host_name("LocalHost:8050"), host_name("[::1]:8050"), host_name("a b")
    ('localhost', '::1', None)
    """
    header = header.strip().lower()
    if header.startswith("["):
        name, sep, rest = header[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None
    else:
        name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    name = name.rstrip(".")
    if not name or len(name) > 253 or any(c.isspace() or c in "/\\@?#" for c in name):
        return None
    return name


def allowed_hosts(bind: str | None = None, extra=()) -> frozenset[str]:
    """The host names the app answers to: the loopback names, the address `bind` it listens
    on (for an unspecified address, 0.0.0.0 or ::, also this machine's name), and `extra`."""
    names = set(LOOPBACK_HOSTS) | {h for h in (host_name(x) for x in extra) if h}
    if bind:
        names.add(host_name(bind) or bind.lower())
        if bind in ("0.0.0.0", "::", ""):
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


class AllowedHosts:
    """ASGI wrapper: requests whose ``Host`` is not in `hosts` get a one-line JSON error."""

    def __init__(self, app, hosts=None):
        self.app = app
        self.hosts = frozenset(hosts) if hosts is not None else allowed_hosts()

    async def __call__(self, scope, receive, send):
        peer = (scope.get("client") or ("",))[0]
        # an in-process transport (Starlette's test client names its peer "testclient")
        # has no browser behind it, so nothing to rebind: only network requests are checked
        if scope["type"] in ("http", "websocket") and peer != IN_PROCESS_PEER:
            raw = dict(scope.get("headers") or []).get(b"host", b"")
            name = host_name(raw.decode("latin-1"))
            if name not in self.hosts:
                status = 400 if name is None else 403
                reason = ("the request has no usable Host header" if name is None else
                          f"host {cut(repr(name), 80)} is not served here (allowed: "
                          f"{', '.join(sorted(self.hosts))}; `benchpress serve --host NAME` "
                          "adds one)")
                await _reply(send, status, reason) if scope["type"] == "http" else \
                    await send({"type": "websocket.close", "code": 1008})
                return
        await self.app(scope, receive, send)


async def _reply(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class Busy(BenchPressError):
    """Too many SQL queries are waiting; the app answers 503."""


class SqlGate:
    """At most one SQL query runs and at most `queue` wait, in the event loop."""

    def __init__(self, queue: int = 8):
        self.queue = queue
        self.waiting = 0
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def __call__(self):
        if self.waiting >= self.queue:
            raise Busy(f"the SQL console is busy ({self.waiting} queries waiting); try again "
                       "in a moment")
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._lock.release()
