"""The report's figures: matplotlib (Agg) drawings returned as base64 PNG strings.

Each function takes plain arrays/frames and draws one figure; none reads files.
"""

from __future__ import annotations

import base64
import io

import matplotlib.dates as mdates
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

__all__ = ["pattern", "spectrum", "intervals", "coverage_by_count", "coverage_figure",
           "probe_curve", "probe_figure", "ranking", "drift_lines", "drift_figure",
           "steady_ylim", "MIN_SPAN", "timeline_counts", "timeline_fit", "timeline_forecasts",
           "timeline_counts_figure", "timeline_fit_figure", "timeline_forecasts_figure"]


def _subplots(nrows: int = 1, ncols: int = 1, *, figsize, layout=None, squeeze: bool = True):
    """A figure and its axes, as `pyplot.subplots` gives them, but a `Figure` on an Agg
    canvas of its own: no pyplot, so importing this module or drawing sets no backend or
    global figure state."""
    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)  # the figure's own Agg canvas (it measures text as it is drawn)
    return fig, fig.subplots(nrows, ncols, squeeze=squeeze)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def pattern(observed) -> str:
    """Observed cells (n_models, n_benchmarks), rows and columns sorted by count."""
    obs = np.asarray(observed, dtype=bool)
    r, c = np.argsort(-obs.sum(axis=1), kind="stable"), np.argsort(-obs.sum(axis=0), kind="stable")
    fig, ax = _subplots(figsize=(8, 5))
    ax.imshow(obs[np.ix_(r, c)], aspect="auto", cmap="Greys", interpolation="nearest")
    ax.set_xlabel(f"benchmarks ({obs.shape[1]}, most scored first)")
    ax.set_ylabel(f"models ({obs.shape[0]}, most scored first)")
    ax.set_title(f"Observed cells: {int(obs.sum())} of {obs.size} ({100 * obs.mean():.1f}% filled)")
    return _png(fig)


def spectrum(curves: dict) -> str:
    """Share of variance per singular value; ``curves`` maps a label to singular values."""
    fig, ax = _subplots(figsize=(6, 4))
    for label, s in curves.items():
        s = np.asarray(s, dtype=float)
        share = s ** 2 / max(float((s ** 2).sum()), 1e-300)
        k = np.arange(1, min(share.size, 12) + 1)
        ax.plot(k, share[: k.size], marker="o", label=label)
    ax.set_xlabel("component")
    ax.set_ylabel("share of variance")
    ax.set_title("Singular value spectrum")
    ax.legend(fontsize=8)
    return _png(fig)


def intervals(actual, predicted, lower, upper, covered, *, max_points: int = 400) -> str:
    """Predicted vs actual held-out scores with their 90% intervals (percent cells); a
    fixed random subset of ``max_points`` cells is drawn, the title gives full coverage."""
    a, p = np.asarray(actual), np.asarray(predicted)
    lo, up, cov = np.asarray(lower), np.asarray(upper), np.asarray(covered, dtype=bool)
    total = cov.mean() if cov.size else float("nan")
    if a.size > max_points:
        keep = np.random.default_rng(0).choice(a.size, max_points, replace=False)
        a, p, lo, up, cov = a[keep], p[keep], lo[keep], up[keep], cov[keep]
    fig, ax = _subplots(figsize=(6, 6))
    for mask, color, label in ((cov, "tab:blue", "inside interval"),
                               (~cov, "tab:red", "outside interval")):
        ax.errorbar(a[mask], p[mask], yerr=[p[mask] - lo[mask], up[mask] - p[mask]], fmt="o",
                    ms=2, elinewidth=0.4, alpha=0.5, color=color,
                    label=label)
    ax.plot([0, 100], [0, 100], color="k", lw=0.8)
    ax.set_xlabel("actual score")
    ax.set_ylabel("predicted score (90% interval)")
    ax.set_title(f"Held-out cells: coverage {100 * total:.1f}% ({a.size} drawn)")
    ax.legend(fontsize=8)
    return _png(fig)


def coverage_by_count(labels, coverage, width, target: float = 0.9) -> str:
    """Coverage and median width per bin of the model's score count."""
    return _png(coverage_figure(labels, coverage, width, target))


