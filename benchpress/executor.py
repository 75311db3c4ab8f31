"""Where independent pieces of work run: in this process, in worker processes on this
machine, or on a Dask cluster.

The work that grows with users is a list of independent calls (the folds of an evaluation,
the models a probe search leaves out, the dates of a replay, the sources of a build). Code
that has such a list asks for an executor and maps over it::

    ex = get_executor(spec)            # None or "local": here, in order
    results = ex.map(fit_fold, folds)  # a list, in the order of ``folds``

``map`` always returns results in input order, so the numbers do not depend on where the
work ran. ``spec`` may be ``"processes"`` (or ``"processes:N"``): the calls then run in
worker processes on this machine, one per core (or N); the pipeline's slow stages use it
on the two cores a laptop or CI runner has. ``spec`` may also be the address of a Dask
distributed scheduler
(``tcp://host:8786``, see docs/guide/cluster.md): the calls then run on its
workers, which must have this package installed and (for the replay) see the same home
folder. ``fn`` must be a module-level function (it travels to the workers by reference)
and its arguments and results plain data (arrays, predictors, frames).

This module imports nothing from the rest of the package's stages, so every stage may use
it (it imports only the neutral `benchpress.errors`, and in a worker process
`benchpress.blas_threads`); ``distributed`` is imported only when a cluster is asked for.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import struct
import threading
import time
from typing import Callable, Iterable
from urllib.parse import urlsplit

from benchpress.errors import BenchPressError, UsageError, shown

__all__ = ["Executor", "LocalExecutor", "ProcessExecutor", "DaskExecutor", "get_executor", "ENV",
           "CONNECT_TIMEOUT", "RUN_TIMEOUT"]

#: environment variable the CLI reads as the default of ``--executor``
ENV = "BENCHPRESS_EXECUTOR"
#: seconds to reach the scheduler and to see its first worker
CONNECT_TIMEOUT = 10.0
#: seconds one ``map`` may take on a cluster before it is given up (a lost cluster)
RUN_TIMEOUT = 6 * 3600.0

_RESERVED = {"key", "workers", "retries", "resources", "priority", "allow_other_workers",
             "fifo_timeout", "actor", "actors", "pure", "batch_size"}
_PROCESSES = re.compile(r"^processes(:\d{1,4})?$")
#: the most worker processes `processes:N` may ask for
_MAX_PROCESSES = 256
_ADDRESS = re.compile(r"^(tcp|tls)://[^\s/:]+(:\d+)?$|^[A-Za-z0-9.\-]+:\d+$")
#: the longest host name DNS allows
_MAX_HOST = 253
#: a Dask greeting (its handshake: compression, python and pickle versions) is well under this
_MAX_GREETING = 1 << 20


class Executor:
    """Runs ``fn`` over ``items`` and returns the results as a list in input order.

    Also a context manager: inside ``with ex:`` a cluster connection is made once and
    kept for every ``map`` (outside, each ``map`` connects and disconnects)."""

    #: printable description ("local", or the scheduler address)
    name = "executor"
    #: how many calls run at once (callers that cut work into pieces cut at least this many)
    parallelism = 1

    def map(self, fn: Callable, items: Iterable, *, progress: Callable | None = None,
            **common) -> list:  # pragma: no cover - interface
        """``[fn(x, **common) for x in items]``, wherever it runs; ``common`` holds the
        arguments every call shares (sent to each worker once); ``progress(done, n)`` is
        called as calls finish (it only reports)."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line naming where the work runs (e.g. ``tcp://10.0.0.5:8786, 4 workers``)."""
        return self.name

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        return None


class LocalExecutor(Executor):
    """Runs everything in this process, one item after the other (the default)."""

    name = "local"

    def map(self, fn: Callable, items: Iterable, *, progress: Callable | None = None,
            **common) -> list:
        items = list(items) if progress is not None else items
        out = []
        for x in items:
            out.append(fn(x, **common))
            if progress is not None:
                progress(len(out), len(items))
        return out


