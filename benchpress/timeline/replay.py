"""Replay: rebuild the registry date by date from a plan of dated source versions.

A plan (YAML) names the replay, the fit to make on every snapshot and the dated versions.
The versions are those of the home's source configs (one description of each history:
`sources/*.yaml`, `versions:`, each version dated by `published`, see `store.sources`),
named by source; `start` moves the versions dated before it to that day (the replay's
analyses begin there):

```yaml
name: history
fit: {sources: [livebench, artificial-analysis], method: default, probes: 5,
      probe_sources: [livebench]}
start: 2026-01-08
sources: [livebench-2026-01-08, artificial-analysis, benchpress-2026-05]
```
A plan may also list versions itself (a history the home's sources do not hold), and place
a saved config at a date of its own:

```yaml
versions:
  - {date: 2026-01-08, source: livebench, version: 2026-01-08T1655, adapter: livebench,
     url: https://livebench.ai/, mirror_path: livebench-history/2026-01-08T1655, sha256: ...}
  - {date: 2026-05-15, config: benchpress-2026-05}   # a config of the home's sources/
```
A version without a date of its own (a hand-entered file) is placed at the plan's last
date, as the through-time build places it in the newest month (`store.history`).
For every date (in order) the registry of a separate workspace, `<home>/replay/<name>/`
(never the user's registry), is rebuilt from every version dated up to that day (a source's
versions become one versioned source, see `store.sources`) and frozen as a snapshot tagged
with the date. On each snapshot the predictor is fitted on `fit.sources`, the probe set
chosen (on `fit.probe_sources`, default the same: a probe search refits once per model, so a
plan may choose probes on one leaderboard to stay fast; `fit.probes: 0` chooses none), the
held-out error (3 folds, seed 42) and the two-factor variance (of the largest complete
submatrix, from its singular values) measured, and the forecasts of every missing cell stored (`timeline.forecasts`); each date is compared with the one before: new
models, the causes of changed values (`store.diff`), drift (two-factor variance, probe
changes) and the realized error of the previous date's forecasts.

A rerun reuses what did not change: a date whose inputs (configs, contracts, package
version) are unchanged keeps its snapshot without a build, and every analysis is cached by
snapshot id and fit parameters under `<home>/replay/<name>/analysis/`.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl
import yaml

from benchpress import yaml_text
from benchpress.adapters.fetch import tree_sha256
from benchpress.api.artifact import code_digest
from benchpress.digest import json_digest, sha256_of
from benchpress.errors import BadInputError, shown
from benchpress.validate.names import unknown_message
from benchpress.home import Home
from benchpress.store.build import build, reuse_prepared
from benchpress.store.diff import diff_folders
from benchpress.store.snapshot import create_snapshot, get_snapshot
from benchpress.store.sources import (
    SourceConfig, add_version, check_source_id, config_versions, load_configs, save_config,
    version_date,
)
from benchpress.store.tables import read_table, write_atomic, write_json_atomic
from benchpress.timeline import forecasts as forecasts_module
from benchpress.timeline.forecasts import (
    forecasts_at, pooled_figures, present_sources, score_forecasts,
)
from benchpress.version import __version__

__all__ = ["Plan", "Timeline", "load_plan", "replay", "replay_home", "row_alarms"]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._\-]{0,63}$")
_ENTRY = {"date", "source", "version", "adapter", "url", "mirror_path", "sha256", "licence",
          "config"}
_PLAN = {"name", "fit", "sources", "start", "versions"}


@dataclass(frozen=True)
class Plan:
    """A parsed plan: its name, fit settings and dated source configs (oldest date first)."""

    name: str
    fit_sources: list[str] | None
    method: str
    probes: int
    entries: list[tuple[str, SourceConfig]]   # (date, flat config) in plan order
    probe_sources: list[str] | None = None

    def dates(self) -> list[str]:
        return sorted({d for d, _ in self.entries})

    def configs_until(self, date: str) -> list[SourceConfig]:
        """One config per source from the versions dated up to `date` (versions merged)."""
        merged: dict[str, SourceConfig] = {}
        for day, config in sorted(self.entries, key=lambda e: (e[0], e[1].version or "")):
            if day > date:
                continue
            old = merged.get(config.id)
            merged[config.id] = config if old is None or not config.version else add_version(old, config)
        return list(merged.values())


def load_plan(path: Path, home: Home) -> Plan:
    """Read and check a plan; `config:` entries name configs of `home`'s sources/."""
    try:
        doc = yaml_text.read_file(Path(path)) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BadInputError(f"{path}: not a readable plan ({yaml_text.describe(exc)})") from exc
    if not isinstance(doc, dict):
        raise BadInputError(f"{path}: a plan is a mapping with 'name', 'fit' and 'sources' or "
                            f"'versions', not a {type(doc).__name__}")
    if set(map(str, doc)) - _PLAN:
        raise BadInputError(f"{path}: " + unknown_message(
            "field", sorted(set(map(str, doc)) - _PLAN), sorted(_PLAN)))
    name = str(doc.get("name") or Path(path).stem)
    if not _NAME.match(name):
        raise BadInputError(f"{path}: field 'name' is {name!r}; use lowercase letters, digits, . _ -")
    fit = doc.get("fit") or {}
    if not isinstance(fit, dict) or not isinstance(doc.get("versions") or [], list):
        raise BadInputError(f"{path}: 'fit' must be a mapping and 'versions' a list")
    saved = {c.id: c for c in load_configs(home.sources)} if home.sources.is_dir() else {}
    entries = _source_entries(doc, saved, path)
    for k, e in enumerate(doc.get("versions") or []):
        where = f"{path}: versions[{k}]"
        if not isinstance(e, dict) or set(e) - _ENTRY:
            raise BadInputError(f"{where}: expected a mapping of {', '.join(sorted(_ENTRY))}")
        date = str(e.get("date", ""))
        if not _DATE.match(date):
            raise BadInputError(f"{where}: field 'date' is {date!r}; expected YYYY-MM-DD")
        if e.get("config"):
            if not isinstance(e["config"], str) or e["config"] not in saved:
                raise BadInputError(f"{where}: no source config {shown(e['config'])} in "
                                    f"{home.sources}")
            entries.append((date, saved[e["config"]]))
            continue
        missing = [f for f in ("source", "version", "adapter", "url", "sha256") if not e.get(f)]
        if missing:
            raise BadInputError(f"{where}: missing {', '.join(missing)}")
        _check_entry(e, where)
        entries.append((date, SourceConfig(
            id=str(e["source"]), adapter=str(e["adapter"]), url=str(e["url"]),
            mirror_path=e.get("mirror_path"), sha256=str(e["sha256"]), licence=e.get("licence"),
            version=str(e["version"]), published=date, order=50)))
    if not entries:
        raise BadInputError(f"{path}: the plan lists no versions")
    probes = fit.get("probes", 5)
    if isinstance(probes, bool) or not isinstance(probes, int) or probes < 0:
        raise BadInputError(f"{path}: field 'fit.probes' is {shown(probes)}; expected a count")
    for key in ("sources", "probe_sources"):
        given = fit.get(key)
        if given and not (isinstance(given, list) and all(isinstance(x, str) for x in given)):
            raise BadInputError(f"{path}: field 'fit.{key}' must be a list of source ids")
    return Plan(name, list(fit["sources"]) if fit.get("sources") else None,
                str(fit.get("method", "default")), probes, entries,
                list(fit["probe_sources"]) if fit.get("probe_sources") else None)


