"""Slow answers (drift, a probe search) computed once, in the background, on demand.

A page asks for a result by key; the first request starts the computation on a single
worker thread (the machine's cores stay free for the fast answers) and every request
gets the job's state until it is done: ``{"status": "queued" | "running" | "done" |
"error", ...}``. Results are kept for the life of the server (the data are read-only).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from benchpress.errors import BenchPressError

__all__ = ["Jobs"]


class Jobs:
    """Background computations keyed by a hashable key, one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchpress-job")

    def get(self, key, compute: Callable[[], dict]) -> dict:
        """The job's state; starts `compute` (returning a JSON-ready dict) on first ask."""
        with self._lock:
            state = self._state.get(key)
            if state is None:
                state = self._state[key] = {"status": "queued", "queued_at": time.time()}
                self._pool.submit(self._run, key, compute)
            return dict(state)

    def _run(self, key, compute) -> None:
        with self._lock:
            self._state[key]["status"] = "running"
        t = time.perf_counter()
        try:
            result = {"status": "done", "result": compute()}
        except BenchPressError as exc:
            result = {"status": "error", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - shown to the user as one line
            result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        result["seconds"] = round(time.perf_counter() - t, 2)
        with self._lock:
            self._state[key] = result

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
