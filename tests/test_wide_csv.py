"""The generic wide-CSV adapter: a paper's table (model column + one column per benchmark)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchpress.adapters import detect_adapter
from benchpress.adapters.wide_csv import parse_value, read
from benchpress.cli import main

URL = "https://arxiv.example/abs/2601.00001"
TABLE = ("Model,Provider,GPQA Diamond,HLE,MMLU-Pro,Made-Up Bench\n"
         "Acme-2,Acme,61.2%,20.1,—,50\n"
         '"Acme 2 Mini",Acme,"55.0 %",n/a,"71.2*",40\n'
         "Zeta-1,Zeta,140,12.5,80,\n")


def _go(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("cell, expected", [
    ("61.2%", ("61.2", None)), ("61.2", ("61.2", None)), (" 55.0 % ", ("55.0", None)),
    ("1,234", ("1234", None)), ("71.2*", ("71.2", "71.2*")), ("—", (None, None)),
    ("-", (None, None)), ("n/a", (None, None)), ("", (None, None)), (None, (None, None)),
    ("61.2 / 70.1", ("61.2 / 70.1", None)), ("high", ("high", None)),
])
def test_cell_values(cell, expected):
    assert parse_value(cell) == expected


def test_read_and_detect(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(TABLE, encoding="utf-8")
    assert detect_adapter(path).name == "wide-csv"
    out = read(path)
    assert out.models["model_id"].to_list() == ["Acme-2", "Acme 2 Mini", "Zeta-1"]
    assert out.models["provider"].to_list() == ["Acme", "Acme", "Zeta"]
    rows = {(r["model_id"], r["benchmark_id"]): r for r in out.scores.to_dicts()}
    assert rows[("Acme-2", "GPQA Diamond")]["score_raw"] == "61.2"
    assert rows[("Acme 2 Mini", "MMLU-Pro")]["notes"] == "71.2*"
    assert ("Acme-2", "MMLU-Pro") not in rows and ("Zeta-1", "Made-Up Bench") not in rows
    assert "Provider" not in set(out.scores["benchmark_id"])
    assert out.notes == ["3 blank or '-' cell(s) read as not reported"]
    # the releases format (long) is not taken for a wide table
    long = tmp_path / "long.csv"
    long.write_text("model_id,benchmark_id,score\na,hle,3\n", encoding="utf-8")
    assert detect_adapter(long).name == "releases-csv"


def test_ingest_a_pasted_table_with_its_citation(home, tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(TABLE, encoding="utf-8")
    root = home.root
    refused = _go("ingest", path, "--home", root)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert "--source-url URL" in refused.stderr and str(path) in refused.stderr
    assert not (home.registry / "cells.parquet").exists()
    not_url = _go("ingest", path, "--source-url", "see table 2", "--home", root)
    assert not_url.exit_code == 2 and "not 'see table 2'" in not_url.stderr
    assert not (home.registry / "cells.parquet").exists()

    done = _go("ingest", path, "--source-url", URL, "--id", "paper", "--home", root)
    assert done.exit_code == 3, done.stderr    # good rows landed, the rest quarantined
    cells = json.loads(_go("sql", "SELECT model_id, benchmark_id, score, reference_url FROM cells "
                                  "ORDER BY 1, 2", "--format", "json", "--home", root).stdout)
    assert {(c["model_id"], c["benchmark_id"], c["score"]) for c in cells} == {
        ("acme-2", "gpqa_diamond", 61.2), ("acme-2", "hle", 20.1),
        ("acme-2-mini", "gpqa_diamond", 55.0), ("acme-2-mini", "mmlu_pro", 71.2),
        ("zeta-1", "hle", 12.5), ("zeta-1", "mmlu_pro", 80.0)}
    assert {c["reference_url"] for c in cells} == {URL}
    quarantine = json.loads(_go("sql", "SELECT field, reason, record FROM quarantine",
                                "--format", "json", "--home", root).stdout)
    fields = sorted(q["field"] for q in quarantine)
    assert fields == ["benchmark_id", "benchmark_id", "score"]   # 2 x Made-Up Bench, GPQA 140
    assert all(q["reason"] for q in quarantine)
    suggested = _go("aliases", "suggest", "--kind", "benchmark", "--format", "json", "--home", root)
    assert suggested.exit_code == 0, suggested.stderr
    assert "made_up_bench" in suggested.stdout


def test_a_table_without_benchmark_columns_is_one_line(home, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("model,provider\na,b\n", encoding="utf-8")
    res = _go("ingest", path, "--adapter", "wide-csv", "--source-url", URL, "--home", home.root)
    assert res.exit_code == 1 and res.stderr.count("\n") == 1
    assert "no benchmark columns" in res.stderr and "Traceback" not in res.stderr
