"""Epoch AI's other 34 `external_benchmark_*.csv` files (epoch-2025-12-external), through the
existing Epoch adapter: every file is described, counts match the raw files, spot values, and
what is quarantined is only what names no model or repeats a row."""

from __future__ import annotations

import csv
import json
import math

import pytest

from benchpress.adapters import detect_adapter, epoch
from benchpress.store.ingest import ingest
from benchpress.store.sql import query
from tests.conftest import SHARED_DATA, build_repo_sources

EXTERNAL_DIR = SHARED_DATA / "epoch-2025-12-external"
SID = "epoch-2025-12-external"


def _records(path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return [{k.strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh)]


def _expected_rows(no_model: bool = False) -> int:
    """Non-blank score cells of every described column (of rows without a model version),
    counted from the raw files."""
    n = 0
    for f in EXTERNAL_DIR.glob("external_benchmark_*.csv"):
        spec = epoch.EXTERNAL[f.stem.removeprefix("external_benchmark_")]
        cols = [c for c, _ in spec["scores"]] if "scores" in spec else [spec["score"]]
        n += sum(1 for r in _records(f) for c in cols
                 if r.get(c) and (not no_model or not r.get("Model version")))
    return n


@pytest.fixture(scope="module")
def reg(tmp_path_factory, shared_data):
    return build_repo_sources(tmp_path_factory.mktemp("ex") / "ws", (SID,))


def _sql(home, text, params=None):
    return query(home.registry, text, params)


def test_every_external_file_of_the_commit_is_described():
    stems = {f.stem.removeprefix("external_benchmark_") for d in ("epoch-2025-12", "epoch-2025-12-external")
             for f in (SHARED_DATA / d).glob("external_benchmark_*.csv")}
    assert len(stems) == 37
    assert stems == set(epoch.EXTERNAL)  # none is left to the unknown-scale fallback
    out = epoch.read(EXTERNAL_DIR)
    assert out.notes == []
    assert not any("not described in epoch.EXTERNAL" in (n or "") for n in out.scores["notes"])


def test_counts_and_reasons_on_the_real_files(reg):
    home, summary = reg
    s = summary[SID]
    assert s.rows_read == _expected_rows() == 2877
    assert s.rows_accepted + s.rows_quarantined == s.rows_read
    assert all("empty model name" in r or "duplicate of an earlier row" in r for r in s.reasons)
    assert not any("no known scale" in r or "outside the benchmark" in r for r in s.reasons)
    # every score cell of a row without a model version is quarantined, and only those
    assert sum("empty model name" in r for r in s.reasons) == _expected_rows(no_model=True) == 436
    per_file = dict(_sql(home, """SELECT split_part(row, ' ', 1), count(*) FROM scores WHERE source_id = $s
                                  GROUP BY 1""", {"s": SID}).iter_rows())
    assert len(per_file) == 34  # every file contributed accepted rows


def test_spot_values_against_the_raw_files(reg):
    home, _ = reg

    def one(model, bench):
        return _sql(home, """SELECT score, score_raw, reported_setting, reference_url FROM scores
                             WHERE source_id = $s AND raw_model_id = $m AND benchmark_id = $b""",
                    {"s": SID, "m": model, "b": bench}).row(0, named=True)

    arc = one("o3-2025-04-16_medium", "arc_agi_1")
    assert (arc["score"], arc["score_raw"]) == (54.0, "54%")
    metr_raw = next(r for r in _records(EXTERNAL_DIR / "external_benchmark_metr.csv")
                    if r["Model version"] == "claude-3-5-sonnet-20240620")
    assert math.isclose(one("claude-3-5-sonnet-20240620", "metr_time_horizon")["score"],
                        float(metr_raw["Time horizon"]))
    lb = one("gemini-2.5-pro-exp-03-25", "livebench")
    assert lb["score"] == 82.35
    assert json.loads(lb["reported_setting"]) == {"livebench_version": "LiveBench-2024-11-25"}
    assert one("gemini-2.5-pro-exp-03-25", "livebench_if_avg")["score"] == 80.59
    video = {b: one("gemini-1.5-pro-001", b)["score"] for b in ("video_mme", "video_mme_with_subtitles")}
    assert video == {"video_mme": 75.0, "video_mme_with_subtitles": 81.3}
    mmlu = one("amazon.nova-lite-v1:0", "mmlu")
    assert mmlu["score"] == 77.0 and json.loads(mmlu["reported_setting"]) == {"shots": "5"}
    writing = _sql(home, """SELECT min(score), max(score) FROM scores WHERE benchmark_id = 'lech_mazur_writing'""").row(0)
    assert 0 < writing[0] < writing[1] <= 10  # its own 0-10 scale, not percent
    scales = dict(_sql(home, "SELECT benchmark_id, scale FROM benchmarks").iter_rows())
    assert (scales["mcbench_elo"], scales["metr_time_horizon"], scales["simplebench"]) == ("elo", "score", "percent")


def test_ingest_detects_the_folder(home):
    assert detect_adapter(EXTERNAL_DIR).name == "epoch"
    sid, report = ingest(home, str(EXTERNAL_DIR), source_id="ext")
    s = next(x for x in report.sources if x.source_id == sid)
    assert (s.adapter, s.rows_read) == ("epoch", 2877)
