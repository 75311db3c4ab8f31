"""Hostile archives and folders (issue 14, item 6): zip bombs, sizes that lie, too many
members, unsafe or duplicate member paths, nested and damaged archives. Every archive is
generated here; limits are lowered (their environment variables, set with monkeypatch) so
every case stays fast.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchpress.adapters import epoch
from benchpress.adapters._files import member_chunks, read_members, zip_digests
from benchpress.adapters.fetch import fetch, tree_sha256
from benchpress.cli import main
from benchpress.errors import BadInputError, FetchError
from benchpress.store.ingest import ingest
from tests.conftest import SHARED_DATA

# about 8 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=8)

EPOCH_MIRROR = SHARED_DATA / "epoch-2025-12"


def _zeros_zip(path: Path, member: str, size: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open(member, "w", force_zip64=True) as out:
            block = bytes(1 << 20)
            for _ in range(size >> 20):
                out.write(block)
    return path


def test_a_zip_bomb_is_refused_fast_in_low_memory(home, tmp_path):
    bomb = _zeros_zip(tmp_path / "bomb.zip", "benchmark_data/benchmarks_runs.csv", 400 << 20)
    assert bomb.stat().st_size < 1 << 20  # a few hundred KB on disk
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(BadInputError, match="more than the .*-byte cap"):
            ingest(home, str(bomb))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 5 and peak < 32 << 20
    assert [p for p in home.cache.iterdir()] == []


def _lie_about_size(path: Path, claimed: int) -> None:
    """Rewrite the central directory's uncompressed size of the only member."""
    data = bytearray(path.read_bytes())
    at = data.rindex(b"PK\x01\x02")
    data[at + 24:at + 28] = claimed.to_bytes(4, "little")
    path.write_bytes(bytes(data))


def test_a_member_that_hides_its_size_is_stopped(tmp_path, monkeypatch):
    archive = tmp_path / "liar.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("benchmarks_runs.csv", bytes(8 << 20))
    _lie_about_size(archive, 1000)
    with pytest.raises(BadInputError, match="cannot be unpacked"):
        read_members(archive, lambda name: True)
    # and the streamed count stops a member on its own, whatever the archive declares
    monkeypatch.setenv("BENCHPRESS_MAX_MEMBER_BYTES", str(1 << 20))
    with zipfile.ZipFile(tmp_path / "big.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.csv", bytes(8 << 20))
    with zipfile.ZipFile(tmp_path / "big.zip") as zf:
        chunks = member_chunks(zf, zf.infolist()[0], "big.zip", [0])
        with pytest.raises(BadInputError, match="1,048,576-byte cap; stopped"):
            for _ in chunks:
                pass


def _zip(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name), data)
    return path


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("members, message", [
    ([("benchmarks_runs.csv", b"a\n"), ("benchmarks_runs.csv", b"b\n")], "listed twice"),
    ([("x/benchmarks_runs.csv", b"a\n"), ("y/benchmarks_runs.csv", b"b\n")], "ambiguous"),
    ([("../benchmarks_runs.csv", b"a\n")], r"absolute path or '\.\.'"),
    ([("/etc/benchmarks_runs.csv", b"a\n")], r"absolute path or '\.\.'"),
    ([(f"f{k}.csv", b"") for k in range(11)], "lists 11 members; at most 10"),
    ([("a.csv", bytes(600)), ("b.csv", bytes(600))], "unpacks to 1,200 bytes"),
])
def test_unsafe_or_ambiguous_archives_are_refused(tmp_path, monkeypatch, members, message):
    monkeypatch.setenv("BENCHPRESS_MAX_MEMBERS", str(10))
    monkeypatch.setenv("BENCHPRESS_MAX_TOTAL_UNPACKED", str(1000))
    archive = _zip(tmp_path / "a.zip", members)
    with pytest.raises(BadInputError, match=message) as err:
        read_members(archive, lambda name: True)
    assert "\n" not in str(err.value)
    if message != "ambiguous":  # paths differ, so a tree digest can tell the two apart
        with pytest.raises(BadInputError, match=message):
            tree_sha256(archive)


