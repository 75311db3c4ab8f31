"""Build the registry from its inputs: source configs + raw cache + contracts -> Parquet.

The build is deterministic: the same configs, raw files and contract files give the same
tables. It runs under a lock, and writes are atomic (see `tables.write_registry`), so a
failed build leaves the last good registry in place.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from benchpress.input_limits import input_limits
from benchpress.adapters import get_adapter, spec_of
from benchpress.adapters.fetch import fetch, tree_sha256
from benchpress.digest import sha256_of
from benchpress.errors import BadInputError, as_os_error
from benchpress.executor import LocalExecutor, get_executor
from benchpress.home import Home
from benchpress.store.journal import Intent, begin, finish, settle
from benchpress.store.methods import method_starts, split_methods, version_rows
from benchpress.store.prepared import PreparedCache, version_key
from benchpress.store.provenance import with_measured_by
from benchpress.store.renames import ORIGIN as RENAME_ORIGIN
from benchpress.store.renames import apply_renames, identities, provider_renames, upstream_renames
from benchpress.store.resolve import resolve_cells
from benchpress.store.verdicts import apply_reviews
from benchpress.store.sources import (
    SourceConfig, check_source_id, config_versions, load_configs, version_date,
)
from benchpress.store.tables import locked, recover, views_sql, write_registry
from benchpress.validate.contracts import load_contracts
from benchpress.validate.prepare import SourceInfo, identity_columns, prepare_source
from benchpress.validate.reviews import REVIEWS_FILE
from benchpress.validate.schemas import (
    Benchmarks, Models, Quarantine, Sources, StoredScores, validate_table,
)

__all__ = ["SourceSummary", "BuildReport", "Assembled", "build", "build_locked", "materialize",
           "reuse_prepared", "version_steps", "prepare_steps", "assemble", "prepared_folder", "declared_methods"]



@dataclass(frozen=True)
class SourceSummary:
    source_id: str
    adapter: str
    rows_read: int
    rows_accepted: int
    rows_merged: int
    rows_quarantined: int
    reasons: list[str] = field(default_factory=list)  # one line per quarantined row
    notes: list[str] = field(default_factory=list)    # the adapter's file-level remarks
    version: str | None = None                        # the source version (None: unversioned)


@dataclass(frozen=True)
class BuildReport:
    sources: list[SourceSummary]
    counts: dict[str, int]          # rows per table
    warnings: list[str] = field(default_factory=list)  # e.g. sources that disagree on a provider
    notes: list[str] = field(default_factory=list)     # what a command changed (add-model)


def materialize(home: Home, config: SourceConfig, *, mirror: Path | None = None) -> tuple[Path, str, str]:
    """The local file or folder behind a source: (path, sha256, retrieved_at).

    A `mirror_path` may name a folder (a zip's unpacked files); its sha256 is then the tree
    digest that `fetch.tree_sha256` gives the folder and the zip alike.
    """
    if config.path:
        path = (home.root / config.path) if not Path(config.path).is_absolute() else Path(config.path)
        if not path.exists():
            raise BadInputError(f"source '{config.id}': file {path} is missing")
        # a folder read in place (an unpacked leaderboard export) is named by its tree digest
        return path, (sha256_of(path) if path.is_file() else tree_sha256(path)), config.retrieved_at or ""
    if not config.url:
        raise BadInputError(f"{home.sources / (config.id + '.yaml')}: field 'url': a source needs a url or a path")
    got = fetch(config.url, home.cache, expected_sha256=config.sha256, mirror=mirror,
                mirror_path=config.mirror_path)
    # a pinned file's retrieval time is the config's (or its publication date, or the date
    # its version label names), not "now", so that rebuilding the same inputs gives
    # byte-identical tables (and the same md5 in dvc.lock)
    return got.path, got.sha256, dated(config) or got.retrieved_at


def dated(config: SourceConfig) -> str | None:
    """When a pinned version config says its file stood: its `retrieved_at`, else its
    `published` date, else the date its version label names (a history's versions are
    labelled by their day); None when it says none."""
    return config.retrieved_at or config.published or version_date(config)


def declared_methods(configs: list[SourceConfig], home: Home) -> dict[str, dict]:
    """{source_id: {benchmark_id: [start, ...]}}: each source's declared changes of method,
    its config's `method_changes` and those its adapter's format declares (a spec's
    regimes)."""
    declared = {}
    for config in configs:
        changes = {b: list(v) for b, v in (config.method_changes or {}).items()}
        for bench, starts in (get_adapter(config.adapter, home.specs).method_changes or {}).items():
            changes[bench] = sorted({*changes.get(bench, []), *starts})
        if changes:
            declared[config.id] = changes
    return declared


def _provider_conflicts(described: pl.DataFrame) -> list[str]:
    """One warning per model that two sources give different providers (case aside)."""
    given = (described.filter(pl.col("provider").is_not_null())
             .with_columns(pl.col("provider").str.strip_chars().str.to_lowercase().alias("_key"))
             .unique(["model_id", "_key"], keep="first", maintain_order=True))
    split = given.filter(pl.len().over("model_id") > 1)
    warnings = []
    for (mid,), group in split.group_by("model_id", maintain_order=True):
        (kept, kept_src), *others = group.select("provider", "source_id").rows()
        warnings.append(f"model '{mid}': sources disagree on the provider; kept '{kept}' "
                        f"({kept_src}, the first to describe it), not "
                        + ", ".join(f"'{p}' ({s})" for p, s in others))
    return warnings


def _models_table(parts: list[pl.DataFrame], scores: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    described = pl.concat(parts) if parts else pl.DataFrame(schema=Models.to_schema().columns)
    # a model that only appears in scores (a competitor column of a model card) gets a bare row
    bare = (scores.select("model_id", "source_id").unique("model_id", maintain_order=True)
            .join(described.select("model_id"), on="model_id", how="anti")
            .with_columns(pl.col("model_id").alias("name")))
    bare = bare.with_columns(*identity_columns(bare["model_id"].to_list()).values())
    merged = pl.concat([described.drop("ordinal"), bare], how="diagonal_relaxed")
    cols = [c for c in Models.to_schema().columns if c not in ("model_id", "ordinal")]
    # the first source to describe a model wins; later sources only fill what it left null
    # (a different provider from a later source is reported, not silently dropped)
    table = (merged.group_by("model_id", maintain_order=True)
             .agg(pl.col(c).drop_nulls().first() for c in cols)
             .with_columns(pl.int_range(pl.len()).cast(pl.Int64).alias("ordinal"),
                           pl.col("entry_kind").fill_null("model"))
             .select(list(Models.to_schema().columns)))
    return table, _provider_conflicts(described)


def _benchmarks_table(contract: pl.DataFrame, declared: list[pl.DataFrame],
                      scores: pl.DataFrame, listed: list[str]) -> pl.DataFrame:
    """Benchmarks with at least one accepted score, ordered as the sources list them
    (a source's benchmark list first, then the order their scores appear)."""
    known = pl.concat([contract, *declared], how="diagonal_relaxed").unique(
        "benchmark_id", keep="first", maintain_order=True)
    # method versions (`store.methods`) are described as their base benchmark
    versions = version_rows(known, scores["benchmark_id"].unique().sort().to_list())
    known = pl.concat([known, versions.join(known.select("benchmark_id"), on="benchmark_id",
                                            how="anti")], how="diagonal_relaxed")
    order = pl.concat([pl.Series("benchmark_id", listed, dtype=pl.String), scores["benchmark_id"]])
    used = (order.to_frame().unique(maintain_order=True)
            .filter(pl.col("benchmark_id").is_in(scores["benchmark_id"].implode()))
            .with_row_index("ordinal"))
    return (used.join(known, on="benchmark_id", how="left")
            .with_columns(pl.col("ordinal").cast(pl.Int64), pl.coalesce("name", "benchmark_id").alias("name"))
            .select(list(Benchmarks.to_schema().columns)))


def _aliases_table(contract: pl.DataFrame, renames: pl.DataFrame) -> pl.DataFrame:
    """The alias table, plus each model id a source renamed (`store.renames`)."""
    found = renames.unique("alias", keep="first", maintain_order=True).select(
        pl.lit("model").alias("kind"), "alias", "canonical_id", pl.lit(RENAME_ORIGIN).alias("origin"),
        pl.format("{}: the same upstream id ({}) as {}", "source_id", "upstream_id",
                  "canonical_id").alias("note"))
    table = contract.with_columns(pl.col("note").replace("", None))
    found = found.join(table.filter(pl.col("kind") == "model").select("alias"), on="alias",
                       how="anti")
    return pl.concat([table, found], how="vertical_relaxed")


_PREPARED: "OrderedDict[tuple, tuple]" = OrderedDict()  # in-process memo of prepared files
_PREPARED_MAX = 256
_MEMO = {"on": False}


@contextmanager
def reuse_prepared():
    """Within this block, builds in this process read and prepare each file (by content
    digest, contracts, source info and the input limits in force) once; a replay's date-by-date
    rebuilds use it."""
    before = _MEMO["on"]
    _MEMO["on"] = True
    try:
        yield
    finally:
        _MEMO["on"] = before
        if not before:
            _PREPARED.clear()


def _contracts_key(home: Home) -> str:
    """A digest of the contract files a version's preparation reads (a memoized preparation
    is only reused under the same contracts). The reviewed verdicts are left out: they act on
    the assembled observations (`store.verdicts`), never on one version's preparation, so
    recording a verdict rebuilds from the prepared versions instead of preparing them all."""
    return (tree_sha256(home.schemas, leave_out=frozenset({REVIEWS_FILE}))
            if home.schemas.is_dir() else "")


def prepared_folder(home: Home) -> Path:
    """Where a workspace keeps its prepared versions (`store.prepared`)."""
    return home.root / ".cache" / "prepared"


def _read_prepared(adapter, locate: Callable[[], Path], config: SourceConfig, info: SourceInfo,
                   contracts, key: tuple, cache: PreparedCache):
    """(the adapter's notes, prepared source) of one version's file and the key it is kept
    under: memoized in this process inside `reuse_prepared` (a replay rebuilds each date
    from every version up to it, and reads each file once), and on disk in `cache` by
    content digest, contracts, source info, the limits in force and the package's code
    (`key` holds all but the code), so a version is read and checked once. `locate()`
    gives the file, called only when it must be read."""
    folder_key = version_key(key)
    if _MEMO["on"] and key in _PREPARED:
        _PREPARED.move_to_end(key)
        return (*_PREPARED[key], folder_key)
    got = cache.get(folder_key)
    if got is None:
        path = locate()
        try:
            output = adapter.read(path)
        except BadInputError as exc:  # name the source, not the cache file
            origin = config.path or config.url or config.id
            raise BadInputError(f"source '{config.id}' ({origin}): "
                                + str(exc).replace(f"{path}: ", "")) from exc
        got = (prepare_source(output, contracts, info), list(output.notes))
        cache.put(folder_key, *got)
    prepared, notes = got
    if _MEMO["on"]:
        _PREPARED[key] = (notes, prepared)
        while len(_PREPARED) > _PREPARED_MAX:
            _PREPARED.popitem(last=False)
    return notes, prepared, folder_key


def _label(step) -> str:
    config, vconf = step
    return config.id if not vconf.version else f"{config.id}@{vconf.version}"


def _prepare_step(step, *, home: Home, mirror: Path | None, contracts, contracts_key: str,
                  candidate=None, cache_folder: str | None = None) -> dict:
    """Read and prepare one version of one source (``step = (config, version config)``):
    a task of the build's executor. Returns the prepared parts (``models``, ``declared``,
    ``listed``, ``scores``, ``quarantine``), its ``summary``, its ``sources`` row and the
    ``key`` it is kept under in the prepared cache (`cache_folder`, None: none); the
    adapter's raw frames are dropped here. ``candidate`` is ``(read_from, extra)``: read
    that file in place of ``extra``'s own (add-model's new releases file)."""
    config, vconf = step
    adapter = get_adapter(config.adapter, home.specs)
    read_from, extra = candidate if candidate is not None else (None, None)
    if extra is not None and config.id == extra.id and vconf.version == extra.version:
        path, digest, retrieved_at = read_from, sha256_of(read_from), config.retrieved_at or ""
    elif vconf.sha256 and vconf.url and not vconf.path and dated(vconf):
        # a pinned, dated version: its key is known from the config, and its file is
        # fetched (and its pin checked) only if it has to be read
        path, digest, retrieved_at = None, vconf.sha256, dated(vconf)
    else:
        path, digest, retrieved_at = materialize(home, vconf, mirror=mirror)
    info = SourceInfo(config.id, vconf.url, retrieved_at, digest[:12],
                      cites_source=adapter.cites_source)
    spec = spec_of(config.adapter, home.specs)  # a spec adapter reads as its spec says
    notes, prepared, key = _read_prepared(
        adapter, (lambda: path) if path is not None
        else (lambda: materialize(home, vconf, mirror=mirror)[0]), vconf, info, contracts,
        (contracts_key, adapter.name, digest, repr(info), input_limits().items(),
         "" if spec is None else repr(spec)),
        PreparedCache(None if cache_folder is None else Path(cache_folder)))
    summary = SourceSummary(
        config.id, adapter.name, prepared.rows_read, prepared.scores.height,
        prepared.rows_merged, prepared.quarantine.height,
        [f"{config.id} {r['row']}: field '{r['field']}': {r['reason']}"
         for r in prepared.quarantine.iter_rows(named=True)],
        list(notes), vconf.version,
    )
    return {
        "models": prepared.models, "declared": prepared.benchmarks, "listed": prepared.listed,
        "scores": prepared.scores.with_columns(
            pl.lit(vconf.version, dtype=pl.String).alias("source_version")),
        "quarantine": prepared.quarantine, "summary": summary, "key": key,
        "identities": identities(config.id, vconf.version, prepared.models),
        "source_row": {
            "source_id": config.id, "source_version": vconf.version, "adapter": adapter.name,
            "url": vconf.url, "path": vconf.path, "sha256": digest,
            "retrieved_at": retrieved_at, "licence": config.licence,
            "rows_read": summary.rows_read, "rows_accepted": summary.rows_accepted,
            "rows_merged": summary.rows_merged, "rows_quarantined": summary.rows_quarantined,
        },
    }


def version_steps(configs: list[SourceConfig]) -> list[tuple[SourceConfig, SourceConfig]]:
    """(config, flat version config) of every version of every source, in build order: the
    sources by (order, id), a source's newest version first (its description of a model
    wins over older versions')."""
    return [(config, version) for config in configs
            for version in reversed(config_versions(config))]


def prepare_steps(home: Home, steps: list, *, mirror: Path | None = None,
                  on_source: Callable[[int, int, str], None] | None = None,
                  executor=None, contracts=None, candidate=None,
                  cache: bool = True) -> list[dict]:
    """The prepared part of each step (`_prepare_step`), in the order of `steps`: here one
    after the other, each named to `on_source` as it starts, or on `executor`'s workers.
    `cache`: keep and reuse prepared versions in the workspace's prepared cache."""
    contracts = contracts if contracts is not None else load_contracts(home.schemas)
    shared = dict(home=home, mirror=mirror, contracts=contracts,
                  contracts_key=_contracts_key(home), candidate=candidate,
                  cache_folder=str(prepared_folder(home)) if cache else None)
    ex = get_executor(executor)
    if isinstance(ex, LocalExecutor):  # one source after the other, each named as it starts
        parts = []
        for k, step in enumerate(steps):
            if on_source:
                on_source(k, len(steps), _label(step))
            parts.append(_prepare_step(step, **shared))
        return parts
    # every source version read and prepared on the cluster's workers
    return ex.map(_prepare_step, steps, **shared, progress=None if on_source is None
                  else lambda k, n: on_source(k, n, f"{k} of {n} sources read"))


@dataclass(frozen=True)
class Assembled:
    """The registry's tables made from prepared parts (`assemble`), with the build.json
    manifest, the build's warnings and one summary per source version."""

    tables: dict[str, pl.DataFrame]
    manifest: dict
    warnings: list[str]
    summaries: list[SourceSummary]


def assemble(configs: list[SourceConfig], parts: list[dict], contracts,
             declared: dict[str, dict] | None = None) -> Assembled:
    """The registry's tables from the prepared parts of every version of `configs` (in the
    order of `version_steps(configs)`): renames across a source's versions, method
    versions, the models and benchmarks tables, who measured each value, the resolved
    cells, each table checked against its contract. `declared`: the sources' declared
    changes of method (`declared_methods`). A pure function of its inputs: a through-time
    build calls it on the versions known at each date (`store.history`), and never changes
    `parts`."""
    # a renamed model (same upstream id in a source's versions) is its newest id
    known_ids = [p["identities"] for p in parts]
    renames = upstream_renames(known_ids)
    warnings_renamed = [
        f"source '{sid}' renamed provider '{old}' to '{new}' (same upstream id); add "
        f"'{old},{new},table,...' to schemas/provider_aliases.csv to merge them"
        for sid, old, new in provider_renames(known_ids)]
    renamed_base = dict(zip(renames["alias"], renames["canonical_id"]))
    model_parts = [apply_renames(p["models"], renames).with_columns(
        pl.col("base_model_id").replace(renamed_base))  # an entry follows its model's rename
        for p in parts]
    listed: list[str] = [b for p in parts for b in p["listed"]]  # in the sources' order
    source_rows = [p["source_row"] for p in parts]
    scores = (pl.concat([p["scores"] for p in parts]) if parts
              else pl.DataFrame(schema=StoredScores.to_schema().columns))
    scores = apply_renames(scores, renames)
    # a source's change of method files its later values under a new benchmark version
    scores = split_methods(scores, method_starts(
        scores, declared or {}, versioned={c.id for c in configs if c.versions}))
    # newer sources rank higher in conflicts: by published (else retrieval) date, then order
    by_age = sorted(configs, key=lambda c: ((c.published or c.retrieved_at or "")[:10],
                                            c.order, c.id))
    # a value a reviewer judged wrong leaves the cells for the quarantine (`store.verdicts`)
    scores, reviewed_out, warnings_reviews = apply_reviews(scores, contracts.reviews,
                                                          contracts)
    models, warnings = _models_table(model_parts, scores)
    del model_parts
    scores = with_measured_by(scores, models, contracts)  # who measured each value
    cells = resolve_cells(scores, contracts.source_priority,
                          {c.id: k + 1 for k, c in enumerate(by_age)})
    warnings += warnings_renamed + warnings_reviews
    quarantine = [p["quarantine"] for p in parts] + [reviewed_out]
    tables = {
        "models": models,
        "benchmarks": _benchmarks_table(contracts.benchmarks, [p["declared"] for p in parts],
                                        scores, listed),
        "scores": scores,
        "cells": cells,
        "aliases": _aliases_table(contracts.aliases, renames),
        "sources": pl.DataFrame(source_rows, schema={
            c: col.dtype.type for c, col in Sources.to_schema().columns.items()}),
        "quarantine": (pl.concat(quarantine) if quarantine
                       else pl.DataFrame(schema={c: pl.String for c in Quarantine.to_schema().columns})),
    }
    for name, df in tables.items():  # the built tables meet their contracts too
        if name != "scores":  # rows were checked one by one at ingest
            validate_table(name, df)
    manifest = {
        "counts": {name: df.height for name, df in tables.items()},
        # each source's newest version (rows are newest first within a source)
        "sources": {r["source_id"]: r["sha256"] for r in reversed(source_rows)},
    }
    versioned = {}
    for r in source_rows:
        if r["source_version"] is not None:
            versioned.setdefault(r["source_id"], {})[r["source_version"]] = r["sha256"]
    if versioned:
        manifest["source_versions"] = versioned
    if warnings:
        manifest["warnings"] = warnings
    return Assembled(tables, manifest, warnings, [p["summary"] for p in parts])


def build(home: Home, *, mirror: Path | None = None,
          on_source: Callable[[int, int, str], None] | None = None,
          extra: SourceConfig | None = None, executor=None) -> BuildReport:
    """Rebuild `home.registry` from every source under `home.sources`.

    `extra` is a source config not saved yet (it replaces a saved one with the same id): it
    is saved in the same transaction as the registry swap (see `journal`), so a failed or
    killed build saves nothing. `on_source(k, n, source_id)` is called before each of the n
    sources (progress display). `executor` (see `benchpress.executor`; None: here, one
    source after the other) reads and prepares the sources' versions, e.g. on a Dask
    cluster whose workers see this home at the same path; the tables are the same.
    """
    with locked(home.lock):
        return build_locked(home, mirror=mirror, on_source=on_source, extra=extra,
                            executor=executor)


def build_locked(home: Home, *, mirror: Path | None = None,
                 on_source: Callable[[int, int, str], None] | None = None,
                 extra: SourceConfig | None = None, read_from: Path | None = None,
                 publish: dict[Path, Path] | None = None, settled: bool = False,
                 executor=None) -> BuildReport:
    """`build` for a caller that holds the lock already.

    `read_from` is a candidate file read in place of `extra`'s own file (add-model's new
    `releases.csv`); `publish` maps candidate files to the targets they replace once the
    registry is committed. Both go through the journal: see `benchpress.store.journal`.
    `settled` says the caller has run `recover` and `journal.settle` already.
    """
    if extra is not None:  # its config is saved under sources/: a plain name, before any write
        check_source_id(extra.id)
    if not settled:
        recover(home.registry)
        settle(home)
    contracts = load_contracts(home.schemas)
    configs = load_configs(home.sources)
    if extra is not None:
        configs = sorted([c for c in configs if c.id != extra.id] + [extra],
                         key=lambda c: (c.order, c.id))
    if not configs:  # an empty registry would only hide the mistake
        raise BadInputError(f"{home.sources}: no sources to build from; add one with "
                            "`benchpress ingest FILE` or `benchpress add-model`")
    steps = version_steps(configs)
    parts = prepare_steps(home, steps, mirror=mirror, on_source=on_source, executor=executor,
                          contracts=contracts,
                          candidate=(read_from, extra) if read_from is not None and extra is not None
                          else None)
    used = {p["key"] for p in parts}
    made = assemble(configs, parts, contracts, declared_methods(configs, home))
    del parts
    tables, manifest, warnings, summaries = made.tables, made.manifest, made.warnings, made.summaries
    intent = None
    if extra is not None:
        intent = Intent(extra.id, manifest["sources"][extra.id], asdict(extra),
                        {str(c): str(t) for c, t in (publish or {}).items()})
        begin(home, intent)
    try:
        write_registry(home.registry, tables, manifest, views_sql())
    except BaseException as exc:
        try:  # a failed swap puts the old registry back, then the journal decides
            recover(home.registry)
            if intent is not None:
                settle(home)
        except OSError:
            pass  # (a read-only or full disk) the next writer's recovery does it
        fault = as_os_error(exc, home.registry) if isinstance(exc, Exception) else None
        if fault is not None and fault is not exc:  # polars' wrapped IO error: name the folder
            raise fault from exc
        raise
    if intent is not None:
        finish(home, intent)
    if extra is None:  # a build of the saved sources: the prepared versions it did not use go
        PreparedCache(prepared_folder(home)).prune(used)
    return BuildReport(summaries, manifest["counts"], warnings)