def _source_entries(doc: dict, saved: dict[str, SourceConfig], path: Path) -> list:
    """(date, flat config) of every version of the saved sources a plan names (`sources`),
    each at its own day or the plan's `start`, whichever is later; undated versions at the
    newest day of them all."""
    named = doc.get("sources") or []
    if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
        raise BadInputError(f"{path}: field 'sources' must be a list of source ids")
    start = doc.get("start")
    if start is not None and not _DATE.match(str(start)):
        raise BadInputError(f"{path}: field 'start' is {shown(start)}; expected YYYY-MM-DD")
    unknown = [n for n in named if n not in saved]
    if unknown:
        raise BadInputError(f"{path}: field 'sources': no source config {shown(unknown[0])} in "
                            f"the home's sources/ (it has {', '.join(sorted(saved)) or 'none'})")
    dated, undated = [], []
    for sid in named:
        for version in config_versions(saved[sid]):
            day = version_date(version)
            if day is None:
                undated.append(version)
            else:
                dated.append((max(day, str(start)) if start else day, version))
    last = max((d for d, _ in dated), default=str(start) if start else None)
    if undated and last is None:
        raise BadInputError(f"{path}: the sources named carry no dates; give 'start'")
    return dated + [(last, v) for v in undated]


def _check_entry(e: dict, where: str) -> None:
    """The fields of a plan entry that become a source config: the source id names a file
    under sources/ (a plain name), the others are text of the expected shape."""
    check_source_id(e["source"], f"{where}: field 'source'")
    for key in ("version", "adapter", "url", "mirror_path", "sha256", "licence"):
        if e.get(key) is not None and not isinstance(e[key], (str, int, float)):
            raise BadInputError(f"{where}: field '{key}' is a {type(e[key]).__name__}; "
                                "expected text")
    if not re.fullmatch(r"[0-9a-f]{64}", str(e["sha256"])):
        raise BadInputError(f"{where}: field 'sha256' is {shown(e['sha256'])}; expected 64 "
                            "lowercase hex digits")
    mirror = str(e.get("mirror_path") or "")
    if mirror.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", mirror):
        raise BadInputError(f"{where}: field 'mirror_path' is {shown(mirror)}; expected a path "
                            "inside the mirror folder")


