"""Reports: interval coverage, drift across snapshots, and the HTML report page.

This subpackage wires the store (matrix folders, snapshots) to the predictor's
diagnostics; the CLI commands ``intervals``, ``drift`` and ``report`` call it.
"""

from benchpress.report.coverage import (
    coverage_json, evaluate_intervals, interval_coverage, summarize,
)
from benchpress.report.versions import drift_report, load_version, select_versions

__all__ = ["FIGURES", "build_report", "coverage_json", "drift_report", "evaluate_intervals",
           "interval_coverage", "load_version", "select_versions", "summarize"]


def __getattr__(name):
    # the page pulls in matplotlib (~0.4 s); import it only when a report is made
    if name in ("FIGURES", "build_report"):
        from benchpress.report import page

        return getattr(page, name)
    raise AttributeError(name)
