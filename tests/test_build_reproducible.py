"""A build of the same pinned inputs gives the same bytes at any time: a history version
without `retrieved_at` or `published` in its config is dated by its version label, never by
the moment it was fetched (the registry's md5 in dvc.lock is then the same on every fresh
clone, and `make main` leaves `git status` clean)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from benchpress.adapters import fetch
from benchpress.cli import main
from benchpress.store.sources import config_versions, load_configs
from tests.conftest import REPO, SHARED_DATA, make_home

SOURCE = "lechmazur-debate"  # a spec history: its versions carry a label and a pin, no date


def _build(root, monkeypatch, now: str):
    monkeypatch.setattr(fetch, "utc_now", lambda: now)
    home = make_home(root)
    shutil.rmtree(home.sources)
    home.sources.mkdir()
    shutil.copy(REPO / "sources" / f"{SOURCE}.yaml", home.sources)
    shutil.copytree(REPO / "sources" / "specs", home.sources / "specs")
    for args in (["pull", "--mirror", str(SHARED_DATA)], ["build"]):
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
    (config,) = [c for c in load_configs(first.sources) if c.id == SOURCE]
    labels = [v.version for v in config_versions(config)]
    dates = pl.read_parquet(first.registry / "sources.parquet")["retrieved_at"].to_list()
    assert len(labels) > 1 and sorted(dates) == sorted(str(v)[:10] for v in labels)
