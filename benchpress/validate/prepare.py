"""Turn one adapter's output into validated registry rows plus quarantined rejects.

`prepare_source` normalizes ids (see `normalize`), converts units, infers source types
from URLs, runs the pandera contracts with `lazy=True` so that every problem of a file is
found at once, and splits the rows: valid rows go on to the build, failing rows go to the
quarantine with the field and the reason, so nothing is lost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from urllib.parse import urljoin

import pandera.polars as pa
import polars as pl

from benchpress.adapters.base import AdapterOutput
from benchpress.errors import BadInputError
from benchpress.validate.contracts import Contracts
from benchpress.validate.model_identity import effort_from_setting, parse_model
from benchpress.validate.normalize import (
    BenchmarkResolver,
    canonical_model_id,
    model_alias_map,
)
from benchpress.validate.schemas import CHECK_MESSAGES, Models, Quarantine, ScoreCheck, Scores
from benchpress.validate.text import MAX_FUTURE_YEARS, identifier_problem, latest_release, visible

__all__ = ["SourceInfo", "PreparedSource", "prepare_source", "validate_rows", "identity_columns",
           "cited_url"]


@dataclass(frozen=True)
class SourceInfo:
    source_id: str
    url: str | None
    retrieved_at: str
    ingest_id: str
    cites_source: bool = False


@dataclass(frozen=True)
class PreparedSource:
    models: pl.DataFrame       # Models columns but ordinal (position within the source)
    benchmarks: pl.DataFrame   # benchmarks the source declares that the contract lacks
    scores: pl.DataFrame       # Scores columns
    quarantine: pl.DataFrame   # Quarantine columns
    rows_read: int
    rows_merged: int
    listed: list[str]          # canonical ids of the source's benchmark list, in its order


def _check_code(check: pl.Expr, column: pl.Expr, context: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(field, reason) of a failure case, keyed by the check's name (`CHECK_MESSAGES`)."""
    named = check.is_in(list(CHECK_MESSAGES))
    table_level = context == "DataFrameSchema"
    field_of = check.replace_strict({k: v[0] for k, v in CHECK_MESSAGES.items()}, default=None,
                                    return_dtype=pl.String)
    text_of = check.replace_strict({k: v[1] for k, v in CHECK_MESSAGES.items()}, default=check,
                                   return_dtype=pl.String)
    field = pl.when(table_level).then(field_of).otherwise(column)
    return field, pl.when(table_level).then(text_of).otherwise(
        pl.format("{}: {} (value: {})", column, pl.when(named).then(text_of).otherwise(check),
                  pl.col("failure_case").fill_null("missing")))


def validate_rows(schema: type[pa.DataFrameModel], df: pl.DataFrame) -> pl.DataFrame:
    """Failing rows of `df` under `schema` as (index, field, reason); empty when all pass.

    Validation runs on the eager frame, so value checks really run (a LazyFrame would only
    have its column types checked). A named check's field and wording come from
    `schemas.CHECK_MESSAGES`; a built-in check is shown as pandera names it.
    """
    try:
        schema.validate(df, lazy=True)
    except pa.errors.SchemaErrors as err:
        cases = err.failure_cases
        if cases["index"].null_count() == cases.height:
            # a failure of the table as a whole (wrong columns): no row to blame
            raise
        field, reason = _check_code(pl.col("check"), pl.col("column"), pl.col("schema_context"))
        return (
            cases.filter(pl.col("index").is_not_null())
            .select(pl.col("index").cast(pl.Int64), field.alias("field"), reason.alias("reason"))
            .group_by("index", maintain_order=True)
            .agg(pl.col("field").drop_nulls().first(), pl.col("reason").str.join("; "))
        )
    return pl.DataFrame(schema={"index": pl.Int64, "field": pl.String, "reason": pl.String})


_QUARANTINE_SCHEMA = {c: pl.String for c in Quarantine.to_schema().columns}


