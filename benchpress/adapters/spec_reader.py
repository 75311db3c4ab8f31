"""The spec adapter: one adapter reads every leaderboard described by a spec file.

`spec_adapter(spec)` turns a checked spec (`adapters.spec_schema`) into an `Adapter`: its
`detect` applies the spec's detect rules, its `read` takes the tables the spec picks out of
one version (`adapters.spec_tables`: a file, or a folder of files such as EvalPlus's
``humaneval.csv`` + ``mbpp.csv``) and reshapes them into the interchange frames.

Reshaping is vectorized: one set of polars expressions over each table's frame names the
models, parses the values (``1.8 %``, ``84.28%``, ``1,234``; blank, ``-``, ``n/a`` mean "not
reported"; anything else is kept as written so that validation quarantines it with its
reason) and unpivots the benchmark columns. Per-name work (settings in parentheses, HTML
entities) runs once per distinct name.

Every score cites the version's own file: the adapter leaves `reference_url` empty and the
build fills in the version's URL (`cites_source`), or, for a file of a multi-file version,
the file's name, which the build resolves against that URL (``.../blob/<commit>/mbpp.csv``).
The benchmarks the spec declares carry their scale kind, unit, direction and bounds; each
regime adds the benchmark versions ``<id>@<from>`` it starts (`store.methods`), described
with the regime's name and the fields it changes.
"""

from __future__ import annotations

import html
import re
from functools import partial
from pathlib import Path

import polars as pl

from benchpress.adapters._effort import setting_in_name
from benchpress.adapters.base import (
    BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, Adapter, AdapterOutput,
)
from benchpress.adapters.spec_schema import Spec, TableSpec
from benchpress.adapters.spec_tables import column_of, detect_spec, version_tables

__all__ = ["spec_adapter", "read_spec", "benchmark_rows", "MISSING"]

#: cells that mean "not reported" (lower-cased)
MISSING = ["", "-", "--", "—", "–", "n/a", "na", "nan", "none", "null", "?", "tbd"]
_NUMBER = r"^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)\s*%?\s*[*†‡]*$"
_MARKUP = r"<[^>]+>|\*\*|__|`"
_TRUE = ("1", "true", "yes")  # an `official` column's spellings of true
_LINK = r"\[([^\]]*)\]\([^)]*\)"


def _clean(text: str | None) -> str:
    """A cell's text without markup: links keep their label, HTML tags and emphasis go."""
    text = html.unescape(text or "")
    text = re.sub(_MARKUP, "", re.sub(_LINK, r"\1", text))
    return re.sub(r"\s+", " ", text).strip()


def _cleaned(column: str) -> pl.Expr:
    """`_clean` as an expression (HTML entities aside: see `_models_and_scores`)."""
    return (pl.col(column).str.replace_all(_LINK, "${1}").str.replace_all(_MARKUP, "")
            .str.replace_all(r"\s+", " ").str.strip_chars())


# ---- frames -> interchange rows ---------------------------------------------------------

def _short(value: pl.Expr) -> pl.Expr:
    """A variant's value in a model id: a commit hash shortened as git does."""
    return pl.when(value.str.contains(r"^[0-9a-f]{20,}$")).then(value.str.slice(0, 7)) \
        .otherwise(value)


