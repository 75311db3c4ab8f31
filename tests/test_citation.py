"""Citations of a shared history's files: `store.upstream` names the upstream file (or folder)
of a version at its commit from VERSIONS.csv, `validate.prepare.cited_url` resolves a file a
folder source cites by its path, and `ingest` cites a mirror copy that way, never as a local
file:// path."""

from __future__ import annotations

import shutil

import pytest

from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from benchpress.store.upstream import upstream_of
from benchpress.validate.prepare import cited_url
from tests import history_data as hd
from tests.conftest import make_home

pytestmark = pytest.mark.duration(seconds=6)


@pytest.mark.parametrize("source", sorted(hd.HISTORIES))
def test_every_version_folder_has_its_upstream_address(source, shared_data):
    for row in hd.versions(source):
        found = upstream_of(hd.folder(source) / row["date"])
        assert found is not None and found.version == row["date"]
        assert found.url.startswith(f"https://github.com/{row['upstream_repo']}/")
        assert row["commit"] in found.url
        if "/**" in row["paths"]:  # a whole folder upstream: cited as that folder
            assert f"/tree/{row['commit']}/" in found.url
        else:  # its (first) file
            assert found.url == hd.blob(source, row["date"], row["paths"].split(";")[0]
                                        .rsplit("/", 1)[-1])


def test_a_member_of_a_folder_is_that_file_at_the_commit(shared_data):
    tau2 = upstream_of(hd.folder("tau2-bench") / "2026-05-26").url
    assert cited_url(tau2, "submissions/o3_openai_2025-01-15/submission.json") == hd.blob(
        "tau2-bench", "2026-05-26", "submissions/o3_openai_2025-01-15/submission.json")
    arena = upstream_of(hd.folder("lmarena") / "2025-07-27").url  # csv/lmarena_image.csv
    assert cited_url(arena, "lmarena_text.csv") == hd.blob("lmarena", "2025-07-27",
                                                           "lmarena_text.csv")
    assert cited_url(None, "a.json") is None and cited_url("file:///tmp/x", "a.json") is None
    assert cited_url(tau2, "../../etc/passwd") is None


def test_ingest_of_a_mirror_file_cites_it_at_its_commit(tmp_path, shared_data):
    home = make_home(tmp_path / "ws")
    file = hd.folder("swe-bench") / "2024-06-06" / "data.json"
    ingest(home, str(file))
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
