"""The report's charts read as they should: bar labels below the title, whole numbers of
probes, and drift panels that do not turn a 0.02 step into a cliff."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from benchpress.report import plots


def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def test_coverage_labels_stay_below_the_title_and_inside_the_axes():
    fig = plots.coverage_figure(["3-5", "6-10", "11+"], [0.99, 1.0, 0.88], [30.2, 25.1, 20.0])
    renderer = _drawn(fig)
    ax = fig.axes[0]
    title = ax.title.get_window_extent(renderer)
    frame = ax.get_window_extent(renderer)
    labels = [t for t in ax.texts if "%" in t.get_text()]
    assert len(labels) == 3
    for t in labels:
        box = t.get_window_extent(renderer)
        assert box.y1 <= title.y0 and box.y1 <= frame.y1, t.get_text()
    assert max(ax.get_yticks()) == pytest.approx(1.0)  # no tick above 100%
    plt.close(fig)


def test_probe_curve_ticks_are_whole_probes():
    fig = plots.probe_figure([1, 2, 3], [6.0, 5.0, 4.5], [6.5, 5.6, 5.1])
    _drawn(fig)
    ticks = [t for t in fig.axes[0].get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)
    plt.close(fig)


@pytest.mark.parametrize(("values", "lo", "hi"), [([4.20, 4.22], 3.999, 4.421),
                                                   ([0.93, 0.94, 0.935], 0.888, 0.982)])
def test_a_small_drift_step_gets_a_sensible_y_span(values, lo, hi):
    assert plots.steady_ylim(values) == pytest.approx((lo, hi))
    fig = plots.drift_figure([f"s{i}" for i in range(len(values))], {"medae": values})
    bottom, top = fig.axes[0].get_ylim()
    assert top - bottom >= plots.MIN_SPAN * max(values) - 1e-12
    # the step is at most a quarter of the axis: no cliff
    assert (max(values) - min(values)) / (top - bottom) < 0.25
    plt.close(fig)


def test_a_real_change_still_fills_the_panel():
    bottom, top = plots.steady_ylim([2.0, 8.0])
    assert (bottom, top) == pytest.approx((1.7, 8.3))
    assert plots.steady_ylim([None, float("nan")]) is None