def _models_and_scores(table: TableSpec, frame: pl.DataFrame, notes: list[str]):
    """(models frame, scores frame) of one table's frame (see the module docstring)."""
    model = table.model
    name_col = column_of(frame.columns, model.columns)
    if name_col is None:
        return None
    settings = {key: column_of(frame.columns, alts) for key, alts in
                (*model.setting, *model.qualifiers)}
    official = column_of(frame.columns, model.official) if model.official else None
    frame = frame.filter(pl.col(name_col).is_not_null()).with_columns(
        _cleaned(name_col).alias("_name"),
        *(pl.col(col).alias(f"_set_{key}") if col else pl.lit(None, pl.String).alias(f"_set_{key}")
          for key, col in settings.items()))
    entities = {n: _clean(n) for n in frame.filter(pl.col("_name").str.contains("&", literal=True))
                ["_name"].unique().to_list()}
    if entities:  # (rare) HTML entities in a name: "&amp;"
        frame = frame.with_columns(pl.col("_name").replace(entities))
    empty = frame.filter(pl.col("_name") == "").height
    if empty:
        notes.append(f"{empty} row(s) without a model name left out")
    frame = frame.filter(pl.col("_name") != "")
    parsed = ({n: setting_in_name(n) for n in frame["_name"].unique(maintain_order=True)
               .to_list()} if model.settings_in_name else {})
    frame, name_keys = _with_name_settings(frame, parsed)
    frame = _with_ids(frame, model, official)
    frame = frame.with_columns(*_setting_json(frame, model, name_keys))
    models = frame.unique("_id", keep="first", maintain_order=True).select(
        pl.col("_id").alias("model_id"), pl.col("_display").alias("name"),
        pl.col("_setting").alias("setting"),
        pl.col("_setting").str.json_path_match("$.reasoning").replace_strict(
            {"true": True, "false": False}, default=None, return_dtype=pl.Boolean)
        .alias("is_reasoning"),
        pl.lit(model.open_weights, dtype=pl.Boolean).alias("open_weights"),
        pl.col("_row").alias("row"))
    return models, _scores(table, frame)


def _with_name_settings(frame: pl.DataFrame, parsed: dict) -> tuple[pl.DataFrame, list[str]]:
    """`frame` with what each row's name says (`parsed`: name -> (id text, settings)):
    `_named_id`, the name with its settings spelled as the other sources do, and a
    `_name_<key>` column per setting key; and those keys. A left join on the name (the
    rows keep their order): the same values on every run, which a `replace_strict` per key
    inside one `with_columns` did not always give (an effort lost now and then, so that
    two builds of one file differed)."""
    if not parsed:
        return frame.with_columns(pl.lit(None, pl.String).alias("_named_id")), []
    names = list(parsed)
    keys = list(dict.fromkeys(k for _, sets in parsed.values() for k in sets))
    table = {"_name": pl.Series(names, dtype=pl.String),
             "_named_id": pl.Series([parsed[n][0] for n in names], dtype=pl.String)}
    for key in keys:
        values = [parsed[n][1].get(key) for n in names]
        if all(isinstance(v, bool) or v is None for v in values):
            table[f"_name_{key}"] = pl.Series(values, dtype=pl.Boolean)
        else:  # (text, as a bool reads in JSON where a column mixes both)
            table[f"_name_{key}"] = pl.Series(
                [None if v is None else str(v).lower() if isinstance(v, bool) else str(v)
                 for v in values], dtype=pl.String)
    return frame.join(pl.DataFrame(table), on="_name", how="left",
                      maintain_order="left"), keys


def _with_ids(frame: pl.DataFrame, model, official: str | None) -> pl.DataFrame:
    """`frame` with each row's model id text (`_id`) and display name (`_display`): the
    name with its settings spelled as the other sources do (`_named_id`), an organisation
    kept unless the row says it is the official provider, and the values that tell apart
    rows of one name (`variants`)."""
    frame = frame.with_columns(pl.col("_named_id").fill_null(pl.col("_name")).alias("_id"))
    if model.namespace:
        is_official = (pl.col(official).str.strip_chars().str.to_lowercase()
                       .is_in(list(_TRUE)).fill_null(False) if official else pl.lit(False))
        parts = pl.col("_id").str.splitn("/", 2).struct
        frame = frame.with_columns(
            pl.when(pl.col("_id").str.contains("/", literal=True) & ~is_official)
            .then(pl.format("{} ({})", parts.field("field_1"), parts.field("field_0")))
            .otherwise(pl.col("_id")).alias("_id"))
    suffix = pl.lit("")
    if model.variants:
        spread = [pl.when(pl.col(f"_set_{k}").n_unique().over("_id") > 1)
                  .then(_short(pl.col(f"_set_{k}").fill_null("none")))
                  for k in model.variants]
        suffix = pl.concat_str(spread, separator=", ", ignore_nulls=True).fill_null("")
    frame = frame.with_columns(suffix.alias("_suffix")).with_columns(
        pl.when(pl.col("_suffix") != "").then(pl.format("{} ({})", "_id", "_suffix"))
        .otherwise("_id").alias("_id"),
        pl.when(pl.col("_suffix") != "").then(pl.format("{} ({})", "_name", "_suffix"))
        .otherwise("_name").alias("_display"),
    )
    return frame


