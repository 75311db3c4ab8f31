"""Every row of `diff` has one cause: real Artificial Analysis snapshots, rewritten by the test
into tmp_path (a few models, one value estimated, one refused, one gone, one first value) and
ingested as versions of one source."""

from __future__ import annotations

import copy
import json

import pytest

from benchpress.store.build import build
from benchpress.store.diff import CAUSES, diff_folders
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.tables import read_table
from tests.conftest import SHARED_DATA
from tests.test_versions import _csv

AA = SHARED_DATA / "artificial-analysis"


def _write(doc: dict, path):
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _pick(doc: dict, n: int) -> dict:
    """`doc` with its first `n` models that have an intelligence index and a GPQA value."""
    keep = [m for m in doc["models"]
            if m["evaluations"].get("artificial_analysis_intelligence_index") is not None
            and m["evaluations"].get("gpqa") is not None
            and m["evaluations"].get("hle") is not None][:n]
    return {**doc, "models": keep}


@pytest.fixture
def versions(home, tmp_path):
    """AA 2026-05-22 cut to 12 models as version 1 (model 3 without its HLE value); version 2
    estimates model 0's GPQA, refuses model 1's (out of range), drops model 2's HLE, gives
    model 3 its first HLE value, revises model 4's HLE and adds a 13th model."""
    doc = json.loads((AA / "llms_2026-05-22.json").read_text(encoding="utf-8"))
    v1 = _pick(doc, 13)
    extra = v1["models"].pop()
    v2 = copy.deepcopy(v1)
    v1["models"][3]["evaluations"]["hle"] = None
    ev = [m["evaluations"] for m in v2["models"]]
    ev[0]["gpqa_is_estimated"] = True
    ev[1]["gpqa"] = 1.7
    ev[2]["hle"] = None
    ev[4]["hle"] = ev[4]["hle"] + 0.01
    v2["models"].append(extra)
    ingest(home, str(_write(v1, tmp_path / "llms_2026-05-08.json")), source_id="aa",
           version="2026-05-08")
    first, _ = create_snapshot(home, tag="v1")
    ingest(home, str(_write(v2, tmp_path / "llms_2026-05-22.json")), source_id="aa",
           version="2026-05-22")
    second, _ = create_snapshot(home, tag="v2")
    names = [m["name"] for m in v2["models"]]
    return home, first.path, second.path, names


def test_every_row_has_one_cause_of_its_kind(versions):
    _, a, b, _ = versions
    cells = diff_folders(a, b).cells
    assert cells.height > 0 and cells["cause"].null_count() == 0
    for change, allowed in CAUSES.items():
        part = cells.filter(cells["change"] == change)
        assert set(part["cause"]) <= set(allowed), change


def test_causes_of_the_rewritten_version(versions):
    _, a, b, names = versions
    diff = diff_folders(a, b)
    cells = diff.cells
    by = {(r["change"], r["model_id"], r["benchmark_id"]): r["cause"] for r in cells.to_dicts()}
    ids = {k: _model_id(names[k]) for k in range(5)}
    assert by[("removed", ids[0], "gpqa_diamond")] == "estimated"
    assert by[("removed", ids[1], "gpqa_diamond")] == "quarantined"
    assert by[("removed", ids[2], "hle")] == "withdrawn"
    assert by[("added", ids[3], "hle")] == "first_value"
    assert by[("changed", ids[4], "hle")] == "revised"
    new = [c for (change, m, _), c in by.items() if change == "added" and m == _model_id(names[-1])]
    assert new and set(new) == {"new_model"}
    # no first value is called a revision; every removed row has a cause
    assert "revised" not in diff.causes()["added"]
    assert diff.causes()["removed"] == {"estimated": 1, "quarantined": 1, "withdrawn": 1}


def _model_id(name: str) -> str:
    """The registry's id of an AA display name (the adapter's text, made canonical)."""
    from benchpress.adapters.artificial_analysis import parse_name
    from benchpress.validate.model_identity import canonical_model_id

    return canonical_model_id(parse_name(name)[0])


def test_new_benchmark_new_source_and_source_dropped(versions, tmp_path):
    home, _, b, _ = versions
    cells_b = read_table(b, "cells")
    model = cells_b["model_id"][0]
    card = _csv(tmp_path / "card.csv", [(model, "swe_bench_verified", 61.0, "official_blog", ""),
                                        (model, "mmlu_pro", 80.0, "official_blog", "")])
    ingest(home, str(card), adapter="releases-csv", source_id="card")
    third, _ = create_snapshot(home, tag="v3")
    cells = diff_folders(b, third.path).cells
    causes = dict(zip(cells["benchmark_id"], cells["cause"]))
    assert causes == {"swe_bench_verified": "new_benchmark", "mmlu_pro": "new_benchmark"}
    # a first value on a benchmark the registry has, from a source it did not have
    other = cells_b.filter(cells_b["benchmark_id"] == "gpqa_diamond")["model_id"].to_list()
    missing = sorted(set(cells_b["model_id"]) - set(other))
    assert missing, "the fixture estimates one model's GPQA"
    late = _csv(tmp_path / "late.csv", [(missing[0], "gpqa_diamond", 55.0, "official_blog", "")])
    ingest(home, str(late), adapter="releases-csv", source_id="late")
    fourth, _ = create_snapshot(home, tag="v4")
    (row,) = diff_folders(third.path, fourth.path).cells.to_dicts()
    assert (row["change"], row["cause"]) == ("added", "new_source")
    (home.sources / "card.yaml").unlink()
    build(home)
    fifth, _ = create_snapshot(home, tag="v5")
    cells = diff_folders(fourth.path, fifth.path).cells
    assert set(cells["change"]) == {"removed"}
    assert set(cells["cause"]) == {"benchmark_removed"}


def test_diff_table_shows_the_cause_at_80_columns(versions, monkeypatch):
    from click.testing import CliRunner

    from benchpress.cli import main

    home = versions[0]
    monkeypatch.setenv("COLUMNS", "80")
    res = CliRunner().invoke(main, ["diff", "v1", "v2", "--home", str(home.root)])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    by_cause = lines[lines.index(next(x for x in lines if "cells by cause" in x)):]
    for change, cause in (("removed", "estimated"), ("removed", "quarantined"),
                          ("added", "first_value"), ("changed", "revised")):
        assert any(change in x and cause in x for x in by_cause), (change, cause)
    largest = lines[lines.index(next(x for x in lines if "largest changes" in x)):]
    # (one changed cell: shown transposed, one line per column, the cause among them)
    assert any("cause" in x and "revised" in x for x in largest[:12])
    doc = CliRunner().invoke(main, ["diff", "v1", "v2", "--format", "json",
                                    "--home", str(home.root)])
    removed = __import__("json").loads(doc.stdout)["cells"]["removed"]
    assert removed and all(r["cause"] for r in removed)