def coverage_figure(labels, coverage, width, target: float = 0.9):
    """The figure of :func:`coverage_by_count`: the bar labels sit in headroom above 100%
    (the axis stops at 1.3, ticks at 0-1), below the title."""
    fig, ax = _subplots(figsize=(6, 4))
    x = np.arange(len(labels))
    ax.bar(x, coverage, color="tab:blue")
    ax.axhline(target, color="k", ls="--", lw=0.8)
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 1.3)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("scores the model has")
    ax.set_ylabel("coverage")
    for xi, c, w in zip(x, coverage, width):
        ax.text(xi, c + 0.02, f"{100 * c:.0f}%\nw={w:.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_title("Interval coverage by model score count\n(w = median width, points)", pad=8)
    return fig


def probe_curve(k, medae, medae_hidden) -> str:
    """Transcript-recovery error as the probe set grows."""
    return _png(probe_figure(k, medae, medae_hidden))


def probe_figure(k, medae, medae_hidden):
    """The figure of :func:`probe_curve`: whole numbers of probes on the x axis."""
    fig, ax = _subplots(figsize=(6, 4))
    ax.plot(k, medae, marker="o", label="all cells (probes exact)")
    ax.plot(k, medae_hidden, marker="s", label="non-probe cells")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("probes")
    ax.set_ylabel("MedAE (points)")
    ax.set_title("Probe error curve")
    ax.legend(fontsize=8)
    return fig


def ranking(margins, accuracy) -> str:
    """Share of model pairs whose order the completed leaderboards keep, per margin."""
    fig, ax = _subplots(figsize=(6, 4))
    ax.bar([str(m) for m in margins], accuracy, color="tab:green")
    for i, v in enumerate(accuracy):
        ax.text(i, v + 1, f"{v:.1f}%", ha="center", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_xlabel("minimum true gap (points)")
    ax.set_ylabel("pairs kept in order (median over benchmarks, %)")
    ax.set_title("Ranking preservation")
    return _png(fig)


MIN_SPAN = 0.1  # a drift panel's y axis spans at least this share of its values' size


def steady_ylim(values, min_span: float = MIN_SPAN) -> tuple[float, float] | None:
    """y limits spanning at least ``min_span`` times the values' magnitude, centred on
    them, so that 4.20 -> 4.22 reads as the small step it is; None without finite values.

    >>> steady_ylim([4.20, 4.22])
    (3.999, 4.421)
    """
    v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return None
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, min_span * max(abs(lo), abs(hi))) or 1.0  # all zeros: a unit span
    if hi - lo >= span:  # already wide: a 5% margin each side
        return round(lo - 0.05 * span, 9), round(hi + 0.05 * span, 9)
    mid = (lo + hi) / 2
    return round(mid - span / 2, 9), round(mid + span / 2, 9)


def drift_lines(labels, series: dict, angles=None, noise=None) -> str:
    """Per-snapshot series (e.g. var2, MedAE, fill) and the largest angle per transition
    (bars) with its bootstrap noise level (markers)."""
    return _png(drift_figure(labels, series, angles, noise))


def drift_figure(labels, series: dict, angles=None, noise=None):
    """The figure of :func:`drift_lines`; each series panel's y axis is set by
    :func:`steady_ylim` (no autoscaled cliff from a tiny change)."""
    n = len(series) + (1 if angles is not None else 0)
    fig, axes = _subplots(1, n, figsize=(3.4 * n, 3.4), squeeze=False)
    x = np.arange(len(labels))
    for ax, (name, values) in zip(axes[0], series.items()):
        ax.plot(x, [np.nan if v is None else v for v in values], marker="o")
        limits = steady_ylim(values)
        if limits is not None:
            ax.set_ylim(*limits)
        ax.set_title(name, fontsize=9)
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=7)
    if angles is not None:
        ax = axes[0][-1]
        ax.bar(np.arange(len(angles)), [np.nan if a is None else a for a in angles])
        if noise is not None:
            ax.plot(np.arange(len(noise)), [np.nan if v is None else v for v in noise], "k_",
                    ms=20, label="95% resampling noise")
            ax.legend(fontsize=7)
        ax.set_xticks(np.arange(len(angles)), labels[1:], rotation=45, ha="right", fontsize=7)
        ax.set_title("largest principal angle (deg)", fontsize=9)
    fig.suptitle("Drift across snapshots")
    return fig


def _floats(values) -> np.ndarray:
    """(n,) floats; None becomes NaN (a gap in a line, never a zero)."""
    return np.asarray([np.nan if v is None else v for v in values], dtype=float)


def _date_axis(ax, dates) -> None:
    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.tick_params(axis="x", labelsize=7)
    if np.size(dates):  # a few days' margin (one date alone still spans an interval)
        ax.set_xlim(np.min(dates) - np.timedelta64(3, "D"), np.max(dates) + np.timedelta64(3, "D"))


def _steady_line(ax, days, values, floor: float | None = None, **style) -> None:
    ax.plot(days, _floats(values), marker="o", ms=3, **style)
    limits = steady_ylim(values)
    if limits is not None:
        ax.set_ylim(limits[0] if floor is None else max(floor, limits[0]), limits[1])


def timeline_counts(dates, models, cells, new_models, revised) -> str:
    """Registry counts per date of a replay."""
    return _png(timeline_counts_figure(dates, models, cells, new_models, revised))


