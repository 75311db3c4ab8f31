"""The data of every page, as JSON-ready dicts (served under /api/ and rendered by the
templates): one function per page, taking the app's `AppState` and the query parameters."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.api.prediction_notes import contradicted_note
from benchpress.errors import BadInputError
from benchpress.home import Home
from benchpress.validate.text import csv_safe_frame

from benchpress.app.jobs import Jobs
from benchpress.app.model import Engine
from benchpress.app.pretrained import NO_REGISTRY
from benchpress.app.registry import RegistryView
from benchpress.predict.probes.search import sample_cap
from benchpress.predict.models.covariates import parse_metadata
from benchpress.api.typed_scores import parse_scores

__all__ = ["AppState", "NotFound", "clean", "benchmarks", "models", "resolve", "predict",
           "model", "compare", "parse_new_models", "matrix", "cell", "versions", "diff",
           "drift", "sql", "probes", "DEFAULT_MATRIX_BENCHMARKS"]

DEFAULT_MATRIX_BENCHMARKS = 30  # the most-measured benchmarks shown when none are chosen
MAX_COMPARED = 5  # models side by side on the Compare page


class NotFound(BadInputError):
    """A model, benchmark or snapshot that is not there (HTTP 404)."""


@dataclass
class AppState:
    """Everything a request reads: the engine, the registry view and the background jobs."""

    home: Home
    engine: Engine
    registry: RegistryView
    jobs: Jobs
    snapshot: str | None
    sources: list[str] | None
    startup_seconds: float
    served: str | None = None  # what is served when it is not the registry (the pre-fit model)

    @property
    def label(self) -> str:
        return self.served or self.snapshot or "current registry"

    @property
    def no_registry(self) -> str | None:
        """What the pages that need a registry (SQL, Versions) say before anything is
        asked of them when the pre-fit model is served; None when a registry is."""
        return NO_REGISTRY if self.served else None


def clean(obj):
    """JSON-ready copy: non-finite floats -> None, numpy scalars -> Python."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def _timed(payload: dict, t0: float) -> dict:
    payload["ms"] = round((time.perf_counter() - t0) * 1000, 1)
    return payload


# -- reference lists ---------------------------------------------------------------------
def benchmarks(state: AppState) -> dict:
    """Benchmarks of the model's matrix (with names, aliases, cost, count) for autocompletion."""
    in_matrix = state.engine.col
    rows = [dict(b, n_models=int(state.engine.col_count[in_matrix[b["benchmark_id"]]]))
            for b in state.registry.benchmark_names() if b["benchmark_id"] in in_matrix]
    return {"benchmarks": rows}


def models(state: AppState) -> dict:
    m = state.engine.bp.matrix
    counts = state.engine.observed.sum(axis=1)
    meta = m.models.select("model_id", "name", "provider", "release_date").to_dicts()
    return {"models": [dict(r, n_observed=int(c)) for r, c in zip(meta, counts)]}


def resolve(state: AppState, names: str | None) -> dict:
    """Each name -> its benchmark id (None: unknown), and the unknown ones' suggestions."""
    given = [n.strip() for n in (names or "").split(",") if n.strip()]
    return {"resolved": state.engine.resolve(given), "suggestions": state.engine.suggest(given)}


# -- predict -----------------------------------------------------------------------------
def predict(state: AppState, scores: str | None, metadata: str | None = None) -> dict:
    t0 = time.perf_counter()
    meta = parse_metadata(metadata) if metadata else None
    return _timed(state.engine.predict(parse_scores(scores, label="scores"),
                                       metadata=meta or None), t0)


