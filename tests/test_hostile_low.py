"""Careless and hostile inputs of lower stakes (issue 27, Low 9): far-future release dates,
one-line errors listing thousands of unknown names, an artifact's NPZ members (shapes
against the manifest, inflated size), a deeply nested manifest, and a FIFO under a cache
entry's name. Each is refused in one line, in bounded time."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import threading
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress import BenchPress
from benchpress.adapters.fetch import fetch
from benchpress.api.artifact import read_manifest
from benchpress.cli import main
from benchpress.digest import sha256_of
from benchpress.errors import BadInputError, RegistryError
from benchpress.validate.names import resolve_names
from benchpress.store.snapshot import Snapshot
from benchpress.store.sql import query

URL = "https://acme.example/blog"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line(result, code=1) -> str:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and len(lines[0]) < 1_500
    return lines[0]


# -- release dates -----------------------------------------------------------------------
def test_add_model_refuses_a_release_date_years_ahead(home):
    args = ("add-model", "acme-1", "--scores", "hle=20", "--source", URL, "--home", home.root)
    for far in ("9999-12-31", str(dt.date.today().year + 3)):
        assert "a typo?" in one_line(run(*args, "--release-date", far))
    assert not home.releases_csv.exists()
    soon = (dt.date.today() + dt.timedelta(days=300)).isoformat()  # announced: accepted
    assert run(*args, "--release-date", soon).exit_code == 0


def test_a_source_row_dated_9999_is_quarantined_with_its_reason(home, tmp_path):
    path = tmp_path / "src.csv"
    path.write_text(
        "model_id,name,provider,release_date,benchmark_id,score,reference_url,source_type\n"
        f"good-1,Good,Acme,2026-01-02,hle,30,{URL},official_blog\n"
        f"far-1,Far,Acme,9999-12-31,hle,31,{URL},official_blog\n", encoding="utf-8")
    result = run("ingest", path, "--id", "src", "--adapter", "releases-csv", "--home", home.root)
    assert result.exit_code == 3, result.stderr
    q = query(home.registry, "SELECT field, reason FROM quarantine WHERE kind = 'model'")
    assert q.rows() == [("release_date", q["reason"][0])]
    assert "release date '9999-12-31' is more than 2 years after" in q["reason"][0]
    # as for any refused date: the model stays (its score landed), without the date
    dates = dict(query(home.registry, "SELECT model_id, release_date FROM models").rows())
    assert dates == {"good-1": "2026-01-02", "far-1": None}


def test_a_same_size_rewrite_with_its_mtime_put_back_is_not_served(home, tmp_path):
    """A process remembers a checked table by path, size, mtime, inode and ctime: the ctime
    moves with any rewrite, and no user call can put it back."""
    import time

    from benchpress.store.tables import read_table

    path = tmp_path / "src.csv"
    path.write_text(
        "model_id,name,provider,release_date,benchmark_id,score,reference_url,source_type\n"
        f"good-1,Good,Acme,2026-01-02,hle,30,{URL},official_blog\n", encoding="utf-8")
    assert run("ingest", path, "--id", "src", "--adapter", "releases-csv",
               "--home", home.root).exit_code == 0
    read_table(home.registry, "cells")  # checked, and remembered
    table = home.registry / "cells.parquet"
    before = table.stat()
    time.sleep(0.05)  # (file times tick in steps of a few milliseconds)
    with open(table, "r+b") as fh:  # same inode, same size
        fh.seek(before.st_size // 2)
        byte = fh.read(1)
        fh.seek(before.st_size // 2)
        fh.write(bytes([byte[0] ^ 1]))
    os.utime(table, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = table.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size, before.st_mtime_ns, before.st_ino)
    with pytest.raises(RegistryError, match="does not match its manifest digest"):
        read_table(home.registry, "cells")


# -- long lists of unknown names -----------------------------------------------------------
def test_an_error_naming_50000_unknown_names_stays_short():
    names = [f"nosuch_{k}" for k in range(50_000)] + ["x" * 100_000]
    with pytest.raises(BadInputError) as info:
        resolve_names(names, ["gpqa_diamond", "hle"], kind="benchmark")
    message = str(info.value)
    assert len(message) < 1_000 and message.endswith("... and 49,991 more")
    with pytest.raises(BadInputError) as info:
        resolve_names(["x" * 100_000], ["hle"], kind="benchmark")
    assert len(str(info.value)) < 200


def test_unknown_sources_and_bad_scores_by_the_thousand_stay_one_short_line(home):
    from benchpress.errors import UsageError
    from benchpress.store.matrix import match_sources

    with pytest.raises(UsageError) as info:
        match_sources([f"src-{k}" for k in range(40)], [f"zz{k}" for k in range(20_000)])
    assert len(str(info.value)) < 1_500 and "... and 19,990 more" in str(info.value)
    assert str(info.value).endswith("... and 20 more")  # the known ones: the first 20
    scores = ",".join(f"hle{k}=1" for k in range(5_000))
    line = one_line(run("add-model", "acme-1", "--scores", scores, "--source", URL,
                        "--home", home.root))
    assert "more" in line


# -- artifacts -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(built_2026_05, tmp_path_factory):
    """A small ALS fit of the 2026-05 registry, saved as an artifact."""
    from benchpress.predict import make_predictor

    bp = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("als", n_starts=1))
    return bp.save_pretrained(tmp_path_factory.mktemp("saved") / "art")


@pytest.fixture
def artifact(saved, tmp_path):
    copy = tmp_path / "art"
    shutil.copytree(saved, copy)
    return copy


def _repin(folder, name):
    """Record `name`'s new digest in the manifest, as a forger would."""
    from benchpress.api.artifact import MANIFEST_DIGEST, manifest_digest

    doc = json.loads((folder / "manifest.json").read_text())
    doc["files"][name] = sha256_of(folder / name)
    doc[MANIFEST_DIGEST] = manifest_digest(doc)
    (folder / "manifest.json").write_text(json.dumps(doc))