def timeline_counts_figure(dates, models, cells, new_models, revised):
    """The figure of :func:`timeline_counts`: ``dates`` (n,) ISO days; models and cells
    (n,) per snapshot; new_models and revised (n,) against the date before (None on the
    first date). Integer ticks throughout."""
    days = np.asarray(dates, dtype="datetime64[D]")
    fig, axes = _subplots(1, 4, figsize=(13, 3.4), layout="constrained")
    for ax, values, name in ((axes[0], models, "models"), (axes[1], cells, "cells")):
        _steady_line(ax, days, values, floor=0)
        ax.set_title(name, fontsize=9)
    for ax, values, name, color in ((axes[2], new_models, "new models", "tab:blue"),
                                    (axes[3], revised, "revised values", "tab:orange")):
        ax.bar(days, np.nan_to_num(_floats(values)), width=np.timedelta64(2, "D"), color=color)
        ax.set_title(f"{name} (vs the date before)", fontsize=9)
    for ax in axes:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _date_axis(ax, days)
    fig.suptitle("Registry counts per date")
    return fig


def timeline_fit(dates, var2, heldout_medae) -> str:
    """Two-factor variance and held-out MedAE per date of a replay."""
    return _png(timeline_fit_figure(dates, var2, heldout_medae))


def timeline_fit_figure(dates, var2, heldout_medae):
    """The figure of :func:`timeline_fit`: (n,) values per date, None where not measured;
    y axes by :func:`steady_ylim`."""
    days = np.asarray(dates, dtype="datetime64[D]")
    fig, axes = _subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    _steady_line(axes[0], days, var2)
    axes[0].set_title("two-factor variance (largest complete submatrix)", fontsize=9)
    _steady_line(axes[1], days, heldout_medae, floor=0)
    axes[1].set_title("held-out MedAE (points, 3 folds)", fontsize=9)
    for ax in axes:
        _date_axis(ax, days)
    fig.suptitle("Fit per date")
    return fig


def timeline_forecasts(dates, n_cells, medae, coverage, heldout_medae,
                       target: float = 90.0) -> str:
    """Realized error of each date's forecasts, scored at the next date."""
    return _png(timeline_forecasts_figure(dates, n_cells, medae, coverage, heldout_medae, target))


def timeline_forecasts_figure(dates, n_cells, medae, coverage, heldout_medae,
                              target: float = 90.0):
    """The figure of :func:`timeline_forecasts`: all (n,) per date, the pair values at the
    later date of each consecutive pair (n_cells 0 or None, medae/coverage None: a gap,
    never a zero). Left: realized MedAE with the held-out MedAE as a dashed reference,
    each point labelled with its number of scored cells; right: interval coverage (%)
    with the ``target`` line."""
    days = np.asarray(dates, dtype="datetime64[D]")
    n = np.nan_to_num(_floats(n_cells)).astype(int)
    m, c = _floats(medae), _floats(coverage)
    m[n == 0], c[n == 0] = np.nan, np.nan
    fig, axes = _subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    ax = axes[0]
    ax.plot(days, m, marker="o", ls="none", color="tab:red", label="realized MedAE")
    ax.plot(days, _floats(heldout_medae), ls="--", color="grey", lw=1, label="held-out MedAE")
    limits = steady_ylim(np.concatenate([m, _floats(heldout_medae)]))
    if limits is not None:
        ax.set_ylim(max(0.0, limits[0]), limits[1] + 0.12 * (limits[1] - limits[0]))
    ax.set_ylabel("MedAE (points)")
    ax.set_title("realized forecast error (n = cells scored)", fontsize=9)
    ax2 = axes[1]
    ax2.plot(days, c, marker="s", ls="none", color="tab:blue", label="realized coverage")
    ax2.axhline(target, color="k", ls="--", lw=0.8, label=f"{target:g}% target")
    ax2.set_ylim(0, 110)
    ax2.set_ylabel("90% interval coverage (%)")
    ax2.set_title("realized interval coverage", fontsize=9)
    for axis, values in ((ax, m), (ax2, c)):
        for d, v, k in zip(days[np.isfinite(values)], values[np.isfinite(values)],
                           n[np.isfinite(values)]):
            axis.annotate(f"n={k}", (d, v), textcoords="offset points", xytext=(0, 5),
                          ha="center", fontsize=7)
        empty = days[1:][n[1:] == 0]  # pairs that scored nothing: a grey tick, no value
        axis.plot(empty, np.full(empty.size, 0.02), "|", color="grey", ms=8,
                  transform=axis.get_xaxis_transform(), label="no cell scored")
        axis.legend(fontsize=7)
        _date_axis(axis, days)
    fig.suptitle(f"Forecasts scored at the next date ({int((n > 0).sum())} of "
                 f"{max(len(days) - 1, 0)} pairs scored cells; the rest are gaps)")
    return fig
