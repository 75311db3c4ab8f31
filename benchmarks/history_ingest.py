"""Time the ingest of each history's newest version (BFCL, tau2-bench, SWE-bench, LMArena).

Usage::

    .venv/bin/python benchmarks/history_ingest.py [--repeat 3] [--all-versions]

For each source, on its newest shared version (../shared/data beside the repo), best of
``--repeat`` runs of: the standard library's parse of the same files
(`tests/history_data.published`, the baseline), the adapter's `read`, `prepare_source`
(normalization and the pandera contracts) and a whole `benchpress ingest` into a fresh
workspace (read, prepare, build, Parquet written atomically). Prints seconds, values per
second and the ratio of the adapter's read to the baseline parse. ``--all-versions`` also
builds every shared version of each source from its config (sources/<id>.yaml).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchpress.adapters import get_adapter  # noqa: E402
from benchpress.store.build import build  # noqa: E402
from benchpress.store.ingest import ingest  # noqa: E402
from benchpress.validate.contracts import load_contracts  # noqa: E402
from benchpress.validate.prepare import SourceInfo, prepare_source  # noqa: E402
from tests import history_data as hd  # noqa: E402
from tests.conftest import SHARED_DATA, make_home  # noqa: E402

SOURCES = {"bfcl": "bfcl", "tau2-bench": "tau2-bench", "swe-bench": "swe-bench",
           "lmarena": "lmarena"}


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--all-versions", action="store_true")
    args = ap.parse_args(argv)
    contracts = load_contracts(REPO / "schemas")
    print(f"{'source':<11} {'version':<10} {'values':>6} {'stdlib':>7} {'read':>7} {'ratio':>6} "
          f"{'prepare':>8} {'ingest':>7} {'values/s':>9}")
    for source, adapter in SOURCES.items():
        version = hd.versions(source)[-1]["date"]
        folder = hd.folder(source) / version
        t_base, published = best(lambda: hd.published(source, version), args.repeat)
        t_read, out = best(lambda: get_adapter(adapter).read(folder), args.repeat)
        info = SourceInfo(source, "https://github.com/x/y/tree/z", version, "bench")
        t_prep, _ = best(lambda: prepare_source(out, contracts, info), args.repeat)

        def whole():
            root = Path(tempfile.mkdtemp(prefix="bp-bench-"))
            try:
                ingest(make_home(root / "ws"), str(folder))
            finally:
                shutil.rmtree(root, ignore_errors=True)

        t_ingest, _ = best(whole, args.repeat)
        n = sum(published.values())
        print(f"{source:<11} {version:<10} {n:>6} {t_base:>7.3f} {t_read:>7.3f} "
              f"{t_read / t_base:>6.1f} {t_prep:>8.3f} {t_ingest:>7.3f} {n / t_ingest:>9.0f}")
    if args.all_versions:
        print(f"\n{'source':<11} {'versions':>8} {'build s':>8}")
        for source in SOURCES:
            root = Path(tempfile.mkdtemp(prefix="bp-bench-"))
            try:
                home = make_home(root / "ws")
                shutil.copyfile(REPO / "sources" / f"{source}.yaml", home.sources / f"{source}.yaml")
                start = time.perf_counter()
                report = build(home, mirror=SHARED_DATA)
                print(f"{source:<11} {len(report.sources):>8} {time.perf_counter() - start:>8.2f}")
            finally:
                shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
