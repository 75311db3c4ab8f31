"""One registry query in a process of its own: the memory limit held for everything the
query allocates, one deadline for all of it, and Ctrl-C that ends it at once.

DuckDB's `memory_limit` holds only what its buffer manager allocates: strings, for one,
are built outside it (``repeat('x', 2000000000 + 0)`` reached 4 GB against a 1 GB limit),
and a string function does not look at `interrupt()`, so a query could run on for
seconds past its time limit and past Ctrl-C. So `run_in_child` runs the query in a query
process that opens the sealed connection, checks the query and decodes the tables it
reads (`sql.prepare_select`), then limits its own address space (`RLIMIT_AS`) to what it
holds by then plus the memory limit plus `SLACK_BYTES`, and only then runs it, stopping
one row past the row cap. The parent waits for the answer until the deadline and kills
the query process there, or on Ctrl-C.

Query processes are forked from a query server (``python -m benchpress.store.sql_child``,
started by the first query of a process and ended with it): it has imported DuckDB,
Arrow and this package once, so a query process starts in milliseconds instead of the
0.4 s (CPU and wall) a new interpreter takes to import them. The server runs no query
and opens no file; it only forks. It ends when its parent closes the socket between
them (or dies), and a query process ends when its request pipe closes, so neither
outlives the process that asked.

Protocol: for each query the parent makes four pipes and sends the server the query
process's ends (request, answer, stderr, status) over their socket; the server forks,
answers with the query process's pid, and writes its exit code (`os.waitstatus_to_exitcode`)
to the status pipe once it has reaped it. The parent writes one JSON line (the request)
to the request pipe, then the tables it names as Arrow IPC streams (a diff's; a
registry's are read by the query process from its folder), and keeps it open; the query
process answers ``OK`` and a newline, then the result as an Arrow IPC stream, or ``ER``
and a newline, then one JSON line ``{"error": class name, "message": text}``.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchpress import errors
from benchpress.errors import BadInputError, BenchPressError

__all__ = ["run_in_child", "memory_bytes", "shutdown", "SLACK_BYTES", "MIN_ADDRESS_SPACE"]

#: address space the child may take beyond what it holds before the query plus the
#: memory limit: thread stacks and allocator arenas made while the query runs
SLACK_BYTES = 256 * 2**20
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_TAIL_BYTES = 4096  # of the child's stderr, kept to say why it ended without an answer
_LIMIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.I)
_PID = struct.Struct("q")
_EXIT = struct.Struct("i")
#: seconds to wait for the query server to start, and for a query process to end once
#: its answer is in (then it is killed)
_START_SECONDS = 60.0
_END_SECONDS = 5.0


def memory_bytes(limit: str) -> int:
    """Bytes in a DuckDB memory limit (``"1GB"`` is 10**9, ``"1GiB"`` 2**30).

    >>> memory_bytes("1GB"), memory_bytes("64 MiB")
    (1000000000, 67108864)
    """
    match = _LIMIT.fullmatch(limit)
    unit = match and _UNITS.get(match.group(2).lower())
    if not unit:
        raise BadInputError(f"memory limit {limit!r}: expected a size such as 1GB or 512MiB")
    return int(float(match.group(1)) * unit)


def run_in_child(registry: Path | None, sql: str, params: dict | list | None = None, *,
                 timeout: float | None, max_rows: int | None, memory_limit: str,
                 tables: dict | None = None, what: str = "the registry"):
    """Run one SELECT over a registry or snapshot folder, or over `tables` (polars frames
    by name, sent to the child as Arrow IPC streams: a diff's), in a query process of its
    own (see the module's docstring); returns a `sql.QueryResult`.

    Raises
    ------
    BadInputError
        The SQL is refused or fails, needs more memory than `memory_limit` (one line).
    QueryCancelled
        The time limit passed (the query process is killed there), or Ctrl-C.
    RegistryError
        No registry, or a table that does not match its recorded digest.
    """
    from benchpress.store.sql import QueryCancelled, result_of, timed_out

    _check_address_space()
    cap = memory_bytes(memory_limit)
    request = {"registry": None if registry is None else os.path.abspath(registry), "sql": sql,
               "params": params, "max_rows": max_rows, "memory_limit": memory_limit,
               "what": what, "tables": list(tables or {}),
               # the caller's limits (`benchpress.input_limits`), as set now: the server that
               # forks the query process read its environment when it started
               "environment": {k: v for k, v in os.environ.items() if k.startswith("BENCHPRESS_")}}
    deadline = None if timeout is None else time.monotonic() + timeout
    child = _SERVER.fork()
    answer, tail = bytearray(), bytearray()
    readers = [threading.Thread(target=_read, args=(child.answer, answer, cap), daemon=True),
               threading.Thread(target=_read, args=(child.stderr, tail, None), daemon=True)]
    try:
        for reader in readers:
            reader.start()
        child.request.write(json.dumps(request).encode() + b"\n")
        for table in (tables or {}).values():
            _send(child.request, table.to_arrow())
        child.request.flush()
        while readers[0].is_alive():
            if deadline is not None and time.monotonic() >= deadline:
                # (DuckDB can stall under a tight `ulimit -v` rather than fail: the
                # time limit would hide it)
                raise timed_out(timeout, _address_space_note(under=_TIGHT_ADDRESS_SPACE))
            readers[0].join(0.05)
        if len(answer) > cap:
            raise BadInputError(f"SQL error: the result is larger than the memory limit "
                                f"({memory_limit}); select fewer rows or columns")
    except KeyboardInterrupt:
        raise QueryCancelled("SQL query interrupted", interrupted=True) from None
    except BrokenPipeError:  # the child ended before reading the request
        pass
    finally:
        # alive while its answer is unread: the pid is still the query process's
        returncode = child.end(kill=readers[0].is_alive() or len(answer) > cap)
    for reader in readers:
        reader.join()
    return result_of(_decode(bytes(answer), returncode, memory_limit, bytes(tail)),
                     max_rows)


class _QueryProcess:
    """The parent's side of one query process: its pid and its pipes' ends."""

    def __init__(self, pid: int, request: int, answer: int, stderr: int, status: int):
        self.pid = pid
        self.request = os.fdopen(request, "wb")
        self.answer = os.fdopen(answer, "rb")
        self.stderr = os.fdopen(stderr, "rb")
        self._status = status

    def end(self, *, kill: bool) -> int:
        """Close the request pipe (its signal to end), kill it first if `kill` (or if it
        has not ended `_END_SECONDS` later), and return its exit code (negative: the
        signal that ended it)."""
        try:
            if kill:
                os.kill(self.pid, signal.SIGKILL)
            try:
                self.request.close()
            except BrokenPipeError:
                pass
            code = self._exit_code(_END_SECONDS)
            if code is None:  # an answer written, then stuck on the way out
                os.kill(self.pid, signal.SIGKILL)
                code = self._exit_code(_END_SECONDS)
            return -signal.SIGKILL if code is None else code
        finally:
            os.close(self._status)

    def _exit_code(self, seconds: float) -> int | None:
        """The exit code the server reports once it has reaped the process, or None
        if it has not within `seconds` (or the server is gone)."""
        if not select.select([self._status], [], [], seconds)[0]:
            return None
        data = os.read(self._status, _EXIT.size)
        return _EXIT.unpack(data)[0] if len(data) == _EXIT.size else None


class _Server:
    """The query server of this process (started on first use, see the module's
    docstring): `fork` asks it for one query process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._socket: socket.socket | None = None
        self._hooked = False

    def fork(self) -> _QueryProcess:
        pipes = [os.pipe() for _ in range(4)]  # request, answer, stderr, status: (read, write)
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]]
        try:
            with self._lock:
                pid = self._ask(theirs)
        except BaseException:
            for read, write in pipes:
                os.close(read)
                os.close(write)
            raise
        for fd in theirs:
            os.close(fd)
        return _QueryProcess(pid, pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0])

    def _ask(self, fds: list[int]) -> int:
        """Send the server `fds` and read back the pid it forked, starting the server
        where needed, and once more if it has ended since the last query."""
        for _ in range(2):
            if self._process is None or self._process.poll() is not None:
                self._start()
            try:
                socket.send_fds(self._socket, [b"F"], fds)
                pid = self._socket.recv(_PID.size, socket.MSG_WAITALL)
                if len(pid) == _PID.size:
                    return _PID.unpack(pid)[0]
            except OSError:
                pass
            self._stop()
        raise BenchPressError("SQL error: the query server did not start a query process")

    def _start(self) -> None:
        if not self._hooked:  # registered by the first start, not at import
            atexit.register(self.stop)
            os.register_at_fork(after_in_child=self.forget)
            self._hooked = True
        ours, theirs = socket.socketpair()
        ours.settimeout(_START_SECONDS)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            theirs.close()
        self._socket = ours

    def _stop(self) -> None:
        """Close the socket (the server's signal to end) and reap the server."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._process is not None:
            try:
                self._process.wait(timeout=_END_SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def forget(self) -> None:
        """In a process forked from this one: the server is the parent's, its socket
        only a copy; the child's first query starts a server of its own."""
        if self._socket is not None:
            self._socket.close()
        self._socket = self._process = None
        self._lock = threading.Lock()