def _as_json(fields: dict[str, pl.Expr]) -> pl.Expr:
    """The fields as one JSON object per row (sorted keys, null fields left out; null when
    none is left)."""
    if not fields:
        return pl.lit(None, pl.String)
    encoded = pl.struct(**{k: fields[k] for k in sorted(fields)}).struct.json_encode()
    text = encoded.str.replace_all(r'"[^"]*":null,?', "").str.replace(r",\}$", "}")
    return pl.when(text == "{}").then(None).otherwise(text)


def _setting_json(frame: pl.DataFrame, model, name_keys: list[str]) -> tuple[pl.Expr, pl.Expr]:
    """Each row's setting as JSON text: the settings its name carries (`_name_<key>`, see
    `_with_name_settings`) and the setting columns (a column of true/false values as
    booleans); the model's setting adds its upstream id (`store.renames`: the name and the
    keys the spec lists, setting or qualifier), the score's (`reported_setting`) does not."""
    fields: dict[str, pl.Expr] = {key: pl.col(f"_name_{key}") for key in name_keys}
    for key, _ in model.setting:
        column = pl.col(f"_set_{key}")
        low = frame[f"_set_{key}"].drop_nulls().str.strip_chars().str.to_lowercase()
        flags = low.len() > 0 and low.is_in(["true", "false"]).all()
        fields[key] = (column.str.strip_chars().str.to_lowercase() == "true") if flags else column
    reported = _as_json(fields)
    if not model.upstream_id:
        return reported.alias("_setting"), reported.alias("_reported")
    parts = [pl.col("_name") if k == "name" else pl.col(f"_set_{k}") for k in model.upstream_id]
    upstream = pl.concat_str([p.fill_null("") for p in parts], separator="|")
    return _as_json({**fields, "upstream_id": upstream}).alias("_setting"), \
        reported.alias("_reported")


def _scores(table: TableSpec, frame: pl.DataFrame) -> pl.DataFrame:
    found = [(b, column_of(frame.columns, b.columns)) for b in table.benchmarks]
    found = [(b, col) for b, col in found if col is not None]
    if not found:
        return pl.DataFrame(schema=SCORE_COLUMNS)
    wide = frame.select(pl.col("_id").alias("model_id"), pl.col("_row").alias("_base_row"),
                        pl.col("_reported").alias("reported_setting"),
                        *(pl.col(col).alias(b.id) for b, col in found))
    units = {b.id: b.values for b in table.benchmarks}
    derived = {b.id: b.derived for b in table.benchmarks}
    headers = {b.id: col for b, col in found}
    cell = pl.col("_cell").str.replace_all(_MARKUP, "").str.strip_chars()
    number = cell.str.extract(_NUMBER, 1)
    long = (wide.unpivot(index=["model_id", "_base_row", "reported_setting"],
                         on=[b.id for b, _ in found], variable_name="benchmark_id",
                         value_name="_cell")
            .filter(cell.is_not_null() & ~cell.str.to_lowercase().is_in(MISSING)))
    return long.select(
        "model_id", "benchmark_id",
        pl.when(number.is_not_null()).then(number.str.replace_all(",", "")).otherwise(cell)
        .alias("score_raw"),
        pl.col("benchmark_id").replace_strict(units, default=None, return_dtype=pl.String)
        .alias("unit"),
        pl.lit(None, pl.String).alias("reference_url"),
        pl.lit(None, pl.String).alias("source_type"),
        "reported_setting",
        pl.lit(None, pl.String).alias("audit_status"),
        pl.lit(None, pl.String).alias("observed_at"),
        pl.col("benchmark_id").replace_strict(derived, return_dtype=pl.Boolean).alias("derived"),
        pl.when(number.is_null()).then(pl.format("cell {}", pl.col("_cell")))
        .alias("notes"),
        pl.format("{}, column '{}'", "_base_row",
                  pl.col("benchmark_id").replace_strict(headers, return_dtype=pl.String))
        .alias("row"),
    )


