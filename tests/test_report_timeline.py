"""`benchpress report --timeline FILE`: a replay's timeline as the report's Timeline section
(counts, fit, realized forecast error with gaps for pairs that scored nothing, the probe
set's changes); the newest replay of the home is used without the option; a bad file is
one line."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.report.page import TIMELINE_FIGURES, ReportPage, timeline_section

# about 15 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=15)

DATES = ["2026-04-10", "2026-04-24", "2026-05-08", "2026-05-22"]


def tiny_timeline() -> dict:
    """Four dates as `benchpress replay` writes them: the second pair scored no cell."""
    rows = [
        {"date": DATES[0], "snapshot": "a1", "models": 318, "cells": 3688, "var2": 0.7347,
         "heldout_medae": 3.118, "probes": ["lb_if", "lb_math", "lb_code"], "alarm": None},
        {"date": DATES[1], "snapshot": "b2", "models": 371, "cells": 5210, "new_models": 53,
         "revised": 0, "var2": 0.7421, "heldout_medae": 3.302, "forecast_n": 35,
         "forecast_medae": 10.41, "forecast_coverage": 97.14,
         "probes": ["lb_math", "lb_if", "lb_code"], "alarm": None},  # same set, reordered
        {"date": DATES[2], "snapshot": "c3", "models": 372, "cells": 5262, "new_models": 1,
         "revised": 130, "var2": 0.7890, "heldout_medae": 3.517, "forecast_n": 0,
         "forecast_medae": None, "forecast_coverage": None,
         "probes": ["lb_if", "lb_math", "lb_reasoning"], "alarm": "1 probe changed"},
        {"date": DATES[3], "snapshot": "d4", "models": 380, "cells": 5399, "new_models": 8,
         "revised": 16, "var2": 0.8004, "heldout_medae": 3.683, "forecast_n": 24,
         "forecast_medae": 4.87, "forecast_coverage": 83.33,
         "probes": ["lb_if", "lb_math", "lb_reasoning"], "alarm": None},
    ]
    return {"plan": "tiny", "pooled": {"n_cells": 59, "medae": 6.1, "coverage": 91.5},
            "timeline": rows}


def _section(text: str) -> str:
    found = re.search(r"<section id='timeline'>(.*?)</section>", text, re.S)
    assert found, "no Timeline section"
    return found.group(1)


def _check_section(text: str, doc: dict) -> None:
    section = _section(text)
    for fig in TIMELINE_FIGURES:  # every figure: an image whose data is a PNG
        block = re.search(rf"<figure id='fig-{fig}'>(.*?)</figure>", section, re.S)
        assert block, f"figure {fig} missing"
        data = re.search(r"<img src='data:image/png;base64,([A-Za-z0-9+/=]+)'", block.group(1))
        assert data, f"figure {fig} has no image"
        assert base64.b64decode(data.group(1))[:8] == b"\x89PNG\r\n\x1a\n"
    rows = doc["timeline"]
    # the probe table: the first date and the one change, not the unchanged dates
    probe_table = re.search(r"<h3>Probe set per date.*?</table>", section, re.S).group(0)
    assert re.findall(r"<tr><td>(\d{4}-\d{2}-\d{2})</td>", probe_table) == [DATES[0], DATES[2]]
    assert "<td>lb_if, lb_math, lb_reasoning</td><td>lb_reasoning</td><td>lb_code</td>" in probe_table
    # the per-date table carries the timeline's numbers
    per_date = re.search(r"<h3>Timeline per date.*?</table>", section, re.S).group(0)
    for r in rows:
        assert f"<td>{r['date']}</td><td>{r['models']}</td><td>{r['cells']}</td>" in per_date
        assert f"<td>{r['var2']:.4g}</td><td>{r['heldout_medae']:.4g}</td>" in per_date
    assert "drift alarms on 1 of 4 dates; the latest, 2026-05-08: 1 probe changed" in section
    scored = [r for r in rows[1:] if r["forecast_n"]]
    assert f"{len(scored)} of {len(rows) - 1} pairs scored cells" in section


def test_the_section_renders_figures_and_tables():
    doc = tiny_timeline()
    page = ReportPage("t", timeline=timeline_section(doc))
    _check_section(page.html(), doc)
    assert "sources at the first date" not in page.html()  # none in this timeline
    doc["pooled"]["out_of_reach"] = {"n_cells": 40, "medae": 5.2, "coverage": 85.0}
    caption = _section(ReportPage("t", timeline=timeline_section(doc)).html())
    assert "sources at the first date: 40 cells, MedAE 5.20, coverage 85" in caption


def test_pairs_without_scored_cells_are_gaps_not_zeros():
    from benchpress.report import plots

    rows = tiny_timeline()["timeline"]
    get = lambda k: [r.get(k) for r in rows]  # noqa: E731
    fig = plots.timeline_forecasts_figure(get("date"), get("forecast_n"), get("forecast_medae"),
                                          get("forecast_coverage"), get("heldout_medae"))
    medae_line, coverage_line = fig.axes[0].lines[0], fig.axes[1].lines[0]
    for line, key in ((medae_line, "forecast_medae"), (coverage_line, "forecast_coverage")):
        y = np.asarray(line.get_ydata(), dtype=float)
        assert np.isnan(y[[0, 2]]).all()  # no pair before the first date; 0 cells scored
        assert y[[1, 3]].tolist() == [rows[1][key], rows[3][key]]
    notes = [t.get_text() for t in fig.axes[0].texts]
    assert notes == [f"n={rows[1]['forecast_n']}", f"n={rows[3]['forecast_n']}"]
    assert list(fig.axes[1].lines[1].get_ydata()) == [90.0, 90.0]  # the target line
    low, high = fig.axes[0].get_ylim()  # the held-out reference fits in the axis
    assert low <= min(get("heldout_medae")) and high >= max(get("forecast_medae")[1::2])


@pytest.fixture(scope="module")
def reported(built_2026_05, tmp_path_factory):
    """One report of a home holding a replay's timeline, written without --timeline."""
    home = built_2026_05
    doc = tiny_timeline()
    folder = home.root / "replay" / "tiny"
    folder.mkdir(parents=True)
    (folder / "timeline.json").write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path_factory.mktemp("report") / "report"
    r = CliRunner().invoke(main, ["report", "--home", str(home.root), "--out", str(out),
                                  "--probe-method", "published", "--probes-k", "2"])
    return home, doc, out, r


def test_the_newest_replay_is_used_and_named(reported):
    home, doc, out, r = reported
    assert r.exit_code == 0, r.output
    assert f"timeline: {home.root / 'replay' / 'tiny' / 'timeline.json'}" in r.stderr
    _check_section((out / "index.html").read_text(encoding="utf-8"), doc)
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert summary["timeline_figures"] == list(TIMELINE_FIGURES)


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "not a replay timeline"),
    (json.dumps({"timeline": []}), "no 'timeline' list"),
    (json.dumps({"timeline": [{"date": "10/04/2026"}]}), "timeline[0] has no 'date'"),
    (json.dumps({"timeline": [{"date": "2026-04-10", "models": "many"}]}), "models not a number"),
])
def test_a_bad_timeline_file_is_one_line(reported, tmp_path, content, says):
    home = reported[0]
    bad = tmp_path / "timeline.json"
    bad.write_text(content, encoding="utf-8")
    r = CliRunner().invoke(main, ["report", "--home", str(home.root), "--out",
                                  str(tmp_path / "r"), "--timeline", str(bad)])
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert says in lines[0] and not (tmp_path / "r").exists()