def _quarantine(raw: pl.DataFrame, failures: pl.DataFrame, kind: str, info: SourceInfo) -> pl.DataFrame:
    """The raw rows named in `failures`, each with its field and reason."""
    bad = raw.with_row_index("index").with_columns(pl.col("index").cast(pl.Int64)).join(
        failures, on="index")
    records = [json.dumps(r, ensure_ascii=False, default=str)
               for r in bad.drop("index", "field", "reason").to_dicts()]
    return pl.DataFrame({
        "source_id": [info.source_id] * bad.height,
        "kind": [kind] * bad.height,
        "row": [visible(r) for r in bad["row"].fill_null("?")],
        "record": records,
        "field": bad["field"],
        "reason": [visible(r) for r in bad["reason"]],  # data in a message: shown escaped
        "ingest_id": [info.ingest_id] * bad.height,
    }, schema=_QUARANTINE_SCHEMA)


def _drop(df: pl.DataFrame, failures: pl.DataFrame) -> pl.DataFrame:
    return df.filter(~pl.int_range(pl.len()).is_in(failures["index"].implode()))


def identity_columns(model_ids: list[str | None], settings: list[str | None] | None = None,
                     names: list[str | None] | None = None) -> dict:
    """family / version_date / effort columns for canonical model ids (see `model_identity`).

    The effort comes from the id; when the id names none, from the display name ("Claude
    Sonnet 4.5 (no thinking)"), then from the setting's ``effort``.
    """
    parsed = [parse_model(m) for m in model_ids]
    settings = settings if settings is not None else [None] * len(parsed)
    names = names if names is not None else [None] * len(parsed)
    return {
        "family": pl.Series("family", [p.family for p in parsed], dtype=pl.String),
        "version_date": pl.Series("version_date", [p.version_date for p in parsed], dtype=pl.String),
        "effort": pl.Series("effort", [p.effort or (parse_model(n).effort if n else None)
                                       or effort_from_setting(s)
                                       for p, s, n in zip(parsed, settings, names)], dtype=pl.String),
    }


def _canonical_ids(raw: pl.Series, aliases: dict[str, str]) -> pl.Series:
    """Canonical model ids (`canonical_model_id`, then the alias table) of raw names, each
    distinct name once."""
    found = {m: aliases.get(c, c) for m in raw.drop_nulls().unique().to_list()
             for c in (canonical_model_id(m),)}
    return raw.replace_strict(found, default=None, return_dtype=pl.String)


def _prepare_models(out: AdapterOutput, aliases: dict[str, str], info: SourceInfo,
                    providers: dict[str, str] | None = None):
    """Canonical model rows; a second row for the same canonical id in one source is merged.
    A provider named in the provider alias table gets the table's name."""
    ids = [aliases.get(m, m) for m in (canonical_model_id(m) for m in out.models["model_id"])]
    if providers:
        out = replace(out, models=out.models.with_columns(
            pl.col("provider").str.strip_chars().str.to_lowercase()
            .replace_strict(providers, default=pl.col("provider"), return_dtype=pl.String)
            .alias("provider")))
    identity = identity_columns(ids, out.models["setting"].to_list(), out.models["name"].to_list())
    models = out.models.with_columns(
        pl.Series("model_id", ids, dtype=pl.String),
        pl.coalesce("name", "model_id").alias("name"),
        pl.col("entry_kind").str.strip_chars().str.to_lowercase().fill_null("model"),
        _canonical_ids(out.models["base_model_id"], aliases).alias("base_model_id"),
        *identity.values(),
        pl.lit(info.source_id).alias("source_id"),
        pl.int_range(pl.len()).cast(pl.Int64).alias("ordinal"),
    )
    is_first = models.with_row_index("i").select(
        pl.col("i") == pl.col("i").min().over("model_id")
    ).to_series()
    raw, unique = out.models.filter(is_first), models.filter(is_first)
    failures = validate_rows(Models, unique.select(list(Models.to_schema().columns)))
    refused = [(k, "model_id", f"model id '{m}' {p}") for k, m in enumerate(raw["model_id"])
               if m and (p := identifier_problem(m, paths=False))]
    refused += _late_releases(unique["release_date"], info)
    if refused:  # invisible or look-alike letters: not a new model, not merged into one
        failures = pl.concat([failures, pl.DataFrame(
            {"index": [k for k, _, _ in refused], "field": [f for _, f, _ in refused],
             "reason": [r for _, _, r in refused]}, schema=failures.schema)]).group_by(
            "index", maintain_order=True).agg(pl.col("field").first(), pl.col("reason").str.join("; "))
    keep = _drop(unique, failures).select(list(Models.to_schema().columns))
    return keep, _quarantine(raw, failures, "model", info)


