"""The contract files under `schemas/`, loaded once per build.

These files are data a maintainer edits and reviews: benchmark scales and ranges
(`benchmarks.csv`, `scales.yaml`), the alias table (`aliases.csv`), the provider alias table
(`provider_aliases.csv`: a maker's old or other name -> the name the registry uses; optional),
source priorities (`source_priority.csv`), the URL rules that infer a source type
(`url_source_types.csv`) and the URL rules that name who speaks at a URL (`vendor_urls.csv`:
a model's maker, or a leaderboard; optional).

They get the treatment of data: each malformed row is one line naming the file, the row and
the field; a benchmark listed twice is refused; the alias tables are checked as graphs (no
cycle or conflict: `alias_graph_problem`; a chain resolves to its end); and every regular expression is one whose
matching time is bounded (`validate.patterns`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import yaml

from benchpress import yaml_text
from benchpress.errors import BadInputError, shown
from benchpress.validate.contract_csv import read_contract_csv
from benchpress.validate.patterns import bounded_text, compile_pattern
from benchpress.validate.reviews import read_reviews

__all__ = ["Contracts", "load_contracts", "alias_graph_problem", "alias_roots", "ALIAS_COLUMNS"]

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
    # schemas/cell_reviews.csv: reviewed verdicts on observations (`validate.reviews`)
    reviews: pl.DataFrame | None = None

    def vendor_for_url(self, url: str | None) -> tuple[tuple[str, ...], str] | None:
        """(the names of who speaks at `url`, "maker" or "leaderboard"), or None if no rule
        matches (`schemas/vendor_urls.csv`)."""
        if url:
            for pattern, names, kind in self.vendor_rules or ():
                if pattern.search(bounded_text(url)):
                    return names, kind
        return None

    def scale_for_metric(self, metric: str | None) -> str | None:
        """The scale a free-text metric label implies, or None when no rule matches."""
        if not metric:
            return None
        for pattern, scale in self.metric_patterns:
            if pattern.search(bounded_text(metric)):
                return scale
        return None

    def source_type_for_url(self, url: str | None) -> str:
        if url:
            for pattern, source_type in self.url_rules:
                if pattern.search(bounded_text(url)):
                    return source_type
        return "unknown"


def _bad(path: Path, row: int | None, field: str, problem: str) -> BadInputError:
    """The one-line error of a contract file's row (`row`: its line, the header is 1)."""
    where = f"{path} row {row}" if row is not None else str(path)
    return BadInputError(f"{where}: field '{field}': {problem}")


def _rows(table: pl.DataFrame):
    """(line number, row as a dict of text) of a contract CSV's rows."""
    return ((k + 2, row) for k, row in enumerate(table.iter_rows(named=True)))


