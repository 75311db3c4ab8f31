"""Source configs: one small YAML file per source under `sources/`.

```yaml
id: benchpress-2026-05
adapter: benchpress-page
url: https://microsoft.github.io/benchpress/data.json
mirror_path: benchpress-2026-05/data.json   # where the file sits in a mirror directory
licence: CDLA-Permissive-2.0
sha256: 9f3c...                              # pinned content; the raw file is cached by it
published: 2026-05-01                        # when the publisher released this copy
order: 10                                    # build order (first description of a model wins)
```
A source ingested from a URL that redirected also records `final_url`, where the download
ended (another host is reported when it happens).
A source with `path` instead of a pinned hash is a file in the repository itself
(hand-entered releases): git tracks it, and its hash is computed at build time.

Versions. A publisher's later copy of the same source (LiveBench's table on a later day, the
next Artificial Analysis snapshot) is a new *version* of the source, not a new source. The
config's own fields describe its newest version, labelled by `version`; `versions` lists the
older ones, each with its own file fields (url, path, mirror_path, sha256, retrieved_at,
published, final_url):

```yaml
id: livebench
adapter: livebench
version: 2026-06-19T0954          # the newest version: the fields above and below it
published: 2026-06-19             # the day it came out (its place in the registry's history)
mirror_path: livebench-history/2026-06-19T0954
sha256: 5d1e...
versions:                         # older versions, oldest first
  - {version: 2026-06-17T0855, published: 2026-06-17,
     mirror_path: livebench-history/2026-06-17T0855, sha256: 0a3c...}
```
Each version is dated (`version_date`: `published`, else the day it was retrieved, else its
label when that is a date): the registry is built through time from these dates
(`store.history`: a snapshot per month of the sources' versions), so this list is the one
description of a source's history.
A source that changed how it computes a benchmark declares it, so that the values from that
version on become a new version of the benchmark (`store.methods`; changes the values show are
detected without it):

```yaml
method_changes: {aa_intelligence_index: ['2026-05-22']}
```
Version labels sort chronologically as text (ISO dates, optionally with a time:
`2026-06-19`, `2026-06-19T0954`); `cells` takes each source's newest version (the greatest
label), and every version's observations stay in `scores` (`source_version`).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import asdict, dataclass, fields, replace
from datetime import date
from pathlib import Path

import yaml

from benchpress import yaml_text
from benchpress.errors import BadInputError, UsageError, shown
from benchpress.validate.names import unknown_message

__all__ = ["names_source", "source_names", "SourceConfig", "load_configs", "save_config", "config_path", "slug",
           "VERSION_FIELDS", "config_versions", "add_version", "with_versions", "version_date",
           "MAX_SOURCE_ID_LENGTH",
           "source_id_problem", "check_source_id"]

MAX_SOURCE_ID_LENGTH = 100
_SOURCE_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True)
class SourceConfig:
    id: str
    adapter: str
    url: str | None = None
    final_url: str | None = None   # where the download of `url` ended, when it was redirected
    path: str | None = None
    mirror_path: str | None = None
    licence: str | None = None
    sha256: str | None = None
    retrieved_at: str | None = None
    published: str | None = None
    order: int = 100
    description: str | None = None
    version: str | None = None     # label of the version the fields above describe (newest)
    versions: list | None = None   # older versions: dicts of VERSION_FIELDS, oldest first
    # declared changes of method: {benchmark_id: [version where a new method starts, ...]}
    # (see `store.methods`)
    method_changes: dict | None = None


# the fields that differ between two versions of one source
VERSION_FIELDS = ("version", "url", "final_url", "path", "mirror_path", "sha256", "retrieved_at",
                  "published")


def config_versions(config: SourceConfig) -> list[SourceConfig]:
    """One flat config per version of `config` (each with `versions=None`), oldest first;
    an unversioned config gives itself."""
    if not config.versions:
        return [config]
    # (not `asdict`: it deep-copies the versions list, once per call)
    base = {f.name: getattr(config, f.name) for f in fields(config)
            if f.name not in VERSION_FIELDS}
    base["versions"] = None
    older = [SourceConfig(**base, **{k: entry.get(k) for k in VERSION_FIELDS})
             for entry in config.versions]
    return [*older, replace(config, versions=None)]


def add_version(existing: SourceConfig, new: SourceConfig) -> SourceConfig:
    """`existing` with `new` (a flat config of the same source) added as a version.

    The newest label describes the config's own fields; a version with the same label as
    one already there replaces it (a corrected copy). Raises BadInputError when either has
    no version label.
    """
    if not new.version:
        raise BadInputError(f"source '{existing.id}' exists; give --version to add a version of "
                            "it (or --id for a new source)")
    # an unversioned source becomes versioned: its one version is labelled by its date
    flat = [c if c.version or not c.published else replace(c, version=str(c.published))
            for c in config_versions(existing)]
    if any(not c.version for c in flat):
        raise BadInputError(f"source '{existing.id}' has no version label; its config "
                            f"{existing.id}.yaml needs a `version` field before another version "
                            "can be added")
    kept = {c.version: c for c in flat}
    kept[str(new.version)] = new
    return with_versions(existing, [kept[v] for v in sorted(kept)])


def with_versions(config: SourceConfig, flat: list[SourceConfig]) -> SourceConfig:
    """`config` (its id, adapter, licence, ...) holding exactly the versions `flat` (flat
    configs of it, oldest first, at least one): the newest describes the config's own
    fields, the others its `versions` list. ``with_versions(c, config_versions(c)) == c``."""
    newest = flat[-1]
    older = [{k: getattr(c, k) for k in VERSION_FIELDS if getattr(c, k) is not None}
             for c in flat[:-1]]
    return replace(config, **{k: getattr(newest, k) for k in VERSION_FIELDS},
                   versions=older or None)


def version_date(config: SourceConfig) -> str | None:
    """The day (YYYY-MM-DD) a flat version config stands for: its `published` date, else
    the day it was retrieved, else its label when the label is a date; None for a version
    that carries no date (a hand-entered file in the repository: it describes the present).

    >>> version_date(SourceConfig("x", "a", version="2026-01-19T1051"))
    '2026-01-19'
    >>> version_date(SourceConfig("x", "a", published="2025-02-04", version="v1"))
    '2025-02-04'

    Raises BadInputError when `published` or `retrieved_at` is not a date.
    """
    for name in ("published", "retrieved_at", "version"):
        value = getattr(config, name)
        if value is None:
            continue
        day = str(value)[:10]
        try:
            date.fromisoformat(day)
        except ValueError:
            if name == "version":  # a label need not be a date
                return None
            raise BadInputError(
                f"sources/{config.id}.yaml: version {shown(config.version or '(newest)', 40)}: "
                f"field '{name}' is {shown(str(value), 40)}; expected a date YYYY-MM-DD") from None
        return day
    return None


def names_source(name: str, source_id: str) -> bool:
    """Whether `name` (as given to --sources / --source) picks `source_id`: its exact id, or
    an id prefix followed by "-" ("epoch" picks "epoch-2025-12")."""
    return source_id == name or source_id.startswith(name + "-")


def source_names(sources) -> list[str] | None:
    """The source names a caller gave, as a list: "benchpress,epoch" (as --sources takes
    them) or ["benchpress", "epoch"]; blanks dropped; None, "" or [] -> None (every source).
    Anything else, or a name that is not text, is a UsageError in one line (a string is
    never read letter by letter)."""
    if sources is None:
        return None
    if isinstance(sources, str):
        sources = sources.split(",")
    elif not isinstance(sources, (list, tuple)):
        raise UsageError(f"sources: expected 'a,b' or a list of source names, got "
                         f"{type(sources).__name__}")
    if not all(isinstance(name, str) for name in sources):
        raise UsageError("sources: every source name must be text, got "
                         f"{[type(n).__name__ for n in sources if not isinstance(n, str)][0]}")
    return [name.strip() for name in sources if name.strip()] or None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "source"


def source_id_problem(source_id) -> str | None:
    """Why `source_id` cannot name a source (a short phrase), or None when it can: lowercase
    ASCII letters, digits and - _ . (starting with a letter or digit), no "..", at most
    :data:`MAX_SOURCE_ID_LENGTH` characters. It names a file under `sources/`, so anything
    else (a path separator, an absolute path, a space, an invisible character) is refused.

    >>> source_id_problem("livebench-2026-01-08") is None
    True
    >>> source_id_problem("../../x")
    "may hold only lowercase letters, digits and - _ . (found '/')"
    """
    if not isinstance(source_id, str):
        return f"is a {type(source_id).__name__}, not text"
    if not source_id:
        return "is empty"
    if len(source_id) > MAX_SOURCE_ID_LENGTH:
        return f"is {len(source_id)} characters long (at most {MAX_SOURCE_ID_LENGTH})"
    if not _SOURCE_ID.fullmatch(source_id):
        bad = next((ch for ch in source_id if not re.fullmatch(r"[a-z0-9._-]", ch)), None)
        if bad is None:
            return "must start with a lowercase letter or digit"
        found = repr(bad) if bad.isprintable() else f"U+{ord(bad):04X}"
        return f"may hold only lowercase letters, digits and - _ . (found {found})"
    if ".." in source_id:
        return "contains '..'"
    return None


def check_source_id(source_id, what: str = "source id") -> str:
    """`source_id` when `source_id_problem` finds nothing; BadInputError (one line) naming
    `what` (the option or field it came from) otherwise."""
    problem = source_id_problem(source_id)
    if problem:
        raise BadInputError(f"{what} {shown(source_id, 50)} {problem}; e.g. 'acme-table-1'")
    return source_id


def config_path(sources_dir: Path, source_id: str) -> Path:
    """The config file of `source_id`: always directly under `sources_dir` (BadInputError
    for an id that is not a plain name)."""
    check_source_id(source_id)
    path = sources_dir / f"{source_id}.yaml"
    if path.resolve().parent != Path(sources_dir).resolve():
        raise BadInputError(f"source id {shown(source_id, 50)} leads outside {sources_dir}")
    return path


#: the fields a source config may have (a typo is named with the nearest, not refused as
#: Python's keyword-argument error)
_FIELDS = frozenset(f.name for f in fields(SourceConfig))


def _check_types(doc: dict) -> None:
    """TypeError naming the first field of a source config whose value has the wrong type
    (`order` a whole number, `id` and `adapter` text, the other plain fields text or
    empty)."""
    for name in ("id", "adapter"):
        if not isinstance(doc.get(name), str) or not doc[name].strip():
            raise TypeError(f"field '{name}' must be text, not {shown(doc.get(name))}")
    order = doc.get("order", 100)
    if isinstance(order, bool) or not isinstance(order, int):
        raise TypeError(f"field 'order' must be a whole number, not {shown(order)}")
    for name in ("url", "final_url", "path", "mirror_path", "licence", "sha256",
                 "retrieved_at", "published", "description", "version"):
        if doc.get(name) is not None and not isinstance(doc[name], str):
            raise TypeError(f"field '{name}' must be text, not {shown(doc[name])}")


def load_configs(sources_dir: Path) -> list[SourceConfig]:
    """Every `*.yaml` under `sources_dir`, in build order (order, then id)."""
    configs = []
    for file in sorted(p for p in sources_dir.glob("*.yaml") if not p.name.startswith(".")):
        try:
            doc = yaml_text.read_file(file) or {}
            if not isinstance(doc, dict):
                raise TypeError("a source config is a mapping of fields (id, adapter, ...)")
            doc = {k: (str(v) if k in {"published", "retrieved_at", "version"} and v is not None
                       else v) for k, v in doc.items()}
            if doc.get("versions") is not None:
                if not isinstance(doc["versions"], list) or not all(
                        isinstance(e, dict) and e.get("version") and set(e) <= set(VERSION_FIELDS)
                        for e in doc["versions"]):
                    raise TypeError("field 'versions' must be a list of mappings with a "
                                    f"'version' and only {', '.join(VERSION_FIELDS)}")
                doc["versions"] = [{k: (None if v is None else str(v)) for k, v in e.items()}
                                   for e in doc["versions"]]
            if doc.get("method_changes") is not None:
                if not isinstance(doc["method_changes"], dict) or not all(
                        isinstance(v, list) for v in doc["method_changes"].values()):
                    raise TypeError("field 'method_changes' must map benchmark ids to lists of "
                                    "version labels")
                doc["method_changes"] = {str(b): [str(v) for v in starts]
                                         for b, starts in doc["method_changes"].items()}
            unknown = [str(k) for k in doc if k not in _FIELDS]
            if unknown:
                raise TypeError(unknown_message("field", unknown, sorted(_FIELDS)))
            _check_types(doc)
            configs.append(SourceConfig(**doc))
        except (yaml.YAMLError, TypeError) as exc:
            raise BadInputError(f"{file}: not a valid source config "
                                f"({yaml_text.describe(exc)})") from exc
        for pin in (c.sha256 for c in config_versions(configs[-1])):
            if pin is not None and not re.fullmatch(r"[0-9a-f]{64}", str(pin)):
                raise BadInputError(f"{file}: field 'sha256' is {pin!r}; expected 64 lowercase "
                                    "hex digits")
        if configs[-1].id != file.stem:
            raise BadInputError(f"{file}: field 'id' is '{configs[-1].id}' but the file is named "
                                f"'{file.stem}.yaml'; they must agree")
    return sorted(configs, key=lambda c: (c.order, c.id))


def save_config(sources_dir: Path, config: SourceConfig) -> Path:
    """Write a config atomically; returns its path."""
    sources_dir.mkdir(parents=True, exist_ok=True)
    target = config_path(sources_dir, config.id)
    doc = {k: v for k, v in asdict(config).items() if v is not None}
    fd, tmp = tempfile.mkstemp(dir=sources_dir, prefix=".tmp-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False, allow_unicode=True)
    os.replace(tmp, target)
    return target
