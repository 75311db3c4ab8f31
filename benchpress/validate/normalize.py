"""Canonical ids, alias resolution, unit conversion and source types.

Rules are deterministic and run before validation:
- model ids: lowercase; vendor prefixes ("openai/") dropped; spaces, underscores, slashes
  and brackets become "-" ("o3-mini (high)" -> "o3-mini-high"); date and effort suffixes
  are kept, since they name different rows (gpt-4o-0513 is not gpt-4o);
- benchmark ids: lowercase snake case; free-text labels from model cards
  ("**GPQA-Diamond**† (pass@1)") are matched on a markup-free key against the ids and
  names in schemas/benchmarks.csv;
- then the alias table (schemas/aliases.csv) maps what is left to canonical ids.
Fuzzy matches are only ever suggested (`benchpress aliases suggest`), never applied.
"""

from __future__ import annotations

import re
from functools import lru_cache

import polars as pl

from benchpress.validate.contracts import Contracts

__all__ = [
    "canonical_model_id",
    "canonical_benchmark_id",
    "label_key",
    "BenchmarkResolver",
    "alias_map",
    "model_alias_map",
]

# vendors' and routers' path prefixes ("openai/o3", "openrouter/openai/o1")
_VENDOR_PREFIX = re.compile(
    r"^(openai|anthropic|google|gemini|meta-llama|meta|mistralai|mistral|deepseek-ai|deepseek|"
    r"qwen|x-ai|xai|moonshotai|zai-org|thudm|microsoft|amazon|nvidia|minimax|models|openrouter|"
    r"fireworks_ai|together_ai|chutes)/",
    re.IGNORECASE,
)
_FOOTNOTE = re.compile(r"(\[\d+\]|\^\d+|[*†‡§¶#¹²³⁴⁵⁶⁷⁸⁹⁰]+)")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")


@lru_cache(maxsize=1 << 16)  # pure; a history repeats the same names version after version
def canonical_model_id(raw: str | None) -> str | None:
    if raw is None:
        return None
    text = _VENDOR_PREFIX.sub("", raw.strip())
    text = text.rsplit("/", 1)[-1].lower()  # what is left of a routing path: a/b/model
    text = re.sub(r"[\s_()\[\]{}:,]+", "-", text)
    text = re.sub(r"[^a-z0-9.+\-]", "", text)
    return re.sub(r"-{2,}", "-", text).strip("-.") or None


# a benchmark version an adapter names itself (`nyt_connections@940`, see `store.methods`):
# kept as it is; a label such as "HumanEval (pass@1)" is not one
_VERSIONED = re.compile(r"[a-z0-9][a-z0-9._+\-]*@[0-9a-z][0-9a-z._\-]*")


def canonical_benchmark_id(raw: str | None) -> str | None:
    if raw is None:
        return None
    if _VERSIONED.fullmatch(raw.strip()):
        return raw.strip()
    text = re.sub(r"[^a-z0-9.]+", "_", raw.strip().lower())
    return re.sub(r"_{2,}", "_", text).strip("_") or None


# the same few thousand labels are keyed for every version of every source a build
# prepares (the resolver's tables: 480,000 calls in a build of the default registry)
@lru_cache(maxsize=1 << 16)
def label_key(label: str, *, keep_parentheses: bool = True) -> str:
    """A markup-free comparison key: "**GPQA-Diamond**† (pass@1)" -> "gpqadiamondpass1"."""
    text = re.sub(r"<[^>]+>", "", label)
    text = _FOOTNOTE.sub("", text.replace("**", "").replace("__", ""))
    if not keep_parentheses:
        text = _PAREN.sub("", text)
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("τ²", "tau2").replace("τ³", "tau3"))


def alias_map(contracts: Contracts, kind: str) -> dict[str, str]:
    """alias -> canonical id of the contract aliases of `kind` ('model' or 'benchmark')."""
    rows = contracts.aliases.filter(pl.col("kind") == kind)
    return dict(zip(rows["alias"], rows["canonical_id"]))


def model_alias_map(contracts: Contracts) -> dict[str, str]:
    return alias_map(contracts, "model")


class BenchmarkResolver:
    """Maps a source's benchmark id or label to a canonical benchmark id."""

    def __init__(self, contracts: Contracts):
        self.aliases = alias_map(contracts, "benchmark")
        known = contracts.benchmarks
        self.ids = set(known["benchmark_id"])
        full: dict[str, set[str]] = {}
        short: dict[str, set[str]] = {}
        for bid, name in zip(known["benchmark_id"], known["name"]):
            for label in (bid, name):
                full.setdefault(label_key(label), set()).add(bid)
                short.setdefault(label_key(label, keep_parentheses=False), set()).add(bid)
        for alias, canonical in self.aliases.items():
            full.setdefault(label_key(alias), set()).add(canonical)
        # A key that points at two benchmarks is ambiguous and matches nothing.
        self.by_full = {k: next(iter(v)) for k, v in full.items() if len(v) == 1}
        self.by_short = {k: next(iter(v)) for k, v in short.items() if len(v) == 1}

    def add_ids(self, ids) -> None:
        """Accept `ids` as known benchmark ids (a source declares benchmarks of its own)."""
        self.ids.update(ids)

    def resolve(self, raw: str | None) -> tuple[str | None, str]:
        """(canonical id or None, how it was found: id, alias, label or unknown)."""
        if raw is None:
            return None, "unknown"
        bid = canonical_benchmark_id(raw)
        if bid in self.aliases:
            return self.aliases[bid], "alias"
        if bid in self.ids:
            return bid, "id"
        for table, key in (
            (self.by_full, label_key(raw)),
            (self.by_short, label_key(raw, keep_parentheses=False)),
        ):
            if key in table:
                return table[key], "label"
        return bid, "unknown"
