"""Alias suggestions: candidate matches for a person to review, never applied silently.

Models are matched on their parsed identity (`validate.model_identity`: family, version date,
effort), not on raw strings: ``o3-2025-04-16_high`` (Epoch) and ``o3-high`` (a vendor matrix)
share family ``o3`` and effort ``high``. A candidate whose effort or version date contradicts
the model's (both stated, and different) is never proposed, so different efforts of one model
stay different rows unless a person adds an alias. Families (edit-distance ratio) and whole
ids (rapidfuzz WRatio) are compared, the closer counts; a
`match` of ``identity`` means the families are equal. Each suggestion shows the evidence a
reviewer needs to tell "the same model under another name" from "a sibling model": how many
benchmarks the two rows share, how far apart their scores are there, and the scores side by
side. `accept_alias` appends a reviewed row to `schemas/aliases.csv`; the next build applies it.

Benchmarks: a source's benchmark name that resolves to nothing (a free-text name such as
llm-stats' ``MMStar``) is quarantined, not guessed; given the quarantine, the suggestions list
every such name with the closest known benchmarks, or with no candidate (``match`` =
``none``) when nothing is close, so that no unresolved name goes unseen.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import polars as pl
from rapidfuzz import fuzz, process

from benchpress.errors import BadInputError
from benchpress.store.sources import names_source
from benchpress.store.tables import locked, write_atomic
from benchpress.validate.contracts import ALIAS_COLUMNS, alias_graph_problem
from benchpress.validate.model_identity import parse_model
from benchpress.validate.normalize import canonical_benchmark_id, canonical_model_id
from benchpress.validate.text import identifier_problem

__all__ = ["suggest_aliases", "accept_alias", "source_filter", "unresolved_benchmarks",
           "entry_ids", "closest_models"]

_SUGGESTION_SCHEMA = {
    "kind": pl.String, "alias": pl.String, "canonical_id": pl.String, "similarity": pl.Float64,
    "match": pl.String, "alias_effort": pl.String, "canonical_effort": pl.String,
}


def source_filter(source: str, source_ids) -> pl.Expr:
    """Rows of the sources that `source` names (see `store.sources.names_source`)."""
    return pl.col("source_id").is_in([s for s in set(source_ids) if names_source(source, s)])


def entry_ids(models: pl.DataFrame) -> pl.DataFrame:
    """The `model_id` of every row that is not a bare model (an agent system or a submission,
    `schemas.ENTRY_KINDS`); none in a registry built before entry kinds."""
    if "entry_kind" not in models.columns:
        return models.select("model_id").clear()
    return models.filter(pl.col("entry_kind").fill_null("model") != "model").select("model_id")


def _identity(models: pl.DataFrame, ids: list[str]) -> dict[str, tuple]:
    """model id -> (family, version_date, effort), from the models table or parsed from the id."""
    known = {}
    if {"family", "version_date", "effort"} <= set(models.columns):
        known = {r["model_id"]: (r["family"], r["version_date"], r["effort"])
                 for r in models.select("model_id", "family", "version_date", "effort").iter_rows(named=True)}
    out = {}
    for mid in ids:
        if mid in known and known[mid][0]:
            out[mid] = known[mid]
        else:
            p = parse_model(mid)
            out[mid] = (p.family or mid, p.version_date, p.effort)
    return out


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


_ROWS_PER_BLOCK = 256  # aliases scored at once (a block of scores is rows x candidates floats)


def _top(scores: np.ndarray, k: int, cutoff: float) -> list[list[tuple[int, float]]]:
    """Per row of `scores` (shape (n_rows, n_choices)), the best `k` (choice, score) with a
    score of at least `cutoff`, best first, ties in choice order (what rapidfuzz's
    `process.extract` returns for one query)."""
    out = []
    for row in scores:
        hits = np.flatnonzero(row >= cutoff) if cutoff > 0 else np.arange(row.size)
        order = hits[np.lexsort((hits, -row[hits]))][:k]
        out.append([(int(j), float(row[j])) for j in order])
    return out


def _model_candidates(left: list[str], right: list[str], ident: dict[str, tuple],
                      min_score: float, limit: int) -> list[dict]:
    """Candidates by family (parsed) and by whole id, whichever is closer; contradicting
    efforts or snapshot dates are left out. The scores of a block of aliases against every
    candidate are computed at once (`process.cdist`), so thousands of ids take seconds."""
    rows = []
    families: dict[str, list[str]] = {}
    for mid in right:
        families.setdefault(ident[mid][0], []).append(mid)
    names = list(families)
    if not left or not right:
        return rows
    for start in range(0, len(left), _ROWS_PER_BLOCK):
        block = left[start:start + _ROWS_PER_BLOCK]
        # families by plain edit-distance ratio (WRatio's partial matching overrates short
        # families: "o3" in "o3mini-hi"); whole ids by WRatio
        by_family = _top(process.cdist([ident[a][0] for a in block], names, scorer=fuzz.ratio,
                                       score_cutoff=min_score, dtype=np.float64, workers=-1),
                         limit * 3, min_score)
        by_id = _top(process.cdist(block, right, scorer=fuzz.WRatio, score_cutoff=min_score,
                                   dtype=np.float64, workers=-1), limit * 5, min_score)
        for alias, fams, ids in zip(block, by_family, by_id):
            fam, date, effort = ident[alias]
            best: dict[str, float] = {}
            for j, similarity in fams:
                for cand in families[names[j]]:
                    best[cand] = max(best.get(cand, 0.0), similarity)
            for j, similarity in ids:
                best[right[j]] = max(best.get(right[j], 0.0), similarity)
            for cand, similarity in best.items():
                c_family, c_date, c_effort = ident[cand]
                if not (_compatible(effort, c_effort) and _compatible(date, c_date)):
                    continue  # a different effort or snapshot is a different row
                rows.append({"kind": "model", "alias": alias, "canonical_id": cand,
                             "similarity": round(float(similarity), 1),
                             "match": "identity" if c_family == fam else "fuzzy",
                             "alias_effort": effort, "canonical_effort": c_effort})
    return rows


def closest_models(names: list[str], models: pl.DataFrame, *,
                   min_score: float = 85.0) -> pl.DataFrame:
    """The closest bare model (`entry_kind` model) of each of `names` by the suggestion rules
    (parsed identity first, then edit distance; never a contradicting effort or snapshot):
    ``name, candidate, similarity, match`` (candidate null when none scores `min_score`)."""
    known = models.join(entry_ids(models), on="model_id", how="anti")["model_id"].to_list()
    ident = _identity(models, sorted(set(names) | set(known)))
    best: dict[str, dict] = {}
    def rank(row: dict) -> tuple:  # the same family, then the same effort, then closeness
        return (row["match"] == "identity", row["alias_effort"] == row["canonical_effort"],
                row["similarity"])

    for row in _model_candidates(names, known, ident, min_score, limit=3):
        held = best.get(row["alias"])
        if row["alias"] != row["canonical_id"] and (held is None or rank(row) > rank(held)):
            best[row["alias"]] = row
    return pl.DataFrame(
        [{"name": n, "candidate": best[n]["canonical_id"] if n in best else None,
          "similarity": best[n]["similarity"] if n in best else None,
          "match": best[n]["match"] if n in best else None} for n in names],
        schema={"name": pl.String, "candidate": pl.String, "similarity": pl.Float64,
                "match": pl.String})


def unresolved_benchmarks(quarantine: pl.DataFrame | None, source: str | None = None) -> list[str]:
    """Canonical ids of the benchmark names whose rows were quarantined for naming no known
    benchmark (optionally only `source`'s), sorted."""
    if quarantine is None or quarantine.height == 0:
        return []
    rows = quarantine.filter(pl.col("kind") == "score", pl.col("field") == "benchmark_id")
    if source is not None:
        rows = rows.filter(source_filter(source, rows["source_id"]))
    names = {canonical_benchmark_id(json.loads(r).get("benchmark_id")) for r in rows["record"]}
    return sorted(n for n in names if n)


def suggest_aliases(models: pl.DataFrame, cells: pl.DataFrame, scores: pl.DataFrame, *, kind: str = "model", source: str | None = None,
                    min_score: float = 80.0, limit: int = 3,
                    quarantine: pl.DataFrame | None = None) -> pl.DataFrame:
    """Candidate rows (alias, canonical_id, similarity, match, shared, mean_abs_diff, scores),
    best first, each model pair once (not also the other way round); `source` limits the aliases to ids that come from that source only. For
    benchmarks, the names in `quarantine` that resolved to nothing are listed too (see the
    module docstring)."""
    key = "model_id" if kind == "model" else "benchmark_id"
    per_source = scores.select(key, "source_id").unique()
    if kind == "model":  # an agent or submission is linked to its model, never aliased to one
        per_source = per_source.join(entry_ids(models), on=key, how="anti")
    unresolved = unresolved_benchmarks(quarantine, source) if kind == "benchmark" else []
    if source is not None:
        picked = source_filter(source, per_source["source_id"])
        mine = per_source.filter(picked)
        if mine.height == 0 and not unresolved:
            raise BadInputError(f"no scores come from source '{source}'; "
                                f"known: {sorted(set(per_source['source_id']))}")
        others = per_source.filter(~picked)
        # ids the source already shares with another source need no alias
        left = sorted(set(mine[key]) - set(others[key]))
        right = sorted(set(others[key]))
    else:
        left = right = sorted(set(per_source[key]))
    if kind == "model":
        ident = _identity(models, sorted(set(left) | set(right)))
        sources = dict(per_source.group_by(key).agg(pl.col("source_id")).iter_rows())
        rows = [r for r in _model_candidates(left, right, ident, min_score, limit)
                if r["alias"] != r["canonical_id"]
                and set(sources[r["canonical_id"]]) - set(sources[r["alias"]])]
    else:
        # a quarantined name may match any known benchmark, the source's own included
        every = sorted(set(per_source[key]))
        rows = []
        for alias, candidates in [(a, right) for a in left] + [(u, every) for u in unresolved]:
            found = process.extract(alias, [c for c in candidates if c != alias], scorer=fuzz.WRatio,
                                    limit=limit, score_cutoff=min_score)
            rows += [{"kind": kind, "alias": alias, "canonical_id": match,
                      "similarity": round(float(similarity), 1), "match": "fuzzy"}
                     for match, similarity, _ in found]
            if not found and alias in unresolved:  # listed even with no candidate
                rows.append({"kind": kind, "alias": alias, "canonical_id": None,
                             "similarity": None, "match": "none"})
    frame = pl.DataFrame(rows, schema=_SUGGESTION_SCHEMA)
    if kind != "model":
        return frame.select("kind", "alias", "canonical_id", "similarity", "match").sort(
            "similarity", "alias", descending=[True, False], nulls_last=True)
    if frame.height == 0:
        return frame
    a = cells.select(pl.col("model_id").alias("alias"), "benchmark_id", pl.col("score").alias("a"))
    b = cells.select(pl.col("model_id").alias("canonical_id"), "benchmark_id", pl.col("score").alias("b"))
    evidence = (frame.select("alias", "canonical_id").join(a, on="alias")
                .join(b, on=["canonical_id", "benchmark_id"])
                .sort("benchmark_id")
                .group_by("alias", "canonical_id")
                .agg(pl.len().alias("shared"),
                     (pl.col("a") - pl.col("b")).abs().mean().round(2).alias("mean_abs_diff"),
                     pl.format("{} {}/{}", "benchmark_id", pl.col("a").round(1), pl.col("b").round(1))
                     .head(4).str.join("; ").alias("scores")))
    best = (frame.join(evidence, on=["alias", "canonical_id"], how="left")
            .with_columns(pl.col("shared").fill_null(0).cast(pl.Int64))
            .sort(["alias", "similarity", "shared"], descending=[False, True, True])
            .group_by("alias", maintain_order=True).head(limit))
    ranked = best.sort(["similarity", "shared", "alias"], descending=[True, True, False])
    # a pair found both ways (a -> b and b -> a) is one suggestion: its first row is kept
    pair = pl.when(pl.col("alias") < pl.col("canonical_id")).then(
        pl.concat_str("alias", "canonical_id", separator="\x00")).otherwise(
        pl.concat_str("canonical_id", "alias", separator="\x00"))
    return (ranked.with_columns(pair.alias("_pair"))
            .unique(subset="_pair", keep="first", maintain_order=True).drop("_pair"))


def accept_alias(schemas_dir: Path, kind: str, alias: str, canonical_id: str, note: str = "") -> None:
    """Add an accepted suggestion to schemas/aliases.csv (takes effect on the next build).

    The file is rewritten atomically under the workspace's lock (`<home>/.benchpress.lock`);
    ids with invisible or non-ASCII characters are refused (`validate.text`).
    """
    if kind not in ("model", "benchmark"):
        raise BadInputError(f"alias kind must be 'model' or 'benchmark', not '{kind}'")
    for what, value in (("alias", alias), ("canonical id", canonical_id)):
        problem = identifier_problem(value, paths=False)
        if problem:
            raise BadInputError(f"{kind} {what} {value[:40]!r} {problem}")
    norm = canonical_model_id if kind == "model" else canonical_benchmark_id
    alias, canonical_id = norm(alias), norm(canonical_id)
    path = schemas_dir / "aliases.csv"
    with locked(schemas_dir.parent / ".benchpress.lock"):
        text = path.read_text(encoding="utf-8")
        existing = list(csv.DictReader(io.StringIO(text, newline="")))
        if any(r["kind"] == kind and r["alias"] == alias for r in existing):
            raise BadInputError(f"{path}: {kind} alias '{alias}' is already in the table")
        problem = alias_graph_problem(
            [(r["alias"], r["canonical_id"], k + 2) for k, r in enumerate(existing)
             if r["kind"] == kind] + [(alias, canonical_id, len(existing) + 2)], kind)
        if problem:
            raise BadInputError(f"{path}: refused: with this row, {problem}")
        line = io.StringIO()
        csv.DictWriter(line, fieldnames=ALIAS_COLUMNS, lineterminator="\n").writerow(
            {"kind": kind, "alias": alias, "canonical_id": canonical_id,
             "origin": "accepted suggestion", "note": note})
        new_text = (text if text.endswith("\n") or not text else text + "\n") + line.getvalue()
        write_atomic(path, lambda tmp: tmp.write_text(new_text, encoding="utf-8"))