_SERVER = _Server()


def shutdown() -> None:
    """End this process's query server and reap it (the next query starts another; at
    exit this happens by itself)."""
    _SERVER.stop()


def _send(stream, table) -> None:
    """Write `table` to `stream` as one Arrow IPC stream."""
    import pyarrow as pa

    with pa.ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table)


def _read(stream, into: bytearray, cap: int | None) -> None:
    """Read `stream` into `into` until its end, or until it holds more than `cap` bytes
    (None: to its end, keeping only the last `_TAIL_BYTES`)."""
    while chunk := stream.read1(1 << 16):
        into += chunk
        if cap is None:
            del into[:-_TAIL_BYTES]
        elif len(into) > cap:
            return


def _decode(answer: bytes, returncode: int, memory_limit: str, tail: bytes):
    """The child's answer as an Arrow table, or the error it reports raised."""
    import pyarrow as pa

    if answer.startswith(b"OK\n"):
        return pa.ipc.open_stream(pa.py_buffer(answer[3:])).read_all()
    if answer.startswith(b"ER\n"):
        report = json.loads(answer[3:])
        kind = getattr(errors, report["error"], None)
        if isinstance(kind, type) and issubclass(kind, BenchPressError):
            raise kind(report["message"])
        raise RuntimeError(report["message"])  # "internal": the child's own fault
    if returncode < 0:
        how = f"signal {signal.Signals(-returncode).name}"
    else:
        last = tail.decode(errors="replace").strip().splitlines()
        how = f"exit code {returncode}" + (f": {last[-1][:200]}" if last else "")
    raise BadInputError(f"SQL error: the query's process ended without an answer ({how}); "
                        f"a query past the memory limit ({memory_limit}) can end so"
                        + _address_space_note())


