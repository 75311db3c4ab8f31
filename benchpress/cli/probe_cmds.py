"""Probe sets, new releases and rankings: probes, backtest, compare, ranking."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import polars as pl

from benchpress.cli.common import (
    executor_option, format_option, out_option, progress_bar, render, split_list, stderr,
    wrapped, write_or_emit,
)
from benchpress.cli.compare_table import DEFAULT_LIMIT, compare_summary, compare_view
from benchpress.cli.notes import say, say_once
from benchpress.cli.fit_options import (
    folds_options, matrix_options, method_fields, pretrained_note, provenance_fields,
)
from benchpress.errors import BadInputError, UsageError, listed, typed_number
from benchpress.input_limits import input_limits, read_capped, read_capped_text
from benchpress.predict.size_limits import LIMITS
from benchpress.predict.probes.search import OBJECTIVES, PAPER_SETS, SCOPES, probe_set_change, sample_cap

__all__ = ["probes", "backtest", "compare", "ranking", "read_benchmark_list", "read_costs",
           "read_probes_file", "read_model_scores"]

# ---------------------------------------------------------------------- input parsing
def read_benchmark_list(spec: str) -> list[str]:
    """Benchmark ids from a file (a JSON list, an object with ``benchmark_ids``, or one id
    per line; at most `InputLimits.max_config_bytes`, UTF-8) or from comma-separated text."""
    path = Path(spec)
    if path.is_file():
        text = read_capped_text(path, "max_config_bytes", "a benchmark list")
        try:
            obj = json.loads(text)
        except ValueError:
            return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        ids = obj.get("benchmark_ids") if isinstance(obj, dict) else obj
        if not isinstance(ids, list) or not all(isinstance(b, str) for b in ids):
            raise BadInputError(f"{path}: expected a JSON list of benchmark ids or an object "
                                'with a "benchmark_ids" list')
        return ids
    ids = split_list(spec)
    if not ids:
        raise UsageError(f"no benchmark ids in {spec!r}")
    return ids


def read_costs(path: Path) -> dict[str, float]:
    """{benchmark: cost} from JSON (optionally under "costs") or a CSV benchmark_id,cost."""
    text = read_capped_text(path, "max_config_bytes", "a costs file")
    try:
        if path.suffix.lower() == ".csv":
            frame = pl.read_csv(io.StringIO(text))
            if not {"benchmark_id", "cost"} <= set(frame.columns):
                raise BadInputError(f"{path}: a costs CSV needs columns benchmark_id,cost")
            table = dict(zip(frame["benchmark_id"].to_list(), frame["cost"].to_list()))
        else:
            obj = json.loads(text)
            table = obj.get("costs", obj) if isinstance(obj, dict) else None
    except (ValueError, pl.exceptions.PolarsError) as exc:
        raise BadInputError(f"cannot read costs file {path}: {exc}") from None
    if not isinstance(table, dict):
        raise BadInputError(f"{path}: expected a JSON object {{benchmark_id: cost}}")
    out = {}
    for b, v in table.items():
        try:
            c = typed_number(v)
        except (TypeError, ValueError):
            raise BadInputError(f"{path}: cost of '{b}' is {v!r}, not a number") from None
        if not c >= 0 or c == float("inf"):
            raise BadInputError(f"{path}: cost of '{b}' must be a finite number >= 0, got {v!r}")
        out[str(b)] = c
    return out


def read_model_scores(path: Path) -> dict[str, dict[str, float]]:
    """{model: {benchmark: score}} from JSON of that shape or a CSV model_id,benchmark_id,score;
    at most `InputLimits.max_scores_file_bytes` and `max_models_file_rows` models."""
    text = read_capped_text(path, "max_scores_file_bytes", "a scores file")
    try:
        out = _model_scores(path, text)
    except (ValueError, TypeError, pl.exceptions.PolarsError) as exc:
        raise BadInputError(f"cannot read scores file {path}: {exc}") from None
    most = input_limits().max_models_file_rows
    if len(out) > most:
        raise BadInputError(f"{path}: {len(out):,} models are more than one call may compare "
                            f"({most:,}; env BENCHPRESS_MAX_MODELS_FILE_ROWS)")
    return out


def _model_scores(path: Path, text: str) -> dict[str, dict[str, float]]:
    if path.suffix.lower() == ".csv":
        frame = pl.read_csv(io.StringIO(text))
        if not {"model_id", "benchmark_id", "score"} <= set(frame.columns):
            raise BadInputError(f"{path}: a scores CSV needs columns model_id,benchmark_id,score")
        out: dict[str, dict[str, float]] = {}
        for m, b, s in frame.select("model_id", "benchmark_id", "score").iter_rows():
            out.setdefault(str(m), {})[str(b)] = typed_number(s)
        return out
    obj = json.loads(text)
    if not isinstance(obj, dict) or not all(isinstance(v, dict) for v in obj.values()):
        raise BadInputError(f"{path}: expected {{model: {{benchmark: score}}}}")
    return {str(m): {str(b): typed_number(s) for b, s in v.items()} for m, v in obj.items()}


def _score_row(label, s) -> dict:
    return {"set": label, "probes": ",".join(s.probes), "cost": s.cost, "medae": s.medae,
            "medae_hidden": s.medae_hidden, "medape": s.medape,
            "models_missing_probe": s.n_models_missing_probe}


def read_probes_file(path: Path) -> dict:
    """The document of an earlier `probes --out` file (its chosen set in
    ``["selection"]["probes"]``); a file over `InputLimits.max_config_bytes` is refused
    before it is read, and anything else that is not one is one line naming the file."""
    try:
        doc = json.loads(read_capped(path, "max_config_bytes",
                                     "a `benchpress probes --out` file").decode("utf-8"))
        probes = doc["selection"]["probes"]
        if not isinstance(probes, list) or not all(isinstance(b, str) for b in probes):
            raise TypeError
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise BadInputError(f"{path}: not a `benchpress probes --out` file") from None
    return doc


def _previous_probes(path: Path) -> list:
    """The probe set of an earlier `probes --out` file; anything else is one line."""
    return list(read_probes_file(path)["selection"]["probes"])


def _sample_fields(search) -> dict:
    """The sizes the probe search ran with (``sample_size``: None when every model with
    scores was scored, i.e. the search is exact; ``fits``, ``train_models``: see
    :attr:`ProbeSearch.sample_fields <benchpress.predict.probes.search.ProbeSearch.sample_fields>`)."""
    return search.sample_fields


# ---------------------------------------------------------------------- commands
@click.command()
@click.option("--k", type=int, default=5, show_default=True, help="Largest probe-set size.")
@click.option("--allowlist", default=None, help="Allowed probes: a file (JSON list / "
              "{'benchmark_ids': [...]}) or comma-separated ids.")
@click.option("--costs", "costs_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Benchmark costs (JSON {id: cost} or CSV benchmark_id,cost); overrides the "
                   "registry's cost column.")
@click.option("--budget", type=float, default=None, help="Most total cost of a probe set.")
@click.option("--objective", type=click.Choice(OBJECTIVES), default="medae", show_default=True,
              help="medae: pooled median absolute error; medape: median percentage error.")
@click.option("--scope", type=click.Choice(SCOPES), default="all", show_default=True,
              help="all: every observed cell, probe cells exact (paper); hidden: non-probe cells.")
@click.option("--swap", type=click.Choice(["final", "each", "none"]), default="each",
              show_default=True, help="Swap pass on the final set, after every step, or never.")
@click.option("--recent-months", type=float, default=None,
              help="Objective over the models released within this many months of the newest "
                   "(for probe sets aimed at new releases); default: every model.")
@click.option("--evaluate", "evaluate_sets", multiple=True,
              help="Also score this probe set (ids or file); repeatable.")
@click.option("--paper-sets/--no-paper-sets", default=True, show_default=True,
              help="Score the paper's two five-probe sets beside ours.")
@click.option("--no-search", is_flag=True, help="Only score the --evaluate / paper sets.")
@click.option("--design", type=click.Choice(["fold_in", "refit"]), default="fold_in",
              show_default=True, help="How --evaluate / paper sets are scored: fold-in against "
              "leave-one-model-out fits, or the paper's refit per model (slow).")
@click.option("--previous", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="JSON written by an earlier `probes --out` (e.g. the previous snapshot): "
                   "report the drift between the two chosen sets.")
@click.option("--max-models", type=click.IntRange(min=0), default=LIMITS.probe_max_models,
              show_default=True,
              help="Leave out and score at most this many models (beyond it a seeded sample, "
                   "split into 10 groups, each left out of one fit on at most 2,000 models); "
                   "0: every model, one fit each (exact up to 2,000 models).")
@out_option()
@format_option()
@matrix_options
@executor_option
def probes(k, allowlist, costs_file, budget, objective, scope, swap, recent_months,
           evaluate_sets, paper_sets, no_search, design, previous, max_models, out, fmt, bp, home,
           executor):
    """Choose the few benchmarks to run on a new model to predict the rest of its row."""
    # where the search's fits and scoring run (BenchPress.probes(executor=...)); local: as before
    where = {} if executor.name == "local" else {"executor": executor}
    costs = read_costs(costs_file) if costs_file else None
    if costs:
        unused = bp.unused_costs(costs)
        if unused:
            say(f"note: {len(unused):,} of {len(costs):,} benchmarks of --costs are not in this "
                f"matrix, their costs unused: {listed(unused)}")
    where["max_models"] = sample_cap(max_models, "--max-models")  # for every call below
    named = {f"given {n + 1}": bp.benchmark_ids(read_benchmark_list(s))  # resolved before any fit
             for n, s in enumerate(evaluate_sets)}
    if paper_sets:
        named.update({k_: v for k_, v in PAPER_SETS.items()
                      if all(b in bp.matrix.benchmark_ids for b in v)})
    selection = None
    if no_search and not named:
        raise UsageError("--no-search needs --evaluate SET or the paper sets")
    prev = _previous_probes(previous) if previous and not no_search else None  # before any fit
    with progress_bar("probe search") as update:
        if not no_search:
            cand = read_benchmark_list(allowlist) if allowlist else None
            selection = bp.probes(k, candidates=cand, costs=costs, budget=budget,
                                  objective=objective, scope=scope, swap=swap,
                                  recent_months=recent_months, progress=update, **where)
        scored = dict(zip(named, bp.score_probes(list(named.values()), costs=costs,
                                                 design=design, progress=update, **where)))
    doc = {**provenance_fields(bp), "design": design,
           "n_models": int(bp.matrix.values.shape[0]),
           "n_benchmarks": int(bp.matrix.values.shape[1]),
           **_sample_fields(bp.probe_search()),
           "selection": selection.to_json() if selection else None,
           "evaluated": {label: s.to_json() for label, s in scored.items()}}
    ref = selection.final if selection else next(iter(scored.values()))
    if prev is not None and selection:
        known = [b for b in prev if b in bp.matrix.benchmark_ids]
        with progress_bar("scoring the previous probe set"):
            old = bp.score_probes([known], costs=costs)[0] if known else None
        new_set = list(selection.final.probes)
        doc["drift"] = {"previous": prev, "current": new_set, **probe_set_change(prev, new_set),
                        "previous_medae_now": old.medae if old else None,
                        "current_medae": selection.final.medae}
    rows = ([_score_row(f"ours (k={len(selection.final.probes)})", selection.final)]
            if selection else []) + [_score_row(label, s) for label, s in scored.items()]
    sets = pl.DataFrame(rows, schema_overrides={"cost": pl.Float64})
    # the file keeps no timing: the same data writes the same bytes (dvc.lock records them)
    written = None if fmt == "csv" or not selection else {**doc, "selection": {
        k: v for k, v in doc["selection"].items() if k not in ("seconds", "fit_seconds")}}
    if write_or_emit(doc, out, fmt, written=written, rows=sets):
        return
    note = (f"objective: pooled {'median absolute error' if objective == 'medae' else 'median % error'}"
            f" of transcript recovery over {ref.n_cells} observed cells of {ref.n_models} models "
            f"({'probe cells exact (error 0)' if scope == 'all' else 'non-probe cells only'}); "
            "each model is predicted from its own probe scores against a fit on all other models")
    stderr.print(note, markup=False)
    if doc["sample_size"] is not None:
        stderr.print(f"sampled: {doc['sample_size']} of {doc['n_models_with_scores']} models "
                     f"left out and scored (--max-models {max_models}, seed "
                     f"{bp.probe_search().seed}) in {doc['fits']} held-out fits, each on at "
                     f"most {doc['train_models']} models", markup=False)
    if recent_months and selection:
        stderr.print(f"the greedy objective counted only models released within {recent_months:g} "
                     "months of the newest release; the figures below cover every model",
                     markup=False)
    if selection:
        curve = selection.curve().with_columns(pl.col(pl.Float64).round(3))
        render(curve, "table", title=f"greedy probe selection ({bp.method}, "
               f"{len(selection.candidates)} candidates, {selection.seconds + selection.fit_seconds:.1f}s)")
    # the key: each set whole (wrapped after a comma when long) and its error
    render(sets.with_columns(pl.col(pl.Float64).round(3), pl.col("probes").str.replace_all(",", ", ")),
           "table", title="probe sets side by side", key=("set", "probes", "medae"))
    stderr.print(f"{ref.n_models_missing_probe} of {ref.n_models} models lack a score on some "
                 f"probe of {','.join(ref.probes)} ({ref.n_models_without_probes} have none): they are "
                 "predicted from the probes they have and all their observed cells are counted",
                 markup=False)
    if "drift" in doc:
        d = doc["drift"]
        stderr.print(f"drift from {previous}: kept {d['kept']}, added {d['added']}, dropped "
                     f"{d['dropped']}; previous set now scores {d['previous_medae_now']}", markup=False)


@click.command()
@click.option("--cutoff", required=True, help="ISO date: fit on models released before it.")
@click.option("--probes", "probes_spec", default="5", show_default=True,
              help="A number (chosen greedily on the pre-cutoff models) or probe ids / a file.")
@click.option("--allowlist", default=None, help="Allowed probes for the greedy choice.")
@click.option("--recent-months", type=float, default=6.0, show_default=True,
              help="The greedy choice scores the models released this many months before the "
                   "cutoff (0: every earlier model).")
@out_option()
@format_option()
@matrix_options
def backtest(cutoff, probes_spec, allowlist, recent_months, out, fmt, bp, home):
    """Temporal stress test: predict every model released after --cutoff from its probes."""
    chosen = int(probes_spec) if probes_spec.strip().isdigit() else read_benchmark_list(probes_spec)
    cand = read_benchmark_list(allowlist) if allowlist else None
    with progress_bar("backtesting"):
        result = bp.backtest(cutoff, probes=chosen, candidates=cand, recent_months=recent_months)
    doc = {**method_fields(bp), **result.to_json()}
    if write_or_emit(doc, out, fmt, rows=result.per_model):
        return
    summary = {k_: doc[k_] for k_ in ("cutoff", "n_train", "n_test", "medae", "medae_hidden",
                                      "medape_hidden", "within5_hidden", "n_hidden_cells")}
    render(pl.DataFrame([summary]), "table",
           title=f"new releases from {len(result.probes)} probes ({bp.method})")
    render(result.per_model.with_columns(pl.col(pl.Float64).round(2)), "table", title="per model")
    stderr.print(f"probes ({result.probes_chosen_on}): {', '.join(result.probes)}; medae counts "
                 "probe cells as exact, medae_hidden uses the other cells"
                 + (f"; {result.n_undated} models without a release date left out"
                    if result.n_undated else ""), markup=False)


@click.command()
@click.argument("model_ids", nargs=-1)
@click.option("--benchmarks", default=None, help="Only these benchmarks (ids or a file).")
@click.option("--scores-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="New models' known scores: JSON {model: {benchmark: score}} or CSV "
                   "model_id,benchmark_id,score.")
@click.option("--limit", type=click.IntRange(min=1), default=DEFAULT_LIMIT, show_default=True,
              help="The table shows this many benchmarks, the biggest gaps first (csv and "
                   "json: every benchmark).")
@click.option("--all", "show_all", is_flag=True, help="The table shows every benchmark.")
@format_option()
@out_option()
@matrix_options(pretrained=True)
def compare(model_ids, benchmarks, scores_file, limit, show_all, fmt, out, bp, home):
    """Models side by side: observed and predicted scores, who is ahead, how sure."""
    from benchpress.api.prediction_notes import contradicted_note
    from benchpress.cli.fit_cmds import fit_now  # an unchanged matrix's fit, at once

    new = read_model_scores(scores_file) if scores_file else None
    bench = read_benchmark_list(benchmarks) if benchmarks else None
    fit_now(bp, ("new_models",))
    result = bp.compare(list(model_ids), benchmarks=bench, new_models=new)
    frame, sure_from = result.frame, result.uncertainty_source
    for name, found in result.contradicted.items():
        say(f"note: {contradicted_note(found, name)}")
    extra = {"p_ahead_note": result.p_ahead_note} if result.p_ahead_note else {}
    if write_or_emit({**provenance_fields(bp), **pretrained_note(bp, fmt, home),
                      "sure_from": sure_from, **extra, "contradicted": result.contradicted,
                      "rows": frame.to_dicts()}, out, fmt, rows=frame):
        if result.p_ahead_note:
            say(f"note: {result.p_ahead_note}")
        return
    names = [c[: -len("_src")] for c in frame.columns if c.endswith("_src")]  # resolved ids
    rows, key, whole = compare_view(frame, names, limit=None if show_all else limit)
    shown = min(frame.height, frame.height if show_all else limit)
    title = f"side by side ({bp.method}): " + (
        f"the {shown} biggest gaps of {frame.height}" if shown < frame.height
        else f"{frame.height} benchmarks, biggest gaps first")
    render(rows, fmt, title=title, key=key, whole=whole)
    click.echo(wrapped(compare_summary(frame, names, shown=shown)))
    if result.p_ahead_note:
        say(f"note: {result.p_ahead_note}")
    say_once("score: observed, or predicted ± half its 90% interval (csv and json hold the "
             "bounds); * the leader; gap: leader minus runner-up; p_ahead: the chance the "
             "leader is ahead, "
             "counting each benchmark's measurement noise for observed scores and "
             f"{sure_from} for predicted ones", home)


@click.command()
@click.option("--margins", default="0,1,2,5", show_default=True, help="True-gap margins, points.")
@out_option()
@format_option()
@matrix_options
@folds_options
def ranking(folds, margins, out, fmt, bp, home):
    """Model order, not matrix rank: how often held-out predictions keep pairs of models in
    their true order (pairwise ranking preservation, median over benchmarks). The matrix's
    rank-2 evidence: `benchpress rank`."""
    try:
        m = [float(x) for x in split_list(margins) or []]
    except ValueError:
        raise UsageError(f"--margins: {margins!r} is not a comma-separated list of numbers") from None
    with progress_bar("ranking held-out predictions"):
        result = bp.ranking_preservation(folds, margins=m)
    doc = {**method_fields(bp), **result.to_json()}
    if not write_or_emit(doc, out, fmt, rows=result.summary()):
        render(result.summary().with_columns(pl.col("accuracy").round(2)), "table",
               title=f"pairs kept, % (median over benchmarks; {bp.method})")