def test_an_array_of_the_wrong_shape_is_refused_in_one_line(artifact):
    with np.load(artifact / "arrays.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    n_models = read_manifest(artifact)["counts"]["models"]
    assert arrays["support_row_rms"].shape == (n_models,)
    arrays["support_row_rms"] = np.zeros(n_models + 7)
    np.savez(artifact / "arrays.npz", **arrays)
    _repin(artifact, "arrays.npz")
    with pytest.raises(BadInputError, match=rf"artifact array support_row_rms has shape "
                                            rf"\({n_models + 7},\), not \({n_models}\)"):
        BenchPress.from_pretrained(artifact)


def test_an_npz_member_that_inflates_far_beyond_its_file_is_refused(artifact):
    npz = artifact / "arrays.npz"
    with zipfile.ZipFile(npz, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("bomb.npy", "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(64):  # 64 MiB of zeros: a few hundred KiB deflated
                member.write(block)
    _repin(artifact, "arrays.npz")
    assert npz.stat().st_size < 4 << 20
    with pytest.raises(BadInputError, match="would inflate to"):
        BenchPress.from_pretrained(artifact)


def test_a_deeply_nested_manifest_is_one_line(artifact, tmp_path):
    deep = "[" * 200_000 + "]" * 200_000
    (artifact / "manifest.json").write_text(deep)
    with pytest.raises(BadInputError, match="unreadable artifact manifest"):
        read_manifest(artifact)
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "manifest.json").write_text('{"id": ' + deep + "}")
    with pytest.raises(RegistryError, match="unreadable manifest"):
        Snapshot.load(snap)


# -- a FIFO in the cache -----------------------------------------------------------------------
def _bounded(fn, fifo, seconds=10.0) -> dict:
    """`fn()` in a thread: {"value": ...} or {"error": ...}; fails the test when it is still
    waiting after `seconds` (first freeing a reader blocked on `fifo`)."""
    out: dict = {}

    def call():
        try:
            out["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():  # (the bug) free the reader blocked on the FIFO, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail(f"waited on the FIFO {fifo.name} for {seconds:g} s")
    return out


def test_hashing_a_fifo_is_an_error_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = _bounded(lambda: sha256_of(fifo), fifo)
    assert isinstance(out.get("error"), OSError) and "not a regular file" in str(out["error"])


def test_a_fifo_under_a_cache_entrys_name_is_replaced_not_waited_on(tmp_path):
    src = tmp_path / "data.csv"
    src.write_bytes(b"model_id,score\na,1\n")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir()
    fifo = cache / digest
    os.mkfifo(fifo)
    out = _bounded(lambda: fetch(str(src), cache, expected_sha256=digest), fifo)
    assert "error" not in out, out
    assert out["value"].path == fifo and fifo.is_file()
    assert fifo.read_bytes() == src.read_bytes()
