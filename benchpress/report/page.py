"""`benchpress report`: one self-contained HTML page about a matrix version.

Figures (PNG embedded as data URIs, each in a ``<figure id=...>`` with an ``<img alt
title>``): the observed pattern, the singular value spectrum, predicted versus actual
held-out cells with their calibrated 90% intervals, interval coverage by the model's
score count, the probe error curve, ranking preservation, and drift across snapshots.
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

__all__ = ["Figure", "ReportPage", "build_report", "FIGURES"]

#: Figure ids, in page order.
FIGURES = ("pattern", "spectrum", "intervals", "coverage", "probes", "ranking", "drift")


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

    def html(self) -> str:
        parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                 f"<title>{html.escape(self.title)}</title><style>body{{font-family:sans-serif;"
                 "max-width:1000px;margin:2em auto}figure{margin:2em 0}img{max-width:100%}"
                 "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
                 "padding:2px 6px}</style></head><body>",
                 f"<h1>{html.escape(self.title)}</h1>"]
        for f in self.figures:
            parts.append(f"<figure id='fig-{f.id}'><h2>{html.escape(f.title)}</h2>")
            if f.png:
                parts.append(f"<img src='data:image/png;base64,{f.png}' alt='{html.escape(f.title)}'"
                             f" title='{html.escape(f.title)}'>")
            parts.append(f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
        for title, df in self.tables:
            parts.append(f"<h2>{html.escape(title)}</h2><table><tr>"
                         + "".join(f"<th>{html.escape(c)}</th>" for c in df.columns) + "</tr>")
            for row in df.iter_rows():
                parts.append("<tr>" + "".join(
                    f"<td>{'' if v is None else html.escape(f'{v:.4g}' if isinstance(v, float) else str(v))}</td>"
                    for v in row) + "</tr>")
            parts.append("</table>")
        # lets a headless browser report that every figure decoded (see tests/test_report.py)
        parts.append("<script>window.addEventListener('load',()=>{document.querySelectorAll("
                     "'img').forEach(i=>i.setAttribute('data-natural-width',i.naturalWidth))})"
                     "</script></body></html>")
        return "\n".join(parts)


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
                 drift: dict | None = None) -> Path:
    """Write ``out/index.html`` about the matrix of ``bp`` (a
    :class:`~benchpress.api.BenchPress`, whose predictor the held-out figures use; the
    probe curve uses ``probe_bp``, default ``bp``); returns its path.

    ``drift`` is a drift report as JSON (``benchpress drift --format json``,
    :meth:`BenchPress.drift <benchpress.api.BenchPress.drift>`); None: no drift figure.
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
    out = Path(out)
    target = out / "index.html"
    write_atomic(target, lambda tmp: tmp.write_text(page.html(), encoding="utf-8"))
    write_json_atomic(out / "report.json", {
        "snapshot": label, "figures": [f.id for f in page.figures if f.png],
        "intervals": head, "ranking": rp.to_json(), "probes": curve.to_dicts()})
    return target
