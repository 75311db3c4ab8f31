"""The registry through time: every version of every source at its date, and the registry as
it stood at the end of each month.

Each version of a source is dated (`sources.version_date`: its `published` day, else the
day it was retrieved, else its label when that is a date). The registry *as it stood at the
end of a month* is what a build of the versions dated up to that day gives, each source
with the versions it had then (`Month.configs`); a hand-entered source in the repository
(`releases.csv`) carries no date and describes the present, so it joins in the newest
month. The months run from the oldest version's to the newest's, one per calendar month,
so the newest month's registry is the whole registry.

`month_states` makes these registries in date order: every version is prepared once
(`store.prepared`: read and checked once, and kept on disk by content, so a rerun or a new
version prepares only what is new), and each month's tables are assembled from the
prepared versions known then (`store.build.assemble`, the build's own code; a month that
adds no version is the month before). `snapshot_months` freezes them: each month a
snapshot tagged with the month (`2026-05`; the tag moves to the new snapshot when a month's
data changed), created at its newest version's day (00:00 UTC), not at the time it was
made, so a fresh clone makes the same snapshots byte for byte; the newest month is the
built registry itself, frozen after every snapshot already there, so `latest` is it.
Each monthly snapshot records the digest of its inputs (the sources as they stood and the
keys of their prepared versions), so a rerun reuses a month whose inputs did not change
without assembling it again.
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from benchpress.digest import json_digest
from benchpress.errors import BadInputError, RegistryError
from benchpress.home import Home
from benchpress.store.build import (
    Assembled, assemble, declared_methods, prepare_steps, version_steps,
)
from benchpress.store.journal import settle
from benchpress.store.snapshot import Snapshot, add_tag, creation_time, freeze, list_snapshots
from benchpress.store.sources import (
    SourceConfig, config_versions, load_configs, version_date, with_versions,
)
from benchpress.store.tables import locked, readable, recover, registry_exists, views_sql, \
    write_registry
from benchpress.validate.contracts import load_contracts

__all__ = ["MONTH_TAG", "Month", "plan_months", "month_states", "snapshot_months",
           "MonthSnapshot", "is_month_tag"]

#: the tag of a monthly snapshot: the month, YYYY-MM
MONTH_TAG = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def is_month_tag(tag: str) -> bool:
    """Whether `tag` names a month (`2026-05`), the tag `snapshot_months` gives.

    >>> is_month_tag("2026-05"), is_month_tag("2026-13"), is_month_tag("v1")
    (True, False, False)
    """
    return bool(MONTH_TAG.match(tag))


@dataclass(frozen=True)
class Month:
    """One month of the registry's history.

    `configs` are the sources as they stood at the month's end (each with the versions
    dated up to then), `day` the newest of those versions' days (the snapshot's date),
    `added` the versions the month brought (``source@version``).
    """

    month: str                    # YYYY-MM
    end: str                      # the month's last day, YYYY-MM-DD
    day: str                      # the newest version's day in it, YYYY-MM-DD
    configs: list[SourceConfig]
    added: list[str] = field(default_factory=list)


def _month_end(month: str) -> str:
    year, mon = int(month[:4]), int(month[5:7])
    return f"{month}-{calendar.monthrange(year, mon)[1]:02d}"


def _months_between(first: str, last: str) -> list[str]:
    """Every month from `first` to `last` (YYYY-MM), in order."""
    year, mon = int(first[:4]), int(first[5:7])
    out = []
    while f"{year:04d}-{mon:02d}" <= last:
        out.append(f"{year:04d}-{mon:02d}")
        year, mon = (year + 1, 1) if mon == 12 else (year, mon + 1)
    return out


def plan_months(configs: list[SourceConfig]) -> list[Month]:
    """The months of the registry's history (see the module docstring), oldest first; one
    month holding every source when no version carries a date."""
    dated = [(version_date(v), c.id, v.version) for c in configs for v in config_versions(c)]
    days = sorted(d for d, _, _ in dated if d is not None)
    if not days:
        return [Month("", "", "", list(configs),
                      [f"{sid}@{ver}" if ver else sid for _, sid, ver in dated])]
    months = _months_between(days[0][:7], days[-1][:7])
    plan = []
    for k, month in enumerate(months):
        end = _month_end(month)
        newest = k == len(months) - 1
        kept = []
        for config in configs:
            flat = [v for v in config_versions(config)
                    if (version_date(v) is None and newest)
                    or (version_date(v) is not None and version_date(v) <= end)]
            if flat:
                kept.append(with_versions(config, flat))
        added = [f"{sid}@{ver}" if ver else sid for d, sid, ver in dated
                 if (d is not None and d[:7] == month) or (d is None and newest)]
        day = max(d for d in days if d <= end)
        plan.append(Month(month, end, day, kept, added))
    return plan


@functools.cache
def _assembly_code() -> str:
    """sha256 of the store's code, which assembles a month from prepared versions (renames,
    method versions, resolution): a change of it makes every month again."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _inputs_key(month: Month, keys: dict[tuple, str]) -> str:
    """The digest of what a month's tables are made from: its sources as they stood, the
    prepared versions' keys (file digest, contracts, source info, limits, the adapters' and
    contracts' code) and the store's code that assembles them."""
    return json_digest({"configs": [asdict(c) for c in month.configs],
                        "prepared": [keys[(c.id, v.version)] for c, v in
                                     version_steps(month.configs)],
                        "code": _assembly_code()}, length=32)