def test_a_folder_with_two_tables_of_one_name_is_ambiguous(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(EPOCH_MIRROR / "benchmarks_runs.csv", tmp_path / sub / "benchmarks_runs.csv")
    with pytest.raises(BadInputError, match="'benchmarks_runs.csv'.*ambiguous"):
        epoch.read(tmp_path)


def test_archives_inside_an_archive_are_never_opened(tmp_path):
    inner = _zip(tmp_path / "inner.zip", [("benchmarks_runs.csv", b"x\n")])
    outer = _zip(tmp_path / "outer.zip", [("inner.zip", inner.read_bytes())])
    assert zip_digests(outer, lambda n: True) == [
        ("inner.zip", hashlib.sha256(inner.read_bytes()).hexdigest())]
    assert read_members(outer, lambda n: n.endswith(".csv")) == {}


def test_a_damaged_zip_is_one_line(tmp_path):
    archive = _zip(tmp_path / "d.zip", [("benchmarks_runs.csv", b"a,b\n1,2\n" * 100)])
    data = bytearray(archive.read_bytes())
    data[40:60] = bytes(20)  # inside the stored member's bytes: its CRC no longer holds
    archive.write_bytes(bytes(data))
    with pytest.raises(BadInputError, match="cannot be unpacked") as err:
        read_members(archive, lambda n: True)
    assert "\n" not in str(err.value)


def test_limits_can_be_set_from_the_environment(tmp_path):
    """Read when a bound is applied, not at import: the same process sees a change."""
    code = ("import os; from benchpress.input_limits import input_limits; "
            "print(input_limits().max_members, input_limits().download_deadline_s); "
            "os.environ['BENCHPRESS_MAX_MEMBERS'] = '9'; print(input_limits().max_members)")
    env = dict(os.environ, BENCHPRESS_MAX_MEMBERS="7", BENCHPRESS_DOWNLOAD_DEADLINE_S="2.5")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["7", "2.5", "9"]
    env["BENCHPRESS_MAX_MEMBERS"] = "lots"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "BENCHPRESS_MAX_MEMBERS='lots'" in out.stderr


def test_a_hostile_zip_pinned_by_tree_digest_is_named_as_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHPRESS_MAX_MEMBERS", str(3))
    archive = _zip(tmp_path / "many.zip", [(f"f{k}.csv", b"") for k in range(5)])
    with pytest.raises(FetchError, match=r"^.*many\.zip: the archive lists 5 members") as err:
        fetch(str(archive), tmp_path / "cache", expected_sha256="0" * 64, name="many.zip")
    assert ".part-" not in str(err.value) and list((tmp_path / "cache").glob(".part-*")) == []


def test_a_folder_member_over_the_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHPRESS_MAX_MEMBER_BYTES", str(1000))
    (tmp_path / "benchmarks_runs.csv").write_bytes(b"x" * 1001)
    with pytest.raises(BadInputError, match="benchmarks_runs.csv holds 1,001 bytes"):
        read_members(tmp_path, lambda name: True)


def test_a_small_archive_of_big_repetitive_members_is_refused_before_reading(home, tmp_path):
    """Issue 27, Medium 8 (iii): 1 MB holding 4 x 255 MB members, each under the member cap
    and together under the total cap, was read and parsed for more than 300 s at 2.5 GB.
    Scaled down: 4 x 8 MB of CSV rows that compress about 1,000 times."""
    archive = tmp_path / "runs.zip"
    row = b"gpt-x,some_benchmark,0.5,2025-01-01\n"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for k in range(4):
            with zf.open(f"benchmark_data/external_benchmark_part{k}.csv", "w") as out:
                out.write(b"model,task,score,date\n")
                for _ in range((8 << 20) // (len(row) << 10)):
                    out.write(row * 1024)
    assert archive.stat().st_size < 200 << 10
    start = time.monotonic()
    result = CliRunner().invoke(main, ["ingest", str(archive), "--home", str(home.root)])
    assert time.monotonic() - start < 5
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert re.search(r"\): the archive unpacks to 33,\d{3},\d{3} bytes, more than 100 times its "
                     r"\d{2},\d{3} compressed bytes; refused as a likely zip bomb", result.stderr)
    assert [p for p in home.cache.iterdir()] == []
    # an archive that compresses as real tables do is read
    with zipfile.ZipFile(tmp_path / "ok.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.csv", b"".join(b"m%d,b%d,%d\n" % (k, k % 7, k * 7919 % 1000)
                                      for k in range(1_500_000)))
    assert len(read_members(tmp_path / "ok.zip", lambda name: True)["a.csv"]) > 16 << 20