# -- one model -----------------------------------------------------------------------------
def model(state: AppState, model_id: str) -> dict:
    """One model's page: its citations, its predicted row (`predict --model`) and history;
    the name is resolved as the CLI resolves it (exact id, canonical form, alias table)."""
    eng, reg = state.engine, state.registry
    try:
        model_id = eng.bp.resolve_models([model_id]).ids[0]
    except BadInputError as exc:
        raise NotFound(f"{exc} (not in the {state.label})") from None
    meta = reg.model_meta(model_id)
    if meta is None:
        raise NotFound(f"model '{model_id}' is not in the {state.label}")
    obs_all = reg.observations(model_id)
    observed = []
    for c in reg.model_cells(model_id).to_dicts():
        others = obs_all.filter((pl.col("benchmark_id") == c["benchmark_id"])
                                & ((pl.col("score") - c["score"]).abs() > 1e-9)).to_dicts()
        observed.append({**c, "conflicting": others,
                         "in_matrix": c["benchmark_id"] in eng.col})
    # the row `predict --model` gives: a fold-in of the model's own scores
    frame = eng.bp.predict_model(model_id).frame.filter(pl.col("kind") == "predicted")
    predicted = frame.select("benchmark_id", "name", "predicted", "lower", "upper",
                             "trust").to_dicts()
    predicted.sort(key=lambda r: -eng.col_count[eng.col[r["benchmark_id"]]])
    return clean({"model": meta, "observed": observed, "predicted": predicted,
                  "provenance": eng.bp.provenance(),
                  "sources": sorted(set(obs_all["source_id"].to_list())),
                  "history": reg.history(model_id)})


# -- compare -------------------------------------------------------------------------------
def parse_new_models(texts: list[str]) -> dict[str, dict[str, float]]:
    """``["acme=gpqa_diamond:71.2,hle:20.1", ...]`` -> {"acme": {...}} (typed-in models);
    a name given twice is refused."""
    out = {}
    for text in texts:
        if not text.strip():
            continue
        name, sep, scores = text.partition("=")
        if not sep or not name.strip():
            raise BadInputError(f"a typed-in model is NAME=BENCHMARK:SCORE,...; got '{text}'")
        if name.strip() in out:
            raise BadInputError(f"the typed-in model '{name.strip()}' is given twice")
        out[name.strip()] = parse_scores(scores, label=f"scores of '{name.strip()}'")
    return out


def compare(state: AppState, models_text: str | None, new: list[str] | None = None) -> dict:
    """`BenchPress.compare` of registered models and typed-in ones (two to five), the
    benchmarks most of them have observed first."""
    t0 = time.perf_counter()
    ids = [x.strip() for x in (models_text or "").split(",") if x.strip()]
    typed = parse_new_models(new or [])
    names = ids + [n for n in typed if n not in ids]
    if not 2 <= len(names) <= MAX_COMPARED:
        raise BadInputError(f"compare takes two to {MAX_COMPARED} models, got {len(names)}")
    result = state.engine.bp.compare(ids, new_models=typed)
    frame = result.frame
    shown = [c[: -len("_src")] for c in frame.columns if c.endswith("_src")]
    n_obs = frame.select(pl.sum_horizontal((pl.col(f"{n}_src") == "observed").cast(pl.Int64)
                                           for n in shown)).to_series()
    frame = frame.with_columns(n_obs.alias("n_observed")).sort(
        "n_observed", descending=True, maintain_order=True)
    m = state.engine.bp.matrix
    name_of = dict(zip(m.benchmark_ids, m.benchmarks["name"].to_list()))
    rows = [dict(r, name=name_of.get(r["benchmark_id"])) for r in frame.to_dicts()]
    notes = [contradicted_note(found, name) for name, found in result.contradicted.items()]
    return _timed(clean({"models": shown, "rows": rows,
                         "uncertainty": result.uncertainty_source,
                         "p_ahead_note": result.p_ahead_note,
                         "provenance": result.provenance,
                         "contradicted": result.contradicted,
                         "contradicted_notes": notes}), t0)


