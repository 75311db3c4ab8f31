"""A build of the same pinned inputs gives the same bytes at any time and in any folder: a
history version without `retrieved_at` or `published` in its config is dated by its version
label, never by the moment it was fetched, and nothing of the clone's path enters the keys
the prepared versions (and so the monthly snapshots' manifests) are kept under (the
registry's and the snapshots' md5 in dvc.lock are then the same on every fresh clone, and
`make main` leaves `git status` clean)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.adapters import fetch
from benchpress.cli import main
from benchpress.store import build
from benchpress.store.sources import config_versions, load_configs
from tests.conftest import REPO, SHARED_DATA, make_home

SOURCE = "lechmazur-debate"  # a spec history: its versions carry a label and a pin, no date


def _build(root, monkeypatch, now: str):
    monkeypatch.setattr(fetch, "utc_now", lambda: now)
    monkeypatch.setitem(build._MEMO, "on", False)  # each build prepares for itself
    home = make_home(root)
    shutil.rmtree(home.sources)
    home.sources.mkdir()
    shutil.copy(REPO / "sources" / f"{SOURCE}.yaml", home.sources)
    shutil.copytree(REPO / "sources" / "specs", home.sources / "specs")
    for args in (["pull", "--mirror", str(SHARED_DATA)], ["build"],
                 ["snapshot", "create", "--monthly"]):
        result = CliRunner().invoke(main, [*args, "--home", str(home.root)])
        assert result.exit_code == 0, result.output
    return home


@pytest.mark.usefixtures("shared_data")
def test_a_rebuild_later_elsewhere_gives_the_same_bytes(tmp_path, monkeypatch):
    first = _build(tmp_path / "a", monkeypatch, "2026-12-07T02:24:09+00:00")
    again = _build(tmp_path / "b", monkeypatch, "2027-03-01T17:00:00+00:00")
    for table in ("sources", "scores", "cells"):
        assert (first.registry / f"{table}.parquet").read_bytes() == \
            (again.registry / f"{table}.parquet").read_bytes(), table
    # the prepared versions are kept under the same keys (nothing of the clone's path in
    # them), so each month's snapshot records the same inputs: the same manifests
    def kept(home):
        return sorted(p.name for p in (home.root / ".cache" / "prepared").iterdir())

    def manifests(home):
        return {p.parent.name: p.read_bytes() for p in home.snapshots.glob("*/manifest.json")}

    assert kept(first) == kept(again) and len(kept(first)) > 1
    assert manifests(first) == manifests(again) and len(manifests(first)) > 1
    (config,) = [c for c in load_configs(first.sources) if c.id == SOURCE]
    labels = [v.version for v in config_versions(config)]
    dates = pl.read_parquet(first.registry / "sources.parquet")["retrieved_at"].to_list()
    assert len(labels) > 1 and sorted(dates) == sorted(str(v)[:10] for v in labels)
