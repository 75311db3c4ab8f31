"""add-model on a recorded model: a newer citation supersedes, a value can be retracted (issue 13.3)."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from tests.conftest import BP_2026_05


def _go(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def ws(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("upd") / "ws"
    assert _go("init", root, "--no-git").exit_code == 0
    assert _go("ingest", BP_2026_05, "--id", "bp", "--home", root).exit_code == 0
    return root


def _sql(ws, query):
    result = _go("sql", query, "--format", "json", "--home", ws)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _lines(ws):
    with open(ws / "sources" / "releases.csv", encoding="utf-8", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["model_id"] == "acme-2"]


def test_a_newer_citation_supersedes_and_says_so_then_a_retraction(ws):
    first = _go("add-model", "acme-2", "--scores", "hle=24.3,gpqa_diamond=78.4", "--source",
                "https://acme.example/a", "--home", ws)
    assert first.exit_code == 0, first.stderr
    second = _go("add-model", "acme-2", "--scores", "hle=25", "--source",
                 "https://acme.example/b", "--home", ws)
    assert second.exit_code == 0, second.stderr
    assert "already recorded" in second.stderr
    assert "hle: 24.3 -> 25" in second.stderr
    assert "https://acme.example/b supersedes https://acme.example/a" in second.stderr
    cells = _sql(ws, "SELECT benchmark_id, score, reference_url, n_disagreeing FROM cells "
                     "WHERE model_id = 'acme-2' ORDER BY 1")
    assert cells == [
        {"benchmark_id": "gpqa_diamond", "score": 78.4, "reference_url": "https://acme.example/a",
         "n_disagreeing": 0},
        {"benchmark_id": "hle", "score": 25.0, "reference_url": "https://acme.example/b",
         "n_disagreeing": 0}]
    assert _sql(ws, "SELECT * FROM conflicts WHERE model_id = 'acme-2'") == []
    # both citations kept, the old one marked
    kept = _sql(ws, "SELECT score, reference_url, audit_status FROM scores "
                    "WHERE model_id = 'acme-2' AND benchmark_id = 'hle' ORDER BY score")
    assert kept == [{"score": 24.3, "reference_url": "https://acme.example/a", "audit_status": "superseded"},
                    {"score": 25.0, "reference_url": "https://acme.example/b", "audit_status": None}]

    gone = _go("add-model", "acme-2", "--retract", "gpqa_diamond", "--reason", "wrong setting",
               "--source", "https://acme.example/erratum", "--home", ws)
    assert gone.exit_code == 0, gone.stderr
    assert "gpqa_diamond: 78.4" in gone.stderr and "retracted (wrong setting" in gone.stderr
    assert [c["benchmark_id"] for c in _sql(ws, "SELECT benchmark_id FROM cells "
                                                "WHERE model_id = 'acme-2'")] == ["hle"]
    audit = _sql(ws, "SELECT score, audit_status, notes FROM scores WHERE model_id = 'acme-2' "
                     "AND benchmark_id = 'gpqa_diamond'")
    assert audit == [{"score": 78.4, "audit_status": "retracted",
                      "notes": "retracted: wrong setting (https://acme.example/erratum)"}]
    assert [(r["benchmark_id"], r["audit_status"]) for r in _lines(ws)] == [
        ("hle", ""), ("hle", "superseded"), ("gpqa_diamond", "retracted")]

    # nothing live left to retract: one line, exit 1, nothing changed
    before = (ws / "sources" / "releases.csv").read_bytes()
    again = _go("add-model", "acme-2", "--retract", "gpqa_diamond", "--reason", "x",
                "--source", "https://acme.example/e2", "--home", ws)
    assert again.exit_code == 1 and "no live value of 'gpqa_diamond'" in again.stderr
    assert (ws / "sources" / "releases.csv").read_bytes() == before
    # a new citation after a retraction makes a live value again
    back = _go("add-model", "acme-2", "--scores", "gpqa_diamond=77", "--source",
               "https://acme.example/c", "--home", ws)
    assert back.exit_code == 0, back.stderr
    assert _sql(ws, "SELECT score FROM cells WHERE model_id = 'acme-2' AND "
                    "benchmark_id = 'gpqa_diamond'") == [{"score": 77.0}]


@pytest.mark.parametrize("args, code, message", [
    (["--retract", "hle", "--source", "https://x.example"], 2, "--reason"),
    (["--source", "https://x.example"], 2, "either --scores or --retract"),
    (["--scores", "hle=3", "--retract", "hle", "--reason", "r", "--source", "https://x.example"],
     2, "either --scores or --retract"),
    (["--retract", "hle", "--reason", "r", "--source", "ftp://x"], 1, "not an http(s) URL"),
    (["--retract", "hle", "--reason", "r", "--source", "https://x.example"], 1, "no live value"),
    (["--scores", "hle=3,hle=4", "--source", "https://x.example"], 2, "more than once"),
])
def test_bad_update_arguments_are_one_line(ws, args, code, message):
    result = _go("add-model", "nobody-9", *args, "--home", ws)
    assert result.exit_code == code and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_an_older_header_is_upgraded_when_appending(ws):
    path = ws / "sources" / "releases.csv"
    # the file exists only once an earlier test added a model (not on every xdist worker)
    saved = path.read_bytes() if path.exists() else None
    try:
        path.write_text("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,"
                        "reference_url,source_type,reported_setting,notes\n"
                        "old-1,Old,,,,hle,0,https://o.example,official_blog,,\n", encoding="utf-8")
        result = _go("add-model", "old-1", "--scores", "gpqa_diamond=50", "--source",
                     "https://o.example/2", "--home", ws)
        assert result.exit_code == 0, result.stderr
        rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
        assert [(r["benchmark_id"], r["score"], r["audit_status"]) for r in rows] == [
            ("hle", "0", ""), ("gpqa_diamond", "50.0", "")]
    finally:
        if saved is None:  # the source is configured now: keep the file, without rows
            path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n",
                            encoding="utf-8")
        else:
            path.write_bytes(saved)
        assert _go("build", "--home", ws).exit_code == 0
