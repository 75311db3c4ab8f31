"""`benchpress report`: one self-contained HTML page about a matrix version.

Figures (PNG embedded as data URIs, each in a ``<figure id=...>`` with an ``<img alt
title>``): the observed pattern, the singular value spectrum, predicted versus actual
held-out cells with their calibrated 90% intervals, interval coverage by the model's
score count, the probe error curve, ranking preservation, and drift across snapshots;
given a replay's timeline (``benchpress replay``, ``timeline.json``), a "Timeline" section:
counts, two-factor variance and held-out error per date, the realized error and coverage
of each date's forecasts at the next date, and the probe set's changes.
Held-out figures use one per-model 3-fold partition (``seed``); intervals are calibrated
on other partitions (:meth:`~benchpress.api.BenchPress.interval_coverage`). Every number
comes from :class:`~benchpress.api.BenchPress`; this module only renders.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.report import plots
from benchpress.store.tables import write_atomic, write_json_atomic

__all__ = ["Figure", "ReportPage", "build_report", "timeline_section", "FIGURES",
           "TIMELINE_FIGURES"]

#: Figure ids, in page order.
FIGURES = ("pattern", "spectrum", "intervals", "coverage", "probes", "ranking", "drift")
#: Figure ids of the Timeline section (with a replay's timeline), in page order.
TIMELINE_FIGURES = ("timeline-counts", "timeline-fit", "timeline-forecasts")


@dataclass
class Figure:
    id: str
    title: str
    png: str | None              # base64; None when the figure could not be drawn
    caption: str = ""


@dataclass
class ReportPage:
    title: str
    figures: list = field(default_factory=list)
    tables: list = field(default_factory=list)   # (title, polars.DataFrame)
    timeline: tuple | None = None   # (heading, intro, figures, tables) of the Timeline section

    def html(self) -> str:
        parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                 f"<title>{html.escape(self.title)}</title><style>body{{font-family:sans-serif;"
                 "max-width:1000px;margin:2em auto}figure{margin:2em 0}img{max-width:100%}"
                 "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
                 "padding:2px 6px}</style></head><body>",
                 f"<h1>{html.escape(self.title)}</h1>"]
        parts += [_figure_html(f, "h2") for f in self.figures]
        parts += [_table_html(title, df, "h2") for title, df in self.tables]
        if self.timeline is not None:
            heading, intro, figures, tables = self.timeline
            parts.append(f"<section id='timeline'><h2>{html.escape(heading)}</h2>"
                         f"<p>{html.escape(intro)}</p>")
            parts += [_figure_html(f, "h3") for f in figures]
            parts += [_table_html(title, df, "h3") for title, df in tables]
            parts.append("</section>")
        # lets a headless browser report that every figure decoded (see tests/test_report.py)
        parts.append("<script>window.addEventListener('load',()=>{document.querySelectorAll("
                     "'img').forEach(i=>i.setAttribute('data-natural-width',i.naturalWidth))})"
                     "</script></body></html>")
        return "\n".join(parts)


def _figure_html(f: Figure, h: str) -> str:
    img = (f"<img src='data:image/png;base64,{f.png}' alt='{html.escape(f.title)}'"
           f" title='{html.escape(f.title)}'>" if f.png else "")
    return (f"<figure id='fig-{f.id}'><{h}>{html.escape(f.title)}</{h}>{img}"
            f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")


def _table_html(title: str, df: pl.DataFrame, h: str) -> str:
    cell = (lambda v: "" if v is None else html.escape(f"{v:.4g}" if isinstance(v, float)
                                                       else str(v)))
    return "\n".join([f"<{h}>{html.escape(title)}</{h}><table><tr>"
                      + "".join(f"<th>{html.escape(c)}</th>" for c in df.columns) + "</tr>"]
                     + ["<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                        for row in df.iter_rows()] + ["</table>"])


def _pct(v) -> str:
    return "-" if v is None else f"{v:.1f}%"


def _num(v, fmt: str = ".2f") -> str:
    return "-" if v is None else format(v, fmt)


def _alarms(rows: list) -> str:
    alarmed = [r for r in rows if r.get("alarm")]
    if not alarmed:
        return "no drift alarm on any date"
    last = alarmed[-1]
    return (f"drift alarms on {len(alarmed)} of {len(rows)} dates; the latest, "
            f"{last['date']}: {last['alarm']}")


def timeline_section(doc: dict) -> tuple[str, str, list, list]:
    """The Timeline section of a replay's timeline (``benchpress replay``'s JSON: ``plan``,
    ``pooled``, ``timeline``: one row per date with date, models, cells, new_models,
    revised, var2, heldout_medae, forecast_n/medae/coverage, probes): (heading, intro,
    figures, tables)."""
    rows = doc["timeline"]
    get = lambda key: [r.get(key) for r in rows]  # noqa: E731
    dates = get("date")
    figures = [
        Figure("timeline-counts", "Registry counts per date",
               plots.timeline_counts(dates, get("models"), get("cells"), get("new_models"),
                                     get("revised")),
               "models and cells of each date's snapshot; new models and values revised by "
               "their publisher against the date before"),
        Figure("timeline-fit", "Two-factor variance and held-out error per date",
               plots.timeline_fit(dates, get("var2"), get("heldout_medae")),
               _alarms(rows))]
    scored = [r for r in rows[1:] if r.get("forecast_n")]
    pooled = doc.get("pooled") or {}
    if scored:
        png = plots.timeline_forecasts(dates, get("forecast_n"), get("forecast_medae"),
                                       get("forecast_coverage"), get("heldout_medae"))
        caption = (f"each date's forecasts scored against the values first observed at the "
                   f"next date; {len(scored)} of {len(rows) - 1} pairs scored cells; pooled percent cells: "
                   f"{pooled.get('n_cells', 0)} cells, MedAE {_num(pooled.get('medae'))}, "
                   f"coverage {_pct(pooled.get('coverage'))}")
        out = pooled.get("out_of_reach") or {}
        if out.get("n_cells"):
            caption += (f"; of them out of the model's sources at the first date: "
                        f"{out['n_cells']} cells, MedAE {_num(out.get('medae'))}, "
                        f"coverage {_pct(out.get('coverage'))}")
    else:
        png, caption = None, "no pair of consecutive dates scored any forecast cell"
    figures.append(Figure("timeline-forecasts", "Realized forecast error and interval coverage",
                          png, caption))
    probes, before = [], None
    for r in rows:
        now = r.get("probes")
        if before is None or set(now or ()) != set(before or ()):  # an order is no change
            old = set(before or ())
            probes.append({"date": r["date"],
                           "probes": ", ".join(now) if now else "not measured",
                           "added": ", ".join(p for p in now or () if p not in old),
                           "removed": ", ".join(p for p in before or () if p not in set(now or ()))})
        before = now
    tables = [(f"Probe set per date ({len(probes)} of {len(rows)} dates: the first and every "
               "change)", pl.DataFrame(probes, schema=["date", "probes", "added", "removed"])),
              ("Timeline per date", pl.DataFrame(
                  [{k: r.get(k) for k in ("date", "models", "cells", "new_models", "revised",
                                          "var2", "heldout_medae", "forecast_n",
                                          "forecast_medae", "forecast_coverage")} for r in rows],
                  schema_overrides={k: pl.Float64 for k in ("var2", "heldout_medae",
                                                            "forecast_medae",
                                                            "forecast_coverage")}))]
    intro = (f"Replay '{doc.get('plan', '?')}': {len(rows)} dates, {dates[0]} to {dates[-1]} "
             "(benchpress replay).")
    return "Timeline", intro, figures, tables


def _drift_figure(doc: dict | None) -> Figure:
    title = "Drift across snapshots"
    if not doc or not doc.get("snapshots"):
        return Figure("drift", title, None, "no snapshots to compare yet")
    snaps, trans = doc["snapshots"], doc.get("transitions", [])
    labels = [s["label"] for s in snaps]
    series = {"two-factor variance": [s["var2"] for s in snaps],
              "held-out MedAE": [s["medae"] for s in snaps],
              "fill": [s["fill"] for s in snaps], "winning rank": [s["best_rank"] for s in snaps]}
    angles = [t.get("max_angle_deg") for t in trans] if trans else None
    noise = [t.get("angle_noise_deg") for t in trans] if trans else None
    alarms = [a for t in trans for a in t.get("alarms", [])]
    cap = (f"{len(snaps)} snapshot(s); " + ("alarms: " + "; ".join(alarms) if alarms
                                             else "no drift alarm"))
    return Figure("drift", title, plots.drift_lines(labels, series, angles, noise), cap)


def build_report(bp, out: Path, *, probe_bp=None, probes_k: int = 5, seed: int = 42,
                 drift: dict | None = None, timeline: dict | None = None) -> Path:
    """Write ``out/index.html`` about the matrix of ``bp`` (a
    :class:`~benchpress.api.BenchPress`, whose predictor the held-out figures use; the
    probe curve uses ``probe_bp``, default ``bp``); returns its path.

    ``drift`` is a drift report as JSON (``benchpress drift --format json``,
    :meth:`BenchPress.drift <benchpress.api.BenchPress.drift>`); None: no drift figure.
    ``timeline`` is a replay's timeline (``<home>/replay/<name>/timeline.json``, see
    :func:`timeline_section`); None: no Timeline section.
    """
    Y = bp.matrix.values
    label = bp.matrix.label or "current"
    obs = ~np.isnan(Y)
    page = ReportPage(f"BenchPress report: {label} ({Y.shape[0]} models x "
                      f"{Y.shape[1]} benchmarks)")
    page.figures.append(Figure("pattern", "Observed pattern of the matrix", plots.pattern(obs)))
    page.figures.append(Figure("spectrum", "Singular value spectrum",
                               plots.spectrum(bp.spectrum()),
                               "z-scored (logit for percent benchmarks); the first two "
                               "components carry most of the variance"))
    res = bp.interval_coverage(bp.folds(n_folds=3, seed=seed))
    cells = res["cells"]
    pc = cells.filter(pl.col("scale") == "percent")
    head = res["overall"].to_dicts()
    page.figures.append(Figure(
        "intervals", "Predicted versus actual on held-out cells, with 90% intervals",
        plots.intervals(*(pc[c].to_numpy() for c in ("actual", "predicted", "lower", "upper",
                                                     "covered"))),
        "; ".join(f"{d['cells']} cells: coverage {100 * d['coverage']:.1f}%, median width "
                  f"{d['median_width']:.1f} points" for d in head)))
    pm = res["per_model_count"]
    page.figures.append(Figure("coverage", "Interval coverage by model score count",
                               plots.coverage_by_count(pm["model_count_bin"].to_list(),
                                                       pm["coverage"].to_list(),
                                                       pm["median_width"].to_list())))
    curve = (probe_bp or bp).probe_search().select(min(probes_k, Y.shape[1] - 1)).curve()
    page.figures.append(Figure("probes", "Probe error curve",
                               plots.probe_curve(curve["k"].to_list(), curve["medae"].to_list(),
                                                 curve["medae_hidden"].to_list()),
                               "probes: " + curve["probes"][-1]))
    rp = bp.ranking_preservation(cells=cells)
    page.figures.append(Figure("ranking", "Ranking preservation",
                               plots.ranking(list(rp.margins), list(rp.accuracy))))
    page.figures.append(_drift_figure(drift))
    page.tables.append(("Interval coverage (percent-scale cells and all cells)", res["overall"]))
    page.tables.append(("Least-covered benchmarks",
                        res["per_benchmark"].sort("coverage").head(15)))
    if timeline is not None:
        page.timeline = timeline_section(timeline)
    out = Path(out)
    target = out / "index.html"
    write_atomic(target, lambda tmp: tmp.write_text(page.html(), encoding="utf-8"))
    write_json_atomic(out / "report.json", {
        "snapshot": label, "figures": [f.id for f in page.figures if f.png],
        "intervals": head, "ranking": rp.to_json(), "probes": curve.to_dicts(),
        "timeline_figures": [f.id for f in page.timeline[2] if f.png] if page.timeline else []})
    return target
