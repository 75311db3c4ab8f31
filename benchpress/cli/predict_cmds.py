"""Predictor commands: predict, complete, evaluate, rank."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from benchpress.cli.common import (
    emit_json, format_option, parse_scores, render, stderr, write_or_emit,
)
from benchpress.cli.matrix import folds_options, matrix_options, method_fields
from benchpress.store.tables import write_atomic, write_json_atomic
from benchpress.errors import UsageError
from benchpress.predict import folds_to_json

__all__ = ["predict", "complete", "evaluate", "rank"]


@click.command()
@click.option("--scores", "scores_text", help='Known scores: "gpqa_diamond=70.1,hle=21".')
@click.option("--model", "model_id", help="Predict a registered model's row from its own scores.")
@format_option(choices=("table", "csv", "json"))
@matrix_options
def predict(scores_text, model_id, fmt, bp, home):
    """Predict every benchmark for a new model from a few known scores."""
    if bool(scores_text) == bool(model_id):
        raise UsageError("give either --scores or --model")
    if not model_id:  # a new model: the stored fit of an unchanged matrix answers at once
        from benchpress.cli.fit_cmds import stored_fit

        bp = stored_fit(bp, home, regimes=("new_models",))
    result = (bp.predict_model(model_id) if model_id
              else bp.predict(parse_scores(scores_text), ignore_unknown=True))
    for given in result.unknown:
        stderr.print(f"warning: '{given}' is not a benchmark of this matrix (after alias "
                     "resolution); ignored", markup=False)
    frame = result.frame.with_columns(pl.col("predicted", "lower", "upper").round(2),
                                      pl.col("trust").round(3))
    if fmt == "json":
        emit_json({**method_fields(bp), "unknown": result.unknown, "resolved": result.resolved,
                   "predictions": frame.to_dicts()})
    else:
        render(frame, fmt, title=f"predicted scores ({bp.method})")


@click.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the completed matrix here (.parquet or .csv); default: print it.")
@click.option("--intervals", is_flag=True,
              help="Long output, one row per cell: observed, predicted, 90% interval "
                   "(lower, upper) and trust (P(|error| <= 10 points)).")
@format_option()
@matrix_options
def complete(out, intervals, fmt, bp, home):
    """Fill in every missing cell of the matrix (observed cells are kept)."""
    full = bp.complete(intervals=intervals)
    if out is None:
        render(full, fmt)
        return
    write_atomic(out, full.write_csv if out.suffix == ".csv" else full.write_parquet)
    stderr.print(f"wrote {full.height} cells with intervals to {out}" if intervals else
                 f"wrote {full.height} models x {full.width - 1} benchmarks to {out}")


@click.command()
@click.option("--write-folds", type=click.Path(dir_okay=False, path_type=Path),
              help="Save the folds used (id form) to this file.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the overall figures as JSON to this file (for dvc metrics).")
@format_option(choices=("table", "json"))
@matrix_options
@folds_options
def evaluate(folds, write_folds, out, fmt, bp, home):
    """Hide held-out cells, refit, and score the predictions (MedAE, MedAPE, within 3/5)."""
    if write_folds:
        write_json_atomic(write_folds, folds_to_json(folds, bp.matrix.model_ids,
                                                     bp.matrix.benchmark_ids))
    result = bp.evaluate(folds)
    report = {**result.to_json(), **method_fields(bp)}
    # the file holds figures only (no timing), so that `dvc metrics diff` shows real changes
    if write_or_emit(report, out, fmt, written={k: v for k, v in report.items()
                                                if k not in ("per_benchmark", "per_model", "seconds")}):
        return
    overall = {k: report[k] for k in ("method", "n_cells", "coverage", "medae", "fold_medae_mean",
                                      "medape", "within3", "within5") if k in report}
    render(pl.DataFrame([overall]), "table", title="held-out error, pooled over all folds")
    worst = result.per_benchmark.sort("medae", descending=True).head(10)
    render(worst, "table", title="benchmarks with the largest median error")


@click.command()
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON here.")
@format_option(choices=("table", "json"))
@matrix_options
def rank(seed, out, fmt, bp, home):
    """The rank-2 evidence: held-out error by rank, variance explained by two factors."""
    result = bp.rank(seed=seed)
    report = result.to_json()
    if write_or_emit(report, out, fmt):
        return
    render(result.rank_errors, "table", title=f"held-out error of soft-impute by rank (best: {result.best_rank})")
    render(result.submatrices.select(pl.exclude("model_indices", "benchmark_indices")), "table",
           title="complete submatrices: cumulative variance explained by the first factors")
