"""Ingest: record a file or URL as a source, then rebuild.

The raw file goes into the content-addressed cache, a config is written under
`sources/`, and the registry is rebuilt from all sources. If the build fails, the
config is not saved (and the registry, written atomically, never changed), and a raw file
that was refused (no adapter recognises it, or the build failed) is removed from the cache
again unless another source pins it: nothing refused stays behind.

A later copy of an existing source is ingested as a new *version* of it
(`ingest(..., source="livebench", version="2026-06-19T0954")`, CLI `--source ID [--version
LABEL]`): `source` must name a saved source (else the error lists the saved ids; a new source
is made only with `source_id`, CLI `--id`). The version is added to the source's config (see
`store.sources`), `cells` takes the newest version and every version stays in `scores`.
Without a label, the version is read from the input where it carries a date
(`infer_version`: a folder or file named by date, such as LiveBench's history folders
`2026-06-19T0954/` or `llms_2026-05-22.json`, else Artificial Analysis's `meta.fetched_at`);
an input without one is refused in one line. A new source is labelled the same way, its
first version by the input's date, else by the day it was retrieved.

A copy taken from a mirror's dated folder (`../shared/data/<source>-history/<date>/...`) is
cited as the upstream file at its commit and labelled by the folder's date, both read from
the `VERSIONS.csv` beside it (`store.upstream`), never as a local `file://` path. A file a
spec recognises (`adapters.spec_schema`) becomes, without --id, the source named as the spec,
so each later copy of that leaderboard is a version of one source.

Only http and https URLs are ingested (a local file is given as a plain path), and every
message names the file or URL as the user gave it, never its copy in the cache.
"""

from __future__ import annotations

import re
from datetime import date
import shutil
from dataclasses import replace
from pathlib import Path

from benchpress.adapters import detect_adapter, get_adapter, spec_of
from benchpress.adapters.fetch import FetchResult, fetch, url_scheme
from benchpress.errors import BadInputError, BenchPressError, FetchError, UsageError, shown
from benchpress.home import Home
from benchpress.store.build import BuildReport, build
from benchpress.store.upstream import upstream_of
from benchpress.store.sources import (
    SourceConfig, add_version, check_source_id, config_versions, load_configs, slug,
)

__all__ = ["ingest", "rebuild_with", "infer_version", "with_version", "check_source"]


def rebuild_with(home: Home, config: SourceConfig, *, mirror: Path | None = None,
                 on_source=None, executor=None) -> BuildReport:
    """Rebuild with `config` added; the build saves it in the same transaction as the registry
    swap, so a failed (or killed) build saves nothing. `executor`: see `build`."""
    return build(home, mirror=mirror, on_source=on_source, extra=config, executor=executor)


_DATED = re.compile(r"(\d{4}-\d{2}-\d{2}(?:T\d{4,6})?)")
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]?[0-9:]{2,8})?$")
_MAX_META_BYTES = 64 * 1024 * 1024


def infer_version(path: Path, name: str | None = None) -> str | None:
    """The version label a file or folder carries, else None.

    The date in its name (`2026-06-19T0954`, `llms_2026-05-22.json`; `name` is the name the
    user gave, tried first), else the date of a JSON document's `meta.fetched_at` (Artificial
    Analysis's `llms.json`).
    """
    for text in (Path(name).name if name else None, path.name):
        found = _DATED.search(text or "")
        if found:
            return found.group(1)
    if path.is_file() and path.suffix == ".json" and path.stat().st_size <= _MAX_META_BYTES:
        import json

        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        stamp = doc.get("meta", {}).get("fetched_at") if isinstance(doc, dict) else None
        if isinstance(stamp, str) and _DATED.match(stamp):
            return _DATED.match(stamp).group(1)[:10]
    return None


def _is_date_label(label: str) -> bool:
    """Whether `label` has the shape of `_VERSION` and names a real day (not 2026-02-30)."""
    if not _VERSION.match(label):
        return False
    try:
        date.fromisoformat(label[:10])
    except ValueError:
        return False
    return True


def with_version(home: Home, config: SourceConfig, version: str | None, given: Path,
                 name: str | None = None, inferred: str | None = None) -> SourceConfig:
    """`config` (a new flat config) as a version of the saved source with its id, if any.

    With an explicit `version`, the saved source (if there is one) gains it as a version. A
    new source gets a label too: `version`, else the date the input carries
    (`infer_version`), else the day it was retrieved. A saved source gains the version
    `infer_version` reads from the input (a saved source is never replaced by other
    content: without a date to read, give --version); the same content as a saved version
    again leaves the source as it is.
    """
    if version is not None and not _is_date_label(version):
        raise BadInputError(f"--version '{version}': expected a date label such as 2026-06-19 or "
                            "2026-06-19T0954 (labels must sort in time order), a real date")
    existing = next((c for c in load_configs(home.sources) if c.id == config.id), None)
    if version is None and existing is not None:
        # the same content again (a file's digest; a folder read in place: its path)
        pins = {(v.sha256 or v.path) for v in config_versions(existing)}
        if (config.sha256 or config.path) in pins:
            return existing
        version = inferred or infer_version(given, name)
        if version is None:
            raise BadInputError(f"source '{config.id}' exists and {name or given} carries no "
                                "date; give --version LABEL to add it as a version, or --id "
                                "NEW_ID for a new source")
    if version is None:  # a new source's first version
        version = inferred or infer_version(given, name) \
            or (config.retrieved_at or date.today().isoformat())[:10]
    config = replace(config, version=version, published=config.published or version[:10])
    if existing is None:
        return config
    if existing.adapter != config.adapter:
        raise BadInputError(f"source '{config.id}' is read by adapter '{existing.adapter}', but "
                            f"this input is '{config.adapter}'; a version must have the same "
                            "format (or give another --id)")
    return add_version(existing, replace(config, order=existing.order))


