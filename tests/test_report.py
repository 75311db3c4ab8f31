"""`benchpress report`: the HTML page opened in headless Chromium, every plot present.

Chromium must be installed (Debian: `apt-get install -y chromium`); the test does not
skip itself without it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.report import FIGURES

pytestmark = pytest.mark.slow(seconds=21)  # a browser: `make test-quick` leaves it out, `make test` runs it

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    assert exe, "headless Chromium is needed for this test: apt-get install -y chromium"
    return exe


def test_report_page_renders_every_plot(built_2026_05, tmp_path):
    from benchpress.store.snapshot import create_snapshot

    create_snapshot(built_2026_05, tag="r1")
    out = tmp_path / "report"
    r = CliRunner().invoke(main, ["report", "--home", str(built_2026_05.root), "--out", str(out),
                                  "--probe-method", "published", "--probes-k", "3"])
    assert r.exit_code == 0, r.output
    page = out / "index.html"
    text = page.read_text()
    assert "http://" not in text and "https://" not in text     # self-contained
    dom = subprocess.run(
        [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=True).stdout
    for fig in FIGURES:
        block = re.search(rf"<figure id=\"fig-{fig}\">(.*?)</figure>", dom, re.S)
        assert block, f"figure {fig} missing from the rendered page"
        img = re.search(r"<img [^>]*>", block.group(1))
        assert img, f"figure {fig} has no image"
        assert re.search(r'alt="[^"]+"', img.group(0)) and re.search(r'title="[^"]+"', img.group(0))
        width = re.search(r'data-natural-width="(\d+)"', img.group(0))
        assert width and int(width.group(1)) > 100, f"figure {fig} did not decode in Chromium"
    summary = json.loads((out / "report.json").read_text())
    assert summary["figures"] == list(FIGURES)
    assert 0.85 < summary["intervals"][0]["coverage"] < 0.95
    r = CliRunner().invoke(main, ["report", "--home", str(built_2026_05.root), "--snapshot", "zz9"])
    assert r.exit_code == 1 and "not found" in r.output
    # --param reaches the report's predictors: a name neither takes fails before any fit
    r = CliRunner().invoke(main, ["report", "--home", str(built_2026_05.root), "--out",
                                  str(tmp_path / "r2"), "--param", "n_startz=2"])
    assert r.exit_code == 2 and "unknown parameter 'n_startz' for method 'default'" in r.output
