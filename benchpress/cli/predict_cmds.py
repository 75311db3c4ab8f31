"""Predictor commands: predict, complete, evaluate, rank."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl
import polars.selectors as cs

from benchpress.cli.common import (
    csv_text, executor_option, format_option, out_option, progress_bar, render, split_list, stderr,
    write_or_emit,
)
from benchpress.cli.notes import say, say_once
from benchpress.cli.scores import read_scores_file, score_with_interval
from benchpress.cli.fit_cmds import fit_now
from benchpress.cli.fit_options import (
    folds_options, matrix_options, method_fields, pretrained_note, provenance_fields,
)
from benchpress.store.tables import write_atomic, write_json_atomic
from benchpress.api.typed_scores import parse_scores
from benchpress.errors import UsageError
from benchpress.predict import folds_to_json
from benchpress.predict.models.covariates import parse_metadata

__all__ = ["predict", "complete", "evaluate", "rank", "known_counts"]


@click.command()
@click.option("--scores", "scores_text", help='Known scores: "gpqa_diamond=70.1,hle=21".')
@click.option("--scores-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Known scores from a file: JSON {benchmark: score} or CSV benchmark_id,score.")
@click.option("--model", "model_id", help="Predict a registered model's row from its own scores.")
@click.option("--file", "models_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Several new models from one file, all from one fit: CSV with columns id, "
                   "metadata fields and benchmarks (one row per model), or JSON "
                   '[{"id", "metadata", "scores"}].')
@click.option("--benchmarks", default=None, help="Only show these benchmarks, e.g. 'hle,gpqa_diamond'.")
@click.option("--metadata", "metadata_text", default=None, metavar="KEY=VALUE,...",
              help="What is known about the new model (the default and --method side use "
                   "it): model_id, provider, release_date, is_reasoning, open_weights, "
                   "effort, e.g. "
                   "'model_id=acme-3-mini,provider=Acme,release_date=2026-04-01,"
                   "is_reasoning=true'.")
@format_option()
@out_option()
@matrix_options(stored_fit_answers=lambda kwargs: not kwargs.get("model_id"), pretrained=True)
def predict(scores_text, scores_file, model_id, models_file, benchmarks, metadata_text, fmt,
            out, bp, home):
    """Predict every benchmark for a new model from a few known scores.

    A model's row is the fold-in of its known scores against the registry's fit, the same
    number `--model`, `--scores` and `compare` give; given scores are shown as given (kind
    "given"). Unknown benchmark names are an error (with suggestions) unless
    --ignore-unknown. `--file` predicts several new models at once (each as its own
    `--scores ... --metadata ...` would)."""
    if sum(map(bool, (scores_text, scores_file, model_id, models_file))) != 1:
        raise UsageError("give one of --scores, --scores-file, --model or --file")
    if models_file and metadata_text is not None:
        raise UsageError("--metadata describes one new model: with --file, give each "
                         "model's metadata in its row")
    metadata = None if metadata_text is None else parse_metadata(metadata_text)
    if metadata is not None and not metadata:
        raise UsageError("--metadata: expected KEY=VALUE pairs, e.g. provider=OpenAI")
    if metadata is not None and model_id:
        raise UsageError("--metadata describes a new model: --model uses the registered "
                         "model's own metadata")
    wanted = bp.resolve_benchmarks(split_list(benchmarks)).ids if benchmarks else None
    if models_file:
        return _predict_file(bp, models_file, wanted, fmt, out)
    fit_now(bp, ("new_models",))  # an unchanged matrix's fit, at once
    result = (bp.predict_model(model_id) if model_id else
              bp.predict(parse_scores(scores_text) if scores_text else read_scores_file(scores_file),
                         metadata=metadata))
    for note in (bp.metadata_note(metadata, result.with_covariates), result.contradicted_note,
                 result.interval_note):
        if note:
            say(f"note: {note}")
    frame = result.frame  # full precision in csv/json (README, "Output contract")
    if wanted is not None:
        frame = frame.filter(pl.col("benchmark_id").is_in(wanted))
    doc = {**provenance_fields(bp), **pretrained_note(bp, fmt, home), "unknown": result.unknown,
           "resolved": result.resolved, "contradicted": result.contradicted}
    if metadata is not None:
        doc |= {"metadata": metadata, "with_covariates": result.with_covariates}
    if not write_or_emit({**doc, "predictions": frame.to_dicts()}, out, fmt, rows=frame):
        render(_predict_table(frame), fmt, title=f"predicted scores ({bp.method})")
        say_once("score: given, or predicted with its 90% interval [lower, upper]; trust: "
                 "P(within 10 points)", home)


def _predict_file(bp, models_file: Path, wanted, fmt: str, out) -> None:
    """`predict --file`: every model of the file from one fit, one block of rows each."""
    from benchpress.api.facade import contradicted_note
    from benchpress.api.models_file import read_models_file

    models = read_models_file(models_file)  # a bad file fails before any fit
    fit_now(bp, ("new_models",))
    result = bp.predict_many(models)
    for m in result.models:
        said = bp.metadata_note(m["metadata"], m["with_covariates"])
        for note in (said and f"{m['id']}: {said}", contradicted_note(m["contradicted"], m["id"])):
            if note:
                stderr.print(f"note: {note}", markup=False)
    frame = result.frame
    if wanted is not None:
        frame = frame.filter(pl.col("benchmark_id").is_in(wanted))
    doc = {**provenance_fields(bp), **pretrained_note(bp, fmt),
           "models": [{**m, "predictions": frame.filter(pl.col("id") == m["id"]).drop("id").to_dicts()}
                      for m in result.models]}
    if not write_or_emit(doc, out, fmt, rows=frame):
        render(_predict_table(frame).select("id", "benchmark_id", "score",
                                            *(["trust"] if "trust" in frame.columns else [])),
               fmt, title=f"predicted scores of {len(result.models)} models ({bp.method})")
        stderr.print("score: given, or predicted with its 90% interval [lower, upper]; trust: "
                     "P(within 10 points)", markup=False)


def _predict_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The predicted row for people (fits 80 columns): benchmark_id, score ("78.0 given"
    or "42.8 [34.7, 51.3]"), trust and the benchmark's name; csv/json keep every column."""
    bounds = ("lower", "upper") if "lower" in frame.columns else ()
    return frame.select(*(["id"] if "id" in frame.columns else []), "benchmark_id",
                        score_with_interval("predicted", pl.col("kind") == "given", "given",
                                            *bounds).alias("score"),
                        *([pl.col("trust").round(2)] if "trust" in frame.columns else []),
                        "name")