# -- matrix --------------------------------------------------------------------------------
def matrix(state: AppState, *, provider: str | None = None, benchmarks: str | None = None,
           after: str | None = None, before: str | None = None, search: str | None = None,
           sort: str | None = None, desc: bool = True, limit: int = 60,
           show: str = "all") -> dict:
    """Observed and predicted scores of the chosen models x benchmarks, for a heatmap."""
    t0 = time.perf_counter()
    eng = state.engine
    m = eng.bp.matrix
    meta = m.models
    keep = np.ones(len(m.model_ids), dtype=bool)
    if provider:
        keep &= (meta["provider"].fill_null("").str.to_lowercase() == provider.lower()).to_numpy()
    dates = meta["release_date"].fill_null("").to_numpy().astype(str)
    if after:
        keep &= (dates >= after) & (dates != "")
    if before:
        keep &= (dates <= before) & (dates != "")
    if search:
        keep &= np.array([search.lower() in x for x in m.model_ids])
    if benchmarks:
        cols = np.array([eng.col[b] for b in eng.bp.benchmark_ids(
            [b.strip() for b in benchmarks.split(",") if b.strip()])])
    else:
        cols = np.argsort(-eng.col_count, kind="stable")[:DEFAULT_MATRIX_BENCHMARKS]
    rows = np.flatnonzero(keep)
    lo = m.scales.lower[cols]
    hi = m.scales.upper[cols]
    vals = eng.completed[np.ix_(rows, cols)]
    span_lo = np.where(np.isfinite(lo), lo, np.nanmin(eng.completed[:, cols], axis=0))
    span_hi = np.where(np.isfinite(hi), hi, np.nanmax(eng.completed[:, cols], axis=0))
    norm = (vals - span_lo) / np.where(span_hi > span_lo, span_hi - span_lo, 1.0)
    norm = np.where(eng.hib[cols], norm, 1.0 - norm)
    obs = eng.observed[np.ix_(rows, cols)]
    key = sort or "observed"
    if key == "observed":
        score = obs.sum(axis=1).astype(float)
    elif key == "mean":
        score = np.nanmean(norm, axis=1)
    elif key == "release_date":
        score = dates[rows]
    elif key == "name":
        score = np.array(m.model_ids)[rows]
    elif key in eng.col and eng.col[key] in cols:
        score = vals[:, list(cols).index(eng.col[key])]
    else:
        raise BadInputError(f"sort by observed, mean, release_date, name or a shown "
                            f"benchmark id, not '{key}'")
    order = np.argsort(score, kind="stable")
    if desc:
        order = order[::-1]
    order = order[:max(1, min(int(limit), 2000))]
    rows, vals, norm, obs = rows[order], vals[order], norm[order], obs[order]
    if show == "observed":
        vals, norm = np.where(obs, vals, np.nan), np.where(obs, norm, np.nan)
    lower = eng.cells["lower"][np.ix_(rows, cols)]
    upper = eng.cells["upper"][np.ix_(rows, cols)]
    providers = sorted({p for p in meta["provider"].to_list() if p})
    return _timed(clean({
        "models": [m.model_ids[i] for i in rows],
        "providers_of_rows": [meta["provider"][int(i)] for i in rows],
        "release_dates": [dates[i] or None for i in rows],
        "benchmarks": [m.benchmark_ids[j] for j in cols],
        "value": vals.tolist(), "norm": norm.tolist(), "observed": obs.tolist(),
        "lower": np.where(obs, np.nan, lower).tolist(),
        "upper": np.where(obs, np.nan, upper).tolist(),
        "n_matching": int(keep.sum()), "providers": providers}), t0)


def cell(state: AppState, model_id: str | None, benchmark_id: str | None) -> dict:
    """One cell: its resolved value, every observation (citations) and conflicts."""
    eng = state.engine
    if model_id not in eng.row:
        raise NotFound(f"model '{model_id}' is not in the {state.label}")
    bid = eng.bp.benchmark_ids([benchmark_id or ""])[0]
    i, j = eng.row[model_id], eng.col[bid]
    obs = state.registry.observations(model_id, bid).to_dicts()
    resolved = state.registry.cells.filter((pl.col("model_id") == model_id)
                                           & (pl.col("benchmark_id") == bid)).to_dicts()
    winner = resolved[0] if resolved else None
    for o in obs:
        o["resolved"] = bool(winner and o["source_id"] == winner["source_id"]
                             and abs(o["score"] - winner["score"]) < 1e-9)
    return clean({"model_id": model_id, "benchmark_id": bid, "observed": bool(eng.observed[i, j]),
                  "value": eng.completed[i, j], "resolved": winner, "observations": obs,
                  "conflicting": [o for o in obs if winner and abs(o["score"] - winner["score"]) > 1e-9],
                  **{k: eng.cells[k][i, j] for k in ("predicted", "lower", "upper", "trust")}})


