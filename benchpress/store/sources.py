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
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from benchpress.errors import BadInputError

__all__ = ["names_source", "SourceConfig", "load_configs", "save_config", "config_path", "slug"]


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


def names_source(name: str, source_id: str) -> bool:
    """Whether `name` (as given to --sources / --source) picks `source_id`: its exact id, or
    an id prefix followed by "-" ("epoch" picks "epoch-2025-12")."""
    return source_id == name or source_id.startswith(name + "-")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "source"


def config_path(sources_dir: Path, source_id: str) -> Path:
    return sources_dir / f"{source_id}.yaml"


def load_configs(sources_dir: Path) -> list[SourceConfig]:
    """Every `*.yaml` under `sources_dir`, in build order (order, then id)."""
    configs = []
    for file in sorted(p for p in sources_dir.glob("*.yaml") if not p.name.startswith(".")):
        try:
            doc = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
            doc = {k: (str(v) if k in {"published", "retrieved_at"} and v is not None else v)
                   for k, v in doc.items()}
            configs.append(SourceConfig(**doc))
        except (yaml.YAMLError, TypeError) as exc:
            raise BadInputError(f"{file}: not a valid source config ({exc})") from exc
        pin = configs[-1].sha256
        if pin is not None and not re.fullmatch(r"[0-9a-f]{64}", str(pin)):
            raise BadInputError(f"{file}: field 'sha256' is {pin!r}; expected 64 lowercase hex "
                                "digits")
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