@click.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the completed matrix here (.parquet or .csv); default: print it.")
@click.option("--intervals", is_flag=True,
              help="Long output, one row per cell: observed, predicted, 90% interval "
                   "(lower, upper) and trust (P(|error| <= 10 points)).")
@click.option("--digits", type=click.IntRange(min=1, max=17), default=None,
              help="Round every value to this many significant digits (default: full "
                   "precision). The pipeline writes 6: a fit's last digits move from one CPU "
                   "to another, and the file's md5 is recorded in dvc.lock.")
@format_option()
@matrix_options
def complete(out, intervals, digits, fmt, bp, home):
    """Fill in every missing cell of the matrix (observed cells are kept)."""
    def kept(frame: pl.DataFrame) -> pl.DataFrame:
        return frame if digits is None else frame.with_columns(
            cs.float().round_sig_figs(digits))

    if out is not None and not intervals and out.suffix != ".csv":  # in row blocks
        with progress_bar("completing the matrix"):
            shape = write_parquet_blocks(out, map(kept, bp.complete_blocks()))
        stderr.print(f"wrote {shape[0]} models x {shape[1] - 1} benchmarks to {out}")
        return
    with progress_bar("completing the matrix"):
        full = kept(bp.complete(intervals=intervals))
    if out is None:
        render(full, fmt)
        return
    write_atomic(out, (lambda tmp: tmp.write_text(csv_text(full), encoding="utf-8"))
                 if out.suffix == ".csv" else full.write_parquet)
    stderr.print(f"wrote {full.height} cells with intervals to {out}" if intervals else
                 f"wrote {full.height} models x {full.width - 1} benchmarks to {out}")