class ProcessExecutor(Executor):
    """Runs the calls on ``workers`` processes of this machine (``--executor processes``
    or ``processes:N``): the cores a local run leaves idle.

    The items are cut into a few contiguous chunks per worker, each chunk one task (the
    shared ``common`` arguments travel once per chunk, not per call), and the results come
    back in input order, so the numbers are those of a local run. Workers are started
    fresh (``spawn``: no copy of this process's threads), run OpenBLAS on one thread each,
    and leave as soon as this process is gone (even killed), so no worker outlives it.
    """

    #: chunks per worker: enough to even out calls of unequal cost
    CHUNKS_PER_WORKER = 4

    def __init__(self, workers: int | None = None):
        import os

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self.workers = self.parallelism = max(1, int(workers or cores or 1))
        self.name = f"processes:{self.workers}"
        self._pool = None
        self._inside = False  # within `with`: one pool for every map

    def __getstate__(self) -> dict:  # travels without its pool
        return {**self.__dict__, "_pool": None, "_inside": False}

    def describe(self) -> str:
        return f"{self.workers} processes on this machine"

    def __enter__(self) -> "ProcessExecutor":
        self._inside = True
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self._inside = False
        self._close(abandon=exc_type is not None)

    def _close(self, *, abandon: bool = False) -> None:
        """Shut the pool down; ``abandon`` (interrupted, or a call failed): the calls still
        running are not waited for, their workers are stopped."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if abandon:
            for worker in list((getattr(pool, "_processes", None) or {}).values()):
                worker.terminate()
        pool.shutdown(wait=True, cancel_futures=True)

    def _started(self):
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor

        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_start, initargs=(os.getpid(),))
        return self._pool

    def map(self, fn: Callable, items: Iterable, *, progress: Callable | None = None,
            **common) -> list:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        items = list(items)
        if self.workers == 1 or len(items) < 2:
            return LocalExecutor().map(fn, items, progress=progress, **common)
        size = -(-len(items) // (self.workers * self.CHUNKS_PER_WORKER))
        chunks = [items[a:a + size] for a in range(0, len(items), size)]
        results, done = [None] * len(chunks), 0
        try:
            pool = self._started()
            with _ctrl_c_held():  # (the workers are born in the first submits)
                futures = {pool.submit(_run_chunk, fn, chunk, common): k
                           for k, chunk in enumerate(chunks)}
            for future in as_completed(futures):
                k = futures[future]
                results[k] = future.result()
                done += len(chunks[k])
                if progress is not None:
                    progress(done, len(items))
        except BrokenProcessPool:  # a worker killed (out of memory, a signal): one line
            self._close(abandon=True)
            raise BenchPressError(f"--executor {self.name}: a worker process stopped before "
                                  "its work was done (killed, or out of memory); nothing was "
                                  "kept") from None
        except BaseException:  # Ctrl-C or a failed call: the other calls are not awaited
            self._close(abandon=True)
            raise
        if not self._inside:
            self._close()
        return [r for chunk in results for r in chunk]


def _run_chunk(fn: Callable, chunk: list, common: dict) -> list:
    """One task of :class:`ProcessExecutor`: ``fn`` over a chunk of items, in order."""
    return [fn(x, **common) for x in chunk]


@contextlib.contextmanager
def _ctrl_c_held():
    """Ctrl-C held back while worker processes are born, then answered.

    - The workers: SIGINT is blocked in this thread meanwhile, and a blocked signal is
      inherited through fork and exec, so a worker starts deaf to the process group's
      Ctrl-C. Otherwise it would print a traceback from its start-up (importing numpy,
      the main module) before its initializer ignores it.
    - The parent: another of its threads may take the signal, and Python would then raise
      KeyboardInterrupt in the main thread wherever it stands, in the middle of the
      pool's bookkeeping, whose shutdown can then hang. So in the main thread a Ctrl-C
      is only noted meanwhile, and raised on leaving: nothing is lost.
    """
    noted = []
    swap = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if swap:
        signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    masked = hasattr(signal, "pthread_sigmask")  # (not on Windows)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masked else None
    try:
        yield
    finally:
        if masked:  # (a Ctrl-C that waited is delivered here, and noted)
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if swap:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if noted:
        raise KeyboardInterrupt


def _worker_start(parent: int) -> None:
    """In each worker of :class:`ProcessExecutor`: one OpenBLAS thread (two workers on two
    cores would otherwise run four), and a watch that ends the worker when ``parent`` is
    gone (a killed parent cannot shut its pool down: its workers would wait forever)."""
    import os

    # Ctrl-C reaches the whole process group: the parent answers it (one line) and stops
    # the workers, which would otherwise each print a traceback (see _ctrl_c_held)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from benchpress.blas_threads import single_blas_thread

    single_blas_thread().__enter__()  # for the worker's whole life

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


class DaskExecutor(Executor):
    """Runs the calls on the workers of a Dask distributed scheduler at ``address``.

    Parameters
    ----------
    address : str
        The scheduler, e.g. ``tcp://127.0.0.1:8786`` (``host:port`` means tcp).
    connect_timeout : float
        Seconds to reach the scheduler and to see at least one worker; beyond it a one-line
        :class:`~benchpress.errors.UsageError` names the address.
    timeout : float
        Seconds one ``map`` may take in all; beyond it a one-line
        :class:`~benchpress.errors.BenchPressError` (the cluster is not answering).

    An exception raised by ``fn`` on a worker is raised here as it is (a
    :class:`~benchpress.errors.BenchPressError` keeps its one-line message, as in a local
    run); a worker that dies, or a cluster that goes away, becomes a one-line
    BenchPressError naming the address.
    """

    def __init__(self, address: str, *, connect_timeout: float = CONNECT_TIMEOUT,
                 timeout: float = RUN_TIMEOUT):
        self.address = address if "://" in address else f"tcp://{address}"
        self.name = self.address
        self.connect_timeout = float(connect_timeout)
        self.timeout = float(timeout)
        self._client = None

    def __getstate__(self) -> dict:  # travels without its open client
        return {**self.__dict__, "_client": None}

    # -- connection ----------------------------------------------------------------------
    def _usage(self, why: str):
        where = self.address if len(self.address) <= 80 else self.address[:79] + "…"
        return UsageError(f"--executor {where}: {why}")

    def _probe_socket(self) -> None:
        """Fail at once on a refused connection (Dask alone retries until its timeout), and
        within ``connect_timeout`` on a peer that is not a Dask scheduler: one that accepts
        and says nothing, or whose first message is not a Dask greeting (garbage, or a
        frame announcing more bytes than a greeting holds). Dask itself waits for the
        greeting without a deadline, and allocates whatever size the first frame names."""
        parts = urlsplit(self.address)
        if parts.scheme not in ("tcp", "tls") or not parts.hostname:
            return
        deadline, connected = time.monotonic() + self.connect_timeout, False
        try:
            with socket.create_connection((parts.hostname, parts.port or 8786),
                                          timeout=self.connect_timeout) as sock:
                connected = True
                if parts.scheme == "tcp":  # (over TLS the client speaks first)
                    self._check_greeting(sock, deadline)
        except socket.timeout:
            raise self._usage(f"no Dask scheduler answered within {self.connect_timeout:g} s "
                              + ("(a peer accepted the connection and said nothing)"
                                 if connected else "(no answer to the connection)")) from None
        except OSError as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise self._usage(f"no Dask scheduler reachable ({reason}); start one with "
                              "`dask scheduler` or use --executor local") from None
        except (UnicodeError, ValueError) as exc:  # a host name IDNA cannot encode, a bad port
            raise self._usage(f"not a usable address ({shown(str(exc), 80)})") from None

    def _check_greeting(self, sock: socket.socket, deadline: float) -> None:
        """Read a Dask scheduler's greeting from `sock` by `deadline`: an 8-byte length,
        then that many bytes of its handshake."""
        def read(n: int) -> bytes:
            data = b""
            while len(data) < n:
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = sock.recv(min(n - len(data), 65536))
                if not chunk:
                    raise self._usage("the peer closed the connection without a Dask greeting; "
                                      "is it a Dask scheduler?")
                data += chunk
            return data

        (size,) = struct.unpack("Q", read(8))
        if not 0 < size <= _MAX_GREETING:
            raise self._usage(f"not a Dask scheduler (its first message announces {size:,} "
                              "bytes, not a Dask greeting)")
        if b"pickle-protocol" not in read(size):
            raise self._usage("not a Dask scheduler (its first message is not a Dask greeting)")

    def _make_client(self, distributed):
        """A `distributed.Client` of the scheduler, made within a deadline (Dask's own
        handshake reads have none); UsageError when it is not made in time."""
        out: dict = {}

        def make() -> None:
            try:
                out["client"] = distributed.Client(self.address, timeout=self.connect_timeout,
                                                   set_as_default=False)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                out["error"] = exc

        worker = threading.Thread(target=make, name="benchpress-dask-connect", daemon=True)
        worker.start()
        worker.join(2 * self.connect_timeout + 5.0)
        if worker.is_alive():
            raise self._usage(f"no Dask scheduler finished the handshake within "
                              f"{2 * self.connect_timeout + 5.0:g} s")
        if "error" in out:
            raise out["error"]
        return out["client"]

    def connect(self) -> "DaskExecutor":
        """Open the client (kept until :meth:`close`); raises UsageError when the scheduler
        cannot be reached or has no worker within ``connect_timeout`` seconds."""
        if self._client is not None:
            return self
        try:
            import distributed
        except ImportError:
            raise self._usage("the Dask distributed package is not installed "
                              "(pip install distributed)") from None
        if self.address.startswith("tls://") and distributed.Security().get_connection_args(
                "client").get("ssl_context") is None:
            raise self._usage("a tls:// scheduler needs Dask's TLS settings (distributed.comm."
                              "tls: ca-file, client cert and key), and none are configured")
        self._probe_socket()
        try:
            client = self._make_client(distributed)
        except UsageError:
            raise
        except (OSError, TimeoutError, ValueError) as exc:
            raise self._usage(f"no Dask scheduler answered within {self.connect_timeout:g} s "
                              f"({shown(' '.join(str(exc).split()), 200)})") from None
        except Exception as exc:  # noqa: BLE001 - anything else Dask raises: one line
            raise self._usage(f"could not connect ({type(exc).__name__}: "
                              f"{shown(' '.join(str(exc).split()), 200)})") from None
        try:
            client.wait_for_workers(1, timeout=self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            client.close()
            raise self._usage(f"the scheduler has no workers after {self.connect_timeout:g} s; "
                              "start some with `dask worker " + self.address + "`") from exc
        self._client = client
        return self

    def close(self) -> None:
        """Close the client (if open)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> "DaskExecutor":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    def n_workers(self) -> int:
        """Workers the scheduler has now (connects if needed)."""
        opened = self._client is None
        self.connect()
        try:
            return len(self._client.nthreads())  # {worker address: threads}
        finally:
            if opened:
                self.close()

    def describe(self) -> str:
        n = self.n_workers()
        return f"{self.address}, {n} worker{'s' if n != 1 else ''}"

    # -- work ----------------------------------------------------------------------------
    def map(self, fn: Callable, items: Iterable, *, progress: Callable | None = None,
            **common) -> list:
        items = list(items)
        clash = set(common) & _RESERVED
        if clash:
            raise ValueError(f"map: shared argument name(s) {sorted(clash)} are Dask's own")
        if not items:
            return []
        opened = self._client is None
        self.connect()
        client, futures, failed = self._client, [], None
        try:
            from distributed import as_completed

            try:
                # shared arguments go to every worker once ([v]: v itself, not its elements)
                shared = {k: client.scatter([v], broadcast=True, hash=False)[0]
                          for k, v in common.items()}
                futures = client.map(fn, items, pure=False, **shared)
                done = as_completed(futures, loop=client.loop, timeout=self.timeout)
                for k, future in enumerate(done, start=1):
                    if future.status == "error":
                        failed = future  # raised below at once, without waiting for the rest
                        break
                    if progress is not None:
                        progress(k, len(items))
                results = None if failed is not None else client.gather(futures)
            except Exception as exc:  # the cluster's own failures, not a task's
                raise self._failure(exc) from None
            if failed is not None:
                try:
                    failed.result()  # the error fn raised on the worker, as a local run raises it
                except Exception as exc:
                    if type(exc).__name__ == "KilledWorker":  # not fn's: its worker died
                        raise self._failure(exc) from None
                    raise
            return results
        finally:
            for f in futures:
                f.release()
            if opened:
                self.close()

    def _failure(self, exc: Exception) -> Exception:
        """The one-line BenchPressError naming the address for a failure of the cluster (a
        worker that died, a lost scheduler, no answer within ``timeout``); another error
        (e.g. one ``fn`` raised, met by ``gather``) is returned as it is."""
        kind, text = type(exc).__name__, " ".join(str(exc).split())
        if kind == "KilledWorker":
            return BenchPressError(f"executor {self.address}: a worker died running the work "
                                   f"({text})")
        if isinstance(exc, TimeoutError):
            return BenchPressError(f"executor {self.address}: the work did not finish within "
                                   f"{self.timeout:g} s")
        if kind in ("CancelledError", "FutureCancelledError", "CommClosedError",
                    "StreamClosedError"):
            return BenchPressError(f"executor {self.address}: lost the cluster ({kind}: {text})")
        return exc


