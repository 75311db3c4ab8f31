"""Scale kinds in the predictor: which ones help the percent cells, and how to model each.

The registry holds percentages (the headline) beside ratings, ranks, rates where lower is
better, indices, costs, word counts and task scores. This study measures, for each group
of scale kinds, whether fitting it beside the headline percentages helps or hurts the
headline cells' error, and whether its direction and log form help, on two yardsticks:

* folds: the headline cells of our own per-model 3-fold partitions (seeds 1001 on, never the
  published folds) hidden, every other scale's cells visible; MedAE of the hidden
  headline cells (points);
* temporal: the temporal yardstick (`benchpress evaluate --temporal`: fit on the models
  released before each of the last 12 monthly cutoffs, fold in the next month's models
  from 1, 3 and 5 of their scores, in random and popular order); MedAE of their headline
  cells, per k, the early 6 cutoffs (for choosing) and the late 6 (reported) apart.

Each variant fits `--method` (default: the default predictor) on the headline columns plus
one group (its other columns emptied), or on everything; `flip`/`noflip` and `log`/`linear`
fit the group with and without its direction and log form. Point predictions only (no
intervals). Run from the repository root on a built registry::

    python benchmarks/scale_kinds_study.py                       # every source, both yardsticks
    python benchmarks/scale_kinds_study.py --sources benchpress,releases --yardstick folds

Writes a JSON document (``--out``) and prints one table; docs/results/scales.md and
docs/results/tries.md hold the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import polars as pl

from benchpress.api import BenchPress
from benchpress.predict import evaluate, make_folds, make_predictor
from benchpress.predict.evaluation.temporal import temporal_evaluation
from benchpress.store.matrix import as_published

#: The groups of scale kinds tried beside the headline (kind names; "lower" = the
#: percentages where lower is better; "undirected" = the benchmarks without a direction).
GROUPS = {
    "percent_lower": ("percent_lower",),
    "normalized": ("normalized",),
    "index": ("index",),
    "relative": ("elo", "rating", "trueskill", "bradley_terry", "glicko", "rank"),
    "score": ("score",),
    "money_time": ("dollars", "seconds", "count"),
    "undirected": ("undirected",),
}


def group_of(scales) -> np.ndarray:
    """Each benchmark's group name (headline, or a key of GROUPS, or "other")."""
    out = np.full(scales.n_benchmarks, "other", dtype=object)
    for name, kinds in GROUPS.items():
        out[np.isin(scales.kind, kinds)] = name
    out[(scales.kind == "percent") & (scales.direction < 0)] = "percent_lower"
    out[(scales.direction == 0)] = "undirected"
    out[scales.headline()] = "headline"
    return out.astype(str)


def variants(scales, groups) -> dict:
    """name -> (column mask, scales to fit with)."""
    head = groups == "headline"
    as_given = replace(scales, direction=np.where(scales.direction == 0, 1.0, scales.direction))
    unturned = replace(scales, direction=np.ones(scales.n_benchmarks))
    linear_kind = np.where(scales.log_mask(), "score", scales.kind)
    linear = replace(as_given, kind=linear_kind)
    out = {"headline only": (head, as_given)}
    for name in GROUPS:
        cols = head | (groups == name)
        if cols.sum() == head.sum():
            continue
        out[f"+ {name}"] = (cols, as_given)
        if name in ("percent_lower", "relative", "score", "money_time") and \
                (scales.direction[groups == name] < 0).any():
            out[f"+ {name} (not turned)"] = (cols, unturned)
        if name == "money_time":
            out[f"+ {name} (linear)"] = (cols, linear)
    directed = groups != "undirected"
    out["all directed"] = (directed, as_given)
    out["all directed (not turned)"] = (directed, unturned)
    return out


def masked(Y, cols):
    Z = np.array(Y, dtype=float, copy=True)
    Z[:, ~cols] = np.nan
    return Z


def run_folds(bp, method, cols, scales, head, seeds):
    """Hidden headline cells' MedAE per seed's partition, and their mean over seeds."""
    Y = bp.matrix.values
    out = {}
    for seed in seeds:
        folds = make_folds(~np.isnan(Y) & head[None, :], n_folds=3, seed=seed)
        res = evaluate(make_predictor(method), masked(Y, cols), scales, folds,
                       covariates=bp.covariates)
        out[f"folds_{seed}"] = res.overall.medae
    out["folds_medae"] = float(np.mean(list(out.values())))
    out["folds_n"] = res.overall.n_cells
    return out


def run_temporal(bp, method, cols, scales, head, values_at, seed):
    m = bp.matrix
    res = temporal_evaluation(
        {method: make_predictor(method)}, masked(m.values, cols), scales,
        m.models["release_date"].to_list(), benchmark_ids=m.benchmark_ids,
        model_ids=m.model_ids, known=(1, 3, 5), orders=("random", "popular"), seed=seed,
        intervals=False, covariates=bp.covariates,
        values_at=None if values_at is None else (lambda c: masked(values_at(c), cols)))
    heads = set(np.asarray(m.benchmark_ids)[head])
    cells = res.cells.filter(pl.col("benchmark_id").is_in(list(heads)))
    early = set(res.cutoffs[: len(res.cutoffs) // 2])
    out = {}
    for part, keep in (("early", True), ("late", False)):
        sub = cells.filter(pl.col("cutoff").is_in(list(early)) == keep)
        for k, g in sub.group_by("k"):
            out[f"temporal_{part}_k{k[0]}"] = float(g["abs_error"].median())
        out[f"temporal_{part}_n"] = sub.height
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", default=".")
    ap.add_argument("--sources", default="", help="'' = every source")
    ap.add_argument("--method", default="default")
    ap.add_argument("--yardstick", choices=("folds", "temporal", "both"), default="both")
    ap.add_argument("--seed", type=int, default=1001)
    ap.add_argument("--fold-seeds", type=int, default=1,
                    help="partitions for the folds yardstick: seeds --seed on")
    ap.add_argument("--only", default="", help="comma-separated variant names to run")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    sources = [s for s in args.sources.split(",") if s] or None
    bp = BenchPress.from_snapshot(args.home, sources=sources)
    scales = bp.matrix.scales
    groups = group_of(scales)
    head = groups == "headline"
    counts = {g: int((~np.isnan(bp.matrix.values[:, groups == g])).sum())
              for g in sorted(set(groups))}
    print("cells per group:", counts, flush=True)
    values_at = (as_published(bp.folder, bp.matrix, sources=sources)
                 if args.yardstick != "folds" else None)
    rows = []
    wanted = {v.strip() for v in args.only.split(",") if v.strip()}
    for name, (cols, sc) in variants(scales, groups).items():
        if wanted and name not in wanted:
            continue
        t0 = time.process_time()
        row = {"variant": name, "columns": int(cols.sum())}
        if args.yardstick in ("folds", "both"):
            row.update(run_folds(bp, args.method, cols, sc, head,
                                 range(args.seed, args.seed + args.fold_seeds)))
        if args.yardstick in ("temporal", "both"):
            row.update(run_temporal(bp, args.method, cols, sc, head, values_at, args.seed))
        row["cpu_seconds"] = round(time.process_time() - t0, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    table = pl.DataFrame(rows)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, float_precision=3):
        print(table)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"sources": args.sources, "method": args.method, "seed": args.seed,
                       "cells_per_group": counts, "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
