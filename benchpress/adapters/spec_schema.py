"""Leaderboard spec files: the typed loader and its checks.

A leaderboard that is "a table in a file" (a markdown table under a heading in a README, a
CSV, a JSON object or list of records) is described by a spec file under `sources/specs/`
instead of an adapter module; `adapters.spec_reader` is the one adapter that reads every
spec. The full key reference, with a worked example, is `docs/guide/spec-files.md`; in short:

```yaml
name: acme-board                  # the adapter name (`ingest --adapter acme-board`), = file name
title: Acme leaderboard
format: markdown                  # markdown | csv | json (a table may override it)
detect:                           # how `ingest PATH` recognises the file (any rule; all its keys)
  - {pattern: "^# Acme Leaderboard"}
model: {column: [Model, Model Name]}
tables:
  - header: [Model, Score]        # the first table whose header has these cells
    benchmarks:
      - {id: acme_score, column: Score, unit: "%", scale: percent, direction: higher}
regimes:                          # a change of method: a new benchmark version from that date
  - {from: 2025-11-18, name: new documents}
```

Every refusal is one line naming the spec file, the line and the key (`SpecError`):
``sources/specs/acme.yaml line 9: tables[0].benchmarks[0].direction: expected one of
higher, lower, none (got 'up')``. Nothing in a spec runs as code: regular expressions are
the only patterns, and they are compiled here, once.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import yaml

from benchpress import yaml_text
from benchpress.errors import BadInputError

__all__ = ["SpecError", "Spec", "TableSpec", "ModelSpec", "BenchmarkSpec", "DetectRule",
           "Regime", "load_spec", "FORMATS", "DIRECTIONS", "MODEL_KEY", "header_key"]

FORMATS = ("markdown", "csv", "json")
DIRECTIONS = {"higher": True, "lower": False, "none": None}
#: the model column of a JSON object of records: the record's key
MODEL_KEY = "@key"
_ID = re.compile(r"[a-z0-9][a-z0-9._+\-]*")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


class SpecError(BadInputError):
    """A spec file breaks the spec schema (names the file, line and key)."""


def header_key(text: str) -> str:
    """How a header cell is compared: markup, HTML entities and case off, spaces collapsed
    (``"**Confabulations  (%)**"`` and ``"confabulations (%)"`` are one key).

    >>> header_key("&mu;") == header_key("μ"), header_key(" Avg. **Rank** ")
    (True, 'avg. rank')
    """
    text = html.unescape(text or "")
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # [label](link)
    text = re.sub(r"<[^>]+>|\*\*|__|`", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark column: where its values are and what they measure."""

    id: str
    columns: tuple[str, ...]        # header alternatives (JSON: key paths "a/b"), first found
    scale: str
    higher_is_better: bool | None   # None: neither (a descriptive measure, word counts)
    name: str | None = None
    category: str | None = None
    unit: str | None = None
    lower: float | None = None
    upper: float | None = None
    values: str | None = None       # the unit of the file's values when not the scale's
    derived: bool = False           # computed by the publisher from other columns (an average)
    line: int = 0


@dataclass(frozen=True)
class ModelSpec:
    """Where a row's model is named and what else about it the row says."""

    columns: tuple[str, ...]
    settings_in_name: bool = False  # "(high reasoning)" -> effort high (`_effort.setting_in_name`)
    namespace: bool = False         # names are "org/name"; the org stays in the id ...
    official: tuple[str, ...] = ()  # ... unless this (true/false) column says the org is the maker
    setting: tuple[tuple[str, tuple[str, ...]], ...] = ()  # setting key -> column alternatives
    # columns that tell apart rows of one name without being a setting (a model's size)
    qualifiers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    variants: tuple[str, ...] = ()  # setting or qualifier keys that keep repeated names apart
    upstream_id: tuple[str, ...] = ()  # setting keys (and "name") that identify the row upstream
    open_weights: bool | None = None