def _late_releases(dates: pl.Series, info: SourceInfo) -> list[tuple[int, str, str]]:
    """(row, "release_date", reason) for each release date more than `MAX_FUTURE_YEARS`
    after the day the source was retrieved (else today): 9999-12-31 is a typo, not a plan."""
    if dates.drop_nulls().is_empty():
        return []
    retrieved = (info.retrieved_at or "")[:10]
    latest = latest_release(retrieved or None).isoformat()
    # YYYY and YYYY-MM compare as their first day
    full = dates.str.replace(r"^(\d{4})$", "${1}-01").str.replace(r"^(\d{4}-\d{2})$", "${1}-01")
    since = f"the source was retrieved ({retrieved})" if retrieved else "today"
    return [(k, "release_date", f"release date '{d}' is more than {MAX_FUTURE_YEARS} years "
             f"after {since}; a typo?") for k, (d, f) in enumerate(zip(dates, full))
            if f is not None and f > latest]


def _declared_scale(b: dict, contracts: Contracts) -> str | None:
    """The scale of a benchmark a source declares: the one it names (an unknown one is a
    mistake in the source's description, refused in one line naming where it is declared),
    else the one its metric label implies (None: unknown, its rows are quarantined)."""
    scale = b.get("scale")
    if scale is None:
        return contracts.scale_for_metric(b["metric"])
    if scale not in contracts.scales:
        raise BadInputError(f"{b.get('row') or b['benchmark_id']}: benchmark "
                            f"'{b['benchmark_id']}': field 'scale': unknown scale '{scale}'; "
                            f"known (schemas/scales.yaml): {', '.join(sorted(contracts.scales))}")
    return scale


def _new_benchmarks(out: AdapterOutput, contracts: Contracts, resolver: BenchmarkResolver):
    """Benchmarks a source declares that the contract lacks, with the scale kind, unit,
    direction and bounds the source declares (else a scale from their metric label, higher
    is better, the scale's bounds), and the canonical ids of the source's whole benchmark
    list, in its order. A benchmark listed again (each part of a folder lists its own)
    counts once: its first listing."""
    rows, listed, seen = [], [], set()
    for b in out.benchmarks.iter_rows(named=True):
        bid, how = resolver.resolve(b["benchmark_id"])
        if bid in seen:
            continue
        seen.add(bid)
        listed.append(bid)
        if how != "unknown" or bid is None:
            continue
        scale = _declared_scale(b, contracts)
        spec = contracts.scales.get(scale, {}) if scale else {}
        declared_direction = "higher_is_better" in b and b.get("scale") is not None
        rows.append({
            "benchmark_id": bid, "name": b["name"] or bid, "category": b["category"],
            "scale": scale,
            "lower": spec.get("lower") if b.get("lower") is None else b["lower"],
            "upper": spec.get("upper") if b.get("upper") is None else b["upper"],
            "higher_is_better": b["higher_is_better"] if declared_direction else True,
            "cost": None, "unit": b.get("unit") or spec.get("unit"),
        })
    # the same columns as the contract's benchmarks.csv, so the two stack
    return pl.DataFrame(rows, schema=contracts.benchmarks.schema), listed


