"""The temporal yardstick's worst forecasts, model by model: where to look before a search.

`benchpress evaluate --temporal` reports medians; a change that fixes a few models that go
badly wrong barely moves them. This script lists, for the default (or a variant given
with ``--param``), the later models whose hidden percent cells were predicted worst (the
median error per cutoff, model, reveal order and k), each with the scores it was folded
in from: the benchmark, the score, how many training models had scored that benchmark at
the cutoff, and the score's standardized value in the predictor's z space there. A
revealed score several standard deviations out, or on a benchmark a few models scored,
is where a fold-in goes wrong: both changes of 2026-12-05 (each benchmark's spread with a
prior, and a bound on how far one score reaches) were found in this list.

The z values use the scores as the registry holds them now (the yardstick itself trains
on the versions published before each cutoff, so a revised source can differ slightly).

Run from the repository root after `make main` (about 10 s)::

    python benchmarks/worst_models.py --top 8
    python benchmarks/worst_models.py --param spread_prior=0 --param z_bound=0
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

from benchpress.api import BenchPress
from benchpress.cli.fit_options import parse_params
from benchpress.cli.predict_cmds import known_counts
from benchpress.errors import run_script
from benchpress.predict import make_predictor


def worst_groups(cells: pl.DataFrame, top: int) -> pl.DataFrame:
    """The ``top`` (cutoff, model, order, k) groups by the median error of their percent
    cells, with every hidden benchmark of the group (of any scale) in ``hidden``."""
    pct = pl.col("scale") == "percent"
    return (cells.group_by("cutoff", "model_id", "order", "k")
            .agg(pl.col("abs_error").filter(pct).median().alias("medae"),
                 (pl.col("predicted") - pl.col("actual")).filter(pct).median().alias("signed"),
                 pct.sum().alias("n_percent"), pl.col("benchmark_id").alias("hidden"))
            .drop_nulls("medae").sort("medae", descending=True).head(top))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=8, help="how many model reveals to list")
    ap.add_argument("--param", action="append", default=[], metavar="K=V",
                    help="a parameter of the default (repeatable), as the CLI takes it")
    ap.add_argument("--known", default="1,3,5")
    ap.add_argument("--home", default=".", help="the workspace (default: here)")
    args = ap.parse_args(argv)
    pred = make_predictor("default", **parse_params(args.param, "default"))
    bp = BenchPress.from_snapshot(args.home, "latest", predictor=pred)
    res = bp.evaluate_temporal(methods=(), known=known_counts(args.known, "--known"),
                               orders=("random", "popular"), seed=42, intervals=False)
    m = bp.matrix
    Y, ids, bench = m.values, list(m.model_ids), list(m.benchmark_ids)
    dates = np.array([str(d)[:10] if d else "" for d in m.models["release_date"].to_list()])
    for g in worst_groups(res.cells, args.top).iter_rows(named=True):
        train = (dates != "") & (dates < g["cutoff"])
        n_train = (~np.isnan(Y[train])).sum(axis=0)
        tf = pred.make_transform(bp.scales).fit(Y[train])
        i = ids.index(g["model_id"])
        z = tf.transform(Y[i][None])[0]
        hidden = set(g["hidden"])
        shown = [j for j in np.flatnonzero(~np.isnan(Y[i]) & (n_train > 0))
                 if bench[j] not in hidden]
        print(f"{g['model_id']} at {g['cutoff']}, {g['order']} k={g['k']}: median error "
              f"{g['medae']:.1f} points ({g['signed']:+.1f}) on {g['n_percent']} cells; from")
        for j in shown:
            print(f"    {bench[j]:<34.34s} {Y[i, j]:8.2f}  {int(n_train[j]):4d} models  "
                  f"z {z[j]:+6.2f}")


if __name__ == "__main__":
    run_script(main, "worst_models")
