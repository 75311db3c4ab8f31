"""A registry query in a query process forked from the query server (what `benchpress sql`
and the app's /api/sql do), against the same query in this process (what they did before
the limits) and in a new interpreter (what they did before the server), side by side.

Usage::

    .venv/bin/python benchmarks/bench_sql_child.py [HOME] [--repeat 5]

On the registry of HOME (default: this project, after ``make main``), times each query
of `QUERIES` three ways: ``store.sql.execute`` (a query process forked from the server:
the sealed connection, the tables the query reads decoded, the query under an
address-space limit, the result back as Arrow IPC); the same steps in this process
(``connect``, ``prepare_select``, ``fetch``, ``result_of``: what ``execute`` did before
the limits, less the thread that waited for it); and ``execute`` with the server ended
before each call (`sql_child.shutdown`), so that each query pays an interpreter's start
and imports, as each did before the server (the server's start is that, plus a fork).
Prints the median of ``--repeat`` calls of each and the ratios: the price of the limits
is a fixed cost per query (the process), not a cost per row.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

QUERIES = {
    "one value": "SELECT 42 AS n",
    "count scores": "SELECT count(*) AS n FROM scores",
    "cells by benchmark": "SELECT benchmark_id, count(*) AS n, avg(score) AS mean "
                          "FROM cells GROUP BY benchmark_id ORDER BY n DESC, benchmark_id",
    "5,000 score rows": "SELECT * FROM scores ORDER BY model_id, benchmark_id LIMIT 5000",
}


def timed(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def in_process(registry: Path, sql: str):
    """The query in this process, as `execute` ran it before the child process."""
    from benchpress.store.sql import connect, fetch, prepare_select, result_of

    con = connect(registry)
    try:
        prepare_select(con, sql)
        return result_of(fetch(con, sql, max_rows=10_000), 10_000)
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("home", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from benchpress.home import find_home
    from benchpress.store.sql import execute
    from benchpress.store.sql_child import shutdown

    registry = find_home(args.home).registry
    print(f"registry: {registry}")
    print(f"{'query':<20} {'in process':>10} {'forked':>7} {'new interp.':>11} "
          f"{'forked/in':>9} {'new/forked':>10}")
    for name, sql in QUERIES.items():
        assert in_process(registry, sql).frame.equals(execute(registry, sql, max_rows=10_000).frame)
        here = timed(lambda: in_process(registry, sql), args.repeat)
        forked = timed(lambda: execute(registry, sql, max_rows=10_000), args.repeat)
        cold = timed(lambda: (shutdown(), execute(registry, sql, max_rows=10_000)), args.repeat)
        print(f"{name:<20} {here:>9.3f}s {forked:>6.3f}s {cold:>10.3f}s "
              f"{forked / here:>8.1f}x {cold / forked:>9.1f}x")


if __name__ == "__main__":
    main()