def _resolve_ids(raw: pl.DataFrame, resolver: BenchmarkResolver,
                 model_aliases: dict[str, str]) -> pl.DataFrame:
    """Step 1: canonical model and benchmark ids beside the raw ones, `_merged` where an
    alias or a label (not the id itself) matched, `id_problem` where a raw model id has
    invisible or non-ASCII characters (refused, not silently dropped from the id)."""
    # each distinct id is resolved once (a leaderboard repeats the same few thousand times)
    by_bench = {b: resolver.resolve(b) for b in raw["benchmark_id"].unique().to_list()}
    by_model = {m: canonical_model_id(m) for m in raw["model_id"].unique().to_list()}
    problem = {m: identifier_problem(m, paths=False) if m else None for m in by_model}
    resolved = [by_bench[b] for b in raw["benchmark_id"]]
    canon_models = [by_model[m] for m in raw["model_id"]]
    return raw.with_columns(
        pl.Series("raw_model_id", raw["model_id"].fill_null("")),
        pl.Series("raw_benchmark_id", raw["benchmark_id"].fill_null("")),
        pl.Series("model_id", [model_aliases.get(m, m) for m in canon_models], dtype=pl.String),
        pl.Series("benchmark_id", [r[0] for r in resolved], dtype=pl.String),
        pl.Series("_merged", [
            r[1] in ("alias", "label") or model_aliases.get(m, m) != m
            for r, m in zip(resolved, canon_models)], dtype=pl.Boolean),
        pl.Series("id_problem", [problem[m] for m in raw["model_id"]], dtype=pl.String),
    )


_GITHUB_TREE = re.compile(r"^(https://github\.com/[^/]+/[^/]+)/tree/(.+?)/?$")


def cited_url(base: str | None, relative: str) -> str | None:
    """The URL of a file a source cites by its path relative to the source's URL `base`:
    beside the file `base` names (``.../blob/<commit>/mbpp.csv`` + ``humaneval.csv``), or
    inside the folder a GitHub ``tree`` URL names (``.../tree/<commit>/web/public`` +
    ``submissions/x/submission.json`` -> that file's ``blob`` URL). None without an http(s)
    `base`, or for a path that climbs out (``..``).

    >>> cited_url("https://github.com/o/r/tree/abc/web/public", "subs/x/submission.json")
    'https://github.com/o/r/blob/abc/web/public/subs/x/submission.json'
    >>> cited_url("https://github.com/o/r/blob/abc/csv/a.csv", "b.csv")
    'https://github.com/o/r/blob/abc/csv/b.csv'
    """
    if not base or not re.match(r"^https?://", base) or ".." in relative.split("/"):
        return None
    tree = _GITHUB_TREE.match(base)
    if tree:
        return f"{tree.group(1)}/blob/{tree.group(2)}/{relative.lstrip('/')}"
    return urljoin(base, relative)


def _cited(refs: pl.Series, info: SourceInfo) -> pl.Series:
    """The citations of a source whose rows cite the source itself (`cites_source`): an
    empty one is the source's URL, a relative one (a file of a multi-file version,
    ``mbpp.csv``) that file at the source's URL (`cited_url`: ``.../blob/<commit>/mbpp.csv``).
    Other sources' citations are left as they are."""
    if not info.cites_source:
        return refs
    relative = {r: cited_url(info.url, r)
                for r in refs.drop_nulls().unique().to_list() if "://" not in r}
    return refs.replace(relative).fill_null(pl.lit(info.url, dtype=pl.String)) \
        .alias("reference_url")