def write_parquet_blocks(out: Path, frames) -> tuple[int, int]:
    """Write polars frames of one schema to the Parquet file `out`, one row group at a
    time (atomically: the file appears whole or not at all); returns (rows, columns)."""
    import pyarrow.parquet as pq

    shape = [0, 0]

    def writer(tmp: Path) -> None:
        w = None
        try:
            for f in frames:
                table = f.to_arrow()
                w = w or pq.ParquetWriter(tmp, table.schema)
                w.write_table(table)
                shape[0], shape[1] = shape[0] + f.height, f.width
        finally:
            if w is not None:
                w.close()

    write_atomic(out, writer)
    return shape[0], shape[1]


@click.command()
@click.option("--write-folds", type=click.Path(dir_okay=False, path_type=Path),
              help="Save the folds used (id form) to this file.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the overall figures as JSON to this file (for dvc metrics).")
@click.option("--new-models", "new_models", default=None, metavar="K[,K...]",
              help="Hold out whole models instead of cells: each model with 8+ scores is "
                   "folded in from K random scores of its own and scored on the rest (5 "
                   "groups per seed, --seed / --n-seeds), e.g. 3,5.")
@click.option("--temporal", is_flag=True,
              help="The temporal yardstick: fit on the models released before each cutoff "
                   "(monthly, the last 12 months), fold in the next month's models from "
                   "--known of their scores, score the rest (percent cells; other scales "
                   "apart).")
@click.option("--known", "known_text", default="1,3,5", show_default=True, metavar="K[,K...]",
              help="With --temporal: how many scores each later model reveals.")
@click.option("--cutoffs", "cutoffs_text", default=None, metavar="DATE[,DATE...]",
              help="With --temporal: ISO cutoff dates (default: the first day of each of the "
                   "last --months months of release dates).")
@click.option("--months", default=12, show_default=True, type=click.IntRange(1),
              help="With --temporal and no --cutoffs: how many monthly cutoffs, the newest "
                   "months of release dates (the pipeline's bound on its cost).")
@click.option("--orders", "orders_text", default=None,
              help="With --temporal: reveal orders (random, popular, single, probes, "
                   "reported; default random,popular,single, with --later "
                   "reported,random,single). single: the popular benchmarks a user runs, no "
                   "aggregate or index.")
@click.option("--metadata-runs", "metadata_text", default="given,none", show_default=True,
              help="With --temporal: fold each later model in with the metadata the "
                   "registry holds for it (given), without (none), or both.")
@click.option("--probe-set", "probe_text", default=None,
              help="With --temporal --orders probes: the probe benchmarks, e.g. 'hle,gpqa'.")
@click.option("--baselines", "baselines_text", default="knn", show_default=True,
              help="With --temporal: other methods scored beside --method ('' for none).")
@click.option("--later", "later_ref", default=None, metavar="SNAPSHOT",
              help="With --temporal: the snapshot-to-snapshot form. --snapshot is the earlier "
                   "version, LATER ('current' for the live registry) a later one; each model "
                   "first seen in LATER is folded in from the first --known scores its "
                   "sources reported (orders default to reported,random).")
@click.option("--no-intervals", is_flag=True,
              help="With --temporal: skip the 90%% intervals (faster; no coverage).")
@format_option()
@matrix_options
@folds_options
@executor_option
def evaluate(folds, seeds, new_models, temporal, known_text, cutoffs_text, months, orders_text,
             metadata_text, probe_text, baselines_text, later_ref, no_intervals, write_folds,
             out, fmt, bp, home, executor):
    """Hide held-out cells, refit, and score the predictions (MedAE, MedAPE, within 3/5);
    with --new-models, whole models held out and folded in from a few of their scores;
    with --temporal, fit on the past and score the models released after each cutoff."""
    if temporal:
        if new_models is not None or write_folds:
            raise UsageError("--temporal cannot go with --new-models or --write-folds")
        return _evaluate_temporal(bp, home, seeds[0], known_text, cutoffs_text, months,
                                  orders_text, metadata_text, probe_text, baselines_text,
                                  later_ref,
                                  not no_intervals, out, fmt)
    if new_models is not None:
        return _evaluate_new_models(known_counts(new_models), seeds, write_folds, out, fmt,
                                    bp, executor)
    if write_folds:
        write_json_atomic(write_folds, folds_to_json(folds, bp.matrix.model_ids,
                                                     bp.matrix.benchmark_ids))
    with progress_bar("evaluating") as update:
        result = bp.evaluate(folds, progress=update, executor=executor)
    report = {**result.to_json(), **method_fields(bp)}
    # the file holds figures only (no timing), so that `dvc metrics diff` shows real changes
    if write_or_emit(report, out, fmt, written={k: v for k, v in report.items()
                                                if k not in ("per_benchmark", "per_model", "per_scale",
                                                             "seconds")},
                    rows=result.per_benchmark):
        return
    overall = {k: report[k] for k in ("method", "n_cells", "coverage", "medae", "fold_medae_mean",
                                      "medape", "within3", "within5") if k in report}
    render(pl.DataFrame([overall]), "table", title="held-out error, percent cells, all folds")
    if result.per_scale is not None and result.per_scale.height > 1:
        render(result.per_scale.select("scale", "n_cells", "coverage", "medae"), "table",
               title="each scale in its own units (never pooled)")
    worst = result.per_benchmark.sort("medae", descending=True).head(10)
    render(worst, "table", title="benchmarks with the largest median error")


