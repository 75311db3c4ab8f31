"""Trust and drift commands: intervals (coverage of calibrated intervals), drift, report."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import click
import polars as pl

from benchpress.cli.common import (
    executor_option, format_option, handle_errors, home_option, progress_bar, render,
    split_list, stderr,
    write_figures, write_or_emit,
)
from benchpress.cli.fit_options import (
    matrix_options, method_choice, method_fields, noted_folds, param_option, parse_params,
)
from benchpress.errors import BadInputError, UsageError
from benchpress.predict.evaluation.coverage import coverage_json
from benchpress.predict.drift import DriftThresholds

__all__ = ["intervals", "drift", "report"]


@click.command()
@click.option("--folds", "folds_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Evaluate on these folds (e.g. the published fold file).")
@click.option("--folds-sources", default=None,
              help="Index-form fold file counts rows/columns of the matrix of these sources.")
@click.option("--seed", type=int, default=2001, show_default=True,
              help="Without --folds: first seed of new per-model 3-fold partitions.")
@click.option("--n-seeds", type=int, default=1, show_default=True,
              help="Without --folds: how many seeds (seed, seed+1, ...) of 3-fold partitions.")
@click.option("--by-source", is_flag=True,
              help="Without --folds: hold out, of each model scored in two or more sources, "
                   "every score of one of them (seed --seed): a model before a second "
                   "leaderboard lists it.")
@click.option("--regime", type=click.Choice(["cells", "new_models"]), default="cells",
              show_default=True, help="cells: missing cells of known models (held-out folds); "
              "new_models: whole models held out, folded in from 3-12 scores.")
@click.option("--calibration-seed", type=int, default=1001, show_default=True,
              help="First seed of the partitions the intervals are calibrated on.")
@click.option("--calibration-seeds", type=int, default=2, show_default=True,
              help="How many calibration partitions (seeds from --calibration-seed on).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the JSON summary here, without per-benchmark rows (for dvc "
                   "metrics).")
@format_option()
@matrix_options
def intervals(folds_file, folds_sources, seed, n_seeds, by_source, regime, calibration_seed,
              calibration_seeds, out, fmt, bp, home):
    """Coverage and width of the calibrated 90% intervals on held-out folds, by benchmark
    and by how many scores the model has."""
    sources = split_list(folds_sources)
    if by_source and (folds_file or regime == "new_models"):
        raise UsageError("--by-source makes its own folds, for --regime cells only: "
                         "leave out --folds and --regime new_models")
    if regime == "new_models":
        if folds_file:
            raise UsageError("--folds applies to --regime cells only")
        folds = None
        stderr.print(f"calibrating with seed {calibration_seed}, evaluating with seed {seed}")
    else:
        folds = (noted_folds(bp, folds_file, folds_sources=sources) if folds_file
                 else bp.folds(seed=seed, by_source=True) if by_source
                 else bp.folds(n_folds=3, seed=seed, n_seeds=n_seeds))
        stderr.print(f"calibrating on seeds {calibration_seed}.."
                     f"{calibration_seed + calibration_seeds - 1}, evaluating on {len(folds)} folds")
    with progress_bar("calibrating and scoring intervals"):
        result = bp.interval_coverage(folds, regime=regime, seed=seed,
                                      calibration_seed=calibration_seed,
                                      calibration_seeds=calibration_seeds)
    doc = {**method_fields(bp), "regime": regime, **coverage_json(result)}
    if write_or_emit(doc, out, fmt, written={k: v for k, v in doc.items() if k != "per_benchmark"},
                     rows=result["per_benchmark"]):
        return
    render(result["overall"], "table", title="90% intervals on held-out cells (width in points)")
    if result["cells"]["out_of_reach"].any():
        render(result["per_reach"], "table",
               title="percent cells out of reach (no source of the model has it) or not")
    render(result["per_model_count"], "table", title="by how many scores the model has")
    render(result["per_benchmark"].sort("coverage").head(15), "table",
           title="least-covered benchmarks")


_THRESHOLD_HELP = {
    "var2_min": "Alarm: two-factor variance explained below this.",
    "var2_drop_max": "Alarm: two-factor variance falls by more than this.",
    "best_rank_max": "Alarm: held-out error lowest at a rank above this.",
    "angle_max_deg": "Alarm: benchmark subspace turns by more than this (and its noise).",
    "n_boot": "Bootstrap resamples measuring the angle's noise level.",
    "probe_changes_max": "Alarm: more probes change than this (and the old set is worse).",
    "probe_regret_max": "... by more than this relative MedAE.",
    "probes_k": "Probe set size.",
    "probe_method": "Predictor of the probe search.",
    "probe_max_models": "Most models the probe search leaves out and scores (a seeded sample "
                        "beyond it, as `probes --max-models`); 0: every model.",
    "method": "Predictor whose held-out error is tracked.",
    "max_rank": "Ranks 1..N in the held-out error by rank.",
    "n_submatrices": "Largest complete submatrices averaged for variance explained.",
    "seed": "Seed of the held-out partition.",
}


def threshold_options(f):
    """One option per DriftThresholds field (--var2-min, --probes-k, ...) -> `cfg`
    (the `drift:` section of params.yaml)."""
    fields = dataclasses.fields(DriftThresholds)
    for fd in reversed(fields):
        kind = (method_choice(_THRESHOLD_HELP.get(fd.name, "")) if fd.name.endswith("method")
                else {"type": type(fd.default), "help": _THRESHOLD_HELP.get(fd.name)})
        f = click.option(f"--{fd.name.replace('_', '-')}", fd.name, default=fd.default,
                         show_default=True, **kind)(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        cfg = DriftThresholds(**{fd.name: kwargs.pop(fd.name) for fd in fields})
        return f(*args, cfg=cfg, **kwargs)
    return wrapper


@click.command()
@click.option("--from", "from_ref", default=None,
              help="Oldest version: snapshot id/tag, 'current' or a folder of registry tables.")
@click.option("--to", "to_ref", default=None, help="Newest version (same forms as --from).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the metrics of the newest version here (metrics/drift.json; figures "
                   "to 4 significant digits).")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full drift report (JSON, figures to 4 significant digits) here.")
@click.option("--sources", default=None,
              help="Use only these sources, e.g. 'benchpress,releases'; without --from/--to, "
                   "only the snapshots that hold one of them.")
@click.option("--monthly", is_flag=True,
              help="Only the monthly snapshots (tagged YYYY-MM by `snapshot create --monthly`), "
                   "from the first month that holds one of --sources; --from/--to pick months.")
@format_option()
@threshold_options
@param_option
@home_option
@handle_errors
@executor_option
def drift(from_ref, to_ref, out, report_file, sources, monthly, fmt, cfg, params, home,
          executor):
    """How the rank-2 structure and the probe set move from snapshot to snapshot."""
    from benchpress.api import BenchPress

    # the two predictor objects, built once (an unknown --param fails here, before any fit)
    given = parse_params(params, cfg.method, cfg.probe_method)
    predictor, probe_predictor = cfg.predictors(**given)
    with progress_bar("profiling versions") as update:
        report = BenchPress.drift(home, from_ref, to_ref, cfg, sources=split_list(sources),
                                  predictor=predictor, probe_predictor=probe_predictor,
                                  progress=update, monthly=monthly, executor=executor)
    doc = {"method": cfg.method, "probe_method": cfg.probe_method, "params": given,
           **report.to_json()}
    if out:
        write_figures(out, report.metrics())
    if report_file:
        write_figures(report_file, doc)
    snaps = pl.DataFrame([{k: s[k] for k in ("label", "n_models", "n_benchmarks", "n_cells", "fill",
                                             "var2", "best_rank", "medae")}
                          | {"probes": ", ".join(s["probes"]) if s["probes"] is not None
                             else s["probes_note"]} for s in doc["snapshots"]])
    if write_or_emit(doc, None, fmt, rows=snaps):
        return
    render(snaps, "table", title="snapshots (var2: two-factor variance on complete submatrices; "
                                 f"medae: held-out, {cfg.method} predictor)")
    for t in doc["transitions"]:
        noise = "" if t["angle_noise_deg"] is None else f" (resampling noise {t['angle_noise_deg']:.1f})"
        regret = "" if t["probe_regret"] is None else f"; old set {100 * t['probe_regret']:+.0f}% MedAE"
        click.echo(f"\n{t['from_label']} -> {t['to_label']}: principal angles "
                   f"{', '.join(f'{a:.1f}' for a in t['angles_deg'])} deg{noise} on "
                   f"{t['n_shared_benchmarks']} shared benchmarks; probes changed: "
                   f"{t['probes_changed']} (+{', '.join(t['probes_added'])} "
                   f"-{', '.join(t['probes_removed'])}){regret}")
        if t["moved_benchmarks"]:
            render(pl.DataFrame(t["moved_benchmarks"]), "table",
                   title="benchmarks whose held-out error moved most (points)")
        if t["worst_models"]:
            render(pl.DataFrame(t["worst_models"]), "table",
                   title="models the previous fit predicted worst (points)")
        for a in t["alarms"]:
            click.echo(f"ALARM: {a}")
    click.echo("drift alarm" if report.alarm else "no drift alarm")


def _read_drift_report(path: Path) -> dict:
    """A `benchpress drift --report FILE` document; anything else is one line (exit 1)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInputError(f"{path}: not a drift report (`benchpress drift --report FILE`): "
                            f"{exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("snapshots"), list):
        raise BadInputError(f"{path}: not a drift report (`benchpress drift --report FILE`): "
                            "no 'snapshots' list")
    return doc


_TIMELINE_NUMBERS = ("models", "cells", "new_models", "revised", "var2", "heldout_medae",
                     "forecast_n", "forecast_medae", "forecast_coverage")


def _read_timeline(path: Path) -> dict:
    """A replay's `timeline.json` (`benchpress replay`); anything else is one line (exit 1)."""
    import re

    what = f"{path}: not a replay timeline (`benchpress replay` writes timeline.json)"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInputError(f"{what}: {exc}") from None
    rows = doc.get("timeline") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise BadInputError(f"{what}: no 'timeline' list of dates")
    for k, row in enumerate(rows):
        if not isinstance(row, dict) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}",
                                                         str(row.get("date"))):
            raise BadInputError(f"{what}: timeline[{k}] has no 'date' YYYY-MM-DD")
        bad = [key for key in _TIMELINE_NUMBERS if row.get(key) is not None
               and (isinstance(row[key], bool) or not isinstance(row[key], (int, float)))]
        probes = row.get("probes")
        if probes is not None and not (isinstance(probes, list)
                                       and all(isinstance(p, str) for p in probes)):
            bad.append("probes")
        if bad:
            raise BadInputError(f"{what}: timeline[{k}] ({row['date']}): {', '.join(bad)} "
                                "not a number" + (" / list of names" if "probes" in bad else ""))
    return doc