def _convert_units(scores: pl.DataFrame, contracts: Contracts, info: SourceInfo,
                   scales: pl.DataFrame) -> pl.DataFrame:
    """Step 2: the numeric `score` in the benchmark's unit, citations and source types
    filled in, the source's provenance columns, and each benchmark's scale bounds."""
    factor = {u: spec["factor"] for u, spec in contracts.units.items()}
    scores = scores.with_columns(_cited(scores["reference_url"], info))
    urls = {*scores["reference_url"].drop_nulls(), info.url}
    return (
        scores.with_columns(
            pl.col("score_raw").str.strip_chars().str.strip_suffix("%")
            .cast(pl.Float64, strict=False).alias("_value"),
            pl.col("unit").replace_strict(factor, default=1.0, return_dtype=pl.Float64).alias("_factor"),
            pl.col("score_raw").fill_null(""),
            pl.col("derived").fill_null(False),
            pl.lit(info.source_id).alias("source_id"),
            pl.lit(info.retrieved_at).alias("retrieved_at"),
            pl.lit(info.ingest_id).alias("ingest_id"),
        )
        .with_columns(
            # a converted value drops the float noise of the product (0.553 * 100)
            pl.when(pl.col("_factor") != 1).then((pl.col("_value") * pl.col("_factor")).round(10))
            .otherwise(pl.col("_value")).alias("score"),
        )
        .with_columns(
            # (the URLs as filled in above: a model card's rows cite the card itself)
            pl.col("source_type").fill_null(pl.col("reference_url").replace_strict(
                {u: contracts.source_type_for_url(u) for u in urls if u},
                default="unknown", return_dtype=pl.String)
            ).fill_null("unknown"),
        )
        .pipe(_with_scales, scales)
    )


def _with_scales(scores: pl.DataFrame, scales: pl.DataFrame) -> pl.DataFrame:
    """`scores` with each benchmark's scale, lower and upper bound (null for an unknown
    benchmark): three lookups, one row per score row whatever `scales` holds (a benchmark
    in it twice takes its first row: a join would repeat the score rows, and the later
    steps, which name rows by position, would then quarantine the wrong ones)."""
    scales = scales.unique("benchmark_id", keep="first", maintain_order=True)
    keys = scales["benchmark_id"]
    # a benchmark version an adapter names (`tau2_bench_airline@user-gpt-5.2`, `store.methods`)
    # that no row describes is on its base benchmark's scale
    bench = pl.col("benchmark_id")
    key = pl.when(bench.is_in(keys.implode())).then(bench).otherwise(
        bench.str.split("@").list.first())
    return scores.with_columns(
        key.replace_strict(keys, scales[c], default=None, return_dtype=scales.schema[c]).alias(c)
        for c in scales.columns if c != "benchmark_id")


def _detect_mislabels(scores: pl.DataFrame, info: SourceInfo) -> pl.DataFrame:
    """Step 3: a fraction-unit value above 1 means the file is mislabelled, not that it
    scored 4000%: the score is dropped (the row is quarantined), and when most of a source's
    fraction values are, the file as a whole is refused (BadInputError)."""
    scores = scores.with_columns(
        ((pl.col("unit") == "fraction") & (pl.col("_value") > 1)).fill_null(False)
        .alias("_mislabelled"))
    fractions = scores.filter(pl.col("unit") == "fraction", pl.col("_value").is_not_null())
    above = scores.filter(pl.col("_mislabelled"))
    if fractions.height and above.height * 2 > fractions.height:
        first = above.row(0, named=True)
        raise BadInputError(
            f"source '{info.source_id}': {above.height} of {fractions.height} scores labelled as "
            f"0-1 fractions are above 1 (first: {first['row']}, field 'score': {first['score_raw']}); "
            "the file is mislabelled (its scores look like percentages), so nothing was ingested")
    return scores.with_columns(
        pl.when(pl.col("_mislabelled")).then(None).otherwise(pl.col("score")).alias("score"))


def _mark_duplicates(scores: pl.DataFrame) -> pl.DataFrame:
    """Step 4: `duplicate_of` names the first row of the same observation (model,
    benchmark, value, citation, setting) on every later copy.

    Only rows whose key hashes to a value another row's also hashes to can repeat an
    observation, so the exact check (a window over the key) runs on those alone, and a
    source whose hashes are all distinct gets an all-null column straight away; one
    64-bit hash per row is much smaller than the key's strings (12 million observations
    with a citation URL per model: a hash table of the whole key outgrew 8 GB)."""
    key = ["model_id", "benchmark_id", "score", "reference_url", "reported_setting"]
    suspect = scores.select(pl.struct(key).hash().is_duplicated()).to_series()
    marks = pl.Series("duplicate_of", [None] * scores.height, dtype=pl.String)
    if suspect.any():
        found = (scores.select(key + ["row"]).with_row_index("_i").filter(suspect)
                 .select("_i", pl.when(pl.int_range(pl.len()).over(key) > 0)
                         .then(pl.col("row").first().over(key)).otherwise(None)
                         .alias("duplicate_of")))
        marks = marks.scatter(found["_i"], found["duplicate_of"])
    return scores.with_columns(marks)


