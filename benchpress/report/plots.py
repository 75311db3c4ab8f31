"""The report's figures: matplotlib (Agg) drawings returned as base64 PNG strings.

Each function takes plain arrays/frames and draws one figure; none reads files.
"""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

__all__ = ["pattern", "spectrum", "intervals", "coverage_by_count", "coverage_figure",
           "probe_curve", "probe_figure", "ranking", "drift_lines", "drift_figure",
           "steady_ylim", "MIN_SPAN"]


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def pattern(observed) -> str:
    """Observed cells (n_models, n_benchmarks), rows and columns sorted by count."""
    obs = np.asarray(observed, dtype=bool)
    r, c = np.argsort(-obs.sum(axis=1), kind="stable"), np.argsort(-obs.sum(axis=0), kind="stable")
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.imshow(obs[np.ix_(r, c)], aspect="auto", cmap="Greys", interpolation="nearest")
    ax.set_xlabel(f"benchmarks ({obs.shape[1]}, most scored first)")
    ax.set_ylabel(f"models ({obs.shape[0]}, most scored first)")
    ax.set_title(f"Observed cells: {int(obs.sum())} of {obs.size} ({100 * obs.mean():.1f}% filled)")
    return _png(fig)


def spectrum(curves: dict) -> str:
    """Share of variance per singular value; ``curves`` maps a label to singular values."""
    fig, ax = plt.subplots(figsize=(6, 4))
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
    fig, ax = plt.subplots(figsize=(6, 6))
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
    fig, ax = plt.subplots(figsize=(6, 4))
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
    fig, ax = plt.subplots(figsize=(6, 4))
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
    fig, ax = plt.subplots(figsize=(6, 4))
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
    fig, axes = plt.subplots(1, n, figsize=(3.4 * n, 3.4), squeeze=False)
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
