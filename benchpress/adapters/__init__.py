"""Adapters: one per published format, each reshaping a raw file into `AdapterOutput`.

Two kinds: code adapters (the modules below, for formats a table cannot describe) and spec
adapters, one per leaderboard spec file (`adapters.spec_schema`, read by the one generic
`adapters.spec_reader`). The specs come from the package (`benchpress/specs`, the
repository's `sources/specs/`) and from a home's own `sources/specs/` (a spec of the same
name there replaces the package's). Detection tries the specific code adapters first, then
the specs, then the catch-all formats (model cards, wide CSVs).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.adapters import (
    aider,
    artificial_analysis,
    benchpress_json,
    benchpress_page,
    bfcl,
    epoch,
    livebench,
    llm_stats,
    lmarena,
    model_card,
    nyt_connections,
    releases_csv,
    swebench,
    tau2_bench,
    wide_csv,
)
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.adapters.spec_reader import spec_adapter
from benchpress.adapters.spec_schema import Spec, SpecError, load_spec
from benchpress.errors import UnknownFormatError, UsageError

__all__ = ["ADAPTERS", "Adapter", "AdapterOutput", "get_adapter", "detect_adapter",
           "adapters", "load_specs", "spec_of", "PACKAGE_SPECS"]

# Order matters for detection: the most specific formats first.
ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        artificial_analysis.ADAPTER,
        llm_stats.ADAPTER,
        benchpress_page.ADAPTER,
        benchpress_json.ADAPTER,
        releases_csv.ADAPTER,
        epoch.ADAPTER,
        livebench.ADAPTER,
        aider.ADAPTER,
        nyt_connections.ADAPTER,
        bfcl.ADAPTER,
        tau2_bench.ADAPTER,
        swebench.ADAPTER,
        lmarena.ADAPTER,
        model_card.ADAPTER,
        wide_csv.ADAPTER,  # last: any CSV whose first column is headed "model"
    )
}
#: the catch-all code adapters, tried after the specs
_GENERIC = ("model-card", "wide-csv")
#: the specs shipped with the package (a link to the repository's sources/specs/)
PACKAGE_SPECS = Path(__file__).resolve().parents[1] / "specs"
_LOADED: dict[tuple, Spec] = {}  # (path, size, mtime) -> spec: a spec file is checked once


def load_specs(specs_dir: Path | None = None) -> dict[str, Spec]:
    """The package's specs and those of `specs_dir` (a home's `sources/specs/`), by name;
    a home's spec replaces the package's of the same name. A bad spec file is refused in
    one line (`SpecError`), and so is a spec named as a code adapter."""
    found: dict[str, Spec] = {}
    folders = [PACKAGE_SPECS] + ([Path(specs_dir)] if specs_dir is not None else [])
    for folder in dict.fromkeys(f.resolve() for f in folders if f.is_dir()):
        for file in sorted(p for p in folder.glob("*.yaml") if not p.name.startswith(".")):
            stat = file.stat()
            key = (str(file), stat.st_size, stat.st_mtime_ns)
            if key not in _LOADED:
                _LOADED[key] = load_spec(file)
            spec = _LOADED[key]
            if spec.name in ADAPTERS:
                raise SpecError(f"{file}: name '{spec.name}' is a code adapter's; pick another")
            found[spec.name] = spec
    return found


def adapters(specs_dir: Path | None = None) -> dict[str, Adapter]:
    """Every adapter in detection order: code adapters, spec adapters, catch-alls."""
    specific = {n: a for n, a in ADAPTERS.items() if n not in _GENERIC}
    specs = {n: spec_adapter(s) for n, s in load_specs(specs_dir).items()}
    return {**specific, **specs, **{n: ADAPTERS[n] for n in _GENERIC}}


def spec_of(name: str, specs_dir: Path | None = None) -> Spec | None:
    """The spec behind adapter `name`, or None for a code adapter."""
    return None if name in ADAPTERS else load_specs(specs_dir).get(name)


def get_adapter(name: str, specs_dir: Path | None = None) -> Adapter:
    """The adapter called `name` (a code adapter, else a spec of the package or of
    `specs_dir`)."""
    if name in ADAPTERS:
        return ADAPTERS[name]
    known = adapters(specs_dir)
    try:
        return known[name]
    except KeyError:
        raise UsageError(f"unknown adapter '{name}'; known: {', '.join(known)}") from None


def detect_adapter(path: Path, specs_dir: Path | None = None) -> Adapter:
    """The first adapter whose `detect` accepts the file (or folder)."""
    content = b"" if path.is_dir() else path.read_bytes()
    known = adapters(specs_dir)
    for adapter in known.values():
        if adapter.detect(path, content):
            return adapter
    raise UnknownFormatError(
        f"{path}: no adapter recognises this file; name one with --adapter "
        f"({', '.join(known)})"
    )
