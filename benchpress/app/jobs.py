"""Slow answers (drift, a probe search) computed once, in the background, on demand.

A page asks for a result by key; the first request starts the computation on a single
worker thread (the machine's cores stay free for the fast answers) and every request
gets the job's state until it is done: ``{"status": "queued" | "running" | "done" |
"error", ...}``.

What a client can make the server hold is bounded: each client (the request's peer
address, set by the server in :data:`CLIENT`) has at most ``per_client`` jobs queued or
running at once (one more is :class:`~benchpress.app.guard.Busy`, 503); at most ``keep``
jobs are kept (the oldest finished go first), and a finished result expires after
``ttl`` seconds (asked again, it is computed again).
"""

from __future__ import annotations

import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from benchpress.app.guard import Busy
from benchpress.errors import BenchPressError

__all__ = ["Jobs", "CLIENT"]

#: the client a job is started for (the server sets it per request; "" outside one)
CLIENT: contextvars.ContextVar[str] = contextvars.ContextVar("benchpress_job_client",
                                                             default="")


class Jobs:
    """Background computations keyed by a hashable key, one at a time.

    Parameters
    ----------
    per_client : int
        Jobs one client may have queued or running at once.
    keep : int
        Jobs kept in all (finished ones beyond it are dropped, the oldest first).
    ttl : float
        Seconds a finished result is served before it is computed again.
    """

    def __init__(self, *, per_client: int = 4, keep: int = 64, ttl: float = 3600.0) -> None:
        self.per_client = per_client
        self.keep = keep
        self.ttl = ttl
        self._lock = threading.Lock()
        self._state: dict = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchpress-job")

    def get(self, key, compute: Callable[[], dict]) -> dict:
        """The job's state; starts `compute` (returning a JSON-ready dict) on first ask
        (Busy when the asking client has `per_client` jobs pending, or every kept job is
        pending)."""
        now = time.time()
        with self._lock:
            self._expire(now)
            state = self._state.get(key)
            if state is None:
                client = CLIENT.get()
                pending = [s for s in self._state.values() if s["status"] in ("queued", "running")]
                if sum(s["client"] == client for s in pending) >= self.per_client:
                    raise Busy(f"{self.per_client} background jobs of yours are waiting or "
                               "running; ask again when one has finished")
                if len(pending) >= self.keep:
                    raise Busy(f"{len(pending)} background jobs are waiting or running; "
                               "ask again in a moment")
                state = self._state[key] = {"status": "queued", "queued_at": now,
                                            "client": client}
                self._pool.submit(self._run, key, compute)
                self._drop_oldest_finished()
            return {k: v for k, v in state.items() if k not in ("client", "ended_at")}

    def __len__(self) -> int:
        with self._lock:
            return len(self._state)

    def _expire(self, now: float) -> None:
        for key in [k for k, s in self._state.items() if s.get("ended_at", now) < now - self.ttl]:
            del self._state[key]

    def _drop_oldest_finished(self) -> None:
        finished = sorted((s["ended_at"], i, k) for i, (k, s) in enumerate(self._state.items())
                          if "ended_at" in s)
        for _, _, key in finished[:max(0, len(self._state) - self.keep)]:
            del self._state[key]

    def _run(self, key, compute) -> None:
        with self._lock:
            if key not in self._state:
                return
            self._state[key]["status"] = "running"
            client = self._state[key]["client"]
        t = time.perf_counter()
        try:
            result = {"status": "done", "result": compute()}
        except BenchPressError as exc:
            result = {"status": "error", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - shown to the user as one line
            result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        result["seconds"] = round(time.perf_counter() - t, 2)
        with self._lock:
            self._state[key] = {**result, "client": client, "ended_at": time.time()}
            self._drop_oldest_finished()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