def _number(path: Path, row: int, field: str, text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise _bad(path, row, field, f"{shown(text)} is not a number") from None
    if not math.isfinite(value):
        raise _bad(path, row, field, f"{shown(text)} is not a finite number")
    return value


def _pattern(path: Path, row, field: str, text, flags: int = 0) -> re.Pattern:
    try:
        return compile_pattern(text, flags)
    except ValueError as exc:
        raise _bad(path, row, field, str(exc)) from None


def alias_graph_problem(pairs, what: str) -> str | None:
    """Why the alias -> canonical `pairs` ((alias, canonical, line) triples) cannot be
    applied, or None: an alias given two canonical ids, an alias of itself, or a cycle
    (named in one line). A chain (a -> b, b -> c) is fine: a resolves to c (`alias_roots`).

    >>> alias_graph_problem([("a", "b", 2), ("b", "c", 3), ("c", "a", 4)], "model")
    "model aliases form a cycle: 'a' -> 'b' -> 'c' -> 'a' (rows 2, 3, 4); remove one of them"
    >>> alias_graph_problem([("a", "b", 2), ("b", "c", 3)], "model") is None
    True
    """
    target: dict[str, tuple[str, int]] = {}
    for alias, canonical, row in pairs:
        if alias == canonical:
            return f"{what} alias {shown(alias)} names itself (row {row})"
        if alias in target and target[alias][0] != canonical:
            first, line = target[alias]
            return (f"{what} alias {shown(alias)} is given two canonical ids: "
                    f"{shown(first)} (row {line}) and {shown(canonical)} (row {row})")
        target.setdefault(alias, (canonical, row))
    done: set[str] = set()
    for start in target:
        path: list[str] = []
        node = start
        while node in target and node not in done and node not in path:
            path.append(node)
            node = target[node][0]
        if node in path:
            cycle = path[path.index(node):]
            rows = sorted(target[n][1] for n in cycle)
            return (f"{what} aliases form a cycle: "
                    f"{' -> '.join(shown(n) for n in cycle + [node])} "
                    f"(rows {', '.join(map(str, rows))}); remove one of them")
        done.update(path)
    return None


def alias_roots(mapping: dict[str, str]) -> dict[str, str]:
    """Each alias of `mapping` (alias -> canonical, checked by `alias_graph_problem`)
    resolved to the end of its chain.

    >>> alias_roots({"a": "b", "b": "c"})
    {'a': 'c', 'b': 'c'}
    """
    roots = {}
    for alias in mapping:
        node, steps = alias, 0
        while node in mapping and steps <= len(mapping):
            node, steps = mapping[node], steps + 1
        roots[alias] = node
    return roots


def _scales(path: Path) -> dict:
    """scales.yaml, each entry's fields checked (one line naming the entry and field)."""
    try:
        doc = yaml_text.read_file(path)
    except FileNotFoundError:
        raise BadInputError(f"{path}: contract file is missing") from None
    except (OSError, yaml.YAMLError) as exc:
        raise BadInputError(f"{path}: not valid YAML ({yaml_text.describe(exc)})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("scales"), dict) or not doc["scales"]:
        raise BadInputError(f"{path}: field 'scales': missing; expected a mapping of scale "
                            "names to {lower, upper, bounded_percent, description}")
    for name, spec in doc["scales"].items():
        if not isinstance(spec, dict):
            raise BadInputError(f"{path}: scale {shown(str(name))}: expected a mapping of "
                                "lower, upper, bounded_percent, description")
        for bound in ("lower", "upper"):
            value = spec.get(bound)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value)):
                raise BadInputError(f"{path}: scale {shown(str(name))}: field '{bound}': "
                                    f"{shown(value)} is not a number or null")
        if not isinstance(spec.get("bounded_percent", False), bool):
            raise BadInputError(f"{path}: scale {shown(str(name))}: field 'bounded_percent': "
                                "expected true or false")
    for key, kind in (("metric_patterns", list), ("units", dict)):
        if not isinstance(doc.get(key) or kind(), kind):
            raise BadInputError(f"{path}: field '{key}': expected a {kind.__name__}")
    for k, rule in enumerate(doc.get("metric_patterns") or []):
        if not isinstance(rule, dict) or rule.get("scale") not in doc["scales"]:
            raise BadInputError(f"{path}: metric_patterns entry {k + 1}: expected {{pattern, "
                                "scale}} naming a known scale")
        rule["compiled"] = _pattern(path, None, f"metric_patterns[{k + 1}].pattern",
                                    rule.get("pattern"), re.IGNORECASE)
    for unit, spec in (doc.get("units") or {}).items():
        factor = spec.get("factor") if isinstance(spec, dict) else None
        if not isinstance(spec, dict) or spec.get("scale") not in doc["scales"] or isinstance(
                factor, bool) or not isinstance(factor, (int, float)) or not (
                math.isfinite(factor) and factor > 0):
            raise BadInputError(f"{path}: unit {shown(str(unit))}: expected {{scale, factor}} "
                                "with a known scale and a positive factor")
    return doc


def _benchmarks(path: Path, scales: dict) -> pl.DataFrame:
    """benchmarks.csv, every row checked: an id (once), a known scale, numbers where numbers
    go, lower below upper, higher_is_better true or false."""
    from benchpress.validate.schemas import BENCHMARK_ID_PATTERN

    table = read_contract_csv(path, ("benchmark_id", "name", "category", "scale", "lower", "upper",
                             "higher_is_better"))
    seen: dict[str, int] = {}
    for row, r in _rows(table):
        bid = r["benchmark_id"]
        if not bid or not re.fullmatch(BENCHMARK_ID_PATTERN, bid):
            raise _bad(path, row, "benchmark_id", f"{shown(bid or '')} is not a benchmark id "
                       "(lowercase letters, digits and . _ + -)")
        if bid in seen:
            raise _bad(path, row, "benchmark_id", f"{bid!r} is already listed (row {seen[bid]})")
        seen[bid] = row
        if r["scale"] not in scales:
            raise _bad(path, row, "scale", f"unknown scale {shown(r['scale'] or '')}; known: "
                       f"{', '.join(sorted(scales))}")
        lower, upper = (_number(path, row, f, r[f]) for f in ("lower", "upper"))
        if "cost" in r:
            _number(path, row, "cost", r["cost"])
        if lower is not None and upper is not None and not lower < upper:
            raise _bad(path, row, "upper", f"{upper:g} is not above lower {lower:g}")
        if (r["higher_is_better"] or "").strip().lower() not in ("true", "false", ""):
            raise _bad(path, row, "higher_is_better",
                       f"{shown(r['higher_is_better'])}; expected true or false")
    if "cost" not in table.columns:
        table = table.with_columns(pl.lit(None, dtype=pl.String).alias("cost"))
    return table