#: a hard address-space limit below this is named when a query runs out of time
_TIGHT_ADDRESS_SPACE = 4 * 2**30
#: below this hard address-space limit no query is started: under 1.5-2.5 GiB the query
#: server crashed as it imported DuckDB (its allocator could not start a thread), or a
#: query aborted, raised MemoryError or stalled until its time limit, one of them at
#: random each run; at 3 GiB every query answered (2 cores; DuckDB's threads, and so
#: what it reserves, grow with the machine's cores)
MIN_ADDRESS_SPACE = 3 * 2**30


def _hard_address_space() -> float:
    """The hard address-space limit set from outside (`ulimit -v`) in bytes; inf: none."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    return float("inf") if hard == resource.RLIM_INFINITY else hard


def _check_address_space() -> None:
    """Refuse at once, in one line, under a hard address-space limit (`ulimit -v`) too
    small for a query process (:data:`MIN_ADDRESS_SPACE`)."""
    hard = _hard_address_space()
    if hard < MIN_ADDRESS_SPACE:
        raise BadInputError(
            f"SQL error: this process may use only {hard / 2**30:.1f} GiB of address space "
            f"(`ulimit -v`), and a query needs at least {MIN_ADDRESS_SPACE / 2**30:.0f} GiB "
            "(DuckDB's threads and allocator): raise that limit")


def _address_space_note(under: float = float("inf")) -> str:
    """What a hard address-space limit set from outside (`ulimit -v`) adds to a failure
    message, where one below ``under`` bytes is set: the child cannot go above it, and
    DuckDB needs room beyond its memory limit."""
    hard = _hard_address_space()
    if hard >= under:
        return ""
    return (f", and this process may use only {hard / 2**30:.1f} GiB of address space "
            "(`ulimit -v`): raise that limit (DuckDB needs a few GiB) or lower the memory limit")


# -- the child --------------------------------------------------------------------------------
def _address_space() -> int | None:
    """Bytes of address space this process holds now (``VmSize``), None where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _limit_address_space(extra: int) -> None:
    """Let this process hold at most `extra` bytes of address space beyond what it holds
    now (where the platform says how much that is; DuckDB's own limit holds elsewhere),
    never above a hard limit set from outside (`ulimit -v`), which only root could raise:
    under one, the query has what that limit leaves."""
    import resource

    now = _address_space()
    if now is not None:
        cap = int(min(now + extra, _hard_address_space()))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _answer(request: dict, tables: dict):
    """The request's result as an Arrow table (run as `run_in_child` describes), over
    its registry folder or, without one, over `tables` (Arrow tables by name)."""
    from benchpress.store import sql

    for name in [k for k in os.environ if k.startswith("BENCHPRESS_")]:
        del os.environ[name]
    os.environ.update(request["environment"])  # (the input limits are read from it on use)
    if request["registry"] is not None:
        con = sql.connect(Path(request["registry"]), memory_limit=request["memory_limit"])
    else:
        con = sql.sealed_connection(tables, memory_limit=request["memory_limit"])
    sql.prepare_select(con, request["sql"], what=request["what"])
    _limit_address_space(memory_bytes(request["memory_limit"]) + SLACK_BYTES)
    try:
        return sql.fetch(con, request["sql"], request["params"], max_rows=request["max_rows"])
    except MemoryError:
        raise BadInputError("SQL error: the query needs more memory than its limit "
                            f"({request['memory_limit']})") from None
    except Exception as exc:  # noqa: BLE001 - DuckDB's errors, as the user sees them
        raise sql.query_error(exc) from None


