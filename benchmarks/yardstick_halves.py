"""The temporal yardstick in two halves: the cutoffs a modelling choice is made on, and the
ones it is checked on.

`benchpress evaluate --temporal` pools its cutoffs; a choice between variants of the
predictor is made on the early ones (before ``--split``, default 2025-12-01) and checked
on the later ones (and on the later-release pairs, `benchmarks/later_releases.py`). This
script scores each variant (``--param`` overrides of the default, as the CLI takes them;
give ``--variant`` several times for several) on the same cutoffs, reveal orders (random
and popular) and seed as the pipeline, without intervals, and prints per k the MedAE of
percent cells on each half, plus each variant's early MedAE over the first variant's,
per k and as a geometric mean over k (the figure the README's fifth table of tries
ranks by), then each later variant's MedAE over the first's on each half with a 90%
interval from the paired bootstrap over the later models
(:meth:`~benchpress.predict.evaluation.temporal.TemporalResult.ratio`): whether a difference on
the choosing half is more than which models happened to be released. A last table gives
the tails over all the cutoffs, which a median does not see: each variant's mean error and
its share of cells more than 30 points off, per k; and how much of the MedAE is the model's
level: the MedAE left when each model reveal's median signed error is taken out of its
cells (``level_removed``: what a predictor that knew every new model's level exactly, and
nothing more, would reach).

Run from the repository root after `make main` (about 5 s per variant on 2 cores)::

    python benchmarks/yardstick_halves.py --variant "" --variant "neighbours__k=8"
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import polars as pl

from benchpress.api import BenchPress
from benchpress.cli.fit_options import parse_params
from benchpress.cli.predict_cmds import known_counts
from benchpress.errors import run_script
from benchpress.predict import make_predictor
from benchpress.predict.evaluation.temporal import TemporalResult


def halves(cells: pl.DataFrame, split: str) -> pl.DataFrame:
    """MedAE of percent cells per k, before and from ``split`` (cutoff labels are ISO
    dates, so they compare as text)."""
    pct = cells.filter(pl.col("scale") == "percent")
    return (pct.group_by("k")
            .agg(pl.col("abs_error").filter(pl.col("cutoff") < split).median().alias("early"),
                 pl.col("abs_error").filter(pl.col("cutoff") >= split).median().alias("late"))
            .sort("k"))


def tails(cells: pl.DataFrame) -> pl.DataFrame:
    """Mean absolute error, the percentage of cells more than 30 points off, and the MedAE
    with each model reveal's level taken out (its cells' median signed error), per k, over
    every cutoff (percent cells)."""
    pct = cells.filter(pl.col("scale") == "percent")
    error = pl.col("predicted") - pl.col("actual")
    reveal = ("cutoff", "order", "k", "model_id")
    return (pct.with_columns((error - error.median().over(reveal)).abs().alias("pattern"))
            .group_by("k")
            .agg(pl.col("abs_error").mean().alias("mean"),
                 (100 * (pl.col("abs_error") > 30).mean()).alias("pct_over_30"),
                 pl.col("pattern").median().alias("level_removed"))
            .sort("k"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", default=None, metavar="'K=V K=V'",
                    help="parameters of the default, space-separated ('' = as it is); "
                         "repeat for several, the first is the reference")
    ap.add_argument("--split", default="2025-12-01", help="first cutoff of the check half")
    ap.add_argument("--known", default="1,2,3,5")
    ap.add_argument("--home", default=".", help="the workspace (default: here)")
    ap.add_argument("--snapshot", default="latest")
    args = ap.parse_args(argv)
    variants = args.variant or [""]
    known = known_counts(args.known, "--known")
    rows, reference, cells, tail_rows = [], None, [], []
    for i, text in enumerate(variants):
        params = parse_params(text.split(), "default")
        bp = BenchPress.from_snapshot(args.home, args.snapshot,
                                      predictor=make_predictor("default", **params))
        res = bp.evaluate_temporal(methods=(), known=known, orders=("random", "popular"),
                                   metadata=("given",),
                                   seed=42, intervals=False)
        cells.append(res.cells.with_columns(pl.lit(f"v{i}").alias("method")))
        h = halves(res.cells, args.split)
        reference = h if reference is None else reference
        ratio = (h["early"] / reference["early"]).to_numpy()
        rows.append(h.with_columns(pl.lit(text or "(the default)").alias("variant"),
                                   pl.Series("early_ratio", ratio),
                                   pl.lit(float(np.exp(np.log(ratio).mean()))).alias("geo_mean")))
        tail_rows.append(tails(res.cells).with_columns(
            pl.lit(text or "(the default)").alias("variant")))
        print(f"{text or '(the default)'}: done", file=sys.stderr)
    table = pl.concat(rows).select("variant", "k", "early", "late", "early_ratio", "geo_mean")
    with pl.Config(tbl_rows=200, float_precision=3, tbl_hide_dataframe_shape=True,
                   fmt_str_lengths=40, tbl_width_chars=80):
        print(table)
        if len(variants) > 1:
            print(f"each variant's MedAE / the first's ({variants[0] or '(the default)'}), "
                  "90% interval over the later models:")
            print(ratios(pl.concat(cells), variants, args.split))
        print("tails, every cutoff: mean absolute error, % of cells more than 30 points\n"
              "off, and the MedAE with each model reveal's level taken out:")
        print(pl.concat(tail_rows).select("variant", "k", "mean", "pct_over_30",
                                          "level_removed"))


def ratios(cells: pl.DataFrame, variants: list[str], split: str) -> pl.DataFrame:
    """Each variant ``v1``, ``v2``, ... over ``v0`` (the ``method`` column of ``cells``),
    per half and k, with its bootstrap interval."""
    out = []
    for half, keep in (("early", pl.col("cutoff") < split), ("late", pl.col("cutoff") >= split)):
        both = TemporalResult(cells.filter(keep), [])
        for i, text in enumerate(variants[1:], start=1):
            r = both.ratio(f"v{i}", ["v0"], ("k",), seed=42)
            out.append(r.select(pl.lit(text or "(the default)").alias("variant"),
                                pl.lit(half).alias("half"), "k", "ratio", "lo", "hi"))
    return pl.concat(out)


if __name__ == "__main__":
    run_script(main, "yardstick_halves")