# -- versions ------------------------------------------------------------------------------
def _pipeline_file(home: Home, rel: str) -> dict | None:
    path = Path(home.root) / rel
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None


def versions(state: AppState) -> dict:
    return {"served": state.label, "snapshots": state.registry.snapshots(),
            "pipeline_drift": _pipeline_file(state.home, "drift/report.json")}


def diff(state: AppState, a: str | None, b: str | None) -> dict:
    if not a or not b:
        raise BadInputError("choose two versions: from= and to= (snapshot id, tag, latest or current)")
    t0 = time.perf_counter()
    return _timed(clean(state.registry.diff(a, b)), t0)


def drift(state: AppState, a: str | None, b: str | None) -> dict:
    """Drift between two versions, computed in the background (state of the job)."""
    from benchpress.api import BenchPress

    if not a or not b:
        raise BadInputError("choose two versions: from= and to=")
    return clean(state.jobs.get(("drift", a, b), lambda: BenchPress.drift(
        state.home, a, b, sources=state.sources).to_json()))


# -- SQL and probes ------------------------------------------------------------------------
def sql(state: AppState, q: str | None) -> dict:
    t0 = time.perf_counter()
    result = state.registry.sql(q or "")
    frame = result.frame
    return _timed(clean({"columns": frame.columns, "rows": [list(r) for r in frame.rows()],
                         "n_rows": frame.height, "truncated": result.truncated}), t0)


def sql_csv(state: AppState, q: str | None) -> tuple[str, bool]:
    """The query's rows as CSV, and whether they were capped (see `RegistryView.sql`):
    nested and binary values as JSON text, and cells a spreadsheet would run as a formula
    defused (`csv_safe_frame`, as the CLI does)."""
    result = state.registry.sql(q or "")
    frame = result.frame
    odd = [c for c, t in frame.schema.items() if t.is_nested() or t == pl.Binary]
    if odd:
        frame = frame.with_columns(pl.Series(c, [
            None if v is None else json.dumps(clean(v), default=str)
            for v in frame[c].to_list()], dtype=pl.String) for c in odd)
    return csv_safe_frame(frame).write_csv(), result.truncated


def probes(state: AppState, k: int | None = None, max_models: int | None = None) -> dict:
    """The current probe set and its error curve by k: the pipeline's `probes/probes.json`
    when there is one and neither k nor `max_models` is asked for, else a probe search run
    in the background (`max_models`: on a seeded sample of that many models, as
    `benchpress probes --max-models`, 0 every model; None: the engine's own setting)."""
    eng = state.engine
    costs = [{"benchmark_id": b, "cost": eng.costs[j]} for j, b in enumerate(eng.bp.matrix.benchmark_ids)
             if np.isfinite(eng.costs[j])]
    asked = k is not None or max_models is not None
    stored = None if asked else _pipeline_file(state.home, "probes/probes.json")
    if stored and stored.get("selection"):
        return clean({"status": "done", "origin": "pipeline (probes/probes.json)",
                      "result": stored["selection"], "costs": costs})
    k = int(k or 5)
    if not 1 <= k <= 10:
        raise BadInputError(f"k is {k}: choose 1 to 10 probes")
    sample = "default" if max_models is None else sample_cap(max_models)
    job = state.jobs.get(("probes", k, max_models),
                         lambda: eng.bp.probes(k, max_models=sample).to_json())
    on = f"k={k}" + ("" if max_models is None else f", a sample of {max_models} models")
    return clean({**job, "origin": f"probe search on the {state.label} ({on})", "costs": costs})
