"""The temporal yardstick split by the source that describes each later model: where the
whole registry's forecasts of new models miss, and which way.

Usage (from the repository root, after ``make main``; about 3 minutes for the default
alone on 2 cores, 6 with the baselines)::

    python benchmarks/temporal_by_source.py                          # the default
    python benchmarks/temporal_by_source.py --baselines als4,knn,regression,side

Runs what ``benchpress evaluate --temporal --snapshot latest --sources ""`` runs (12
monthly cutoffs, the random, popular and single orders, k = 3 and 5, seed 42; metadata
given), then prints, per method, source and k: later models, cells, MedAE, mean signed
error (predicted - actual) and the coverage of the default's 90% intervals; for the
source with the most later models (or ``--source``), the default's figures per reveal
order and per benchmark (the benchmarks with the most cells); and every source's cells split by how many
training models had scored the cell's benchmark at the cutoff (the scores as published
then: a source whose history starts after the cutoff is nearly absent from that fit),
and by whether the truth lies below every score the fit held for its benchmark (with
``--baselines``, every method's figures on those cells).
Percent-scale cells only.
"""

from __future__ import annotations

import argparse
import sys

import polars as pl

ERROR = pl.col("predicted") - pl.col("actual")
FIGURES = (pl.col("model_id").n_unique().alias("models"), pl.len().alias("cells"),
           ERROR.abs().median().round(2).alias("medae"), ERROR.mean().round(2).alias("bias"),
           (100 * pl.col("covered").mean()).round(1).alias("coverage"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", default="latest")
    ap.add_argument("--baselines", default="", help="other methods, comma-separated")
    ap.add_argument("--months", type=int, default=12, help="monthly cutoffs (at least 1)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--source", default=None,
                    help="the source broken down per order and benchmark (default: the "
                         "one with the most later models)")
    args = ap.parse_args()
    if args.months < 1:
        ap.error(f"--months must be at least 1, got {args.months}")

    import numpy as np

    from benchpress import BenchPress
    from benchpress.predict.evaluation.temporal import monthly_cutoffs
    from benchpress.store.matrix import as_published

    bp = BenchPress.from_snapshot(None, args.snapshot)
    models = bp.matrix.models
    dates = np.array([str(d)[:10] if d else "" for d in models["release_date"]])
    cutoffs = monthly_cutoffs(list(dates), args.months)
    result = bp.evaluate_temporal(
        cutoffs=cutoffs, methods=tuple(b for b in args.baselines.split(",") if b),
        known=(3, 5), orders=("random", "popular", "single"), seed=args.seed,
        metadata=("given",))
    source = dict(zip(models["model_id"], models["source_id"].fill_null("other")))
    cells = (result.cells.filter(pl.col("scale") == "percent")
             .with_columns(pl.col("model_id").replace_strict(source, default="other")
                           .alias("source")))
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_width_chars(80)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    pl.Config.set_fmt_str_lengths(28)
    print(f"{len(cutoffs)} cutoffs from {cutoffs[0]}")
    for method in cells["method"].unique(maintain_order=True):
        table = (cells.filter(pl.col("method") == method).group_by("source", "k")
                 .agg(*FIGURES).sort("k", "cells", descending=[False, True]))
        print(f"{method}, per source and k")
        print(table if method == bp.method else table.drop("coverage"))
    default = cells.filter(pl.col("method") == bp.method)
    chosen = args.source or (default.group_by("source").agg(pl.col("model_id").n_unique())
                             .sort("model_id", descending=True)["source"][0])
    if chosen not in set(default["source"]):
        sys.exit(f"temporal_by_source: no later model of source {chosen!r}; these have some: "
                 f"{', '.join(sorted(set(default['source'])))}")
    mine = default.filter(pl.col("source") == chosen)
    print(f"{bp.method} on {chosen}'s later models, per reveal order and k")
    print(mine.group_by("order", "k").agg(*FIGURES).sort("order", "k"))
    print(f"{bp.method} on {chosen}'s later models, per benchmark (k = 3)")
    print(mine.filter(pl.col("k") == 3).group_by("benchmark_id").agg(*FIGURES)
          .sort("cells", descending=True).head(12))

    # per cutoff and benchmark: how many training models had scored it, and their lowest
    published = as_published(bp.folder, bp.matrix, sources=bp.sources)
    counts = []
    for cutoff in cutoffs:
        trained = published(cutoff)[(dates != "") & (dates < cutoff)]
        scored = (~np.isnan(trained)).sum(axis=0)
        lowest = np.min(np.where(np.isnan(trained), np.inf, trained), axis=0, initial=np.inf)
        counts.append(pl.DataFrame({"cutoff": cutoff, "benchmark_id": bp.matrix.benchmark_ids,
                                    "trained": scored,
                                    "lowest": np.where(scored > 0, lowest, np.nan)}))
    at_cutoff = pl.concat(counts)
    band = (pl.when(pl.col("trained") < 20).then(pl.lit("under 20"))
            .when(pl.col("trained") < 50).then(pl.lit("20-49")).otherwise(pl.lit("50+")))
    split = (default.join(at_cutoff, on=["cutoff", "benchmark_id"], how="left")
             .with_columns(band.alias("scored_before"),
                           pl.when(pl.col("source") == chosen).then(pl.lit(chosen))
                           .otherwise(pl.lit("the rest")).alias("models")))
    print(f"{bp.method}, by how many training models had scored the benchmark")
    print(split.group_by("models", "scored_before", "k")
          .agg(pl.len().alias("cells"), *FIGURES[2:]).sort("k", "models", "scored_before"))
    print(f"{bp.method}, every later model: benchmarks scored by 20 or more, or fewer")
    print(split.with_columns((pl.col("trained") >= 20).alias("by_20_or_more"))
          .group_by("by_20_or_more", "k")
          .agg(*FIGURES).sort("k", "by_20_or_more"))
    # a truth below every score the fit held for its benchmark: no method reaches it
    below = (cells.join(at_cutoff, on=["cutoff", "benchmark_id"], how="left")
             .with_columns((pl.col("actual") < pl.col("lowest")).fill_null(False)
                           .alias("below_all_trained")))
    print(f"{bp.method}, every later model: the truth below every training score of its "
          "benchmark, or not")
    print(below.filter(pl.col("method") == bp.method).group_by("below_all_trained", "k")
          .agg(*FIGURES).sort("k", "below_all_trained"))
    if cells["method"].n_unique() > 1:
        print("every method on the cells whose truth is below every training score")
        print(below.filter(pl.col("below_all_trained")).group_by("method", "k")
              .agg(*FIGURES[1:4]).sort("k", "method"))


if __name__ == "__main__":
    from benchpress.errors import BenchPressError

    try:
        main()
    except BenchPressError as exc:
        sys.exit(f"temporal_by_source: {exc}")
    except KeyboardInterrupt:
        print("temporal_by_source: interrupted; nothing was written", file=sys.stderr)
        sys.exit(130)