def _aliases(path: Path) -> pl.DataFrame:
    table = read_contract_csv(path, ALIAS_COLUMNS)
    from benchpress.validate.schemas import ID_PATTERN

    for row, r in _rows(table):
        if r["kind"] not in ("model", "benchmark"):
            raise _bad(path, row, "kind", f"{shown(r['kind'] or '')}; expected model or "
                       "benchmark")
        for field in ("alias", "canonical_id"):
            if not (r[field] or "").strip():
                raise _bad(path, row, field, "empty")
        if not re.fullmatch(ID_PATTERN, r["canonical_id"]):
            raise _bad(path, row, "canonical_id", f"{shown(r['canonical_id'])} is not an id")
    for kind in ("model", "benchmark"):
        problem = alias_graph_problem(
            [(r["alias"], r["canonical_id"], row) for row, r in _rows(table)
             if r["kind"] == kind], kind)
        if problem:
            raise BadInputError(f"{path}: {problem}")
    roots = {kind: alias_roots({a: c for k, a, c in zip(table["kind"], table["alias"],
                                                         table["canonical_id"]) if k == kind})
             for kind in ("model", "benchmark")}
    return table.with_columns(pl.Series("canonical_id", [
        roots[k][a] for k, a in zip(table["kind"], table["alias"])], dtype=pl.String))


def _provider_aliases(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    table = read_contract_csv(path, ("alias", "canonical"))
    for row, r in _rows(table):
        for field in ("alias", "canonical"):
            if not (r[field] or "").strip():
                raise _bad(path, row, field, "empty")
    problem = alias_graph_problem([(r["alias"].strip().lower(), r["canonical"].strip().lower(),
                                    row) for row, r in _rows(table)], "provider")
    if problem:
        raise BadInputError(f"{path}: {problem}")
    names = {c.strip().lower(): c.strip() for c in table["canonical"]}
    roots = alias_roots({a.strip().lower(): c.strip().lower()
                         for a, c in zip(table["alias"], table["canonical"])})
    return {a: names[c] for a, c in roots.items()}


def _priorities(path: Path) -> dict[str, int]:
    table = read_contract_csv(path, ("source_type", "priority"))
    out: dict[str, int] = {}
    for row, r in _rows(table):
        if not (r["source_type"] or "").strip():
            raise _bad(path, row, "source_type", "empty")
        if not re.fullmatch(r"\d{1,3}", (r["priority"] or "").strip()):
            raise _bad(path, row, "priority", f"{shown(r['priority'] or '')} is not a whole "
                       "number (1 is the most trusted)")
        if r["source_type"] in out:
            raise _bad(path, row, "source_type", f"{r['source_type']!r} is already listed")
        out[r["source_type"]] = int(r["priority"])
    return out


def _url_rules(path: Path) -> list[tuple[re.Pattern, str]]:
    table = read_contract_csv(path, ("pattern", "source_type"))
    rules = []
    for row, r in _rows(table):
        if not (r["source_type"] or "").strip():
            raise _bad(path, row, "source_type", "empty")
        rules.append((_pattern(path, row, "pattern", r["pattern"]), r["source_type"]))
    return rules


def _vendor_rules(path: Path) -> list[tuple[re.Pattern, tuple[str, ...], str]]:
    if not path.is_file():
        return []
    table = read_contract_csv(path, ("pattern", "maker", "kind"))
    rules = []
    for row, r in _rows(table):
        if r["kind"] not in ("maker", "leaderboard") or not (r["maker"] or "").strip():
            raise _bad(path, row, "kind", "must be maker or leaderboard, with a maker name")
        rules.append((_pattern(path, row, "pattern", r["pattern"]),
                      tuple(n.strip() for n in r["maker"].split("|")), r["kind"]))
    return rules


def load_contracts(schemas_dir: Path) -> Contracts:
    """Read and cross-check the contract files in `schemas_dir`: each malformed row is one
    line naming the file, the row and the field (BadInputError)."""
    scales_doc = _scales(schemas_dir / "scales.yaml")
    scales = scales_doc["scales"]
    bench = _benchmarks(schemas_dir / "benchmarks.csv", scales)
    if "unit" not in bench.columns:  # a contract written before units were recorded
        bench = bench.with_columns(pl.lit(None, dtype=pl.String).alias("unit"))
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
    return Contracts(
        benchmarks=bench,
        scales=scales,
        metric_patterns=[(p["compiled"], p["scale"]) for p in scales_doc.get("metric_patterns") or []],
        units=scales_doc.get("units") or {},
        aliases=_aliases(schemas_dir / "aliases.csv").select(ALIAS_COLUMNS),
        source_priority=_priorities(schemas_dir / "source_priority.csv"),
        url_rules=_url_rules(schemas_dir / "url_source_types.csv"),
        provider_aliases=_provider_aliases(schemas_dir / "provider_aliases.csv"),
        vendor_rules=_vendor_rules(schemas_dir / "vendor_urls.csv"),
        reviews=read_reviews(schemas_dir),
    )