def get_executor(spec: "str | Executor | None" = None, **options) -> Executor:
    """The executor for ``spec``: None or ``"local"`` gives :class:`LocalExecutor`; an
    address (``tcp://host:port`` or ``host:port``) a :class:`DaskExecutor` (``options``
    go to it; nothing is connected yet); an :class:`Executor` is returned as it is.

    >>> get_executor().name, get_executor("tcp://10.0.0.5:8786").name
    ('local', 'tcp://10.0.0.5:8786')

    Raises
    ------
    UsageError
        For anything else (one line, naming the accepted forms).
    """
    if isinstance(spec, Executor):
        return spec
    text = "local" if spec is None else str(spec).strip()
    if text in ("", "local"):
        return LocalExecutor()
    if _PROCESSES.match(text):
        count = text.partition(":")[2]
        if count and not 1 <= int(count) <= _MAX_PROCESSES:
            raise UsageError(f"--executor {text}: between 1 and {_MAX_PROCESSES} processes")
        return ProcessExecutor(int(count) if count else None)
    if _ADDRESS.match(text) and len(urlsplit(text if "://" in text else f"tcp://{text}")
                                    .hostname or "") <= _MAX_HOST:
        return DaskExecutor(text, **options)
    raise UsageError(f"--executor {shown(spec, 80)}: expected 'local', 'processes[:N]' or "
                     f"a Dask scheduler address such as tcp://127.0.0.1:8786 (a host name of at most "
                     f"{_MAX_HOST} characters)")