@dataclass(frozen=True)
class TableSpec:
    """Which table of which file, and its columns."""

    format: str
    model: ModelSpec
    benchmarks: tuple[BenchmarkSpec, ...]
    file: str | None = None         # a glob on the file's name inside a version's folder
    header: tuple[str, ...] = ()    # header cells the table must have (`header_key`)
    heading: re.Pattern | None = None      # the heading above a markdown table must match
    not_heading: re.Pattern | None = None  # ... and must not match
    every: bool = False             # every matching markdown table, not only the first
    records: str = "object"         # JSON: "object" (keyed by model) or "list"
    line: int = 0


@dataclass(frozen=True)
class DetectRule:
    """What a file of this leaderboard holds (every key given must hold)."""

    file: str | None = None
    format: str | None = None
    contains: tuple[str, ...] = ()
    pattern: re.Pattern | None = None
    header: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Regime:
    """A change of method from the source version labelled `start` on."""

    start: str
    name: str
    benchmarks: tuple[str, ...] = ()          # empty: every benchmark of the spec
    overrides: tuple[tuple[str, dict], ...] = ()  # benchmark id -> fields that change with it
    line: int = 0


@dataclass(frozen=True)
class Spec:
    """A loaded, checked spec file."""

    name: str
    # where the file was read from, not what it says: out of the repr, which keys the
    # prepared versions it read (a clone elsewhere must find the same keys)
    path: Path = field(compare=False, repr=False)
    title: str
    format: str
    tables: tuple[TableSpec, ...]
    detect: tuple[DetectRule, ...]
    regimes: tuple[Regime, ...] = ()
    description: str | None = None
    source_type: str = "leaderboard"
    lines: dict = field(default_factory=dict, compare=False, repr=False)

    def benchmark_ids(self) -> list[str]:
        """Every benchmark id the spec declares, in order, once."""
        return list(dict.fromkeys(b.id for t in self.tables for b in t.benchmarks))

    def method_changes(self) -> dict[str, list[str]]:
        """{benchmark_id: [start, ...]}: the regimes as `store.methods` declarations."""
        out: dict[str, list[str]] = {}
        for regime in self.regimes:
            for bid in regime.benchmarks or self.benchmark_ids():
                out.setdefault(bid, []).append(regime.start)
        return out