def replay_home(home: Home, plan: Plan) -> Home:
    """The replay's own workspace, `<home>/replay/<plan name>/`, with `home`'s contracts and
    leaderboard spec files."""
    root = home.root / "replay" / plan.name
    (root / "sources").mkdir(parents=True, exist_ok=True)
    shutil.copytree(home.schemas, root / "schemas", dirs_exist_ok=True)
    if home.specs.is_dir():
        shutil.copytree(home.specs, root / "sources" / "specs", dirs_exist_ok=True)
    return Home(root)


@dataclass
class Timeline:
    """One row per date (`rows`, see `replay`) and the pooled forecast figures."""

    plan: str
    folder: Path
    rows: list[dict] = field(default_factory=list)
    pooled: dict = field(default_factory=dict)      # every consecutive pair's cells together
    span: dict = field(default_factory=dict)        # forecasts at the first date, scored at the last
    seconds: float = 0.0
    built: int = 0                                  # dates rebuilt (the rest were reused)

    def frame(self) -> pl.DataFrame:
        cols = ["date", "snapshot", "models", "cells", "fit_models", "new_models", "revised",
                "var2", "probes", "probes_changed", "heldout_medae", "forecast_n",
                "forecast_medae", "forecast_coverage", "new_model_n", "new_model_medae", "alarm"]
        return pl.DataFrame([{c: r.get(c) for c in cols} for r in self.rows],
                            schema_overrides={"var2": pl.Float64, "heldout_medae": pl.Float64,
                                              "forecast_medae": pl.Float64,
                                              "forecast_coverage": pl.Float64,
                                              "new_model_medae": pl.Float64})

    def to_dict(self) -> dict:
        return {"plan": self.plan, "folder": str(self.folder), "seconds": self.seconds,
                "dates_built": self.built, "pooled": self.pooled, "span": self.span,
                "timeline": self.rows}


def _load(path: Path) -> dict | None:
    """A cached analysis, or None (missing; a damaged cache entry is recomputed)."""
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            pass
    return None


def _store(path: Path, doc: dict) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, doc, sort_keys=True)
    return doc


def _cached(path: Path, compute: Callable[[], dict]) -> dict:
    doc = _load(path)
    return doc if doc is not None else _store(path, compute())


def _analyse_task(sid: str, *, root: str, plan: Plan) -> dict:
    """`_analyse` as an executor's task (it may run on another machine that sees `root`)."""
    return _analyse(Home(Path(root)), sid, plan)


def _compare_task(pair: tuple, *, root: str, plan: Plan) -> dict:
    """`_compare` of (a, b, pair cells file) as an executor's task."""
    a, b, cells_file = pair
    return _compare(Home(Path(root)), a, b, plan, Path(cells_file))


def _freeze(rhome: Home, plan: Plan, date: str, state: dict, mirror: Path | None,
            schemas_sha256: str) -> tuple[str, bool]:
    """The snapshot of `date` (built unless the same inputs made one before: the configs,
    the package version and the contracts' tree digest `schemas_sha256`); (id, built)."""
    configs = plan.configs_until(date)
    key = json_digest({"configs": [asdict(c) for c in configs], "version": __version__,
                       "schemas": schemas_sha256})
    sid = state.get(key)
    if sid and (rhome.snapshots / sid / "manifest.json").is_file():
        return sid, False
    for old in rhome.sources.glob("*.yaml"):
        old.unlink()
    for config in configs:
        save_config(rhome.sources, config)
    build(rhome, mirror=mirror)
    snap, _ = create_snapshot(rhome, tag=date)
    state[key] = snap.id
    return snap.id, True


