"""The contract files under `schemas/`, loaded once per build.

These files are data a maintainer edits and reviews: benchmark scales and ranges
(`benchmarks.csv`, `scales.yaml`), the alias table (`aliases.csv`), the provider alias table
(`provider_aliases.csv`: a maker's old or other name -> the name the registry uses; optional),
source priorities (`source_priority.csv`), the URL rules that infer a source type
(`url_source_types.csv`) and the URL rules that name who speaks at a URL (`vendor_urls.csv`:
a model's maker, or a leaderboard; optional).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchpress import yaml_text
from benchpress.errors import BadInputError

__all__ = ["Contracts", "load_contracts", "ALIAS_COLUMNS"]

ALIAS_COLUMNS = ["kind", "alias", "canonical_id", "origin", "note"]


@dataclass(frozen=True)
class Contracts:
    """Everything normalization and validation need to know about the world."""

    benchmarks: pl.DataFrame        # schemas/benchmarks.csv
    scales: dict[str, dict]         # scale name -> {lower, upper, bounded_percent, ...}
    metric_patterns: list[tuple[re.Pattern, str]]
    units: dict[str, dict]          # unit name -> {scale, factor}
    aliases: pl.DataFrame           # schemas/aliases.csv
    source_priority: dict[str, int]
    url_rules: list[tuple[re.Pattern, str]]
    # schemas/provider_aliases.csv: provider name (lower-cased) -> the name the registry uses
    provider_aliases: dict[str, str] | None = None
    # schemas/vendor_urls.csv: (pattern, names of who speaks there, "maker" or "leaderboard")
    vendor_rules: list[tuple[re.Pattern, tuple[str, ...], str]] | None = None

    def vendor_for_url(self, url: str | None) -> tuple[tuple[str, ...], str] | None:
        """(the names of who speaks at `url`, "maker" or "leaderboard"), or None if no rule
        matches (`schemas/vendor_urls.csv`)."""
        if url:
            for pattern, names, kind in self.vendor_rules or ():
                if pattern.search(url):
                    return names, kind
        return None

    def scale_for_metric(self, metric: str | None) -> str | None:
        """The scale a free-text metric label implies, or None when no rule matches."""
        if not metric:
            return None
        for pattern, scale in self.metric_patterns:
            if pattern.search(metric):
                return scale
        return None

    def source_type_for_url(self, url: str | None) -> str:
        if url:
            for pattern, source_type in self.url_rules:
                if pattern.search(url):
                    return source_type
        return "unknown"


def _read_csv(path: Path, **kwargs) -> pl.DataFrame:
    if not path.is_file():
        raise BadInputError(f"{path}: contract file is missing")
    try:
        return pl.read_csv(path, infer_schema_length=0, **kwargs)
    except Exception as exc:  # polars raises several types for malformed CSV
        raise BadInputError(f"{path}: cannot be read as CSV ({exc})") from exc


def load_contracts(schemas_dir: Path) -> Contracts:
    """Read and cross-check the contract files in `schemas_dir`."""
    scales_doc = yaml_text.read_file(schemas_dir / "scales.yaml")
    scales = scales_doc["scales"]

    bench = _read_csv(schemas_dir / "benchmarks.csv")
    if "unit" not in bench.columns:  # a contract written before units were recorded
        bench = bench.with_columns(pl.lit(None, dtype=pl.String).alias("unit"))
    unknown = sorted(set(bench["scale"].to_list()) - set(scales))
    if unknown:
        raise BadInputError(
            f"{schemas_dir / 'benchmarks.csv'}: field 'scale': unknown scale(s) {unknown}; "
            f"known: {sorted(scales)}"
        )
    defaults = pl.DataFrame(
        {
            "scale": list(scales),
            "_lo": [s.get("lower") for s in scales.values()],
            "_hi": [s.get("upper") for s in scales.values()],
            "_unit": [s.get("unit") for s in scales.values()],
        },
        schema={"scale": pl.String, "_lo": pl.Float64, "_hi": pl.Float64, "_unit": pl.String},
    )
    bench = (
        bench.with_columns(
            pl.col("lower").replace("", None).cast(pl.Float64),
            pl.col("upper").replace("", None).cast(pl.Float64),
            pl.col("cost").replace("", None).cast(pl.Float64),
            # blank is higher-is-better (the contract's default); "none": no direction
            pl.when(pl.col("higher_is_better").str.to_lowercase() == "none").then(None)
            .otherwise(pl.col("higher_is_better").str.to_lowercase() != "false")
            .alias("higher_is_better"),
            pl.col("category").replace("", None),
            pl.col("unit").replace("", None),
        )
        .join(defaults, on="scale", how="left")
        .with_columns(
            pl.coalesce("lower", "_lo").alias("lower"),
            pl.coalesce("upper", "_hi").alias("upper"),
            pl.coalesce("unit", "_unit").alias("unit"),
        )
        .drop("_lo", "_hi", "_unit")
    )

    aliases = _read_csv(schemas_dir / "aliases.csv")
    priority = _read_csv(schemas_dir / "source_priority.csv")
    url_rules = _read_csv(schemas_dir / "url_source_types.csv")
    providers = {}
    if (schemas_dir / "provider_aliases.csv").is_file():
        table = _read_csv(schemas_dir / "provider_aliases.csv")
        if not {"alias", "canonical"} <= set(table.columns):
            raise BadInputError(f"{schemas_dir / 'provider_aliases.csv'}: expected the columns "
                                "alias, canonical, origin, note")
        providers = {a.strip().lower(): c.strip() for a, c in zip(table["alias"], table["canonical"])
                     if a and c}
    vendors = []
    if (schemas_dir / "vendor_urls.csv").is_file():
        table = _read_csv(schemas_dir / "vendor_urls.csv")
        for k, (pattern, maker, kind) in enumerate(zip(table["pattern"], table["maker"], table["kind"])):
            if kind not in ("maker", "leaderboard") or not maker:
                raise BadInputError(f"{schemas_dir / 'vendor_urls.csv'} row {k + 2}: field 'kind' "
                                    "must be maker or leaderboard, with a maker name")
            vendors.append((re.compile(pattern), tuple(n.strip() for n in maker.split("|")), kind))
    return Contracts(
        benchmarks=bench,
        scales=scales,
        metric_patterns=[
            (re.compile(p["pattern"], re.IGNORECASE), p["scale"])
            for p in scales_doc.get("metric_patterns", [])
        ],
        units=scales_doc.get("units", {}),
        aliases=aliases.select(ALIAS_COLUMNS),
        source_priority=dict(zip(priority["source_type"], priority["priority"].cast(pl.Int64))),
        url_rules=[
            (re.compile(p), t) for p, t in zip(url_rules["pattern"], url_rules["source_type"])
        ],
        provider_aliases=providers,
        vendor_rules=vendors,
    )