def _newest_timeline(home) -> Path | None:
    """The most recently written `<home>/replay/*/timeline.json`, if any."""
    found = sorted((home.root / "replay").glob("*/timeline.json"),
                   key=lambda p: p.stat().st_mtime_ns)
    return found[-1] if found else None


@click.command()
@click.option("--snapshot", default=None, help="Snapshot id, tag or 'latest' (default: live registry).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("report"), show_default=True, help="Folder for index.html.")
@click.option("--method", default="default", show_default=True,
              **method_choice("Predictor of the matrix, interval and drift figures."))
@click.option("--probe-method", default="default", show_default=True,
              **method_choice("Predictor of the probe search."))
@click.option("--probes-k", type=click.IntRange(min=1), default=5, show_default=True,
              help="Largest probe-set size in the probe curve.")
@click.option("--drift", "drift_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A drift report (benchpress drift --report FILE) to plot instead of recomputing.")
@click.option("--timeline", "timeline_file",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A replay's timeline.json for the Timeline section (default: the newest "
                   "<home>/replay/*/timeline.json, if any).")
@click.option("--sources", default=None, help="Use only these sources, e.g. 'benchpress,releases'.")
@param_option
@home_option
@handle_errors
def report(snapshot, out_dir, method, probe_method, probes_k, drift_file, timeline_file, sources,
           params, home):
    """Write a self-contained HTML report with plots (matrix, spectrum, intervals,
    probes, ranking preservation, drift; with a replay, its timeline)."""
    from benchpress.api import BenchPress
    from benchpress.store.snapshot import list_snapshots

    doc = _read_drift_report(drift_file) if drift_file else None
    if timeline_file is None and (timeline_file := _newest_timeline(home)) is not None:
        stderr.print(f"timeline: {timeline_file} (the newest replay; --timeline FILE for another)")
    timeline = _read_timeline(timeline_file) if timeline_file else None
    cfg = DriftThresholds(method=method, probe_method=probe_method, probes_k=probes_k)
    # the two predictor objects, built once (an unknown --param fails here, before any fit)
    predictor, probe_predictor = cfg.predictors(**parse_params(params, cfg.method, cfg.probe_method))
    from benchpress.report import build_report  # matplotlib loads only for this command

    bp = BenchPress.from_snapshot(home, snapshot, sources=split_list(sources), predictor=predictor)
    if doc is None and list_snapshots(home):  # the drift figure plots the snapshots
        from benchpress.api.drift_versions import has_monthly

        with progress_bar("report: profiling versions for the drift figure") as update:
            # a registry built through time: its months as they stand, those holding
            # --sources (not every snapshot ever made)
            doc = BenchPress.drift(home, cfg=cfg, sources=split_list(sources),
                                   predictor=predictor, probe_predictor=probe_predictor,
                                   progress=update, monthly=has_monthly(home)).to_json()
    with progress_bar("report: fitting and plotting"):
        path = build_report(bp, out_dir, probe_bp=BenchPress(bp.matrix, probe_predictor),
                            probes_k=probes_k, drift=doc, timeline=timeline)
    stderr.print(f"wrote {path}")