def _analyse(rhome: Home, sid: str, plan: Plan) -> dict:
    """Fit, held-out error, two-factor variance, probe set and forecasts of one snapshot."""
    from benchpress.api import BenchPress
    from benchpress.api.fit_store import FitStore
    from benchpress.predict import make_predictor

    snap = get_snapshot(rhome, sid)
    chosen = present_sources(snap.path, plan.fit_sources)
    store = FitStore()  # one fit of the snapshot, for its analysis and its forecasts
    bp = BenchPress.from_snapshot(rhome, sid, sources=chosen, predictor=make_predictor(plan.method),
                                  store=store)
    out = {"snapshot": sid, "models": snap.counts.get("models"), "cells": snap.counts.get("cells"),
           "fit_models": len(bp.matrix.model_ids), "fit_benchmarks": len(bp.matrix.benchmark_ids),
           "fit_cells": int((~pl.Series(bp.matrix.values.ravel()).is_nan()).sum())}
    try:
        spectra = bp.spectrum()
        label = next((k for k in spectra if k.startswith("largest")), None)
        if label is not None:
            power = np.asarray(spectra[label], dtype=float) ** 2
            out["var2"] = float(power[:2].sum() / power.sum())
            out["var2_submatrix"] = label
        out["heldout_medae"] = float(bp.evaluate(bp.folds(n_folds=3, seed=42)).overall.medae)
        if plan.probes:  # fit.probes: 0 chooses no probe set (no search)
            probe_bp = bp
            if plan.probe_sources and plan.probe_sources != plan.fit_sources:
                probe_bp = BenchPress.from_snapshot(
                    rhome, sid, sources=present_sources(snap.path, plan.probe_sources),
                    predictor=make_predictor(plan.method))
            out["probes"] = list(probe_bp.probes(plan.probes).final.probes)
    except (BadInputError, ValueError, IndexError) as exc:  # a matrix too small to measure
        out["note"] = f"not measured: {exc}"
    frame, path = forecasts_at(rhome, sid, sources=plan.fit_sources, method=plan.method,
                               store=store)
    out["forecasts"] = frame.height
    out["forecasts_file"] = str(path.relative_to(rhome.root))
    return out


def _compare(rhome: Home, a: str, b: str, plan: Plan, pair_cells: Path) -> dict:
    """New models, causes of changed cells and the realized error of a's forecasts at b."""
    fa, fb = get_snapshot(rhome, a).path, get_snapshot(rhome, b).path
    models_a = set(read_table(fa, "models")["model_id"].to_list())
    new = sorted(set(read_table(fb, "models")["model_id"].to_list()) - models_a)
    changes = diff_folders(fa, fb)
    causes = changes.causes()["changed"]
    score = score_forecasts(rhome, a, b, sources=plan.fit_sources, method=plan.method)
    pair_cells.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(pair_cells, lambda tmp: score.cells.write_parquet(tmp))
    return {"new_models": len(new), "new_model_ids": new[:50], "causes": causes,
            "revised": int(causes.get("revised", 0)), "forecast": score.to_dict()}


def row_alarms(row: dict, previous: dict | None, cfg) -> list[str]:
    """The drift alarms of one date of the timeline (`row`, with the date before it,
    `previous`): drift's own rule (`benchpress.predict.drift.alarm_rule`, thresholds
    `cfg`) on what a replay measures (two-factor variance and its change, probes changed);
    sets ``row["probes_changed"]`` when both dates have probes."""
    from benchpress.predict.drift import alarm_rule
    from benchpress.predict.probes.results import probe_set_change

    var2, before = row.get("var2"), (previous or {}).get("var2")
    changed = None
    if previous is not None and previous.get("probes") and row.get("probes"):
        changed = row["probes_changed"] = len(
            probe_set_change(previous["probes"], row["probes"])["added"])
    return alarm_rule(cfg, var2=var2, probes_changed=changed,
                      var2_change=None if var2 is None or before is None else var2 - before)


