"""Loader of the real BenchPress 2026-05 matrix for the predictor tests (read-only)."""

from __future__ import annotations

import csv
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from benchpress.predict import BenchmarkScales

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO.parent / "shared" / "data" / "benchpress-2026-05"
DATA_JSON = DATA_DIR / "data.json"
PUBLISHED_FOLDS = DATA_DIR / "folds_s10_f3_bs42_ms1.json"
BENCHMARKS_CSV = REPO / "schemas" / "benchmarks.csv"


@lru_cache(maxsize=1)
def _load():
    data = json.loads(DATA_JSON.read_text())
    model_ids = [m["id"] for m in data["models"]]
    bench_ids = [b["id"] for b in data["benchmarks"]]
    Y = np.array([[np.nan if v is None else float(v) for v in row] for row in data["observed"]])
    with BENCHMARKS_CSV.open(newline="") as fh:
        scales = BenchmarkScales.from_records(list(csv.DictReader(fh)), bench_ids)
    return Y, model_ids, bench_ids, scales


def load_matrix():
    """(Y (84, 133) with NaN, model_ids, benchmark_ids, BenchmarkScales)."""
    assert DATA_JSON.is_file(), f"the shared data must sit beside the repo: {DATA_DIR}"
    Y, model_ids, bench_ids, scales = _load()
    return Y.copy(), list(model_ids), list(bench_ids), scales
