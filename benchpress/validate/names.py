"""One resolver for the model and benchmark names a user types.

Every command that takes names (predict --scores, compare, add-model --scores, probes
--candidates/--evaluate, backtest --probes, the wide-CSV adapter's headers) resolves them
here, before any fit:

1. the exact id;
2. the deterministic canonical form and the alias table (`schemas/aliases.csv`; for
   benchmarks also the names and labels of `schemas/benchmarks.csv`), via a `canonical`
   function supplied by the caller;
3. otherwise the name is unknown: an error naming each unknown name with the closest known
   ids (rapidfuzz, on a punctuation-free lowercase key) as suggestions, e.g.
   ``unknown model 'gpt5'; did you mean 'gpt-5'?``. Fuzzy matches are only suggested,
   never applied. With ``ignore_unknown=True`` unknown names are returned instead of raised.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import NamedTuple

from rapidfuzz import fuzz, process

from benchpress.errors import BadInputError, listed, shown
from benchpress.validate.contracts import load_contracts
from benchpress.validate.normalize import canonical_model_id, model_alias_map

__all__ = ["Resolved", "NameResolver", "resolve_names", "suggest", "unknown_message"]

_MIN_SCORE = 75.0   # rapidfuzz ratio (0-100) below which nothing is suggested
_NEAR_BEST = 5.0    # suggest every candidate within this many points of the best


class Resolved(NamedTuple):
    """`ids`: canonical ids of the known names, in the order given, each once; `unknown`:
    the names no id matched (only with ``ignore_unknown=True``); `mapping`: given -> id."""

    ids: list[str]
    unknown: list[str]
    mapping: dict[str, str]


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def suggest(name: str, known: Iterable[str], *, limit: int = 3) -> list[str]:
    """Up to `limit` known ids close to `name` (best first; none when nothing is close)."""
    found = process.extract(name, list(known), scorer=fuzz.ratio, processor=_key,
                            limit=limit, score_cutoff=_MIN_SCORE)
    if not found:
        return []
    best = found[0][1]
    return [choice for choice, score, _ in found if score >= best - _NEAR_BEST]


#: unknown names a message lists (with suggestions) before "... and N more"
MAX_LISTED = 10


def _one(name: str, known) -> str:
    if len(name) > 60:  # no suggestion is near; and the line stays short
        return shown(name, 60)
    near = suggest(name, known)
    if not near:
        return f"'{name}'"
    quoted = [f"'{n}'" for n in near]
    options = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"'{name}'; did you mean {options}?"


def unknown_message(kind: str, names: list[str], known: Iterable[str]) -> str:
    """``unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?`` (one name), or
    ``unknown benchmarks: 'a'; did you mean 'x'? 'nosuch'`` (several)."""
    known = list(known)
    parts = [_one(n, known) for n in names[:MAX_LISTED]]  # a suggestion for the first few
    if len(names) == 1:
        return f"unknown {kind} {parts[0]}"
    more = len(names) - len(parts)
    return (f"unknown {kind}s: " + " ".join(p if p.endswith("?") else p + ";" for p in parts)
            .rstrip(";") + (f" ... and {more:,} more" if more > 0 else ""))


def resolve_names(names: Iterable[str], known: Iterable[str], *, kind: str,
                  canonical: Callable[[str], str | None] | None = None,
                  ignore_unknown: bool = False) -> Resolved:
    """Resolve user-typed `names` against the `known` ids.

    Parameters
    ----------
    names : iterable of str
        As typed (surrounding spaces ignored, empty names skipped).
    known : iterable of str
        The ids that exist (e.g. the matrix's benchmark ids).
    kind : str
        "model" or "benchmark", for the message.
    canonical : callable, optional
        name -> candidate id (canonical form and alias table); tried after the exact id.
    ignore_unknown : bool
        Return unknown names in `Resolved.unknown` instead of raising.

    Raises
    ------
    BadInputError
        Some name is unknown (and `ignore_unknown` is False): one line with suggestions.
    """
    known_set = set(known)
    ids, unknown, mapping = [], [], {}
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        found = name if name in known_set else (canonical(name) if canonical else None)
        if found not in known_set:
            unknown.append(name)
            continue
        mapping[name] = found
        if found not in ids:
            ids.append(found)
    if unknown and not ignore_unknown:
        raise BadInputError(unknown_message(kind, unknown, sorted(known_set)))
    return Resolved(ids, unknown, mapping)


class NameResolver:
    """The model and benchmark names of one matrix: `resolve_benchmarks` / `resolve_models`.

    Parameters
    ----------
    benchmark_ids, model_ids : list of str
        The ids that exist (the matrix's columns and rows).
    contracts_dir : Path, optional
        The `schemas/` folder: benchmark names, labels and the alias tables (without it,
        only exact ids and the canonical model form resolve).
    ignore_unknown : bool
        Default of every call: leave unknown names out instead of raising; they are
        passed to `on_unknown(kind, names)` (default: `warnings.warn`). The CLI sets both
        from `--ignore-unknown`.
    """

    def __init__(self, benchmark_ids, model_ids, contracts_dir=None, *,
                 ignore_unknown: bool = False, on_unknown=None):
        self.benchmark_ids = list(benchmark_ids)
        self.model_ids = list(model_ids)
        self.contracts_dir = contracts_dir
        self.ignore_unknown = ignore_unknown
        self.on_unknown = on_unknown

    def _ignored(self, kind: str, found: Resolved) -> Resolved:
        if found.unknown:
            if self.on_unknown is not None:
                self.on_unknown(kind, found.unknown)
            else:
                warnings.warn(f"unknown {kind}s ignored: {listed(found.unknown, quote=False)}",
                              stacklevel=4)
        return found

    @cached_property
    def _benchmark_resolver(self):
        from benchpress.validate.normalize import BenchmarkResolver

        return BenchmarkResolver(load_contracts(self.contracts_dir)) if self.contracts_dir else None

    def canonical_benchmark(self, given: str) -> str:
        """The canonical id of a benchmark name or alias (unchanged when unknown)."""
        if given in self.benchmark_ids or self._benchmark_resolver is None:
            return given
        return self._benchmark_resolver.resolve(given)[0]

    def resolve_benchmarks(self, names, *, ignore_unknown: bool | None = None) -> Resolved:
        """Benchmark names -> canonical ids of this matrix: the exact id, then the alias
        table and benchmark names/labels, else an error with suggestions
        (``unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?``). With
        `ignore_unknown` (default: the object's) unknown names are reported to
        `on_unknown` and left out. Returns a `benchpress.validate.names.Resolved`."""
        ignore = self.ignore_unknown if ignore_unknown is None else ignore_unknown
        found = resolve_names(names, self.benchmark_ids, kind="benchmark",
                              canonical=self.canonical_benchmark, ignore_unknown=ignore)
        return self._ignored("benchmark", found)

    def unknown_benchmarks_note(self, names) -> str | None:
        """The one line an unknown benchmark name gets, with the closest ids as
        suggestions (`unknown_message`: "unknown benchmark 'gpqa_diamnd'; did you mean
        'gpqa_diamond'?"), for names left out under `ignore_unknown`; None for none."""
        names = [n for n in names if n.strip()]
        return unknown_message("benchmark", names, self.benchmark_ids) if names else None

    def benchmark_suggestions(self, names) -> dict[str, list[str]]:
        """Each name -> the closest benchmark ids (`suggest`; [] when none is close)."""
        return {n: suggest(n, self.benchmark_ids) for n in names}

    @cached_property
    def _model_aliases(self) -> dict[str, str]:
        return model_alias_map(load_contracts(self.contracts_dir)) if self.contracts_dir else {}

    def _canonical_model(self, given: str) -> str | None:
        mid = canonical_model_id(given)
        return self._model_aliases.get(mid, mid) if mid else None

    def resolve_models(self, names, *, ignore_unknown: bool | None = None,
                       extra=()) -> Resolved:
        """Model names -> registered model ids (exact id, canonical form, alias table),
        else an error with suggestions (``unknown model 'gpt5'; did you mean 'gpt-5'?``).
        `extra` names more known ids (new models given with their scores)."""
        ignore = self.ignore_unknown if ignore_unknown is None else ignore_unknown
        found = resolve_names(names, [*self.model_ids, *extra], kind="model",
                              canonical=self._canonical_model, ignore_unknown=ignore)
        return self._ignored("model", found)
