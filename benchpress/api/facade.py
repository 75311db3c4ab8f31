"""The Python API: `from benchpress import BenchPress`.

`BenchPress` is a thin facade over three parts, each given to its constructor:

- a registry view: the `ScoreMatrix` (n_models, n_benchmarks) of a registry, snapshot or
  artifact, with its `NameResolver` (`benchpress.validate.names`: names and aliases -> ids,
  errors with suggestions, before any fit);
- one unfitted estimator (`make_predictor(method, **params)`); every fit is a clone;
- a `FitStore` (`benchpress.api.fit_store`): the fit of this matrix, method and params, one per
  key, shared with every other door that asks for it (the CLI's store under the home, the
  app's, a replay's). The fit is a `FittedModel` (`benchpress.api.fitted_model`), the single home of
  `predict_rows`, `complete`, `compare` and `nearest`.

Analyses (held-out evaluation, probes, backtests, rankings) are `Analyses` calls over
(estimator, matrix) (`benchpress.api.analyses`).

>>> from benchpress.predict import make_predictor
>>> bp = BenchPress.from_snapshot(home="path/to/project",
...                               predictor=make_predictor("default", n_starts=60))  # doctest: +SKIP
>>> bp.predict({"gpqa_diamond": 70.1, "hle": 21.0}).frame           # doctest: +SKIP
>>> bp.complete()                                                   # doctest: +SKIP

One answer per question: a model's predicted row is the fold-in of its known scores
(observed in the registry, or given) against the one fit of the registry, with the
"new_models" calibrated intervals. `predict --model X`, `predict --scores <X's scores>`
and `compare` (registered models and new ones typed in) all give that same number, and
so do the app's Predict, Model and Compare pages, which call the same methods
(`tests/test_one_engine.py`); a known score is shown as given, never re-predicted. Every
answer carries its `provenance` (sources, snapshot, method, params).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.api.analyses import Analyses
from benchpress.errors import BadInputError, TooLittleData, UsageError, listed
from benchpress.api.fit_store import FitStore
from benchpress.api.fitted_model import Comparison, FitIdentity, FittedModel
from benchpress.api.fold_files import read_folds
from benchpress.api.prediction_notes import contradicted_note, left_out_note
from benchpress.home import Home, find_home
from benchpress.predict import (
    BasePredictor, BenchmarkScales, EvaluationResult, Folds, RankDiagnostics, check_predictor,
    folds_to_json, make_folds, make_predictor, param_overrides, parse_folds, rank_diagnostics,
)
from benchpress.predict.size_limits import LIMITS
from benchpress.validate.names import NameResolver, Resolved
from benchpress.store.matrix import ScoreMatrix, as_published, load_matrix
from benchpress.store.snapshot import resolve_snapshot
from benchpress.store.sources import source_names

__all__ = ["BenchPress", "Prediction", "Predictions", "Comparison"]

#: `predict_many` folds new models in this many at a time (the fold-in's working arrays
#: grow with rows x benchmarks x starts)
PREDICT_BLOCK_ROWS = 256


@dataclass(frozen=True)
class Prediction:
    """A new model's predicted row.

    `frame` has one row per benchmark: benchmark_id, name, scale, given (the score you
    passed, else null), predicted (the given score where there is one, else the prediction
    in score units, clipped to the benchmark's range), kind ("given" or "predicted"), and
    for predicted cells the calibrated 90% interval lower/upper (within the benchmark's
    range) with trust, the probability that the prediction is within 10 points (a point is
    1% of the range); see `benchpress.predict.intervals.calibration`.
    """

    frame: pl.DataFrame
    unknown: list[str] = field(default_factory=list)    # given ids ignored (ignore_unknown)
    resolved: dict[str, str] = field(default_factory=dict)  # given id -> canonical id
    # True when `metadata` reached the fold-in as covariates (`--method side`, inside the
    # training range); False: folded in from the scores alone, as the default does
    with_covariates: bool = False
    # which sources, snapshot, method and params made it (`BenchPress.provenance`)
    provenance: dict = field(default_factory=dict)
    # the given score its other given scores contradict (`BenchPress.predict`), or None:
    # {"benchmark_id", "given", "expected" (from the others, score units), "z"}
    contradicted: dict | None = None
    # why the predictions carry no interval (a registry too small to calibrate on), or None
    interval_note: str | None = None

    @property
    def contradicted_note(self) -> str | None:
        """One line on `contradicted` (None when nothing is)."""
        return contradicted_note(self.contradicted)


@dataclass(frozen=True)
class Predictions:
    """Several new models' predicted rows, from one fit (`BenchPress.predict_many`).

    `frame` has one row per model and benchmark: `id`, then the columns of
    `Prediction.frame`, models in the order given. `models` holds, per model in that
    order, what `Prediction` holds beside its frame: `id`, `unknown`, `resolved`,
    `with_covariates`, `contradicted` and the `metadata` given (None: none).
    """

    frame: pl.DataFrame
    models: list = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    def prediction(self, ident: str) -> Prediction:
        """One model's answer as `BenchPress.predict` returns it."""
        found = [m for m in self.models if m["id"] == ident]
        if not found:
            raise BadInputError(f"no model {ident!r} among the predicted "
                                f"({listed([m['id'] for m in self.models])})")
        m = found[0]
        return Prediction(self.frame.filter(pl.col("id") == ident).drop("id"), m["unknown"],
                          m["resolved"], with_covariates=m["with_covariates"],
                          provenance=self.provenance, contradicted=m["contradicted"])


def _home(home) -> Home:
    return home if isinstance(home, Home) else (Home(Path(home).resolve()) if home else find_home())


class BenchPress:
    """One registry state, one predictor and a store of its fits: the front door of the
    CLI, the app, the report and the Python API.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores (n_models, n_benchmarks) with ids, benchmark metadata and scales.
    predictor : BasePredictor, optional
        Unfitted predictor object (`make_predictor(method, **params)`; default
        `make_predictor("default")`), kept as `estimator`. It is never fitted itself: the
        fit (`fitted`) holds a fitted clone, and every held-out fit is another clone.
    contracts_dir : Path, optional
        The `schemas/` folder, for resolving benchmark names and aliases.
    folder : Path, optional
        The registry or snapshot folder the matrix came from (None: an artifact).
    sources : str or list of str, optional
        The sources the matrix was restricted to, as named: "benchpress,epoch" or
        ["benchpress", "epoch"] (None: all).
    store : FitStore, optional
        Where the fit is taken from and kept (default: a store of this object's own, in
        memory).
    fitted : FittedModel, optional
        A fit to use instead of fitting (`from_pretrained`, a stored fit).
    artifact : dict, optional
        The manifest of the artifact the fit was loaded from (with its ``path``).
    ignore_unknown : bool
        Leave unknown names out (told to `on_unknown(kind, names)`, default
        `warnings.warn`) instead of raising BadInputError; each call may override it.
    probe_max_models : int or None
        Most models the probe search leaves out and scores (see `Analyses`).
    """

    def __init__(self, matrix: ScoreMatrix, predictor: BasePredictor | None = None, *,
                 contracts_dir: Path | None = None, folder: Path | None = None,
                 sources: list[str] | str | None = None, store: FitStore | None = None,
                 fitted: FittedModel | None = None, artifact: dict | None = None,
                 ignore_unknown: bool = False, on_unknown=None,
                 probe_max_models=LIMITS.probe_max_models):
        self.matrix = matrix
        self.folder = folder
        self.estimator = (check_predictor(predictor) if predictor is not None
                          else make_predictor("default"))  # unfitted; every fit is a clone
        self.contracts_dir = contracts_dir
        self.sources = source_names(sources)
        self.store = store if store is not None else FitStore()
        self.artifact = artifact
        self.names = NameResolver(matrix.benchmark_ids, matrix.model_ids, contracts_dir,
                                  ignore_unknown=ignore_unknown, on_unknown=on_unknown)
        self.analyses = Analyses(self.estimator, matrix, names=self.names,
                                 covariates=self._covariates, probe_max_models=probe_max_models)
        self._fitted = fitted  # the FittedModel, once fitted or taken from the store

    @classmethod
    def from_snapshot(cls, home: str | Path | Home | None = None, snapshot: str | None = None, *,
                      sources: list[str] | str | None = None,
                      predictor: BasePredictor | None = None, **options) -> "BenchPress":
        """Load the live registry (`snapshot=None`) or a snapshot (id, tag or 'latest');
        `options`: the constructor's keywords (`store`, `ignore_unknown`, ...)."""
        home, sources = _home(home), source_names(sources)
        folder = resolve_snapshot(home, snapshot)
        matrix = load_matrix(folder, sources=sources, label=snapshot or "current")
        return cls(matrix, predictor, contracts_dir=home.schemas, folder=folder,
                   sources=sources, **options)

    @classmethod
    def from_stored_fit(cls, home, snapshot: str | None = None, *, store: FitStore,
                        sources: list[str] | str | None = None,
                        predictor: BasePredictor | None = None,
                        **options) -> "BenchPress | None":
        """The stored fit of the registry or snapshot (its files unchanged since the store
        indexed it, see `FitStore.lookup`), without reading the registry's matrix: a
        `BenchPress` that predicts new models (`predict`), or None when the store has no
        such fit (then use `from_snapshot`). A fit of a large registry loads lite (its
        matrix has no rows) unless its predictor's fold-in reads the registered rows (the
        default's nearest models: `state.rows_apart`)."""
        home, sources = _home(home), source_names(sources)
        folder = resolve_snapshot(home, snapshot)
        predictor = check_predictor(predictor) if predictor is not None else make_predictor("default")
        fit = store.lookup(folder, sources, predictor)
        if fit is None:
            return None
        return cls(fit.matrix, predictor, contracts_dir=home.schemas, folder=Path(folder),
                   sources=sources, store=store, fitted=fit, **options)

    @classmethod
    def from_pretrained(cls, path_or_name: str | Path | None = None, **options) -> "BenchPress":
        """Load a fitted predictor from an artifact folder (see `benchpress.api.artifact`), or
        by name one shipped inside the package (`benchpress/pretrained/<name>/`); with no
        argument, the shipped "default". Nothing is refitted: predictions and intervals
        equal those of the fit that was saved. A damaged or incompatible artifact raises
        BadInputError (one line). `options`: the constructor's name handling
        (`ignore_unknown`, `on_unknown`)."""
        from benchpress.api.artifact import load_artifact, pretrained_path
        from benchpress.api.fit_store import from_artifact
        from benchpress.predict.state import make_estimator

        art = load_artifact(pretrained_path(path_or_name))
        doc = art["manifest"]
        return cls(art["matrix"], make_estimator(doc["method"], doc["params"]),
                   contracts_dir=art["contracts_dir"], sources=doc.get("sources"),
                   fitted=from_artifact(art), artifact={**doc, "path": str(art["path"])},
                   **options)

    # -- the fit -------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """The predictor's method name."""
        return self.estimator.method

    @property
    def params(self) -> dict:
        """The predictor's parameters that differ from its method's defaults."""
        return param_overrides(self.estimator)

    @property
    def scales(self) -> BenchmarkScales:
        return self.matrix.scales

    def fit(self, regimes=(), *, progress=None) -> "BenchPress":
        """Fit now (or take the fit of this matrix, method and params from the store), with
        interval calibrators for `regimes` ("cells": missing cells of known models, used
        by `complete`; "new_models": new models folded in from a few scores, used by
        `predict` and `compare`) where the matrix allows them. `progress(k, n, label)`
        before each step. Returns self."""
        if self._fitted is None or not set(regimes) <= set(self._fitted.calibrators):
            self._fitted = self.store.fitted(
                self.estimator, self.matrix, identity=self.identity, covariates=self._covariates,
                regimes=regimes, progress=progress, sources=self.sources,
                contracts_dir=self.contracts_dir, folder=self.folder)
        return self

    @property
    def fitted(self) -> FittedModel:
        """The `FittedModel` of this matrix, method and params (fitted on first use)."""
        return self.fit()._fitted

    def fitted_with(self, regime: str) -> FittedModel:
        """The fit with the calibrator of `regime`; BadInputError (its own reason) when
        the matrix holds too little held-out data to calibrate on."""
        fit = self.fit([regime])._fitted
        if regime not in fit.calibrators:  # the store left it out: say why
            fit = fit.calibrated([regime], covariates=self._covariates)
        return fit

    @property
    def predictor(self) -> BasePredictor:
        """The predictor fitted on the whole matrix (a clone, fitted on first use)."""
        return self.fitted.predictor

    @property
    def support(self):
        """The interval support of the fit (`conformal.MatrixSupport`, read-only use): its
        `transform` maps scores to the z units distances are measured in."""
        return self.fitted.support

    def calibrator(self, regime: str = "cells"):
        """The interval calibrator of this method on this matrix for `regime` ("cells" or
        "new_models"), fitted on first use on held-out data of the matrix (see
        `FittedModel.calibrated`)."""
        return self.fitted_with(regime).calibrators[regime]

    @property
    def covariates(self) -> np.ndarray | None:
        """The models' covariates (n_models, n_features) every fit of a predictor that
        takes them receives (`--method side`), else None."""
        return self._covariates

    @cached_property
    def _covariates(self) -> np.ndarray | None:
        """The models' covariates (n_models, n_features), made once (the matrix and the
        estimator never change): None unless the predictor takes them and the model rows
        carry metadata."""
        if not getattr(self.estimator, "accepts_covariates", False):
            return None
        from benchpress.predict.models.side_info import model_covariates

        return model_covariates(self.matrix.models)

    def _covariate_rows(self, model_ids) -> list | None:
        """Per name, the registered model's covariate row (n_features,) or None (a new
        model); None when the predictor takes no covariates."""
        X = self._covariates
        if X is None:
            return None
        pos = {m: k for k, m in enumerate(self.matrix.model_ids)}
        return [X[pos[n]] if n in pos else None for n in model_ids]

    # -- what made it --------------------------------------------------------------------
    @cached_property
    def source_ids(self) -> list[str] | None:
        """The sources the matrix was made from: the registry's or snapshot's source ids
        that `sources` picks (all of them when none were named); for a fit loaded from an
        artifact, the sources it was fitted on, as named then (None: all, or not known)."""
        if self.folder is None:
            return list(self.sources) if self.sources else None
        from benchpress.store.matrix import match_sources
        from benchpress.store.tables import read_table

        # the sources table has a row per version of a source: each source once
        known = read_table(self.folder, "sources")["source_id"].unique(maintain_order=True)
        return list(dict.fromkeys(match_sources(known.to_list(), self.sources))) \
            if self.sources else known.to_list()

    def _snapshot_id(self) -> str | None:
        import json

        manifest = self.folder / "manifest.json" if self.folder is not None else None
        if manifest is not None and manifest.is_file():
            return json.loads(manifest.read_text(encoding="utf-8")).get("id")
        return None if self.artifact is None else (self.artifact.get("snapshot") or {}).get("id")

    @cached_property
    def identity(self) -> FitIdentity:
        """The identity of this object's fit: sources (`source_ids`), snapshot, method,
        params."""
        return FitIdentity.of(self.estimator, sources=self.source_ids,
                              snapshot=self._snapshot_id(), label=self.matrix.label)

    def provenance(self) -> dict:
        """What made this object's predictions, for every answer's JSON: ``sources`` (see
        `source_ids`), ``snapshot`` (its id, "current" for the live registry, or
        "pretrained" for a fit loaded by `from_pretrained`, then with ``fitted_on``, the
        id of the snapshot that fit was made on), ``method`` and ``params`` (those that
        differ from the method's defaults)."""
        doc = self.identity.to_dict()
        if self.folder is None and self.artifact is not None:  # from_pretrained
            snap = self.identity.snapshot or (self.artifact.get("snapshot") or {}).get("label")
            doc = {**doc, "snapshot": "pretrained", "fitted_on": snap}
            doc = {k: doc[k] for k in ("sources", "snapshot", "fitted_on", "method", "params")}
        return doc

    def pretrained_difference(self) -> str | None:
        """One line when this object predicts from other sources than
        `BenchPress.from_pretrained()` (the shipped fit) does, else None: for a registry
        loaded without `sources` (the CLI's default, every source of the registry), whose
        sources are not the ones the shipped fit names (see
        `benchpress.api.prediction_notes.pretrained_difference`)."""
        from benchpress.api.prediction_notes import pretrained_difference

        if self.sources or self.folder is None:
            return None
        return pretrained_difference(self.source_ids or [])

    def save_pretrained(self, path: str | Path, *, probes: list[str] | None = None,
                        regimes=("cells", "new_models"), progress=None) -> Path:
        """Fit (what is not fitted yet) and write this predictor as an artifact folder:
        the fit, its interval calibrators for `regimes`, the matrix and its metadata,
        `probes` (benchmark ids) and the contracts used for names. `progress(k, n, label)`
        is called before each step. Returns the folder."""
        from benchpress.api.fit_store import save_fitted
        from benchpress.predict.state import storable

        if not storable(self.estimator):  # say so before any fit
            raise UsageError(f"only the ALS methods and side (without extra_ranks) can be "
                             f"saved as an artifact, not {self.method!r}")
        probes = self.benchmark_ids(probes) if probes else None  # names first, before any fit
        fit = self.fit(regimes, progress=progress).fitted
        return save_fitted(path, fit, snapshot={"id": self._snapshot_id(),
                                                "label": self.matrix.label},
                           sources=self.sources or self.source_ids, probes=probes,
                           contracts_dir=self.contracts_dir)

    def __repr__(self) -> str:
        m = self.matrix
        n_scores = int((~np.isnan(m.values)).sum())
        snap = self._snapshot_id() or m.label or "unnamed"
        fit = ("pretrained " + str(self.artifact.get("path") or "")).strip() if self.artifact \
            else ("fitted" if self._fitted is not None else "not fitted yet")
        return (f"BenchPress(snapshot={snap!r}, sources={','.join(self.source_ids or []) or 'all'}, "
                f"{len(m.model_ids)} models x {len(m.benchmark_ids)} benchmarks, "
                f"{n_scores} scores, method={self.method!r}"
                + (f", params={self.params}" if self.params else "") + f", {fit})")

    # -- names ---------------------------------------------------------------------------
    def resolve_benchmarks(self, names, *, ignore_unknown: bool | None = None) -> Resolved:
        """Benchmark names -> canonical ids (see `NameResolver.resolve_benchmarks`)."""
        return self.names.resolve_benchmarks(names, ignore_unknown=ignore_unknown)

    def resolve_models(self, names, *, ignore_unknown: bool | None = None, extra=()) -> Resolved:
        """Model names -> registered model ids (see `NameResolver.resolve_models`)."""
        return self.names.resolve_models(names, ignore_unknown=ignore_unknown, extra=extra)

    def benchmark_ids(self, given, *, ignore_unknown: bool | None = None) -> list[str]:
        """Canonical ids of benchmark names/aliases (see `resolve_benchmarks`)."""
        return self.names.resolve_benchmarks(list(given), ignore_unknown=ignore_unknown).ids

    # -- answers -------------------------------------------------------------------------
    def _resolve(self, scores: dict[str, float], *, ignore_unknown: bool | None = None
                 ) -> tuple[np.ndarray, list[str], dict[str, str]]:
        """A row (n_benchmarks,) of given scores (NaN elsewhere), the ignored unknown
        names and given name -> canonical id; checks each value against its range."""
        col = {b: k for k, b in enumerate(self.matrix.benchmark_ids)}
        found = self.names.resolve_benchmarks(list(scores), ignore_unknown=ignore_unknown)
        twice = [b for b in found.ids if list(found.mapping.values()).count(b) > 1]
        if twice:
            names = [g for g, b in found.mapping.items() if b == twice[0]]
            raise BadInputError(f"scores name benchmark '{twice[0]}' twice ("
                                + " and ".join(f"'{n}'" for n in names) + "); give each once")
        row = np.full(len(col), np.nan)
        meta = self.matrix.benchmarks
        for given, value in scores.items():
            bid = found.mapping.get(given.strip())
            if bid is None:
                continue
            lo, hi = meta["lower"][col[bid]], meta["upper"][col[bid]]
            if not np.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
                raise BadInputError(f"score for '{given}' is {value:g}, outside {bid}'s "
                                    f"{meta['scale'][col[bid]]} range [{lo}, {hi}]")
            row[col[bid]] = value
        return row, found.unknown, found.mapping

    def predict(self, scores: dict[str, float], *, ignore_unknown: bool | None = None,
                metadata: dict | None = None) -> Prediction:
        """Predict every benchmark for a new model from its known scores (fold-in, no refit).

        Given scores are kept as given (kind "given", no interval); the frame's `pm` is the
        interval's half-width (upper - lower) / 2. A benchmark name that matches nothing
        raises BadInputError with suggestions, unless `ignore_unknown` (default: the
        object's `ignore_unknown`; then it is left out and listed in `unknown`).

        `metadata` (`--method side` only; others ignore it): what is known about the new
        model, e.g. `{"provider": "OpenAI", "release_date": "2026-04-01", "is_reasoning":
        True}` (also `open_weights`, `effort`, and `model_id`, from which the size word,
        a parameter count and the family are read); without it the model is folded in
        without covariates.

        With 3 or more given scores, each is also predicted from the others; the one
        they contradict most, if by more than 3 standard deviations, is named in
        `contradicted` (and `contradicted_note`): a typo is the usual cause. It is used
        as given all the same."""
        row, unknown, resolved = self._resolve(scores, ignore_unknown=ignore_unknown)
        if np.isnan(row).all():
            raise BadInputError("none of the given benchmarks is in the matrix: "
                                + self.names.unknown_benchmarks_note(unknown))
        cov = self.new_model_covariates(metadata)
        return Prediction(self._predicted_row(row, cov), unknown, resolved,
                          with_covariates=self.uses_covariates(cov),
                          provenance=self.provenance(),
                          contradicted=self.fitted.contradicted(row, cov),
                          interval_note=self.interval_note())

    def interval_note(self) -> str | None:
        """Why new models' predictions carry no interval here (one line), or None: a
        matrix too small to calibrate on (one or two models) still predicts, by the fit's
        point predictions alone."""
        try:
            self.fitted_with("new_models")
        except TooLittleData as exc:
            return (f"no 90% intervals: {exc} (the {self.method} method's point predictions "
                    "are shown)")
        return None

    def _new_model_rows(self, S: np.ndarray, covariates=None) -> dict:
        """`FittedModel.predict_rows` with "new_models" intervals, or without any where
        the matrix is too small to calibrate on (`interval_note`)."""
        if self.interval_note() is not None:
            return self.fitted.predict_rows(S, covariates, intervals=False)
        return self.fitted_with("new_models").predict_rows(S, covariates)

    def predict_many(self, models, *, ignore_unknown: bool | None = None) -> Predictions:
        """Several new models at once, from one fit: each as `predict(scores,
        metadata=metadata)` answers it alone (the same numbers), folded in together.

        `models`: `benchpress.api.models_file.NewModel` objects or dicts `{"id", "scores",
        "metadata"}` (metadata optional); a file of them is `predict_file`. A model's
        bad name or score is one BadInputError naming the model."""
        from benchpress.api.models_file import new_models

        given = new_models(models)
        rows, answers, covs = [], [], []
        for n, model in enumerate(given, start=1):
            try:
                row, unknown, resolved = self._resolve(model.scores, ignore_unknown=ignore_unknown)
                if np.isnan(row).all():
                    raise BadInputError("none of the given benchmarks is in the matrix: "
                                        + listed(unknown, quote=False))
                cov = self.new_model_covariates(model.metadata)
            except BadInputError as exc:
                raise BadInputError(f"model {model.id!r} (row {n}): {exc}") from None
            rows.append(row)
            covs.append(cov)
            answers.append({"id": model.id, "unknown": unknown, "resolved": resolved,
                            "with_covariates": self.uses_covariates(cov),
                            "contradicted": self.fitted.contradicted(row, cov),
                            "metadata": model.metadata})
        frames = []
        S = np.vstack(rows)
        for lo in range(0, S.shape[0], PREDICT_BLOCK_ROWS):  # bounded memory per block
            block = slice(lo, lo + PREDICT_BLOCK_ROWS)
            frames.append(self._predicted_rows(S[block], covs[block],
                                               [m.id for m in given[block]]))
        return Predictions(pl.concat(frames), answers, self.provenance())

    def predict_file(self, path, *, ignore_unknown: bool | None = None) -> Predictions:
        """`predict_many` of the models in a CSV or JSON file
        (`benchpress.api.models_file.read_models_file`: one row per model, id, metadata and
        known scores)."""
        from benchpress.api.models_file import read_models_file

        return self.predict_many(read_models_file(Path(path)), ignore_unknown=ignore_unknown)

    def _predicted_row(self, row: np.ndarray, covariates=None) -> pl.DataFrame:
        return self._predicted_rows(row[None, :], [covariates]).drop("id")

    def _predicted_rows(self, S: np.ndarray, covariates: list, ids=None) -> pl.DataFrame:
        """The long frame of rows `S` (n_rows, n_benchmarks) of given scores, each with its
        covariate row or None, `id` first (`ids`, default 0, 1, ...)."""
        cov = None if all(c is None for c in covariates) else covariates
        out = self._new_model_rows(S, cov)
        n_rows, n_b = S.shape
        ids = list(range(n_rows)) if ids is None else list(ids)
        kind = np.where(np.isnan(S), "predicted", "given").ravel()
        bench = self.matrix.benchmarks.select("benchmark_id", "name", "scale")
        return pl.concat([bench] * n_rows).with_columns(
            pl.Series("id", np.repeat(np.asarray(ids, dtype=object), n_b).tolist()),
            pl.Series("given", S.ravel()), pl.Series("predicted", out["predicted"].ravel()),
            pl.Series("kind", kind.tolist(), dtype=pl.String),
            *(pl.Series(k, out[k].ravel()) for k in ("lower", "upper", "trust"))).select(
            "id", "benchmark_id", "name", "scale", "given", "predicted", "kind", "lower",
            "upper", "trust").with_columns(
            pl.col("given", "predicted", "lower", "upper", "trust").fill_nan(None)).with_columns(
            ((pl.col("upper") - pl.col("lower")) / 2).alias("pm"))  # the +- of the interval

    def predict_model(self, model_id: str) -> Prediction:
        """A registered model's row from its observed scores, by the same definition as
        `predict` (so `predict(<its observed scores>)` gives the same numbers; for
        `--method side` the model's own metadata row is used, as `predict(...,
        metadata=<its metadata>)` does)."""
        mid = self.names.resolve_models([model_id]).ids[0]
        row = self.matrix.values[self.matrix.model_ids.index(mid)]
        resolved = {b: b for b, v in zip(self.matrix.benchmark_ids, row) if not np.isnan(v)}
        cov = self._covariate_rows([mid])
        return Prediction(self._predicted_row(row.copy(), None if cov is None else cov[0]),
                          [], resolved, provenance=self.provenance())

    @property
    def completed_cells(self) -> dict:
        """Every cell of the matrix predicted with its calibrated 90% interval (see
        `FittedModel.completed_cells`)."""
        return self.fitted_with("cells").completed_cells

    def complete(self, *, intervals: bool = False) -> pl.DataFrame:
        """The full matrix, observed cells kept: a wide frame, model_id + one column per benchmark.

        With `intervals=True`, a long frame instead, one row per (model, benchmark):
        model_id, benchmark_id, observed (the score, null if missing), predicted, lower,
        upper (calibrated 90% interval of the prediction) and trust (P(|error| <= 10 points)).
        """
        return (self.fitted_with("cells") if intervals else self.fitted).complete(
            intervals=intervals)

    def suspects(self, threshold: float | None = None):
        """The registry's suspect values with their citations and reviewed verdicts
        (`benchpress.api.suspect_report.find_suspects`, the report of `benchpress suspects`), for
        the whole registry or snapshot this object was loaded from (not `sources`)."""
        from benchpress.predict.checks.suspects import SuspectCheck
        from benchpress.api.suspect_report import find_suspects

        if self.folder is None:
            raise BadInputError("a pre-fit model has no registry to check: load one with "
                                "BenchPress.from_snapshot")
        return find_suspects(self.folder, schemas_dir=self.contracts_dir,
                             check=SuspectCheck() if threshold is None else SuspectCheck(threshold),
                             matrix=self.matrix if self.sources is None else None)

    def complete_blocks(self, *, cells_per_block: int = LIMITS.write_cells_per_block):
        """`complete()` as row-block frames (see `FittedModel.complete_blocks`)."""
        return self.fitted.complete_blocks(cells_per_block=cells_per_block)

    def predict_rows(self, S: np.ndarray, covariates=None) -> dict:
        """A model's predicted row for each row of known scores S (n_rows, n_benchmarks):
        `FittedModel.predict_rows` of this object's fit, with "new_models" intervals (none
        on a matrix too small to calibrate on: `interval_note`)."""
        return self._new_model_rows(S, covariates)

    def compare(self, model_ids, *, benchmarks=None, new_models: dict | None = None) -> Comparison:
        """Models side by side (observed scores kept, the rest predicted with their 90%
        interval and trust), with the leader on each benchmark, the gap and `p_ahead`,
        the chance the leader is really ahead (`FittedModel.compare`).

        `new_models` maps a name to {benchmark: score} for models not in the registry; such
        a name may also be listed in `model_ids` (it then keeps its place there). Every
        row, registered or new, is predicted the way `predict` does (`predict_rows`).
        Model and benchmark names are resolved first, before any fit. Returns a
        `Comparison`: the frame and where the uncertainty came from (calibrated
        intervals, else the ensemble spread), and each new model's given score that its
        others contradict, as `predict` checks them (`contradicted`). An observed score
        counts with its benchmark's measurement noise. Without scipy (the core install)
        `p_ahead` is left empty and `p_ahead_note` says which extra brings it.
        """
        m, new_models = self.matrix, dict(new_models or {})
        clash = [n for n in new_models if n in m.model_ids]
        if clash:
            raise BadInputError(f"new model '{clash[0]}' (in the scores) is already a registered "
                                "model; give the new one another name")
        named = self.resolve_models(list(model_ids), extra=list(new_models)).ids
        cols = (None if benchmarks is None
                else np.array([m.benchmark_ids.index(b) for b in self.benchmark_ids(benchmarks)]))
        names = named + [n for n in new_models if n not in named]
        if len(names) < 2:
            raise BadInputError("compare needs at least two models")
        new_rows = {n: self._resolve(s)[0] for n, s in new_models.items()}
        S = np.vstack([new_rows[n] if n in new_rows else m.values[m.model_ids.index(n)]
                       for n in names])
        fit = self.fit(["new_models"]).fitted  # without that calibrator on a small matrix
        frame, sure_from = fit.compare(names, S, cols=cols, covariates=self._covariate_rows(names))
        checked = {n: fit.contradicted(row) for n, row in new_rows.items()}
        from benchpress.predict.evaluation.ranking import p_ahead_missing

        return Comparison(frame, sure_from, self.provenance(),
                          {n: c for n, c in checked.items() if c is not None},
                          p_ahead_note=p_ahead_missing())

    def compare_models(self, *models, scores: dict | None = None, benchmarks=None,
                       ignore_unknown: bool | None = None) -> pl.DataFrame:
        """Two or more models side by side: one row per benchmark with each model's score
        (observed, or predicted with its 90% interval `<model>_lower`/`_upper`), the
        `leader`, the `gap` to the runner-up and `p_ahead`, the chance the leader is
        really ahead. `models` are registered model ids; `scores` adds new models
        ({name: {benchmark: score}}). Unknown names follow `predict`'s rule. Without scipy
        (the core install) `p_ahead` is empty, said once in a `UserWarning`."""
        known = self.resolve_models(list(models), ignore_unknown=ignore_unknown).ids
        new = {}
        for name, given in (scores or {}).items():
            found = self.resolve_benchmarks(list(given), ignore_unknown=ignore_unknown).mapping
            new[name] = {b: v for b, v in given.items() if b in found}
        bench = self.benchmark_ids(benchmarks, ignore_unknown=ignore_unknown) if benchmarks else None
        result = self.compare(known, benchmarks=bench, new_models=new or None)
        if result.p_ahead_note is not None:
            warnings.warn(result.p_ahead_note, stacklevel=2)
        return result.frame

    def nearest_models(self, scores: dict[str, float], k: int = 5, *,
                       ignore_unknown: bool | None = None) -> pl.DataFrame:
        """The `k` registered models closest to a new model with `scores`
        (`FittedModel.nearest`): model_id, distance (RMS gap of the completed rows, z
        units) and n_measured (of the given benchmarks), nearest first."""
        return self.fitted.nearest(self._resolve(scores, ignore_unknown=ignore_unknown)[0], k)

    def compare_with_known_models(self, scores: dict[str, float], k: int = 3, *,
                                  name: str = "new", ignore_unknown: bool | None = None) -> pl.DataFrame:
        """A new model beside its `k` nearest registered models (`nearest_models`): one
        row per benchmark with the new model's score (`name`: given, or predicted with
        `<name>_pm`, the interval's half-width) and each neighbour's score (observed or
        predicted), neighbours ordered nearest first."""
        pred = self.predict(scores, ignore_unknown=ignore_unknown).frame
        near = self.nearest_models(scores, k, ignore_unknown=True)["model_id"].to_list()
        full = self.fitted.completed
        idx = [self.matrix.model_ids.index(m) for m in near]
        return pred.select(
            "benchmark_id", pl.coalesce("given", "predicted").alias(name),
            pl.when(pl.col("given").is_null()).then(pl.col("pm")).alias(f"{name}_pm"),
        ).hstack([pl.Series(m, full[i]) for m, i in zip(near, idx)]).with_columns(
            pl.col(near).fill_nan(None))

    # -- a new model's metadata (`--method side`) ------------------------------------------
    def new_model_covariates(self, metadata: dict | None) -> np.ndarray | None:
        """A new model's covariate row (n_features,) from `metadata` (the keys of
        `predict`), or None: no metadata, a predictor that takes none, or a registry whose
        models carry no such field. An unknown key or a bad value raises BadInputError."""
        if metadata is None or self._covariates is None:
            return None
        from benchpress.predict.models.side_info import metadata_covariates

        cov = metadata_covariates(metadata, self.matrix.models)
        return None if cov is None else cov[0]

    def uses_covariates(self, covariates) -> bool:
        """Whether a new model with this covariate row (or None) is folded in with it
        (False: outside the training range, folded in as the default does)."""
        return covariates is not None and bool(self.predictor.covariates_apply(covariates[None])[0])

    def metadata_note(self, metadata: dict | None, used: bool) -> str | None:
        """Why a new model's `metadata` did not reach its prediction (None: it did, or none
        was given); see `benchpress.api.prediction_notes.metadata_note`."""
        from benchpress.api.prediction_notes import metadata_note

        return metadata_note(metadata, used, method=self.method,
                             takes_covariates=self._covariates is not None,
                             latest=self._latest_release() if metadata else None)

    def _latest_release(self) -> str | None:
        """The newest release date of the registered models (ISO text), or None."""
        if "release_date" not in self.matrix.models.columns:
            return None
        dates = self.matrix.models["release_date"].drop_nulls().cast(pl.String)
        return dates.max() if dates.len() else None

    def folds(self, folds_file: Path | None = None, *, n_folds: int | None = None, seed: int = 42,
              n_seeds: int = 1, folds_sources: list[str] | None = None,
              by_source: bool = False) -> Folds:
        """Held-out partitions: read from a file, or made per model from a seed.

        An index-form file (the published format) counts rows and columns in the order of
        the matrix of `folds_sources` (default: this matrix), so the published folds of
        the 2026-05 matrix can be applied to a matrix with more sources. A file's held-out
        cells whose values a reviewed verdict took out of this matrix are left out,
        counted in the folds' `left_out` and said in a `UserWarning` (`left_out_note`);
        any other held-out cell this matrix does not observe is a BadInputError. `by_source`:
        two folds that hide, of each model scored in two or more sources, every score of
        one of them (`seed`; `benchpress.predict.intervals.calibration.source_block_folds`).
        """
        if by_source:
            from benchpress.predict.intervals.calibration import source_block_folds

            reach = self.matrix.source_reach()
            if reach is None or reach.shape[0] < 2:
                raise BadInputError("holding out by source needs a matrix of two or more "
                                    "sources; this one has "
                                    f"{'no source list' if reach is None else 'one source'}")
            return source_block_folds(~np.isnan(self.matrix.values), reach, seed=seed)
        if n_folds:
            return make_folds(~np.isnan(self.matrix.values), n_folds=n_folds, seed=seed, n_seeds=n_seeds)
        if folds_sources and self.folder is not None:
            ref = load_matrix(self.folder, sources=folds_sources)
            as_ids = folds_to_json(read_folds(folds_file, ref.model_ids, ref.benchmark_ids),
                                   ref.model_ids, ref.benchmark_ids)
            read = parse_folds(as_ids, self.matrix.model_ids, self.matrix.benchmark_ids)
        else:
            read = read_folds(folds_file, self.matrix.model_ids, self.matrix.benchmark_ids)
        try:
            folds = read.observed_in(self.matrix.values, self._reviewed_out())
        except BadInputError as exc:
            raise BadInputError(
                f"{Path(folds_file).name}: {exc} in this matrix; an index-form file (the "
                "published one is) counts models and benchmarks in the registry's order, "
                "which follows the sources' `order:` (sources/*.yaml): give the file's "
                "source the lowest and run `benchpress build`") from None
        if folds.left_out:
            warnings.warn(left_out_note(folds.left_out, folds.n_cells, Path(folds_file).name),
                          stacklevel=2)
        return folds

    def _reviewed_out(self) -> np.ndarray:
        """(n_models, n_benchmarks) bool: the cells of this matrix that a reviewed verdict
        took a value out of (`schemas/cell_reviews.csv`, `validate.reviews`)."""
        from benchpress.validate.reviews import EXCLUDING, read_reviews

        out = np.zeros(self.matrix.values.shape, dtype=bool)
        if self.contracts_dir is None:
            return out
        rows = {m: i for i, m in enumerate(self.matrix.model_ids)}
        cols = {b: j for j, b in enumerate(self.matrix.benchmark_ids)}
        reviews = read_reviews(self.contracts_dir).filter(pl.col("verdict").is_in(EXCLUDING))
        for m, b in reviews.select("model_id", "benchmark_id").iter_rows():
            if m in rows and b in cols:
                out[rows[m], cols[b]] = True
        return out

    def evaluate(self, folds: Folds, *, progress=None, executor=None) -> EvaluationResult:
        """Hide each fold's cells, refit, predict them, and score the predictions;
        `progress(k, n, label)` is called after each fold's fit. `executor`: where the
        folds' fits run (None/"local", a Dask scheduler address or an `Executor`, see
        `benchpress.executor`); the figures are the same wherever they ran."""
        return self.analyses.evaluate(folds, progress=progress, executor=executor)

    def rank(self, *, seed: int = 42, max_rank: int = 8, progress=None) -> RankDiagnostics:
        """Held-out error at ranks 1..`max_rank`, of soft-impute and (when it has a rank) of
        this predictor, on the same 3 folds; and the two-factor variance explained."""
        if max_rank < 1:
            raise UsageError(f"max_rank must be at least 1, got {max_rank}")
        return rank_diagnostics(self.matrix.values, self.scales, self.folds(n_folds=3, seed=seed),
                                ranks=range(1, max_rank + 1), predictor=self.estimator,
                                covariates=self._covariates,
                                progress=progress)

    def interval_coverage(self, folds: Folds | None, *, regime: str = "cells", seed: int = 2001,
                          calibration_seed: int = 1001, calibration_seeds: int = 2) -> dict:
        """Calibrate on our own partitions, then measure coverage and width of the 90%
        intervals on other held-out data (`folds` for "cells", whole models with `seed`
        for "new_models"); see `benchpress.predict.evaluation.coverage.evaluate_intervals`."""
        from benchpress.predict.evaluation.coverage import evaluate_intervals

        return evaluate_intervals(self.estimator, self.matrix.values, self.scales, folds,
                                  regime=regime, seed=seed, calibration_seed=calibration_seed,
                                  calibration_seeds=calibration_seeds,
                                  benchmark_ids=self.matrix.benchmark_ids,
                                  reach=self.matrix.source_reach(),
                                  **({} if self._covariates is None else {"covariates": self._covariates}))

    # -- analyses over (estimator, matrix): see `benchpress.api.analyses.Analyses` -----------
    def benchmark_costs(self, costs: dict | None = None) -> np.ndarray:
        """Cost per benchmark (n_benchmarks,); see `Analyses.benchmark_costs`."""
        return self.analyses.benchmark_costs(costs)

    def unused_costs(self, costs: dict | None) -> list[str]:
        """The names of `costs` this matrix has no benchmark for; see `Analyses.unused_costs`."""
        return self.analyses.unused_costs(costs)

    def probe_search(self, **kwargs):
        """The fitted probe search; see `Analyses.probe_search`."""
        return self.analyses.probe_search(**kwargs)

    def probes(self, k: int = 5, **kwargs):
        """Greedy (+ swap) choice of up to `k` probe benchmarks; see `Analyses.probes`."""
        return self.analyses.probes(k, **kwargs)

    def score_probes(self, probe_sets, **kwargs) -> list:
        """Transcript-recovery error of each probe set; see `Analyses.score_probes`."""
        return self.analyses.score_probes(probe_sets, **kwargs)

    def backtest(self, cutoff, **kwargs):
        """Fit before `cutoff`, predict later models from their probes; see `Analyses.backtest`."""
        return self.analyses.backtest(cutoff, **kwargs)

    def evaluate_new_models(self, known=(3, 5), **kwargs):
        """Whole models held out and folded in; see `Analyses.evaluate_new_models`."""
        return self.analyses.evaluate_new_models(known, **kwargs)

    def evaluate_temporal(self, **kwargs):
        """The temporal yardstick; see `Analyses.evaluate_temporal`. A matrix read from a
        registry or snapshot folder is fitted at each cutoff on its scores as published
        before it (`store.matrix.as_published`: sources with a history of versions)."""
        if self.folder is not None and "values_at" not in kwargs:
            kwargs["values_at"] = as_published(self.folder, self.matrix, sources=self.sources)
        kwargs.setdefault("single", self.single_benchmarks())
        return self.analyses.evaluate_temporal(**kwargs)

    def evaluate_later(self, later, **kwargs):
        """The snapshot-to-snapshot yardstick; see `Analyses.evaluate_later`."""
        kwargs.setdefault("single", self.single_benchmarks(later[1]))
        return self.analyses.evaluate_later(later, **kwargs)

    def single_benchmarks(self, scores: pl.DataFrame | None = None) -> np.ndarray:
        """Which benchmarks (n_benchmarks,) a user runs (the yardstick's "single" order,
        `predict.evaluation.temporal.single_benchmarks`): percent-scale ones whose scores are not
        all derived from other scores (an aggregate) in `scores` (default: this registry's
        scores table; without one, every percent-scale benchmark)."""
        from benchpress.predict.evaluation.temporal import single_benchmarks

        if scores is None and self.folder is not None:
            from benchpress.store.tables import read_table

            scores = read_table(self.folder, "scores")
        derived = None
        if scores is not None and "derived" in scores.columns:
            agg = (scores.group_by("benchmark_id")
                   .agg(pl.col("derived").fill_null(False).all().alias("derived")))
            found = dict(zip(agg["benchmark_id"].to_list(), agg["derived"].to_list()))
            derived = [bool(found.get(b, False)) for b in self.matrix.benchmark_ids]
        return single_benchmarks(self.scales.kind, derived)

    def ranking_preservation(self, folds=None, **kwargs):
        """Pairwise ranking preservation; see `Analyses.ranking_preservation`."""
        return self.analyses.ranking_preservation(folds, **kwargs)

    # -- structure and versions --------------------------------------------------------
    def spectrum(self) -> dict:
        """Singular values of the largest complete submatrix and of the completed matrix
        (z units); see `benchpress.predict.evaluation.rank.singular_spectra`."""
        from benchpress.predict.evaluation.rank import singular_spectra

        return singular_spectra(self.matrix.values, self.scales, self.predictor)

    @staticmethod
    def drift(home=None, from_ref: str | None = None, to_ref: str | None = None, cfg=None, *,
              sources: list[str] | str | None = None, predictor: BasePredictor | None = None,
              probe_predictor: BasePredictor | None = None, progress=None,
              monthly: bool = False, executor=None):
        """Profile and compare matrix versions (snapshots, `current` or table folders; see
        `benchpress.api.drift_versions.select_versions`; `monthly`: the monthly snapshots,
        those that hold one of `sources`) with `cfg` (a `DriftThresholds`), tracking the
        unfitted `predictor` and choosing probes with `probe_predictor` (default:
        `cfg.predictors()`, its methods with their default parameters); `progress(k, n,
        label)` as versions are profiled; `executor` (see `benchpress.executor.get_executor`)
        profiles the versions, the same figures wherever they run."""
        from benchpress.predict.drift import DriftThresholds, drift
        from benchpress.api.drift_versions import load_versions

        return drift(load_versions(_home(home), from_ref, to_ref, source_names(sources),
                                   monthly=monthly),
                     cfg or DriftThresholds(), predictor=predictor,
                     probe_predictor=probe_predictor, progress=progress, executor=executor)