def _where(spec: Spec) -> str:
    """How a message names the spec file: as it sits in a home (`sources/specs/NAME.yaml`)."""
    return f"sources/specs/{spec.path.name}"


def benchmark_rows(spec: Spec) -> list[dict]:
    """The benchmarks the spec declares, then the versions its regimes start (each named
    for its regime, with the fields the regime changes)."""
    base = {}
    for table in spec.tables:
        for b in table.benchmarks:
            base.setdefault(b.id, {
                "benchmark_id": b.id, "name": b.name or b.id, "category": b.category,
                "metric": b.unit, "scale": b.scale, "unit": b.unit,
                "higher_is_better": b.higher_is_better, "lower": b.lower, "upper": b.upper,
                "row": f"{_where(spec)} line {b.line}"})
    rows = list(base.values())
    current = {bid: dict(row) for bid, row in base.items()}
    for regime in spec.regimes:
        changes = dict(regime.overrides)
        for bid in regime.benchmarks or list(base):
            row = {**current[bid], **changes.get(bid, {})}
            current[bid] = row  # a later regime starts from this one's fields
            rows.append({**row, "benchmark_id": f"{bid}@{regime.start}",
                         "name": f"{row['name']} ({regime.name}, from {regime.start})",
                         "metric": row["unit"], "row": f"{_where(spec)} line {regime.line}"})
    return rows


def read_spec(spec: Spec, path: Path) -> AdapterOutput:
    """One version of the spec's leaderboard (a file or a folder of files)."""
    model_parts, score_parts, notes = [], [], []
    multi = path.is_dir()
    read_any = False
    for name, table, frame in version_tables(spec, path):
        read_any = True
        got = _models_and_scores(table, frame, notes)
        if got is None:
            continue
        models, scores = got
        model_parts.append(models)
        if multi:  # cited as the file of the version's folder
            scores = scores.with_columns(pl.lit(name, pl.String).alias("reference_url"))
        score_parts.append(scores.with_columns(
            pl.lit(spec.source_type, pl.String).alias("source_type")))
    if not read_any:
        notes.append(f"no table of spec '{spec.name}' in this version")
    models = (pl.concat(model_parts, how="diagonal_relaxed")
              .unique("model_id", keep="first", maintain_order=True)
              if model_parts else pl.DataFrame())
    scores = pl.concat(score_parts, how="diagonal_relaxed") if score_parts else pl.DataFrame()
    benchmarks = pl.DataFrame(benchmark_rows(spec), schema=BENCHMARK_COLUMNS)
    return AdapterOutput(_conformed(models, MODEL_COLUMNS), benchmarks,
                         _conformed(scores, SCORE_COLUMNS), notes)


def _conformed(frame: pl.DataFrame, columns: dict) -> pl.DataFrame:
    """`frame` with exactly `columns`, each of its type (a missing one null)."""
    if frame.height == 0:
        return pl.DataFrame(schema=columns)
    return frame.select([pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c)
                         for c, t in columns.items()])



def spec_adapter(spec: Spec) -> Adapter:
    """The adapter that reads `spec`'s leaderboard (named as the spec)."""
    return Adapter(name=spec.name, detect=partial(detect_spec, spec),
                   read=partial(read_spec, spec), cites_source=True,
                   method_changes=spec.method_changes() or None)
