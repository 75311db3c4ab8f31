"""The months of a registry's history (`store.history.plan_months`) from source configs alone:
each version at its day, undated sources in the newest month, months without a version kept,
a malformed date one line naming the config and the field."""

from __future__ import annotations

import pytest

from benchpress.errors import BadInputError
from benchpress.store.history import is_month_tag, plan_months
from benchpress.store.sources import SourceConfig, config_versions, version_date


def _source(sid: str, *days: str, order: int = 10) -> SourceConfig:
    """A config whose versions are labelled and dated by `days` (oldest first)."""
    newest, *older = reversed(days)
    return SourceConfig(sid, "benchpress-json", url=f"https://x.example/{sid}", sha256="0" * 64,
                        version=newest, published=newest, order=order,
                        versions=[{"version": d, "published": d, "sha256": "0" * 64}
                                  for d in reversed(older)] or None)


def test_months_cover_the_history_and_hold_the_versions_known_then():
    board = _source("board", "2025-11-30", "2026-01-02", "2026-01-20")
    card = _source("card", "2025-12-15", order=20)
    releases = SourceConfig("releases", "releases-csv", path="sources/releases.csv", order=5)
    months = plan_months([releases, board, card])
    assert [m.month for m in months] == ["2025-11", "2025-12", "2026-01"]
    assert [m.end for m in months] == ["2025-11-30", "2025-12-31", "2026-01-31"]
    assert [m.day for m in months] == ["2025-11-30", "2025-12-15", "2026-01-20"]
    nov, dec, jan = months
    assert [c.id for c in nov.configs] == ["board"] and nov.added == ["board@2025-11-30"]
    assert [c.id for c in dec.configs] == ["board", "card"] and dec.added == ["card@2025-12-15"]
    # the undated hand-entered source describes the present: the newest month
    assert [c.id for c in jan.configs] == ["releases", "board", "card"]
    assert jan.added == ["releases", "board@2026-01-02", "board@2026-01-20"]
    # a source as it stood: its newest version then at the top, the older ones below
    (then,) = [c for c in dec.configs if c.id == "board"]
    assert then.version == "2025-11-30" and then.versions is None
    assert [v.version for v in config_versions(jan.configs[1])] == [
        "2025-11-30", "2026-01-02", "2026-01-20"]


def test_a_month_without_a_version_is_kept():
    months = plan_months([_source("board", "2025-10-03", "2026-01-05")])
    assert [m.month for m in months] == ["2025-10", "2025-11", "2025-12", "2026-01"]
    assert [m.added for m in months[1:3]] == [[], []]
    assert months[2].day == "2025-10-03"  # still October's data


def test_without_dates_one_month_holds_everything():
    (only,) = plan_months([SourceConfig("releases", "releases-csv", path="x.csv")])
    assert only.month == "" and only.added == ["releases"]


def test_a_version_is_dated_by_published_then_retrieval_then_label():
    assert version_date(SourceConfig("a", "x", published="2026-01-02", version="2026-03-04")) \
        == "2026-01-02"
    assert version_date(SourceConfig("a", "x", retrieved_at="2026-02-03T10:00:00+00:00")) \
        == "2026-02-03"
    assert version_date(SourceConfig("a", "x", version="2026-06-19T0954")) == "2026-06-19"
    assert version_date(SourceConfig("a", "x", version="v2")) is None
    with pytest.raises(BadInputError, match=r"sources/a.yaml: version '2026-01-01': "
                                            r"field 'published' is 'last May'"):
        version_date(SourceConfig("a", "x", published="last May", version="2026-01-01"))


def test_month_tags():
    assert is_month_tag("2026-05") and not is_month_tag("2026-5") and not is_month_tag("latest")
