"""The app's downloads and its help page: CSV of the Predict and Compare rows (the same rows
as their JSON under /api/), and the glossary with the served model's own figures."""

from __future__ import annotations

import polars as pl

from benchpress.predict.intervals.calibrator import TRUST_POINTS
from benchpress.validate.text import csv_safe_frame

from benchpress.app import views

__all__ = ["predict_csv", "compare_csv", "glossary"]


def _csv(rows: list[dict]) -> str:
    """Rows as CSV (cells a spreadsheet would read as a formula defused)."""
    return csv_safe_frame(pl.DataFrame(rows, infer_schema_length=None)).write_csv()


def predict_csv(state: views.AppState, scores: str | None, metadata: str | None = None) -> str:
    """The predicted row of /api/predict, one line per benchmark."""
    return _csv(views.predict(state, scores, metadata)["predictions"])


def compare_csv(state: views.AppState, models: str | None, new: list[str] | None = None) -> str:
    """The comparison of /api/compare, one line per benchmark."""
    return _csv(views.compare(state, models, new)["rows"])


def glossary(state: views.AppState) -> dict:
    """What the help page explains, with the served model's numbers behind each term."""
    eng = state.engine

    def calibration(cal) -> dict:
        return {"coverage": round(100 * (1 - cal.alpha)), "q": cal.q_, "n_cal": cal.n_cal_,
                "q_out": getattr(cal, "q_out_", None), "n_out": getattr(cal, "n_out_", 0)}
    return {"served": state.label, "method": eng.bp.method, "trust_points": TRUST_POINTS,
            "cells": calibration(eng.cal_cells), "new_models": calibration(eng.cal_new),
            "n_models": len(eng.bp.matrix.model_ids),
            "n_benchmarks": len(eng.bp.matrix.benchmark_ids)}
