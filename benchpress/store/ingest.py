"""Ingest: record a file or URL as a source, then rebuild.

The raw file goes into the content-addressed cache, a config is written under
`sources/`, and the registry is rebuilt from all sources. If the build fails, the
config is not saved (and the registry, written atomically, never changed), and a raw file
that was refused (no adapter recognises it, or the build failed) is removed from the cache
again unless another source pins it: nothing refused stays behind.

Only http and https URLs are ingested (a local file is given as a plain path), and every
message names the file or URL as the user gave it, never its copy in the cache.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from benchpress.adapters import detect_adapter, get_adapter
from benchpress.adapters.fetch import FetchResult, fetch, url_scheme
from benchpress.errors import BadInputError, BenchPressError, FetchError, UsageError
from benchpress.home import Home
from benchpress.store.build import BuildReport, build
from benchpress.store.sources import SourceConfig, load_configs, slug

__all__ = ["ingest", "rebuild_with"]


def rebuild_with(home: Home, config: SourceConfig, *, mirror: Path | None = None,
                 on_source=None) -> BuildReport:
    """Rebuild with `config` added; the build saves it in the same transaction as the registry
    swap, so a failed (or killed) build saves nothing."""
    return build(home, mirror=mirror, on_source=on_source, extra=config)


def _named(exc: BenchPressError, location: str, aliases) -> BenchPressError:
    """`exc` with every spelling of the input in `aliases` (cache path, absolute path, file URI)
    replaced by `location`, as the user gave it."""
    spellings = sorted({str(a) for a in aliases if a}, key=len, reverse=True)
    # one pass, longest spelling first, so that the location itself is never rewritten
    text = re.sub("|".join(map(re.escape, spellings)), lambda m: location, str(exc))
    return exc if text == str(exc) else type(exc)(text)


def _drop_refused(home: Home, got: FetchResult) -> None:
    """Remove a cache entry that no saved source pins (its ingest was refused)."""
    try:
        pinned = {c.sha256 for c in load_configs(home.sources)}
    except BadInputError:
        return  # cannot tell who uses it: keep it
    if got.sha256 not in pinned and got.path.exists():
        if got.path.is_dir():
            shutil.rmtree(got.path, ignore_errors=True)
        else:
            got.path.unlink(missing_ok=True)


def ingest(home: Home, location: str, *, adapter: str | None = None, source_id: str | None = None,
           licence: str | None = None, url: str | None = None,
           mirror: Path | None = None, on_source=None) -> tuple[str, BuildReport]:
    """Ingest one file, folder or http(s) URL; returns (source id, build report).

    `url` is the canonical address of a local file (recorded as the source's URL and used
    as the citation of sources that cite themselves, such as model cards).
    """
    # later ingests build after (and count as newer than) the sources already there
    order = max((c.order for c in load_configs(home.sources)), default=90) + 10
    scheme = url_scheme(location)
    if scheme not in ("", "http", "https"):
        raise FetchError(f"{location}: only http and https URLs are ingested; give a local file "
                         "as a plain path")
    is_url = bool(scheme)
    local = Path(location)
    if not is_url and local.is_dir():
        # a folder (an unzipped leaderboard export) is read in place
        try:
            chosen = get_adapter(adapter) if adapter else detect_adapter(local)
            config = SourceConfig(id=source_id or slug(f"{chosen.name}-{local.name}"),
                                  adapter=chosen.name, path=str(local.resolve()), url=url,
                                  licence=licence, order=order)
            return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source)
        except BenchPressError as exc:
            raise _named(exc, location, [local.resolve(), local.absolute()]) from exc
    got = fetch(location if is_url else str(local.resolve()), home.cache, mirror=mirror,
                name=location)
    aliases = [got.path] if is_url else [got.path, local.resolve().as_uri(), local.resolve()]
    try:
        chosen = get_adapter(adapter) if adapter else detect_adapter(got.path)
        if chosen.needs_citation and not is_url and url_scheme(url or "") not in ("http", "https"):
            raise UsageError(f"{location}: a {chosen.name} table cites nothing itself; give its "
                             "citation with --source-url URL (http or https)"
                             + (f", not {url[:60]!r}" if url else ""))
        config = SourceConfig(
            id=source_id or slug(f"{chosen.name}-{got.sha256[:8]}"),
            adapter=chosen.name,
            url=location if is_url else (url or local.resolve().as_uri()),
            final_url=got.final_url if got.final_url and got.final_url != location else None,
            licence=licence,
            sha256=got.sha256,
            retrieved_at=got.retrieved_at,
            order=order,
        )
        return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source)
    except BaseException as exc:
        _drop_refused(home, got)
        if isinstance(exc, BenchPressError):
            raise _named(exc, location, aliases) from exc
        raise
