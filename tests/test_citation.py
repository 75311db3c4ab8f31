"""Citations of a shared history's files (`adapters.citation`): the upstream file at its commit
from VERSIONS.csv, a folder member's URL, and `ingest` citing a mirror file that way, never as
a local file:// path."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from benchpress.adapters.citation import member_reference, member_url, upstream_of, upstream_url
from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests import history_data as hd
from tests.conftest import SHARED_DATA, make_home

pytestmark = pytest.mark.duration(seconds=6)


@pytest.mark.parametrize("source", sorted(hd.HISTORIES))
def test_every_version_folder_has_its_upstream_url(source, shared_data):
    for row in hd.versions(source):
        found = upstream_of(hd.folder(source) / row["date"])
        assert found is not None and found.commit == row["commit"]
        assert found.repo == row["upstream_repo"] and found.version == row["date"]
        assert upstream_url(hd.folder(source) / row["date"]).startswith(
            f"https://github.com/{row['upstream_repo']}/tree/{row['commit']}")


def test_a_file_gets_its_blob_url_and_other_folders_none(shared_data):
    file = hd.folder("bfcl") / "2024-08-19" / "data_combined.csv"
    assert upstream_url(file) == ("https://github.com/ShishirPatil/gorilla/blob/"
                                  "83d7f0898af2bfe1deb401693d6888e4f2593512/data_combined.csv")
    assert upstream_url(SHARED_DATA / "benchpress-2026-05") is None
    assert upstream_url(SHARED_DATA / "livebench-history" / "2026-06-19T0954") is None


def test_member_urls():
    tree = "https://github.com/o/r/tree/abc123/web/public"
    assert member_url(tree, member_reference("submissions/x/submission.json")) == \
        "https://github.com/o/r/blob/abc123/web/public/submissions/x/submission.json"
    assert member_url("https://example.org/data/", "a.json") == "https://example.org/data/a.json"
    assert member_url(None, "a.json") is None
    assert member_url("file:///tmp/x", "a.json") is None
    assert member_url(tree, "../../etc/passwd") is None


def test_a_malformed_versions_file_gives_no_citation(tmp_path):
    history = tmp_path / "x-history"
    (history / "2025-01-02").mkdir(parents=True)
    (history / "2025-01-02" / "data.csv").write_text("Rank,Overall Acc,Model\n")
    (history / "VERSIONS.csv").write_text(
        "date,upstream_repo,commit,commit_time,paths\n2025-01-02,o/r,not-a-commit;rm -rf,x,data.csv\n")
    assert upstream_of(history / "2025-01-02") is None


def test_ingest_of_a_mirror_file_cites_it_at_its_commit(tmp_path, shared_data):
    home = make_home(tmp_path / "ws")
    file = hd.folder("swe-bench") / "2024-06-06" / "data.json"
    sid, _ = ingest(home, str(file))
    sources = read_table(home.registry, "sources").row(0, named=True)
    url = hd.blob("swe-bench", "2024-06-06", "data.json")
    assert sources["url"] == url and sources["source_version"] == "2024-06-06"
    assert set(read_table(home.registry, "scores")["reference_url"]) == {url}


def test_a_folder_out_of_its_history_cites_what_it_is_told(tmp_path, shared_data):
    copy = tmp_path / "board"
    shutil.copytree(hd.folder("lmarena") / "2026-04-19", copy)
    home = make_home(tmp_path / "ws")
    ingest(home, str(copy), source_id="arena-copy", version="2026-04-19",
           url="https://example.org/arena/2026-04-19/")
    cited = read_table(home.registry, "scores")["reference_url"]
    assert cited.str.starts_with("https://example.org/arena/2026-04-19/").all()
    other = make_home(tmp_path / "ws2")
    ingest(other, str(copy), source_id="arena-copy", version="2026-04-19")
    assert read_table(other.registry, "scores")["reference_url"].is_null().all()  # no file://
    assert read_table(other.registry, "quarantine").filter(
        pl.col("field") == "reference_url").height == 0
