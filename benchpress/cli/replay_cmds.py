"""Commands over time: `replay PLAN.yaml` and `forecasts score --from A --to B`."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from benchpress.cli.common import (
    executor_option, format_option, handle_errors, home_option, mirror_option, out_option, progress_bar, render,
    stderr, write_or_emit,
)
from benchpress.errors import UsageError

__all__ = ["replay", "forecasts"]


def _pct(value) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _num(value) -> str:
    return "-" if value is None else f"{value:.3f}"


@click.command()
@click.argument("plan", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@mirror_option
@format_option()
@out_option()
@home_option
@handle_errors
@executor_option
def replay(plan: Path, mirror, fmt, out, home, executor):
    """Rebuild the registry date by date from PLAN (dated source versions) in
    <home>/replay/<name>/: a snapshot per date, its fit, probes, drift and forecasts, and
    the realized error of each date's forecasts at the next. Prints the timeline; json:
    the whole document (also written to <home>/replay/<name>/timeline.json). With
    --executor ADDRESS the dates' analyses run on a Dask cluster whose workers see the
    same home folder."""
    from benchpress.timeline.replay import replay as run_replay

    with progress_bar("replaying") as update:
        timeline = run_replay(home, plan, mirror=mirror, on_step=update, executor=executor)
    frame = timeline.frame()
    rows = frame.with_columns(pl.col("probes").cast(pl.List(pl.String)).list.join(" "))
    if write_or_emit(timeline.to_dict(), out, fmt, rows=rows):
        return
    if fmt == "table":  # one line per date: short ids, probe names without the source prefix
        frame = frame.select(
            "date", pl.col("snapshot").str.slice(0, 8), "models", "fit_models", "new_models",
            "revised", pl.col("var2").round(3), pl.col("heldout_medae").round(2).alias("heldout"),
            pl.col("probes").cast(pl.List(pl.String)).list.eval(
                pl.element().str.replace(r"^livebench_", "").str.replace(r"^aa_", ""))
            .list.join(" ").alias("probes"),
            pl.col("probes_changed").alias("swapped"), pl.col("forecast_n").alias("fc_n"),
            pl.col("forecast_medae").round(2).alias("fc_medae"),
            pl.col("forecast_coverage").round(1).alias("fc_cover"),
            pl.col("alarm").is_not_null().alias("alarm"))
    render(frame, fmt, title=f"replay {timeline.plan}")
    if fmt == "table":
        p, s = timeline.pooled, timeline.span
        if p:
            other = [f"{r['scale']} {r['n_cells']} (MedAE {_num(r['medae'])})"
                     for r in p.get("per_scale", []) if r["scale"] != "percent"]
            stderr.print(f"forecasts, every date scored at the next (pooled, percent cells): "
                         f"{p['n_cells']} cells, MedAE {_num(p['medae'])}, 90% interval "
                         f"coverage {_pct(p['coverage'])}; new models (<=5 scores): "
                         f"{p['new_models']['n_cells']} cells, MedAE "
                         f"{_num(p['new_models']['medae'])}, coverage "
                         f"{_pct(p['new_models']['coverage'])}"
                         + (f"; out of the model's source reach: {out['n_cells']} cells, "
                            f"MedAE {_num(out['medae'])}, coverage {_pct(out['coverage'])}"
                            if (out := p.get("out_of_reach")) and out["n_cells"] else "")
                         + (f"; other scales apart, in their units: {', '.join(other)}"
                            if other else ""))
        if s:
            stderr.print(f"forecasts at the first date scored at the last: {s['n_cells']} cells, "
                         f"MedAE {_num(s['medae'])}, coverage {_pct(s['coverage'])}")
        stderr.print(f"{len(timeline.rows)} dates ({timeline.built} rebuilt) in "
                     f"{timeline.seconds:.1f} s; {timeline.folder / 'timeline.json'}")


@click.group()
def forecasts():
    """The forecast ledger: what a snapshot's predictor said about its missing cells."""


@forecasts.command("score")
@click.option("--from", "from_ref", help="Snapshot (id, tag, latest) that forecast.")
@click.option("--to", "to_ref", help="Later snapshot whose new values score them.")
@click.option("--monthly", is_flag=True,
              help="Every monthly snapshot (tagged YYYY-MM by `snapshot create --monthly`; "
                   "--from/--to bound them) scored at the next, pooled; a line per month "
                   "(--out: the figures to 4 significant digits, for the pipeline).")
