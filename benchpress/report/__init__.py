"""Reports: interval coverage, drift across snapshots, and the HTML report page.

This subpackage wires the store (matrix folders, snapshots) to the predictor's
diagnostics; the CLI commands ``intervals``, ``drift`` and ``report`` call it.
"""

from benchpress.report.coverage import (
    coverage_json, evaluate_intervals, interval_coverage, summarize,
)
from benchpress.report.page import FIGURES, build_report
from benchpress.report.versions import drift_report, load_version, select_versions

__all__ = ["FIGURES", "build_report", "coverage_json", "drift_report", "evaluate_intervals",
           "interval_coverage", "load_version", "select_versions", "summarize"]
