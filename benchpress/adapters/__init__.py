"""Adapters: one per published format, each reshaping a raw file into `AdapterOutput`."""

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
from benchpress.errors import UnknownFormatError, UsageError

__all__ = ["ADAPTERS", "Adapter", "AdapterOutput", "get_adapter", "detect_adapter"]

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


def get_adapter(name: str) -> Adapter:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise UsageError(f"unknown adapter '{name}'; known: {', '.join(ADAPTERS)}") from None


def detect_adapter(path: Path) -> Adapter:
    """The first adapter whose `detect` accepts the file (or folder)."""
    content = b"" if path.is_dir() else path.read_bytes()
    for adapter in ADAPTERS.values():
        if adapter.detect(path, content):
            return adapter
    raise UnknownFormatError(
        f"{path}: no adapter recognises this file; name one with --adapter "
        f"({', '.join(ADAPTERS)})"
    )