def known_counts(text: str, option: str = "--new-models") -> tuple:
    """``"3,5"`` -> ``(3, 5)``; anything else is a one-line usage error."""
    try:
        ks = tuple(dict.fromkeys(int(k) for k in split_list(text) or []))
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise UsageError(f"{option} {text!r}: expected positive integers separated by "
                         "commas, e.g. 3,5")
    return ks


def _evaluate_temporal(bp, home, seed, known_text, cutoffs_text, months, orders_text,
                       metadata_text, probe_text, baselines_text, later_ref, intervals, out,
                       fmt) -> None:
    """`evaluate --temporal`: percent-scale figures per method, metadata run and k (other
    scales in the JSON, each in its own units), and per reveal order the method's MedAE
    over the best other's; with --later, the snapshot-to-snapshot form."""
    import datetime as dt

    from benchpress.predict import available_methods, unknown_method_message
    from benchpress.predict.evaluation.temporal import monthly_cutoffs

    if later_ref is not None and cutoffs_text:
        raise UsageError("--cutoffs and --later are two forms of --temporal: give one")
    if orders_text is None:
        orders_text = "random,popular,single" if later_ref is None else "reported,random,single"
    cutoffs = split_list(cutoffs_text) if cutoffs_text else None
    for c in cutoffs or []:
        try:
            dt.date.fromisoformat(c)
        except ValueError:
            raise UsageError(f"--cutoffs: {c!r} is not an ISO date (YYYY-MM-DD)") from None
    if cutoffs is None and later_ref is None:
        cutoffs = monthly_cutoffs([str(d)[:10] if d else ""
                                   for d in bp.matrix.models["release_date"].to_list()], months)
    baselines = split_list(baselines_text) or []
    unknown = [b for b in baselines if b not in available_methods()]
    if unknown:
        raise UsageError(f"--baselines: {unknown_method_message(unknown)}")
    probes = bp.resolve_benchmarks(split_list(probe_text)).ids if probe_text else ()
    common = dict(methods=baselines, known=known_counts(known_text, "--known"),
                  orders=tuple(split_list(orders_text) or ()), probes=probes, seed=seed,
                  intervals=intervals, metadata=tuple(split_list(metadata_text) or ()))
    with progress_bar("temporal evaluation") as update:
        if later_ref is None:
            result = bp.evaluate_temporal(cutoffs=cutoffs, progress=update, **common)
        else:
            result = bp.evaluate_later(_later_matrix(bp, home, later_ref), progress=update,
                                       **common)
    m = bp.matrix
    report = {**result.to_json(
        groups=dict(zip(m.benchmark_ids, m.benchmarks["category"].fill_null("other"))),
        sources=dict(zip(m.model_ids, m.models["source_id"].fill_null("other")))),
        **method_fields(bp)}
    # how sure: the method's MedAE over each baseline's (orders pooled), and per order over
    # the best other method's, with an interval over the models
    vs = result.ratio(bp.method, [b for b in baselines if b != bp.method], seed=seed)
    best = result.versus_best(bp.method, seed=seed)
    report["vs_baselines"] = vs.to_dicts()
    report["vs_best"] = best.to_dicts()
    report.update({f"vs_{r['baseline']}{'_none' if r['metadata'] == 'none' else ''}"
                   f"_k{r['k']}_{figure}": r[figure]
                   for r in vs.iter_rows(named=True) for figure in ("ratio", "lo", "hi")})
    summary = result.summary()
    # the file: flat figures only (no breakdown lists), for `dvc metrics diff`
    written = {k: v for k, v in report.items() if not isinstance(v, (list, dict))
               or k == "cutoffs"}
    if write_or_emit(report, out, fmt, written=written, rows=summary):
        return
    title = (f"models first seen in {later_ref}, percent-scale cells" if later_ref else
             f"later models, percent-scale cells ({len(result.cutoffs)} cutoffs from "
             f"{result.cutoffs[0]})")
    render(summary, "table", title=title)
    if vs.height:
        render(vs.select("baseline", "metadata", "k", "n_models", "ratio", "lo", "hi"), "table",
               title=f"{bp.method}'s MedAE / each baseline's (orders pooled), 90% interval")
    if best.height:
        render(best.drop("best_medae").rename({"baseline": "best_other"}),
               "table",
               title=f"per order: {bp.method}'s MedAE / the best other method's, 90% interval")


