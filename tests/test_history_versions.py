"""The four histories as versions of one source each: the configs pin every shared version
(VERSIONS.csv's commit, the mirror folder's tree digest), every version builds as a version of
its source, a change of scoring regime or user simulator reads as a method change in `diff`,
and a later version (one written here, with changes) ingests as a new version with a cause for
every change."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil

import polars as pl
import pytest
import yaml

from benchpress.store.build import build
from benchpress.store.diff import CAUSES, diff
from benchpress.store.ingest import ingest
from benchpress.store.snapshot import create_snapshot
from benchpress.store.tables import read_table
from tests import history_data as hd
from tests.conftest import REPO, SHARED_DATA, make_home

pytestmark = pytest.mark.duration(seconds=5)

SOURCES = ["bfcl", "tau2-bench", "swe-bench", "lmarena"]


def _config(source: str) -> dict:
    return yaml.safe_load((REPO / "sources" / f"{source}.yaml").read_text())


def _tree_digest(folder) -> str:
    """sha256 of the sorted lines "<relative path> <sha256 of the file>" (the pin of a folder;
    a top folder every file shares is left out of the paths, as a zip's would be)."""
    lines = sorted((p.relative_to(folder).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
                   for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if len({n.split("/", 1)[0] for n, _ in lines}) == 1 and all("/" in n for n, _ in lines):
        lines = [(n.split("/", 1)[1], d) for n, d in lines]
    return hashlib.sha256("".join(f"{n} {d}\n" for n, d in lines).encode()).hexdigest()


@pytest.mark.parametrize("source", SOURCES)
def test_config_pins_every_shared_version(source, shared_data):
    config = _config(source)
    pinned = [*config["versions"], {k: config[k] for k in ("version", "url", "mirror_path",
                                                           "sha256")}]
    rows = hd.versions(source)
    assert [str(v["version"]) for v in pinned] == [r["date"] for r in rows]
    for v, row in zip(pinned, rows):
        assert row["commit"] in v["url"] and row["upstream_repo"] in v["url"]
        assert v["mirror_path"] == f"{hd.HISTORIES[source]}/{row['date']}"
        assert v["sha256"] == _tree_digest(SHARED_DATA / v["mirror_path"]), v["version"]


def _flat(source: str, version: str) -> dict:
    """The source's config with only `version` (older and newer versions left out)."""
    config = _config(source)
    entries = {str(v["version"]): v for v in config.pop("versions")}
    entries[str(config["version"])] = {k: config[k] for k in ("version", "url", "mirror_path",
                                                             "sha256", "published")}
    config.update({k: str(v) for k, v in entries[version].items()})
    return config


def _home_at(tmp_path, source: str, version: str):
    home = make_home(tmp_path / "ws")
    (home.sources / f"{source}.yaml").write_text(yaml.safe_dump(_flat(source, version)))
    build(home, mirror=SHARED_DATA)
    create_snapshot(home, tag="before")
    return home


@pytest.mark.slow(seconds=4)
@pytest.mark.parametrize("source", SOURCES)
def test_every_shared_version_builds_as_a_version_of_one_source(source, tmp_path, shared_data):
    home = make_home(tmp_path / "ws")
    shutil.copyfile(REPO / "sources" / f"{source}.yaml", home.sources / f"{source}.yaml")
    report = build(home, mirror=SHARED_DATA)
    sources = read_table(home.registry, "sources")
    assert set(sources["source_id"]) == {source}
    assert sorted(sources["source_version"]) == [r["date"] for r in hd.versions(source)]
    assert all(s.rows_accepted > 0 for s in report.sources)
    scores = read_table(home.registry, "scores")
    commits = {r["date"]: r["commit"] for r in hd.versions(source)}
    cited = scores.select("source_version", "reference_url").unique()
    assert all(commits[v] in url for v, url in cited.iter_rows()), "a value cites another commit"
    quarantined = read_table(home.registry, "quarantine").height
    assert quarantined <= 0.001 * scores.height  # (LMArena's 'DALL·E 3': a non-ASCII id)


REGIMES = [  # (source, last version before, first version after, a benchmark version it starts)
    ("bfcl", "2025-06-14", "2025-08-28", "bfcl_overall@2025-08-28"),
    ("lmarena", "2025-08-04", "2026-03-19", "lmarena_text@2026-03-19"),
]


def _regime_diff(tmp_path, source, before, after):
    home = _home_at(tmp_path, source, before)
    ingest(home, str(hd.folder(source) / after), source=source)
    create_snapshot(home, tag="after")
    return home, diff(home, "before", "after").cells


@pytest.mark.parametrize("source,before,after,started", REGIMES)
def test_diff_across_a_regime_change_names_method_changes(source, before, after, started,
                                                         tmp_path, shared_data):
    _, cells = _regime_diff(tmp_path, source, before, after)
    new = cells.filter(pl.col("benchmark_id") == started)
    assert new.height > 0 and set(new["change"]) == {"added"}
    # models already there are under a new method; the rest are new models
    assert "method_change" in set(new["cause"]) and set(new["cause"]) <= {"method_change",
                                                                            "new_model"}
    base = started.split("@")[0]
    # the old regime's values are never "revised" into the new one
    assert cells.filter((pl.col("benchmark_id").str.split("@").list.first() == base)
                        & (pl.col("cause") == "revised")
                        & pl.col("benchmark_id").str.contains("@")).height == 0
    for change, allowed in CAUSES.items():
        assert set(cells.filter(pl.col("change") == change)["cause"]) <= set(allowed)


def test_a_new_user_simulator_is_new_submissions_on_benchmark_versions(tmp_path, shared_data):
    """tau2-bench's 2026 re-runs with a gpt-5.2 user simulator: new submissions, each on the
    benchmark versions of that simulator; the 2025 submissions keep their values."""
    home, cells = _regime_diff(tmp_path, "tau2-bench", "2026-01-27", "2026-03-18")
    assert cells.filter(pl.col("change") == "changed").height == 0
    rerun = cells.filter(pl.col("benchmark_id").str.ends_with("@user-gpt-5.2"))
    assert rerun.height > 0 and set(rerun["cause"]) == {"new_model"}
    models = read_table(home.registry, "models")
    sonnet = models.filter(pl.col("base_model_id") == "claude-sonnet-4.5")
    assert set(sonnet["model_id"]) == {"claude-sonnet-4-5-anthropic-2025-10-02",
                                       "claude-sonnet-4-5-sierra-2026-02-26"}
    benchmarks = read_table(home.registry, "benchmarks")
    described = benchmarks.filter(pl.col("benchmark_id") == "tau2_bench_airline@user-gpt-5.2")
    assert described["name"].to_list() == ["τ²-bench Airline (method of user-gpt-5.2)"]


def _later_bfcl(tmp_path):
    """The newest BFCL table as a release of 2026-01-20 (which the mirror does not have): one
    value corrected, one model gone, one added, one column added."""
    newest = hd.versions("bfcl")[-1]["date"]
    rows = list(csv.reader(open(hd.folder("bfcl") / newest / "data_overall.csv", newline="")))
    header, body = rows[0] + ["Agentic Acc"], [r + ["50.00%"] for r in rows[1:]]
    body[0][header.index("Overall Acc")] = "77.99%"        # corrected
    gone = body.pop(5)[header.index("Model")]              # withdrawn
    added = list(body[1])
    added[header.index("Model")] = "Acme-1 (FC)"           # a new model
    body.append(added)
    folder = tmp_path / "2026-01-20"
    folder.mkdir()
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    (folder / "data_overall.csv").write_text(out.getvalue())
    return folder, body[0][header.index("Model")], gone


def _later_tau2(tmp_path):
    """The newest tau2-bench folder as of 2026-06-02: a new submission listed, one unlisted, one
    value corrected."""
    folder = tmp_path / "2026-06-02"
    shutil.copytree(hd.folder("tau2-bench") / hd.versions("tau2-bench")[-1]["date"], folder)
    subs = folder / "submissions"
    manifest = json.loads((subs / "manifest.json").read_text())
    manifest["submissions"].remove("grok-4-2_sierra_2026-05-05")
    manifest["submissions"].append("acme-1_acme_2026-06-01")
    (subs / "manifest.json").write_text(json.dumps(manifest))
    doc = json.loads((subs / "gpt-5-5_sierra_2026-05-05" / "submission.json").read_text())
    (subs / "acme-1_acme_2026-06-01").mkdir()
    (subs / "acme-1_acme_2026-06-01" / "submission.json").write_text(
        json.dumps({**doc, "model_name": "Acme-1", "model_organization": "Acme"}))
    doc["results"]["banking_knowledge"]["pass_1"] = 99.5
    (subs / "gpt-5-5_sierra_2026-05-05" / "submission.json").write_text(json.dumps(doc))
    return folder


def test_a_later_bfcl_release_ingests_with_a_cause_for_every_change(tmp_path, shared_data):
    home = _home_at(tmp_path, "bfcl", hd.versions("bfcl")[-1]["date"])
    folder, corrected, gone = _later_bfcl(tmp_path)
    ingest(home, str(folder), source="bfcl")
    create_snapshot(home, tag="after")
    result = diff(home, "before", "after")
    cells = result.cells
    assert cells["cause"].null_count() == 0
    causes = {(c, k) for c, k in cells.select("change", "cause").unique().iter_rows()}
    assert {("changed", "revised"), ("added", "new_model"), ("added", "new_benchmark"),
            ("removed", "withdrawn")} <= causes
    revised = cells.filter(pl.col("cause") == "revised")
    assert revised["model_id"].to_list() == ["claude-opus-4-5-20251101-fc"]
    assert sorted(read_table(home.registry, "sources")["source_version"]) == ["2025-12-16",
                                                                               "2026-01-20"]


def test_a_later_tau2_folder_ingests_with_a_cause_for_every_change(tmp_path, shared_data):
    home = _home_at(tmp_path, "tau2-bench", hd.versions("tau2-bench")[-1]["date"])
    ingest(home, str(_later_tau2(tmp_path)), source="tau2-bench")
    create_snapshot(home, tag="after")
    cells = diff(home, "before", "after").cells
    assert cells["cause"].null_count() == 0
    by = {(m, c) for m, c in cells.select("model_id", "cause").unique().iter_rows()}
    assert ("acme-1-acme-2026-06-01", "new_model") in by
    assert ("grok-4-2-sierra-2026-05-05", "withdrawn") in by
    assert ("gpt-5-5-sierra-2026-05-05", "revised") in by


def test_pull_caches_every_version_so_the_build_needs_no_mirror(tmp_path, monkeypatch, shared_data):
    """`benchpress pull` (the DVC pipeline's first stage) fetches every version of a versioned
    source; `benchpress build` then reads them all from the cache, offline, without a mirror."""
    from click.testing import CliRunner

    from benchpress.cli import main

    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    monkeypatch.delenv("BENCHPRESS_CACHE", raising=False)
    home = make_home(tmp_path / "ws")
    shutil.copyfile(REPO / "sources" / "bfcl.yaml", home.sources / "bfcl.yaml")
    pulled = CliRunner().invoke(main, ["pull", "--mirror", str(SHARED_DATA), "--home", str(home.root)])
    assert pulled.exit_code == 0, pulled.output
    lines = pulled.stdout.splitlines()
    assert len(lines) == len(hd.versions("bfcl")) and lines[0].startswith("bfcl@2024-03-20\t")
    built = CliRunner().invoke(main, ["build", "--home", str(home.root)])
    assert built.exit_code == 0, built.output
    assert read_table(home.registry, "sources").height == len(hd.versions("bfcl"))