def check_source(home: Home, source: str) -> None:
    """Raise UsageError unless `source` is the id of a saved source (the message lists them)."""
    ids = [c.id for c in load_configs(home.sources)]
    if source in ids:
        return
    near = [i for i in ids if i.startswith(source + "-") or source in i]
    hint = f" (did you mean {' or '.join(near[:3])}?)" if near else ""
    listed = ", ".join(sorted(ids)) if ids else "none yet"
    raise UsageError(f"--source {shown(source)} is not a source of this registry{hint}; "
                     f"sources: {listed}; give --id {shown(source)} to make a new source")


def _named(exc: BenchPressError, location: str, aliases) -> BenchPressError:
    """`exc` with every spelling of the input in `aliases` (cache path, absolute path, file URI)
    replaced by `location`, as the user gave it."""
    spellings = sorted({str(a) for a in aliases if a}, key=len, reverse=True)
    # one pass, longest spelling first, so that the location itself is never rewritten
    text = re.sub("|".join(map(re.escape, spellings)), lambda m: location, str(exc))
    return exc if text == str(exc) else type(exc)(text)


def _default_id(home: Home, adapter: str, tag: str) -> str:
    """The id of a new source: a spec's leaderboard is its spec's name (so that each later
    copy ingested is a version of it), else the adapter's name and `tag`."""
    return adapter if spec_of(adapter, home.specs) is not None else slug(f"{adapter}-{tag}")


def _drop_refused(home: Home, got: FetchResult) -> None:
    """Remove a cache entry that no saved source pins (its ingest was refused)."""
    try:
        pinned = {v.sha256 for c in load_configs(home.sources) for v in config_versions(c)}
    except BadInputError:
        return  # cannot tell who uses it: keep it
    if got.sha256 not in pinned and got.path.exists():
        if got.path.is_dir():
            shutil.rmtree(got.path, ignore_errors=True)
        else:
            got.path.unlink(missing_ok=True)


def ingest(home: Home, location: str, *, adapter: str | None = None, source_id: str | None = None,
           licence: str | None = None, url: str | None = None,
           mirror: Path | None = None, on_source=None,
           version: str | None = None, executor=None,
           source: str | None = None) -> tuple[str, BuildReport]:
    """Ingest one file, folder or http(s) URL; returns (source id, build report).

    `url` is the canonical address of a local file (recorded as the source's URL and used
    as the citation of sources that cite themselves, such as model cards). `source` names
    a saved source the input is a version of (an error if there is none); `source_id` is the
    id of a new source (or a saved one). `version` labels the version (see `with_version`).
    """
    if source is not None:
        if source_id is not None and source_id != source:
            raise UsageError("give either --source ID (a saved source) or --id ID (a new one)")
        check_source(home, source)
        source_id = source
    if version is not None and not source_id:
        raise BadInputError("--version needs --source ID (the saved source this is a version "
                            "of) or --id ID (a new source)")
    if source_id is not None:  # it names a file under sources/: checked before any write
        check_source_id(source_id, "--id")
    # later ingests build after (and count as newer than) the sources already there
    order = max((c.order for c in load_configs(home.sources)), default=90) + 10
    scheme = url_scheme(location)
    if scheme not in ("", "http", "https"):
        raise FetchError(f"{location}: only http and https URLs are ingested; give a local file "
                         "as a plain path")
    is_url = bool(scheme)
    local = Path(location)
    # a copy from a mirror's dated folder cites the upstream file at its commit
    upstream = None if is_url or url else upstream_of(local)
    if upstream is not None:
        url = upstream.url
    if not is_url and local.is_dir():
        # a folder (an unzipped leaderboard export) is read in place
        try:
            chosen = get_adapter(adapter, home.specs) if adapter else \
                detect_adapter(local, home.specs)
            config = SourceConfig(id=source_id or _default_id(home, chosen.name, local.name),
                                  adapter=chosen.name, path=str(local.resolve()), url=url,
                                  licence=licence, order=order)
            check_source_id(config.id, "--id" if source_id else
                            "the source id made from the folder's name (give --id NAME)")
            config = with_version(home, config, version, local, location,
                                  upstream.version if upstream else None)
            return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source,
                                           executor=executor)
        except BenchPressError as exc:
            raise _named(exc, location, [local.resolve(), local.absolute()]) from exc
    got = fetch(location if is_url else str(local.resolve()), home.cache, mirror=mirror,
                name=location)
    aliases = [got.path] if is_url else [got.path, local.resolve().as_uri(), local.resolve()]
    try:
        chosen = get_adapter(adapter, home.specs) if adapter else \
            detect_adapter(got.path, home.specs)
        if chosen.needs_citation and not is_url and url_scheme(url or "") not in ("http", "https"):
            raise UsageError(f"{location}: a {chosen.name} table cites nothing itself; give its "
                             "citation with --source-url URL (http or https)"
                             + (f", not {url[:60]!r}" if url else ""))
        config = SourceConfig(
            id=source_id or _default_id(home, chosen.name, got.sha256[:8]),
            adapter=chosen.name,
            url=location if is_url else (url or local.resolve().as_uri()),
            final_url=got.final_url if got.final_url and got.final_url != location else None,
            licence=licence,
            sha256=got.sha256,
            retrieved_at=got.retrieved_at,
            order=order,
        )
        config = with_version(home, config, version, got.path, location,
                              upstream.version if upstream else None)
        return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source,
                                       executor=executor)
    except BaseException as exc:
        _drop_refused(home, got)
        if isinstance(exc, BenchPressError):
            raise _named(exc, location, aliases) from exc
        raise