def _exit_when_parent_leaves(request) -> None:
    """End this process when its request pipe closes: the parent is done with it, or gone."""
    request.read()
    os._exit(0)


def _query_process(request, out) -> None:
    """Answer the one query on `request` on `out` (binary files), then end the process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        import pyarrow as pa

        query = json.loads(request.readline())
        tables = {name: pa.ipc.open_stream(request).read_all() for name in query["tables"]}
        threading.Thread(target=_exit_when_parent_leaves, args=(request,), daemon=True).start()
        table = _answer(query, tables)
    except BaseException as exc:  # noqa: BLE001 - every failure is the parent's to report
        name = type(exc).__name__ if isinstance(exc, BenchPressError) else "internal"
        message = str(exc) if isinstance(exc, BenchPressError) else f"{type(exc).__name__}: {exc}"
        out.write(b"ER\n" + json.dumps({"error": name, "message": message}).encode() + b"\n")
    else:
        out.write(b"OK\n")
        _send(out, table)
    out.flush()
    os._exit(0)  # no teardown of DuckDB's threads: the answer is written


def _serve(control: socket.socket) -> None:
    """The query server: fork one query process per request on `control`, reap them and
    report each one's exit code on its status pipe; end when `control` closes."""
    # what every query process needs, imported once here (a query imported these lazily:
    # 0.1 s of each query's 0.25 s; numpy.ma, which pyarrow looks up on its first array
    # from numpy, 0.03 s more)
    import numpy.ma  # noqa: F401
    import pyarrow.compute  # noqa: F401
    import pyarrow.dataset  # noqa: F401
    import pyarrow.ipc  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    from benchpress.store import sql  # noqa: F401 - (DuckDB, and the package's SQL code)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below
    status_of: dict[int, int] = {}  # a running query process's pid: its status pipe
    while True:
        ready = select.select([control, wake_read], [], [])[0]
        if wake_read in ready:
            os.read(wake_read, 4096)
        while status_of and (ended := os.waitpid(-1, os.WNOHANG))[0]:
            status = status_of.pop(ended[0])
            os.write(status, _EXIT.pack(os.waitstatus_to_exitcode(ended[1])))
            os.close(status)
        if control not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, 1, 4)
        if not message or len(fds) != 4:  # the parent is done, or gone
            os._exit(0)
        request, answer, stderr, status = fds
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (control.fileno(), wake_read, wake_write, status, *status_of.values()):
                os.close(fd)
            for std in (1, 2):
                os.dup2(stderr, std)
            os.close(stderr)
            _query_process(os.fdopen(request, "rb"), os.fdopen(answer, "wb"))
        for fd in (request, answer, stderr):
            os.close(fd)
        status_of[pid] = status
        control.sendall(_PID.pack(pid))


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])))
