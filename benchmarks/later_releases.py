"""Later releases: the snapshot-to-snapshot form of the temporal yardstick on real histories.

For each source history (Artificial Analysis, LiveBench), a workspace is built the way a user
builds one (`benchpress init`, `ingest` of the paper's matrix, then each dated version of the
leaderboard with `ingest --source` and `snapshot create --tag`). Each pair of versions a
month apart is then scored as `benchpress evaluate --temporal --snapshot A --later B` does:
fit on snapshot A, fold in every model first seen in B from the first k scores the
leaderboard reported (and from k random ones), score the rest. Percent cells only; the
figures are pooled over the pairs and given per pair, and the default's MedAE over each
baseline's per reveal order and k has a 90% interval from a paired bootstrap over the later
models (``vs_baselines``; :meth:`~benchpress.predict.evaluation.temporal.TemporalResult.ratio`),
and so has the coverage of the default's 90% intervals (``coverage_default``;
:meth:`~benchpress.predict.evaluation.temporal.TemporalResult.coverage`).

Run from the repository root (about 2 minutes on 2 cores)::

    python benchmarks/later_releases.py                       # the pairs in params.yaml
    python benchmarks/later_releases.py --out metrics/later_releases.json

The pairs against the whole default registry instead of the paper's matrix (the 30 sources
built again, 7,000 models fitted per pair: a study of its own, not a pipeline stage)::

    python benchmarks/later_releases.py --only artificial-analysis --base registry

It is the pipeline's `later_releases` stage. Each pair is also one command, e.g.::

    benchpress evaluate --temporal --snapshot 2026-04-24 --later 2026-05-22 --known 3,5 --baselines als4,knn
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import polars as pl
import yaml

from benchpress.api import BenchPress
from benchpress.home import Home
from benchpress.precision import rounded
from benchpress.predict.evaluation.temporal import TemporalResult
from benchpress.store.matrix import load_matrix
from benchpress.store.snapshot import resolve_snapshot
from benchpress.store.tables import read_table

ROOT = Path(__file__).resolve().parent.parent
PAPER = "benchpress-2026-05/data.json"
#: What a leaderboard shows first, random, and single benchmarks a user runs
ORDERS = ("reported", "random", "single")


def _cli(ws: Path, *args: str) -> None:
    """One `benchpress` command run in workspace ``ws``, in this process (the imports are
    paid once, not per command: 16 s -> 11 s for one pair); stops the study with its
    message."""
    from benchpress.cli import main as cli

    said, code = io.StringIO(), 0
    with contextlib.chdir(ws), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(said):
        try:
            cli.main(list(args), prog_name="benchpress")
        except SystemExit as done:
            code = done.code
    if code not in (0, None, 3):  # 3: landed, with rows quarantined
        last = (said.getvalue().strip().splitlines() or ["(no message)"])[-1]
        sys.exit(f"later_releases: `benchpress {' '.join(args)}` failed: {last}")


def history_versions(sources: Path, source: str, pairs: list[str]) -> dict[str, str]:
    """label -> mirror-relative path of the versions named in ``pairs`` ("A>B"), in date
    order, as the source config ``sources/<source>.yaml`` lists them (its `versions:`)."""
    from benchpress.store.sources import config_versions, load_configs

    config = next((c for c in load_configs(sources) if c.id == source), None)
    if config is None:
        sys.exit(f"later_releases: no source config {source!r} in {sources}")
    paths = {v.version: v.mirror_path for v in config_versions(config)}
    named = sorted({label for pair in pairs for label in pair.split(">")})
    missing = [label for label in named if label not in paths]
    if missing:
        sys.exit(f"later_releases: {source} has no version {missing[0]!r} "
                 f"(sources/{source}.yaml lists {', '.join(sorted(paths))})")
    return {label: paths[label] for label in named}


def build_history(ws: Path, mirror: Path, source: str, versions: dict, *,
                  base: str = "paper") -> None:
    """A workspace holding the paper's matrix (``base="paper"``) or every other source of
    the default registry (``base="registry"``: the repository's `sources/` configs but
    ``source``'s, pulled from the mirror and built, as `make main` builds them), then every
    version of ``source``, one snapshot tagged by each version's label (``versions``: label
    -> mirror-relative path)."""
    _cli(ws.parent, "init", ws.name)
    if base == "registry":
        for config in sorted((ROOT / "sources").glob("*")):
            if config.is_file() and config.stem != source:
                shutil.copy(config, ws / "sources" / config.name)
        _cli(ws, "pull", "--mirror", str(mirror))
        _cli(ws, "build")
    elif base == "paper":
        _cli(ws, "ingest", str(mirror / PAPER), "--id", "benchpress-2026-05")
    else:
        sys.exit(f"later_releases: base {base!r} is neither 'paper' nor 'registry'")
    for n, (label, path) in enumerate(versions.items()):
        label = str(label)  # YAML reads 2026-04-10 as a date
        _cli(ws, "ingest", str(mirror / path), "--id" if n == 0 else "--source", source,
             "--version", label)
        _cli(ws, "snapshot", "create", "--tag", label)


def score_pair(ws: Path, early: str, later: str, *, known, baselines, seed,
               orders=ORDERS) -> TemporalResult:
    """`evaluate --temporal --snapshot early --later later` in-process, with its cells."""
    bp = BenchPress.from_snapshot(ws, early)
    folder = resolve_snapshot(Home(ws), later)
    lm = (load_matrix(folder, label=later), read_table(folder, "scores"))
    return bp.evaluate_later(lm, methods=baselines, known=known, seed=seed, orders=orders)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default=str(ROOT / "params.yaml"))
    ap.add_argument("--mirror", default=None, help="the data mirror (default: params' data.mirror)")
    ap.add_argument("--out", default=None, help="write the metrics JSON here")
    ap.add_argument("--only", default=None, metavar="NAMES",
                    help="only these histories of params' later_releases (comma-separated)")
    ap.add_argument("--base", choices=("paper", "registry"), default=None,
                    help="what every history is ingested beside (default: each history's "
                         "`base` in params, else the paper's matrix)")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="build the workspaces in DIR and keep them (default: a temporary folder)")
    args = ap.parse_args(argv)
    params = yaml.safe_load(Path(args.params).read_text())
    cfg = params["later_releases"]
    mirror = (ROOT / (args.mirror or params["data"]["mirror"])).resolve()
    known = tuple(int(k) for k in str(cfg["known"]).split(","))
    baselines = tuple(b for b in str(cfg["baselines"]).split(",") if b)
    histories = cfg["histories"]
    if args.only:
        names = [n for n in args.only.split(",") if n]
        unknown = [n for n in names if n not in histories]
        if unknown:
            sys.exit(f"later_releases: no history {unknown[0]!r} in params' later_releases "
                     f"(it has {', '.join(histories)})")
        histories = {n: histories[n] for n in names}
    if args.base:
        histories = {n: {**spec, "base": args.base} for n, spec in histories.items()}
    frames, per_pair = [], []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.keep or scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for name, spec in histories.items():
            ws = Path(tmp) / name
            if not (ws / "snapshots").is_dir():  # (--keep: built by an earlier run)
                source = spec.get("source", name)
                versions = history_versions(ROOT / "sources", source, spec["pairs"])
                build_history(ws, mirror, source, versions, base=spec.get("base", "paper"))
            for early, later in (p.split(">") for p in spec["pairs"]):
                res = score_pair(ws, early, later, known=known, baselines=baselines,
                                 seed=params["evaluate"]["seed"])
                cells = res.cells.with_columns(pl.lit(f"{name} {early}>{later}").alias("cutoff"))
                frames.append(cells)
                for r in TemporalResult(cells, []).summary().iter_rows(named=True):
                    per_pair.append({"pair": f"{name} {early}>{later}",
                                     "n_new_models": res.n_test[later], **r})
                print(f"{name} {early} > {later}: {res.n_test[later]} new models", file=sys.stderr)
    pooled = TemporalResult(pl.concat(frames), [])
    doc = {k: v for k, v in pooled.to_json().items() if k not in ("cutoffs", "n_train", "n_test")}
    doc["per_pair"] = per_pair
    # how sure: the default's MedAE over each baseline's, with a 90% interval from a paired
    # bootstrap over the later models (which models happened to be released)
    seed = params["evaluate"]["seed"]
    vs = pooled.ratio("default", baselines, ("order", "k", "metadata"), seed=seed)
    best = pooled.versus_best("default", seed=seed)
    doc["vs_baselines"] = vs.to_dicts()
    doc["vs_best"] = best.to_dicts()
    # the orders pooled, against the plain nearest-models average
    doc["vs_baselines_pooled"] = pooled.ratio("default", baselines, ("k", "metadata"),
                                              seed=seed).to_dicts()
    # the default's 90% intervals: how often they held, with the same kind of interval
    coverage = pooled.coverage("default", ("k", "metadata"), seed=seed)
    doc["coverage_default"] = coverage.to_dicts()
    text = json.dumps(rounded(doc), indent=2, sort_keys=False)  # the same bytes on every CPU
    if args.out:  # whole or not at all
        tmp = Path(args.out).with_name(f".{Path(args.out).name}.tmp")
        tmp.write_text(text + "\n")
        tmp.replace(args.out)
    rows = pooled.summary(("method", "metadata", "k")).select(
        "method", "metadata", "k", "n_cells", "medae", "bias", "coverage90")
    with pl.Config(tbl_rows=200, tbl_hide_dataframe_shape=True, float_precision=2):
        print(rows)
        if best.height:  # (no baselines in params: nothing to compare with)
            print("per order: the default's MedAE / the best other method's, 90% interval "
                  "over the later models:")
            print(best)
        print("the default's 90% intervals: how often they held (per cent), 90% interval "
              "over the later models:")
        print(coverage)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("later_releases: interrupted; nothing was written (the workspaces were "
              "temporary)", file=sys.stderr)
        sys.exit(130)