def month_states(home: Home, months: list[Month], *, mirror: Path | None = None,
                 on_source: Callable[[int, int, str], None] | None = None, executor=None,
                 skip: Callable[[Month, str], bool] | None = None
                 ) -> Iterator[tuple[Month, str, Assembled | None]]:
    """(month, inputs key, the registry's tables as they stood at its end) for each of
    `months`, in order. Every version is prepared once (`on_source(k, n, label)` as each
    starts; `executor` as in `build`); a month whose `skip(month, key)` is true yields no
    tables (None): its snapshot is known already."""
    contracts = load_contracts(home.schemas)
    newest = months[-1].configs
    steps = version_steps(newest)
    parts = prepare_steps(home, steps, mirror=mirror, on_source=on_source, executor=executor,
                          contracts=contracts)
    by_step = {(c.id, v.version): part for (c, v), part in zip(steps, parts)}
    keys = {step: part["key"] for step, part in by_step.items()}
    del parts
    for month in months:
        key = _inputs_key(month, keys)
        if skip is not None and skip(month, key):
            yield month, key, None
            continue
        month_parts = [by_step[(c.id, v.version)] for c, v in version_steps(month.configs)]
        yield month, key, assemble(month.configs, month_parts, contracts,
                                   declared_methods(month.configs, home))


@dataclass(frozen=True)
class MonthSnapshot:
    """What `snapshot_months` did for one month."""

    month: str
    day: str
    snapshot: Snapshot
    created: bool          # False: the month's content (or inputs) had a snapshot already
    added: list[str]       # the versions the month brought (source@version)
    assembled: bool        # False: reused by its inputs' digest, or the registry itself


def _midnight(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc)


def _check_current(home: Home, configs: list[SourceConfig]) -> None:
    """RegistryError unless the registry was built from `configs` (every pinned version,
    every source); the newest month is the registry itself."""
    if not registry_exists(home.registry):
        raise RegistryError(f"{home.registry}: no registry built yet; run `benchpress build`")
    built = json.loads((readable(home.registry) / "build.json").read_text(encoding="utf-8"))
    versions = built.get("source_versions", {})
    stale = []
    for config in configs:
        if config.id not in built.get("sources", {}):
            stale.append(config.id)
            continue
        flat = config_versions(config)
        for v in flat:
            got = versions.get(config.id, {}).get(v.version) if v.version else \
                built["sources"][config.id]
            if got is None or (v.sha256 is not None and got != v.sha256):
                stale.append(f"{config.id}@{v.version}" if v.version else config.id)
        gone = set(versions.get(config.id, {})) - {v.version for v in flat}
        stale += [f"{config.id}@{label}" for label in sorted(gone)]
    extra = set(built.get("sources", {})) - {c.id for c in configs}
    if stale or extra:
        named = ", ".join([*stale[:3], *sorted(extra)[:3]])
        raise RegistryError(f"{home.registry} was built from other sources than "
                            f"{home.sources} ({named}); run `benchpress build` first")


def snapshot_months(home: Home, *, mirror: Path | None = None,
                    on_source: Callable[[int, int, str], None] | None = None,
                    on_month: Callable[[MonthSnapshot], None] | None = None,
                    executor=None) -> list[MonthSnapshot]:
    """Freeze the registry as it stood at the end of every month of its history (see the
    module docstring), oldest first; `on_month` is told of each month as it is frozen.

    The registry must be built from the current sources (the newest month is the registry
    itself). Holds the workspace's lock throughout.
    """
    with locked(home.lock):
        recover(home.registry)
        settle(home)
        configs = load_configs(home.sources)
        if not configs:
            raise BadInputError(f"{home.sources}: no sources; nothing to snapshot")
        _check_current(home, configs)
        months = plan_months(configs)
        known = {s.manifest.get("inputs"): s for s in list_snapshots(home)
                 if s.manifest.get("inputs")}
        done: list[MonthSnapshot] = []
        previous: Snapshot | None = None
        # beside the registry, named like its writes (a killed run's folder is removed by
        # the next writer, see `tables.settle_swap`)
        scratch = Path(tempfile.mkdtemp(dir=home.root,
                                        prefix=f".registry.tmp-{os.getpid()}-months-"))
        try:
            states = month_states(home, months[:-1], mirror=mirror, on_source=on_source,
                                  executor=executor,
                                  skip=lambda m, key: key in known or not m.added) \
                if len(months) > 1 else iter(())
            for month, key, state in states:
                if state is None:  # known by its inputs, or nothing new: the month before
                    snap = add_tag(home, known.get(key) or previous, month.month)
                    created, assembled = False, False
                else:
                    folder = scratch / month.month
                    write_registry(folder, state.tables, state.manifest, views_sql(),
                                   durable=False)  # scratch: the snapshot is the durable copy
                    snap, created = freeze(
                        home, folder, tag=month.month, move_tag=True, inputs=key,
                        created_at=creation_time(home, _midnight(month.day), after_all=False))
                    shutil.rmtree(folder, ignore_errors=True)
                    assembled = True
                previous = snap
                done.append(MonthSnapshot(month.month, month.day, snap, created,
                                          month.added, assembled))
                if on_month:
                    on_month(done[-1])
            last = months[-1]  # the registry itself, after every snapshot there
            snap, created = freeze(home, home.registry, tag=last.month or None, move_tag=True,
                                   created_at=creation_time(
                                       home, _midnight(last.day) if last.day else None))
            done.append(MonthSnapshot(last.month, last.day, snap, created, last.added, False))
            if on_month:
                on_month(done[-1])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return done