class _Reader:
    """Walks one loaded document, refusing a bad value in one line naming its place."""

    def __init__(self, path: Path, lines: dict[tuple, int]):
        self.path, self.lines = path, lines

    def fail(self, where: tuple, message: str):
        line = next((self.lines[where[:k]] for k in range(len(where), -1, -1)
                     if where[:k] in self.lines), None)
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
        at = f" line {line}" if line else ""
        raise SpecError(f"{self.path}{at}: {dotted or 'the spec'}: {message}")

    def line(self, where: tuple) -> int:
        return self.lines.get(where, 0)

    def mapping(self, value, where: tuple, allowed: set[str], required: set[str] = frozenset()):
        if not isinstance(value, dict):
            self.fail(where, f"expected a mapping of keys ({', '.join(sorted(allowed))}), "
                             f"got {_kind(value)}")
        for key in value:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean '{near[0]}'?" if near else \
                    f"; known keys: {', '.join(sorted(allowed))}"
                self.fail((*where, key), f"unknown key '{key}'{hint}")
        for key in sorted(required - set(value)):
            self.fail(where, f"missing key '{key}'")
        return value

    def text(self, value, where: tuple, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or \
                not str(value).strip():
            self.fail(where, f"expected text, got {_kind(value)}")
        return str(value).strip()

    def texts(self, value, where: tuple, *, empty: bool = True) -> tuple[str, ...]:
        """A text or a list of texts (alternatives)."""
        if value is None:
            items = []
        elif isinstance(value, list):
            items = [self.text(v, (*where, k)) for k, v in enumerate(value)]
        else:
            items = [self.text(value, where)]
        if not items and not empty:
            self.fail(where, "expected a text or a non-empty list of texts")
        return tuple(items)

    def choice(self, value, where: tuple, options) -> str:
        text = self.text(value, where)
        if text not in options:
            self.fail(where, f"expected one of {', '.join(options)} (got {text!r})")
        return text

    def flag(self, value, where: tuple, default: bool | None = False) -> bool | None:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(where, f"expected true or false, got {_kind(value)}")
        return value

    def number(self, value, where: tuple) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(where, f"expected a number, got {_kind(value)}")
        return float(value)

    def regex(self, value, where: tuple) -> re.Pattern | None:
        if value is None:
            return None
        text = self.text(value, where)
        try:
            return re.compile(text, re.IGNORECASE | re.MULTILINE)
        except re.error as exc:
            self.fail(where, f"not a regular expression ({exc})")

    def ident(self, value, where: tuple, pattern: re.Pattern = _ID) -> str:
        text = self.text(value, where)
        if not pattern.fullmatch(text):
            self.fail(where, f"{text!r} is not an id (lowercase letters, digits and . _ + -, "
                             "starting with a letter or digit)")
        return text

    def day(self, value, where: tuple) -> str:
        text = str(value.isoformat() if isinstance(value, date) else value).strip()
        try:
            date.fromisoformat(text[:10])
        except ValueError:
            self.fail(where, f"expected a date YYYY-MM-DD (a version label), got {text!r}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{4,6})?", text):
            self.fail(where, f"expected a date YYYY-MM-DD (a version label), got {text!r}")
        return text


def _kind(value) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"


_BENCH_KEYS = {"id", "column", "name", "category", "unit", "scale", "direction", "lower",
               "upper", "values", "derived"}
_MODEL_KEYS = {"column", "settings_in_name", "namespace", "official", "setting", "qualifiers",
               "variants", "upstream_id", "open_weights"}
_TABLE_KEYS = {"file", "format", "header", "heading", "not_heading", "every", "records",
               "model", "benchmarks"}
_DETECT_KEYS = {"file", "format", "contains", "pattern", "header", "keys"}
_REGIME_KEYS = {"from", "name", "benchmarks", "changes"}
_OVERRIDE_KEYS = {"name", "unit", "scale", "direction", "lower", "upper"}
_TOP_KEYS = {"name", "title", "description", "format", "source_type", "detect", "model",
             "tables", "regimes"}


def _benchmark(r: _Reader, doc, where: tuple) -> BenchmarkSpec:
    r.mapping(doc, where, _BENCH_KEYS, {"id", "column", "scale", "direction"})
    lower, upper = r.number(doc.get("lower"), (*where, "lower")), \
        r.number(doc.get("upper"), (*where, "upper"))
    if lower is not None and upper is not None and lower >= upper:
        r.fail((*where, "upper"), f"upper {upper:g} is not above lower {lower:g}")
    values = doc.get("values")
    return BenchmarkSpec(
        id=r.ident(doc["id"], (*where, "id")),
        columns=r.texts(doc["column"], (*where, "column"), empty=False),
        scale=r.ident(doc["scale"], (*where, "scale")),
        higher_is_better=DIRECTIONS[r.choice(doc["direction"], (*where, "direction"),
                                             list(DIRECTIONS))],
        name=r.text(doc.get("name"), (*where, "name"), optional=True),
        category=r.text(doc.get("category"), (*where, "category"), optional=True),
        unit=r.text(doc.get("unit"), (*where, "unit"), optional=True),
        lower=lower, upper=upper,
        values=None if values is None else r.choice(values, (*where, "values"),
                                                     ["fraction", "percent"]),
        derived=bool(r.flag(doc.get("derived"), (*where, "derived"))),
        line=r.line(where),
    )


def _columns_map(r: _Reader, doc, where: tuple) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """{key: column or [alternatives]} as (key, alternatives) pairs."""
    doc = doc or {}
    if not isinstance(doc, dict):
        r.fail(where, f"expected a mapping of keys to columns, got {_kind(doc)}")
    return tuple((r.ident(k, (*where, k), _NAME), r.texts(v, (*where, k), empty=False))
                 for k, v in doc.items())


def _model(r: _Reader, doc, where: tuple, default: ModelSpec | None) -> ModelSpec:
    if doc is None:
        if default is None:
            r.fail(where, "missing key 'model' (here or at the top of the spec)")
        return default
    r.mapping(doc, where, _MODEL_KEYS, {"column"} if default is None else set())
    setting, qualifiers = (_columns_map(r, doc.get(key), (*where, key))
                           for key in ("setting", "qualifiers"))
    keys = {k for k, _ in setting} | {k for k, _ in qualifiers}
    for name in ("variants", "upstream_id"):
        for k, key in enumerate(r.texts(doc.get(name), (*where, name))):
            if key not in keys and not (name == "upstream_id" and key == "name"):
                r.fail((*where, name, k), f"'{key}' is not a key of model.setting or "
                                          f"model.qualifiers ({', '.join(sorted(keys)) or 'none'})")
    namespace = doc.get("namespace")
    if namespace is not None and namespace != "keep":
        r.fail((*where, "namespace"), f"expected 'keep' (names are org/name and the org stays "
                                      f"in the id), got {_kind(namespace)}")
    base = default or ModelSpec(columns=())
    return ModelSpec(
        columns=r.texts(doc["column"], (*where, "column"), empty=False) if "column" in doc
        else base.columns,
        settings_in_name=bool(r.flag(doc.get("settings_in_name"), (*where, "settings_in_name"),
                                     base.settings_in_name)),
        namespace=namespace == "keep" if "namespace" in doc else base.namespace,
        official=r.texts(doc.get("official"), (*where, "official")) if "official" in doc
        else base.official,
        setting=setting if "setting" in doc else base.setting,
        qualifiers=qualifiers if "qualifiers" in doc else base.qualifiers,
        variants=r.texts(doc.get("variants"), (*where, "variants")) if "variants" in doc
        else base.variants,
        upstream_id=r.texts(doc.get("upstream_id"), (*where, "upstream_id"))
        if "upstream_id" in doc else base.upstream_id,
        open_weights=r.flag(doc.get("open_weights"), (*where, "open_weights"), base.open_weights),
    )


def _table(r: _Reader, doc, where: tuple, fmt: str, model: ModelSpec | None) -> TableSpec:
    r.mapping(doc, where, _TABLE_KEYS, {"benchmarks"})
    table_format = r.choice(doc["format"], (*where, "format"), FORMATS) if "format" in doc \
        else fmt
    benches = doc["benchmarks"]
    if not isinstance(benches, list) or not benches:
        r.fail((*where, "benchmarks"), "expected a non-empty list of benchmark columns")
    records = doc.get("records", "object")
    return TableSpec(
        format=table_format,
        model=_model(r, doc.get("model"), (*where, "model"), model),
        benchmarks=tuple(_benchmark(r, b, (*where, "benchmarks", k)) for k, b in enumerate(benches)),
        file=r.text(doc.get("file"), (*where, "file"), optional=True),
        header=r.texts(doc.get("header"), (*where, "header")),
        heading=r.regex(doc.get("heading"), (*where, "heading")),
        not_heading=r.regex(doc.get("not_heading"), (*where, "not_heading")),
        every=bool(r.flag(doc.get("every"), (*where, "every"))),
        records=r.choice(records, (*where, "records"), ["object", "list"]),
        line=r.line(where),
    )


def _detect(r: _Reader, doc, where: tuple) -> DetectRule:
    r.mapping(doc, where, _DETECT_KEYS)
    rule = DetectRule(
        file=r.text(doc.get("file"), (*where, "file"), optional=True),
        format=r.choice(doc["format"], (*where, "format"), FORMATS) if "format" in doc else None,
        contains=r.texts(doc.get("contains"), (*where, "contains")),
        pattern=r.regex(doc.get("pattern"), (*where, "pattern")),
        header=r.texts(doc.get("header"), (*where, "header")),
        keys=r.texts(doc.get("keys"), (*where, "keys")),
    )
    if not (rule.contains or rule.pattern or rule.header or rule.keys):
        r.fail(where, "a detect rule needs contains, pattern, header or keys")
    return rule


def _regime(r: _Reader, doc, where: tuple, known: list[str]) -> Regime:
    r.mapping(doc, where, _REGIME_KEYS, {"from", "name"})
    benches = r.texts(doc.get("benchmarks"), (*where, "benchmarks"))
    for k, bid in enumerate(benches):
        if bid not in known:
            r.fail((*where, "benchmarks", k), f"'{bid}' is not a benchmark id of this spec")
    changes = doc.get("changes") or {}
    r.mapping(changes, (*where, "changes"), set(known))
    overrides = []
    for bid, fields_doc in changes.items():
        at = (*where, "changes", bid)
        r.mapping(fields_doc, at, _OVERRIDE_KEYS)
        fields_ = dict(fields_doc)
        if "direction" in fields_:
            fields_["higher_is_better"] = DIRECTIONS[r.choice(
                fields_.pop("direction"), (*at, "direction"), list(DIRECTIONS))]
        for key in ("lower", "upper"):
            if key in fields_:
                fields_[key] = r.number(fields_[key], (*at, key))
        overrides.append((bid, fields_))
    return Regime(start=r.day(doc["from"], (*where, "from")),
                  name=r.text(doc["name"], (*where, "name")), benchmarks=benches,
                  overrides=tuple(overrides), line=r.line(where))


def _default_detect(tables: tuple[TableSpec, ...]) -> tuple[DetectRule, ...]:
    """Without a `detect` key: a file with the first table's header cells."""
    first = tables[0]
    if not first.header:
        return ()
    return (DetectRule(file=first.file, format=first.format, header=first.header),)


def load_spec(path: Path) -> Spec:
    """The spec file at `path`, checked (`SpecError` names the file, line and key)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
        doc = yaml_text.read_file(path)
        lines = yaml_text.line_numbers(text)
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: not YAML ({yaml_text.describe(exc)})") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    r = _Reader(path, lines)
    r.mapping(doc, (), _TOP_KEYS, {"name", "tables"})
    name = r.ident(doc["name"], ("name",), _NAME)
    if name != path.stem:
        r.fail(("name",), f"is '{name}' but the file is named '{path.name}'; they must agree")
    fmt = r.choice(doc.get("format", "markdown"), ("format",), FORMATS)
    model = _model(r, doc["model"], ("model",), None) if "model" in doc else None
    tables_doc = doc["tables"]
    if not isinstance(tables_doc, list) or not tables_doc:
        r.fail(("tables",), "expected a non-empty list of tables")
    tables = tuple(_table(r, t, ("tables", k), fmt, model) for k, t in enumerate(tables_doc))
    known = list(dict.fromkeys(b.id for t in tables for b in t.benchmarks))
    detect_doc = doc.get("detect")
    if isinstance(detect_doc, dict):
        detect_doc = [detect_doc]
    if detect_doc is not None and not isinstance(detect_doc, list):
        r.fail(("detect",), f"expected a rule or a list of rules, got {_kind(detect_doc)}")
    detect = tuple(_detect(r, d, ("detect", k)) for k, d in enumerate(detect_doc or [])) \
        or _default_detect(tables)
    if not detect:
        r.fail(("detect",), "missing: give a detect rule (or a header on the first table)")
    regimes_doc = doc.get("regimes") or []
    if not isinstance(regimes_doc, list):
        r.fail(("regimes",), f"expected a list of regimes, got {_kind(regimes_doc)}")
    regimes = tuple(_regime(r, g, ("regimes", k), known) for k, g in enumerate(regimes_doc))
    starts = [g.start for g in regimes]
    if starts != sorted(set(starts)):
        r.fail(("regimes",), "regimes must be listed oldest first, each date once")
    return Spec(name=name, path=path, title=r.text(doc.get("title", name), ("title",)),
                format=fmt, tables=tables, detect=detect, regimes=regimes,
                description=r.text(doc.get("description"), ("description",), optional=True),
                source_type=r.ident(doc.get("source_type", "leaderboard"), ("source_type",),
                                    _NAME),
                lines=lines)