@click.option("--sources", default=None,
              help="Comma-separated sources the predictor is fitted on (default: all).")
@click.option("--method", default="default", show_default=True, help="Predictor method.")
@click.option("--new-max", default=5, show_default=True, type=click.IntRange(0),
              help="A model with at most this many scores at --from counts as new.")
@click.option("--heldout/--no-heldout", default=True, show_default=True,
              help="Also the held-out error of --from's fit on its own matrix (3 folds), "
                   "beside the realized error.")
@format_option()
@out_option()
@home_option
@handle_errors
def score(from_ref, to_ref, monthly, sources, method, new_max, heldout, fmt, out, home):
    """Score the forecasts made at --from against the values --to observed in cells missing
    at --from: MedAE, 90% interval coverage over percent cells (other scales apart), by
    benchmark, source and the model's score count; what was skipped, and why; the held-out
    error of --from's fit beside the realized one. With --monthly: every month at the next."""
    from benchpress.timeline.forecasts import score_forecasts

    chosen = [s.strip() for s in sources.split(",") if s.strip()] if sources else None
    if monthly:
        _score_months(home, from_ref, to_ref, chosen, method, new_max, fmt, out)
        return
    if not from_ref or not to_ref:
        raise UsageError("give --from A and --to B (or --monthly)")
    result = score_forecasts(home, from_ref, to_ref, sources=chosen, method=method,
                             new_max=new_max, heldout=heldout)
    if write_or_emit(result.to_dict(), out, fmt, rows=result.per_n_scores):
        return
    o, n = result.overall, result.new_models
    render(result.per_n_scores, fmt,
           title=f"forecasts {result.a} -> {result.b}, percent cells, by scores at A")
    render(result.per_scale, fmt, title="by scale (each in its own units)")
    render(result.per_source, fmt, title="by the source of the later value (percent cells)")
    if result.per_reach["out_of_reach"].any():
        render(result.per_reach, fmt, title="out of the model's sources at A? (percent)")
    render(result.per_benchmark, fmt, title="by benchmark")
    stderr.print(f"{o['n_cells']} percent cells: MedAE {_num(o['medae'])}, coverage "
                 f"{_pct(o['coverage'])}, within 5 {_pct(o['within5'])}; new models "
                 f"(<= {new_max} scores): {n['n_cells']} cells, MedAE {_num(n['medae'])}, "
                 f"coverage {_pct(n['coverage'])}")
    if result.heldout is not None:
        stderr.print(f"held-out at {result.a} (3 folds, percent cells): MedAE "
                     f"{_num(result.heldout['medae'])} over {result.heldout['n_cells']} cells")
    skipped = {k: v for k, v in result.skipped.items() if v}
    if skipped:
        stderr.print("not scored: " + ", ".join(f"{v} {k.replace('_', ' ')}"
                                                for k, v in skipped.items()))


def _score_months(home, from_ref, to_ref, sources, method, new_max, fmt, out) -> None:
    """`forecasts score --monthly`: one row per pair of months, the pooled figures below;
    `out` (the pipeline's metrics/forecasts.json) gets the document with its figures to
    `precision.SIGNIFICANT` digits."""
    from benchpress.timeline.forecasts import score_months

    def said(k, n, label):
        stderr.print(f"forecasts {label} scored ({k} of {n})", highlight=False, markup=False)

    doc = score_months(home, from_ref=from_ref, to_ref=to_ref, sources=sources, method=method,
                       new_max=new_max, progress=said)
    rows = pl.DataFrame([{"pair": pair, "n_cells": f["n_cells"], "medae": f["medae"],
                          "coverage": f["coverage"], "within5": f["within5"],
                          "new_model_cells": f["new_models"]["n_cells"]}
                         for pair, f in doc["per_pair"].items()],
                        schema={"pair": pl.String, "n_cells": pl.Int64, "medae": pl.Float64,
                                "coverage": pl.Float64, "within5": pl.Float64,
                                "new_model_cells": pl.Int64})
    if write_or_emit(doc, out, fmt, written=doc, rows=rows):
        return
    render(rows, fmt, title="forecasts, each month scored at the next (percent cells)")
    stderr.print(f"{doc['n_pairs']} pairs of months, pooled: {doc['n_cells']} percent cells, "
                 f"MedAE {_num(doc['medae'])}, coverage {_pct(doc['coverage'])}",
                 highlight=False, markup=False)
