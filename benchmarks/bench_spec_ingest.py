"""Ingest time of the newest version of each leaderboard read through a spec file, beside
the time to parse the same file(s) with nothing else (the floor), side by side.

Usage::

    .venv/bin/python benchmarks/bench_spec_ingest.py [--mirror ../shared/data] [--repeat 3]

For the newest version of Vectara's README, the 13 Lech Mazur READMEs, EvalPlus's
results.json and the Open LLM Leaderboard's CSV (about 4,600 rows x 7 values), times three
steps and prints the median of ``--repeat`` runs of each: ``parse`` (the file read by polars
or json alone: no spec), ``read`` (the spec adapter: tables picked, names cleaned, values
parsed and unpivoted) and ``prepare`` (ids normalized, units converted, pandera validation,
quarantine: what the build does with each version), then ``ingest`` (`benchpress ingest`
of that one file into an empty workspace: fetch into the cache, detect, read, prepare,
build, write the registry). The ratios say what the spec's generality costs over the bare
parse, and what share of an ingest the spec adapter is.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import tempfile
import timeit
from pathlib import Path

import polars as pl


def timed(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``fn``, each from cold name caches (the first
    ingest of a process: `parse_model` and `canonical_model_id` memoize names)."""
    from benchpress.validate.model_identity import parse_model
    from benchpress.validate.normalize import canonical_model_id

    def cold():
        parse_model.cache_clear()
        canonical_model_id.cache_clear()
        fn()

    return statistics.median(timeit.repeat(cold, number=1, repeat=repeat))


def newest(mirror: Path) -> dict[str, list[Path]]:
    """{source: the newest version's files} of the four histories."""
    def last(folder, repo=None):
        with open(folder / "VERSIONS.csv", newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.DictReader(fh) if repo is None or r["repo_name"] == repo]
        return rows[-1]["date"]

    vectara = mirror / "vectara-hallucination-history"
    lech = mirror / "lechmazur-history"
    evalplus = mirror / "evalplus-history"
    open_llm = mirror / "open-llm-leaderboard-history"
    return {
        "vectara-hallucination": [vectara / last(vectara) / "README.md"],
        "lechmazur (13 boards)": [lech / r / last(lech, r) / "README.md"
                                  for r in sorted(p.name for p in lech.iterdir() if p.is_dir())],
        "evalplus": [evalplus / last(evalplus) / "results.json"],
        "open-llm-leaderboard": [open_llm / last(open_llm) / "huggingface_v2.csv"],
    }


def bare_parse(file: Path):
    if file.suffix == ".csv":
        return pl.read_csv(file, infer_schema=False)
    if file.suffix == ".json":
        return json.loads(file.read_text(encoding="utf-8"))
    return file.read_text(encoding="utf-8").splitlines()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="../shared/data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from benchpress.adapters import detect_adapter
    from benchpress.home import Home
    from benchpress.store.ingest import ingest
    from benchpress.validate.contracts import load_contracts
    from benchpress.validate.prepare import SourceInfo, prepare_source

    contracts = load_contracts(Path(__file__).resolve().parents[1] / "schemas")
    schemas = Path(__file__).resolve().parents[1] / "schemas"
    print(f"{'source (newest version)':<24} {'values':>7} {'parse':>7} {'read':>7} "
          f"{'prepare':>8} {'ingest':>7} {'read/parse':>10} {'read/ingest':>11}")
    for source, files in newest(Path(args.mirror)).items():
        adapters = [detect_adapter(f) for f in files]
        outputs = [a.read(f) for a, f in zip(adapters, files)]
        info = SourceInfo(source, "https://example.org/x", "2026-01-01", "x", cites_source=True)
        parse = timed(lambda: [bare_parse(f) for f in files], args.repeat)
        read = timed(lambda: [a.read(f) for a, f in zip(adapters, files)], args.repeat)
        prep = timed(lambda: [prepare_source(o, contracts, info) for o in outputs], args.repeat)

        def one_ingest():
            with tempfile.TemporaryDirectory() as tmp:
                home = Home(Path(tmp) / "ws")
                home.sources.mkdir(parents=True)
                (home.root / "schemas").symlink_to(schemas)
                for f in files:
                    ingest(home, str(f))

        full = timed(one_ingest, args.repeat)
        values = sum(o.scores.height for o in outputs)
        print(f"{source:<24} {values:>7,} {parse:>6.3f}s {read:>6.3f}s {prep:>7.3f}s "
              f"{full:>6.2f}s {read / parse:>9.1f}x {read / full:>10.0%}")


if __name__ == "__main__":
    main()
