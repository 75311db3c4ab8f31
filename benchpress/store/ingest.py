"""Ingest: record a file or URL as a source, then rebuild.

The raw file goes into the content-addressed cache, a config is written under
`sources/`, and the registry is rebuilt from all sources. If the build fails, the
config is not saved (and the registry, written atomically, never changed).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters import detect_adapter, get_adapter
from benchpress.adapters.fetch import fetch
from benchpress.home import Home
from benchpress.store.build import BuildReport, build
from benchpress.store.sources import SourceConfig, load_configs, save_config, slug

__all__ = ["ingest", "rebuild_with"]


def rebuild_with(home: Home, config: SourceConfig, *, mirror: Path | None = None,
                 on_source=None) -> BuildReport:
    """Rebuild with `config` added, then save it; a failed (or killed) build saves nothing."""
    report = build(home, mirror=mirror, on_source=on_source, extra=config)
    save_config(home.sources, config)
    return report


def ingest(home: Home, location: str, *, adapter: str | None = None, source_id: str | None = None,
           licence: str | None = None, url: str | None = None,
           mirror: Path | None = None, on_source=None) -> tuple[str, BuildReport]:
    """Ingest one file, folder or URL; returns (source id, build report).

    `url` is the canonical address of a local file (recorded as the source's URL and used
    as the citation of sources that cite themselves, such as model cards).
    """
    # later ingests build after (and count as newer than) the sources already there
    order = max((c.order for c in load_configs(home.sources)), default=90) + 10
    is_url = "://" in location and not location.startswith("file://")
    local = Path(location.removeprefix("file://"))
    if not is_url and local.is_dir():
        # a folder (an unzipped leaderboard export) is read in place
        chosen = get_adapter(adapter) if adapter else detect_adapter(local)
        config = SourceConfig(id=source_id or slug(f"{chosen.name}-{local.name}"),
                              adapter=chosen.name, path=str(local.resolve()), url=url, licence=licence,
                              order=order)
        return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source)
    got = fetch(location if is_url else str(local.resolve()), home.cache, mirror=mirror)
    chosen = get_adapter(adapter) if adapter else detect_adapter(got.path)
    config = SourceConfig(
        id=source_id or slug(f"{chosen.name}-{got.sha256[:8]}"),
        adapter=chosen.name,
        url=location if is_url else (url or local.resolve().as_uri()),
        licence=licence,
        sha256=got.sha256,
        retrieved_at=got.retrieved_at,
        order=order,
    )
    return config.id, rebuild_with(home, config, mirror=mirror, on_source=on_source)