def _validate_scores(scores: pl.DataFrame) -> pl.DataFrame:
    """Step 5: (index, field, reason) of the rows that fail `ScoreCheck`, beside the
    columns step 6 words its messages with."""
    checked = scores.select(list(ScoreCheck.to_schema().columns))
    return validate_rows(ScoreCheck, checked).join(
        scores.with_row_index("index").select(
            pl.col("index").cast(pl.Int64), "score_raw", "lower", "upper", "duplicate_of",
            "raw_model_id", "notes", "_mislabelled", "id_problem"),
        on="index", how="left",
    )


def _explain(failures: pl.DataFrame) -> pl.DataFrame:
    """Step 6: reasons a reader can act on, by field (the value, the allowed range, the
    adapter's note on the row, the earlier duplicate)."""
    return failures.with_columns(
        # an adapter's note on the row says why (an unknown task, an architect-mode run)
        pl.when((pl.col("field") == "benchmark_id") & pl.col("notes").is_not_null())
        .then(pl.format("{} ({})", "reason", "notes")).otherwise("reason").alias("reason"),
    ).with_columns(
        pl.when((pl.col("field") == "model_id") & pl.col("id_problem").is_not_null())
        .then(pl.format("model id '{}' {}", "raw_model_id", "id_problem"))
        .when((pl.col("field") == "model_id") & (pl.col("raw_model_id") == ""))
        .then(pl.format("{}: empty model name, the row names no model (an agent system or a "
                        "mix of models that no model id stands for)", "reason"))
        .otherwise("reason").alias("reason"),
    ).with_columns(
        pl.when((pl.col("field") == "score") & pl.col("_mislabelled"))
        .then(pl.format("score {} is labelled a 0-1 fraction but is above 1: mislabelled",
                        "score_raw"))
        .when(pl.col("field") == "score").then(pl.format(
            "{} (score {}, allowed {} to {})", "reason", "score_raw",
            pl.col("lower").fill_null(-float("inf")), pl.col("upper").fill_null(float("inf"))))
        .when(pl.col("field") == "row").then(pl.format("{} ({})", "reason", "duplicate_of"))
        .otherwise("reason").alias("reason")
    ).select("index", "field", "reason")


def prepare_source(out: AdapterOutput, contracts: Contracts, info: SourceInfo) -> PreparedSource:
    """Normalize and validate one source's rows; see the module docstring.

    The score rows go through six steps: resolve ids, convert units, detect mislabels,
    mark duplicates, validate, explain the failures.
    """
    model_aliases = model_alias_map(contracts)
    models, q_models = _prepare_models(out, model_aliases, info, contracts.provider_aliases)
    resolver = BenchmarkResolver(contracts)
    declared, listed = _new_benchmarks(out, contracts, resolver)
    resolver.add_ids(declared["benchmark_id"])  # declared ids now resolve to themselves
    scales = pl.concat([
        contracts.benchmarks.select("benchmark_id", "scale", "lower", "upper"),
        declared.select("benchmark_id", "scale", "lower", "upper"),
    ])
    scores = _resolve_ids(out.scores, resolver, model_aliases)
    scores = _convert_units(scores, contracts, info, scales)
    scores = _mark_duplicates(_detect_mislabels(scores, info))
    failures = _explain(_validate_scores(scores))
    q_scores = _quarantine(out.scores, failures, "score", info)
    good = _drop(scores, failures)
    return PreparedSource(
        models=models,
        benchmarks=declared.filter(pl.col("scale").is_not_null()),
        scores=good.select(list(Scores.to_schema().columns)),
        quarantine=pl.concat([q_models, q_scores]),
        rows_read=out.scores.height,
        rows_merged=int(good["_merged"].sum()),
        listed=listed,
    )