def replay(home: Home, plan_path: Path, *, mirror: Path | None = None,
           on_step: Callable[[int, int, str], None] | None = None, executor=None) -> Timeline:
    """Run the plan (see the module docstring); returns the timeline and writes it as JSON
    to `<home>/replay/<name>/timeline.json`.

    The snapshots are built here, date by date; then the analyses of the snapshots not
    analysed before, and the comparisons of consecutive dates, each run as one map of
    `executor` (None/"local": in this process; a Dask scheduler address: on its workers,
    which must see the same home folder, see `benchpress.executor`). The timeline is the
    same wherever they ran."""
    import time

    from benchpress.executor import get_executor
    from benchpress.predict.drift import DriftThresholds

    started = time.perf_counter()
    plan = load_plan(plan_path, home)
    rhome = replay_home(home, plan)
    state_file = rhome.root / "state.json"
    state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.is_file() else {}
    # the analyses depend on the predictor's code itself, not only on the package version
    fit_key = json_digest({"sources": plan.fit_sources, "method": plan.method,
                           "probes": plan.probes, "probe_sources": plan.probe_sources,
                           "code": code_digest()})
    schemas_sha256 = tree_sha256(rhome.schemas)  # once: the contracts do not change mid-run
    timeline = Timeline(plan.name, rhome.root)
    limits = DriftThresholds()
    dates = plan.dates()
    snaps = []
    with reuse_prepared():
        for k, date in enumerate(dates):
            if on_step:
                on_step(k, len(dates), date)
            sid, built = _freeze(rhome, plan, date, state, mirror, schemas_sha256)
            timeline.built += built
            write_json_atomic(state_file, state, sort_keys=True)
            snaps.append(sid)
    # the analyses and comparisons not cached yet: independent of each other, one map each
    ex = get_executor(executor)
    analysis = rhome.root / "analysis"
    # a pair's comparison is kept while the fit and the ledger's scoring code are unchanged
    pair_key = json_digest({"fit": fit_key,
                            "scoring": sha256_of(Path(forecasts_module.__file__))})
    pairs = {(a, b): analysis / f"pair-{a}-{b}-{pair_key}" for a, b in zip(snaps, snaps[1:])
             if a != b}

    def report(what):
        return None if on_step is None else (lambda k, n: on_step(k, n, f"{what} {k} of {n}"))

    todo = [s for s in dict.fromkeys(snaps) if _load(analysis / f"{s}-{fit_key}.json") is None]
    for sid, doc in zip(todo, ex.map(_analyse_task, todo, progress=report("analysis"),
                                     root=str(rhome.root), plan=plan)):
        _store(analysis / f"{sid}-{fit_key}.json", doc)
    todo = [(a, b, str(f.with_suffix(".parquet"))) for (a, b), f in pairs.items()
            if _load(f.with_suffix(".json")) is None]
    for (a, b, _), doc in zip(todo, ex.map(_compare_task, todo, progress=report("comparison"),
                                           root=str(rhome.root), plan=plan)):
        _store(pairs[a, b].with_suffix(".json"), doc)
    previous, cells = None, []
    for date, sid in zip(dates, snaps):  # one row per date, from the cached analyses
        row = {"date": date, **_cached(analysis / f"{sid}-{fit_key}.json",
                                       lambda: _analyse(rhome, sid, plan))}
        if previous is not None and previous["snapshot"] != sid:
            pair_file = analysis / f"pair-{previous['snapshot']}-{sid}-{pair_key}"
            pair = _cached(pair_file.with_suffix(".json"),
                           lambda: _compare(rhome, previous["snapshot"], sid, plan,
                                            pair_file.with_suffix(".parquet")))
            cells.append(pl.read_parquet(pair_file.with_suffix(".parquet")))
            f = pair["forecast"]
            row.update(new_models=pair["new_models"], revised=pair["revised"],
                       causes=pair["causes"], forecast_n=f["n_cells"],
                       forecast_medae=f["medae"], forecast_coverage=f["coverage"],
                       new_model_n=f["new_models"]["n_cells"],
                       new_model_medae=f["new_models"]["medae"])
        elif previous is not None:
            row.update(new_models=0, revised=0, forecast_n=0)
        alarms = row_alarms(row, previous, limits)
        row["alarm"] = "; ".join(alarms) or None
        timeline.rows.append(row)
        previous = row
    if on_step:
        on_step(len(dates), len(dates), "done")
    if cells:
        timeline.pooled = pooled_figures(pl.concat(cells, how="diagonal_relaxed"))
    if len(timeline.rows) > 1:
        first, last = timeline.rows[0]["snapshot"], timeline.rows[-1]["snapshot"]
        span = score_forecasts(rhome, first, last, sources=plan.fit_sources, method=plan.method)
        timeline.span = {k: v for k, v in span.to_dict().items() if k != "per_benchmark"}
    timeline.seconds = round(time.perf_counter() - started, 2)
    write_json_atomic(rhome.root / "timeline.json", json.loads(json.dumps(timeline.to_dict(),
                                                                           default=str)))
    return timeline