def _later_matrix(bp, home, ref: str):
    """The later version for `evaluate --temporal --later REF`: its matrix (with the
    earlier one's sources) and its scores table (the order sources reported in)."""
    from benchpress.store.matrix import load_matrix
    from benchpress.store.snapshot import resolve_snapshot
    from benchpress.store.tables import read_table

    folder = resolve_snapshot(home, None if ref == "current" else ref)
    return load_matrix(folder, sources=bp.sources, label=ref), read_table(folder, "scores")


def _evaluate_new_models(known, seeds, write_folds, out, fmt, bp, executor) -> None:
    """`evaluate --new-models`: figures per k, pooled over the seeds' splits."""
    from benchpress.executor import LocalExecutor

    if write_folds or not isinstance(executor, LocalExecutor):
        raise UsageError("--new-models runs in this process: --write-folds and --executor "
                         "apply to held-out cells only")
    with progress_bar("holding out whole models") as update:
        result = bp.evaluate_new_models(known, seeds=seeds, progress=update)
    report = {**result.to_json(), **method_fields(bp)}
    # the file: the top-level figures (k3_medae, ...), no rows or timing, for dvc metrics
    written = {k: v for k, v in report.items() if k not in ("known", "per_seed", "seconds")}
    if write_or_emit(report, out, fmt, written=written, rows=result.overall):
        return
    seeds_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"
    render(result.overall, "table",
           title=f"new models folded in from K known scores ({bp.method}, {seeds_text})")


@click.command()
@click.option("--seed", type=int, default=42, show_default=True,
              help="Seed of the held-out cells (error by rank).")
@click.option("--max-rank", type=click.IntRange(min=1), default=8, show_default=True,
              help="Measure ranks 1 to this (each rank: one fit per fold).")
@out_option()
@format_option()
@matrix_options
def rank(seed, max_rank, out, fmt, bp, home):
    """Matrix rank, not model order: held-out error by rank and the variance two factors
    explain (the rank-2 evidence). The error is soft-impute's and, for a predictor with a
    rank (--method default, side, als, published), that predictor's own at each rank. How
    well predictions keep models in order: `benchpress ranking`."""
    with progress_bar("error by rank") as update:
        result = bp.rank(seed=seed, max_rank=max_rank, progress=update)
    report = {**method_fields(bp), **result.to_json()}
    if write_or_emit(report, out, fmt, rows=result.rank_errors):
        return
    errs = result.rank_errors
    title = f"held-out error of soft-impute by rank (best: {result.best_rank})"
    if "method_medae" in errs.columns:  # the predictor's own error first, beside soft-impute's
        own = int(errs["rank"][errs["method_medae"].arg_min()])
        errs = errs.select("rank", pl.col("method_medae").alias(f"{bp.method}_medae"),
                           pl.col("medae").alias("soft_impute_medae"),
                           pl.col("within5").alias("soft_impute_within5"))
        title = (f"held-out MedAE by rank ({bp.method} best at {own}, soft-impute at "
                 f"{result.best_rank})")
    render(errs, "table", title=title)
    render(result.submatrices.select(pl.exclude("model_indices", "benchmark_indices")), "table",
           title="complete submatrices: cumulative variance explained by the first factors")
