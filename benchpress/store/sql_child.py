"""One registry query in a child process: the memory limit held for everything the query
allocates, one deadline for all of it, and Ctrl-C that ends it at once.

DuckDB's `memory_limit` holds only what its buffer manager allocates: strings, for one,
are built outside it (``repeat('x', 2000000000 + 0)`` reached 4 GB against a 1 GB limit),
and a string function does not look at `interrupt()`, so a query could run on for
seconds past its time limit and past Ctrl-C. So `run_in_child` runs the query in a child
process (``python -m benchpress.store.sql_child``) that opens the sealed connection,
checks the query and decodes the tables it reads (`sql.prepare_select`), then limits its
own address space (`RLIMIT_AS`) to what it holds by then plus the memory limit plus
`SLACK_BYTES`, and only then runs it, stopping one row past the row cap. The parent
waits for the answer until the deadline and kills the child there, or on Ctrl-C.

Protocol: the parent writes one JSON line (the request) to the child's stdin, then the
tables it names as Arrow IPC streams (a diff's; a registry's are read by the child from
its folder), and keeps stdin open (the child exits when it closes, so a child never
outlives its parent); the child answers on stdout ``OK`` and a newline, then the result
as an Arrow IPC stream, or ``ER`` and a newline, then one JSON line ``{"error": class
name, "message": text}``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchpress import errors
from benchpress.errors import BadInputError, BenchPressError

__all__ = ["run_in_child", "memory_bytes", "SLACK_BYTES"]

#: address space the child may take beyond what it holds before the query plus the
#: memory limit: thread stacks and allocator arenas made while the query runs
SLACK_BYTES = 256 * 2**20
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_TAIL_BYTES = 4096  # of the child's stderr, kept to say why it ended without an answer
_LIMIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.I)


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
    by name, sent to the child as Arrow IPC streams: a diff's), in a child process (see
    the module's docstring); returns a `sql.QueryResult`.

    Raises
    ------
    BadInputError
        The SQL is refused or fails, needs more memory than `memory_limit` (one line).
    QueryCancelled
        The time limit passed (the child is killed there), or Ctrl-C.
    RegistryError
        No registry, or a table that does not match its recorded digest.
    """
    from benchpress.store.sql import QueryCancelled, result_of, timed_out

    cap = memory_bytes(memory_limit)
    request = {"registry": None if registry is None else str(registry), "sql": sql,
               "params": params, "max_rows": max_rows, "memory_limit": memory_limit,
               "what": what, "tables": list(tables or {})}
    deadline = None if timeout is None else time.monotonic() + timeout
    child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answer, tail = bytearray(), bytearray()
    readers = [threading.Thread(target=_read, args=(child.stdout, answer, cap), daemon=True),
               threading.Thread(target=_read, args=(child.stderr, tail, None), daemon=True)]
    try:
        for reader in readers:
            reader.start()
        child.stdin.write(json.dumps(request).encode() + b"\n")
        for table in (tables or {}).values():
            _send(child.stdin, table.to_arrow())
        child.stdin.flush()
        while readers[0].is_alive():
            if deadline is not None and time.monotonic() >= deadline:
                raise timed_out(timeout)
            readers[0].join(0.05)
        if len(answer) > cap:
            raise BadInputError(f"SQL error: the result is larger than the memory limit "
                                f"({memory_limit}); select fewer rows or columns")
    except KeyboardInterrupt:
        raise QueryCancelled("SQL query interrupted", interrupted=True) from None
    except BrokenPipeError:  # the child ended before reading the request
        pass
    finally:
        if readers[0].is_alive() or len(answer) > cap:
            child.kill()
        _close(child)
    for reader in readers:
        reader.join()
    return result_of(_decode(bytes(answer), child.returncode, memory_limit, bytes(tail)),
                     max_rows)


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


def _close(child: subprocess.Popen) -> None:
    """Close the child's stdin (its signal to end) and wait for it."""
    try:
        child.stdin.close()
    except BrokenPipeError:
        pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:  # an answer written, then stuck on the way out
        child.kill()
        child.wait()


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
                        f"a query past the memory limit ({memory_limit}) can end so")


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
    now (where the platform says how much that is; DuckDB's own limit holds elsewhere)."""
    import resource

    now = _address_space()
    if now is not None:
        resource.setrlimit(resource.RLIMIT_AS, (now + extra, now + extra))


def _answer(request: dict, tables: dict):
    """The request's result as an Arrow table (run as `run_in_child` describes), over
    its registry folder or, without one, over `tables` (Arrow tables by name)."""
    from benchpress.store import sql

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


def _exit_when_parent_leaves() -> None:
    """End this process when its stdin closes: the parent is done with it, or gone."""
    sys.stdin.buffer.read()
    os._exit(0)


def _child() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    request = json.loads(sys.stdin.buffer.readline())
    out = sys.stdout.buffer
    try:
        import pyarrow as pa

        tables = {name: pa.ipc.open_stream(sys.stdin.buffer).read_all()
                  for name in request["tables"]}
        threading.Thread(target=_exit_when_parent_leaves, daemon=True).start()
        table = _answer(request, tables)
    except BaseException as exc:  # noqa: BLE001 - every failure is the parent's to report
        name = type(exc).__name__ if isinstance(exc, BenchPressError) else "internal"
        message = str(exc) if isinstance(exc, BenchPressError) else f"{type(exc).__name__}: {exc}"
        out.write(b"ER\n" + json.dumps({"error": name, "message": message}).encode() + b"\n")
    else:
        out.write(b"OK\n")
        _send(out, table)
    out.flush()
    os._exit(0)  # no teardown of DuckDB's threads: the answer is written


if __name__ == "__main__":
    _child()
