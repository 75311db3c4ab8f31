"""What stands between the app and a hostile or careless client.

* :class:`AllowedHosts`: an ASGI wrapper that answers a request whose ``Host`` header names
  another machine with 403 (400 without a usable header), so that a web page elsewhere
  cannot reach the app through DNS rebinding. The loopback names are allowed by default;
  ``benchpress serve --host`` adds the address it binds (see :func:`allowed_hosts`). Every
  request is checked, whatever its peer (no name is exempt: the peer's name can be
  forged through forwarding headers, which the server trusts only behind ``--proxy``).
  It also refuses a cross-site caller (:func:`cross_site`) of a request that changes
  something or starts work: any method but GET/HEAD/OPTIONS, and the paths it is given
  (the app's background jobs), so a page elsewhere cannot queue jobs through the user's
  browser.
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

__all__ = ["LOOPBACK_HOSTS", "AllowedHosts", "allowed_hosts", "host_name", "cross_site",
           "SqlGate", "Busy", "cut", "MAX_ERROR_CHARS", "SAFE_METHODS"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
MAX_ERROR_CHARS = 300
#: methods that change nothing (any other is refused to a cross-site caller)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


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


def cross_site(headers: dict[bytes, bytes]) -> str | None:
    """Why a request's headers show another site's page as its caller, or None.

    Browsers name the caller in ``Sec-Fetch-Site`` (same-origin, same-site, cross-site,
    none for a typed URL or a bookmark) and, on cross-origin and non-GET requests, in
    ``Origin``; any site but this origin is refused (same-site too: another port of
    localhost is another program's page). A request without either header (curl, a
    script, an older browser's plain GET) is not a cross-site page's.

    >>> cross_site({b"sec-fetch-site": b"cross-site"})
    'Sec-Fetch-Site is cross-site'
    >>> cross_site({b"origin": b"http://evil.example", b"host": b"127.0.0.1:8050"})
    "Origin 'http://evil.example' is not this app (http://127.0.0.1:8050)"
    >>> cross_site({b"origin": b"http://127.0.0.1:8050", b"host": b"127.0.0.1:8050",
    ...             b"sec-fetch-site": b"same-origin"}) is None
    True
    """
    site = headers.get(b"sec-fetch-site", b"").decode("latin-1").strip().lower()
    if site and site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site is {cut(site, 40)}"
    origin = headers.get(b"origin")
    if origin is None:
        return None
    origin_text = origin.decode("latin-1").strip()
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    scheme, sep, netloc = origin_text.lower().partition("://")
    if not sep or scheme not in ("http", "https") or netloc.rstrip("/") != host:
        return (f"Origin {cut(repr(origin_text), 80)} is not this app "
                f"(http://{cut(host, 80)})")
    return None


class AllowedHosts:
    """ASGI wrapper: requests whose ``Host`` is not in `hosts` get a one-line JSON error
    (403; 400 without a usable Host), and so does a cross-site caller (:func:`cross_site`)
    of a method that is not safe or of a path in `guarded` (403)."""

    def __init__(self, app, hosts=None, guarded=()):
        self.app = app
        self.hosts = frozenset(hosts) if hosts is not None else allowed_hosts()
        self.guarded = frozenset(guarded)

    def refusal(self, scope) -> tuple[int, str] | None:
        """(status, one-line reason) when the request is refused, else None."""
        headers = dict(scope.get("headers") or [])
        name = host_name(headers.get(b"host", b"").decode("latin-1"))
        if name not in self.hosts:
            if name is None:
                return 400, "the request has no usable Host header"
            return 403, (f"host {cut(repr(name), 80)} is not served here (allowed: "
                         f"{', '.join(sorted(self.hosts))}; `benchpress serve --host NAME` "
                         "adds one)")
        starts_work = (scope["type"] == "websocket" or scope.get("method") not in SAFE_METHODS
                       or scope.get("path") in self.guarded)
        why = cross_site(headers) if starts_work else None
        if why:
            return 403, (f"{scope.get('path', '')} starts work and a page of another site "
                         f"called it ({why}); open the app itself to run it")
        return None

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            refused = self.refusal(scope)
            if refused:
                if scope["type"] == "http":
                    await _reply(send, *refused)
                else:
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
