"""The Python API: `from benchpress import BenchPress`.

It ties the store (a registry or snapshot folder -> `ScoreMatrix`) to one unfitted
predictor object (`make_predictor(method, **params)`), the one front door the CLI and the
report use; every fit (held-out folds, calibration, probe search, backtest) is a clone of
that object. Results are polars frames or small dataclasses.

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
answer carries its `provenance` (sources, snapshot, method, params). Names are resolved by
`benchpress.resolver` before any fit (errors with suggestions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, listed
from benchpress.api_fits import FitsMixin  # from_pretrained, compare_models, ...
from benchpress.api_probes import Comparison, ProbesMixin  # probes, backtest, ranking, compare
from benchpress.folds_io import read_folds
from benchpress.home import Home, find_home
from benchpress.predict import intervals as conformal  # (`intervals` names an argument)
from benchpress.predict import (
    BasePredictor, BenchmarkScales, EvaluationResult, Folds, RankDiagnostics, clone, evaluate,
    check_predictor,
    folds_to_json, make_folds, make_predictor, param_overrides, parse_folds, rank_diagnostics,
)
from benchpress.resolver import NameResolution
from benchpress.store.matrix import ScoreMatrix, load_matrix
from benchpress.store.snapshot import resolve_snapshot
from benchpress.validate.contracts import load_contracts
from benchpress.validate.normalize import BenchmarkResolver

__all__ = ["BenchPress", "Prediction", "Comparison"]


@dataclass(frozen=True)
class Prediction:
    """A new model's predicted row.

    `frame` has one row per benchmark: benchmark_id, name, scale, given (the score you
    passed, else null), predicted (the given score where there is one, else the prediction
    in score units, clipped to the benchmark's range), kind ("given" or "predicted"), and
    for predicted cells the calibrated 90% interval lower/upper (within the benchmark's
    range) with trust, the probability that the prediction is within 10 points (a point is
    1% of the range); see `benchpress.predict.intervals`.
    """

    frame: pl.DataFrame
    unknown: list[str] = field(default_factory=list)    # given ids ignored (ignore_unknown)
    resolved: dict[str, str] = field(default_factory=dict)  # given id -> canonical id
    # True when `metadata` reached the fold-in as covariates (`--method side`, inside the
    # training range); False: folded in from the scores alone, as the default does
    with_covariates: bool = False
    # which sources, snapshot, method and params made it (`BenchPress.provenance`)
    provenance: dict = field(default_factory=dict)


def _home(home) -> Home:
    return home if isinstance(home, Home) else (Home(Path(home).resolve()) if home else find_home())


class BenchPress(NameResolution, ProbesMixin, FitsMixin):
    """One registry state and one predictor: the front door of the CLI, the report and
    the Python API.

    Names are resolved by `resolve_benchmarks` / `resolve_models` (from
    `benchpress.resolver.NameResolution`); `ignore_unknown` (default False) makes unknown
    names a warning (passed to `on_unknown(kind, names)`) instead of an error.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores (n_models, n_benchmarks) with ids, benchmark metadata and scales.
    predictor : BasePredictor, optional
        Unfitted predictor object (`make_predictor(method, **params)`; default
        `make_predictor("default")`), kept as `estimator`. It is never fitted itself:
        `predictor` below is a fitted clone, and every held-out fit is another clone.
    contracts_dir : Path, optional
        The `schemas/` folder, for resolving benchmark names and aliases in `predict`.
    """

    def __init__(self, matrix: ScoreMatrix, predictor: BasePredictor | None = None, *,
                 contracts_dir: Path | None = None, folder: Path | None = None):
        self.matrix = matrix
        self.folder = folder  # the registry or snapshot folder the matrix came from
        self.estimator = (check_predictor(predictor) if predictor is not None
                          else make_predictor("default"))  # unfitted; every fit is a clone
        self.contracts_dir = contracts_dir
        self.sources = None  # the sources the matrix was restricted to (None: all)
        self.artifact = None  # the manifest of the artifact this fit was loaded from
        self._calibrators = {}  # interval calibrators by regime, fitted on first use

    @classmethod
    def from_snapshot(cls, home: str | Path | Home | None = None, snapshot: str | None = None, *,
                      sources: list[str] | None = None,
                      predictor: BasePredictor | None = None) -> "BenchPress":
        """Load the live registry (`snapshot=None`) or a snapshot (id, tag or 'latest')."""
        home = _home(home)
        folder = resolve_snapshot(home, snapshot)
        matrix = load_matrix(folder, sources=sources, label=snapshot or "current")
        bp = cls(matrix, predictor, contracts_dir=home.schemas, folder=folder)
        bp.sources = sources
        return bp

    @property
    def method(self) -> str:
        """The predictor's method name."""
        return self.estimator.method

    @property
    def params(self) -> dict:
        """The predictor's parameters that differ from its method's defaults."""
        return param_overrides(self.estimator)

    @cached_property
    def source_ids(self) -> list[str] | None:
        """The sources the matrix was made from: the registry's or snapshot's source ids
        that `sources` picks (all of them when none were named); for a fit loaded from an
        artifact, the sources it was fitted on, as named then (None: all, or not known)."""
        if self.folder is None:
            return list(self.sources) if self.sources else None
        from benchpress.store.matrix import match_sources
        from benchpress.store.tables import read_table

        known = read_table(self.folder, "sources")["source_id"].to_list()
        return list(dict.fromkeys(match_sources(known, self.sources))) if self.sources else known

    def provenance(self) -> dict:
        """What made this object's predictions, for every answer's JSON: ``sources`` (see
        `source_ids`), ``snapshot`` (its id, "current" for the live registry, or
        "pretrained" for a fit loaded by `from_pretrained`, then with ``fitted_on``, the
        id of the snapshot that fit was made on), ``method`` and ``params`` (those that
        differ from the method's defaults)."""
        snap = self._snapshot_id()
        if self.folder is None and self.artifact is not None:  # from_pretrained
            where = {"snapshot": "pretrained",
                     "fitted_on": snap or (self.artifact.get("snapshot") or {}).get("label")}
        else:
            where = {"snapshot": snap or self.matrix.label or "current"}
        return {"sources": self.source_ids, **where, "method": self.method,
                "params": self.params}

    @property
    def scales(self) -> BenchmarkScales:
        return self.matrix.scales

    @cached_property
    def predictor(self) -> BasePredictor:
        """The predictor fitted on the whole matrix (a clone, fitted on first use)."""
        return clone(self.estimator).fit(self.matrix.values, self.scales, **self._side_info())

    def _side_info(self) -> dict:
        """`{"covariates": ...}` from the models' metadata when the predictor takes them
        (`--method side`, see `benchpress.predict.side`), else `{}`."""
        return {} if self._covariates is None else {"covariates": self._covariates}

    @cached_property
    def _covariates(self) -> np.ndarray | None:
        """The models' covariates (n_models, n_features), made once (the matrix and the
        estimator never change): None unless the predictor takes them and the model rows
        carry metadata."""
        if not getattr(self.estimator, "accepts_covariates", False):
            return None
        from benchpress.predict.side import model_covariates

        return model_covariates(self.matrix.models)

    def _covariate_rows(self, model_ids) -> list | None:
        """Per name, the registered model's covariate row (n_features,) or None (a new
        model); None when the predictor takes no covariates."""
        X = self._side_info().get("covariates")
        if X is None:
            return None
        pos = {m: k for k, m in enumerate(self.matrix.model_ids)}
        return [X[pos[n]] if n in pos else None for n in model_ids]

    @cached_property
    def _support(self):
        """Risk features of the fitted predictor's cells (`conformal.MatrixSupport`),
        made once and shared by every interval (restored as saved from an artifact)."""
        return conformal.MatrixSupport(self.predictor)

    @property
    def support(self):
        """The interval support of the fit (`conformal.MatrixSupport`, read-only use): its
        `transform` maps scores to the z units distances are measured in."""
        return self._support

    @cached_property
    def completed_cells(self) -> dict:
        """Every cell of the matrix predicted with its calibrated 90% interval ("cells"
        regime): a dict of (n_models, n_benchmarks) arrays predicted, lower, upper, trust,
        made once (what `complete(intervals=True)` returns in long form)."""
        return conformal.complete_intervals(self.predictor, self.calibrator("cells"),
                                            self._support)

    @cached_property
    def _resolver(self) -> BenchmarkResolver | None:
        """Benchmark names and aliases -> canonical ids (None without contracts)."""
        return BenchmarkResolver(load_contracts(self.contracts_dir)) if self.contracts_dir else None

    def complete(self, *, intervals: bool = False) -> pl.DataFrame:
        """The full matrix, observed cells kept: a wide frame, model_id + one column per benchmark.

        With `intervals=True`, a long frame instead, one row per (model, benchmark):
        model_id, benchmark_id, observed (the score, null if missing), predicted, lower,
        upper (calibrated 90% interval of the prediction) and trust (P(|error| <= 10 points)).
        """
        if intervals:
            ci = self.completed_cells
            n_m, n_b = self.matrix.values.shape
            cols = {"model_id": np.repeat(np.asarray(self.matrix.model_ids, dtype=object), n_b),
                    "benchmark_id": np.tile(np.asarray(self.matrix.benchmark_ids, dtype=object), n_m),
                    "observed": self.matrix.values.ravel(),
                    **{k: ci[k].ravel() for k in ("predicted", "lower", "upper", "trust")}}
            return pl.DataFrame({k: (v.tolist() if v.dtype == object else v) for k, v in cols.items()}
                                ).fill_nan(None)
        return pl.concat(list(self.complete_blocks()))

    def complete_blocks(self, *, cells_per_block: int = 5_000_000):
        """`complete()` (wide, observed cells kept) as a sequence of row-block frames, so a
        large completion can be written without holding it all: one block unless the
        fit took the cells path (`uses_cells()`; then about `cells_per_block` cells per
        block)."""
        pred, ids, bids = self.predictor, self.matrix.model_ids, self.matrix.benchmark_ids
        n_m = len(ids)
        step = max(1, cells_per_block // max(len(bids), 1)) if pred.uses_cells() \
            else max(n_m, 1)
        for k in range(0, max(n_m, 1), step):
            rows = np.arange(k, min(k + step, n_m))
            full = pred.complete() if step >= n_m else pred.complete_rows(rows)
            yield pl.DataFrame({"model_id": ids[k:k + step]}).hstack(
                pl.DataFrame(full, schema=bids, orient="row"))

    def folds(self, folds_file: Path | None = None, *, n_folds: int | None = None, seed: int = 42,
              n_seeds: int = 1, folds_sources: list[str] | None = None) -> Folds:
        """Held-out partitions: read from a file, or made per model from a seed.

        An index-form file (the published format) counts rows and columns in the order of
        the matrix of `folds_sources` (default: this matrix), so the published folds of
        the 2026-05 matrix can be applied to a matrix with more sources.
        """
        if n_folds:
            return make_folds(~np.isnan(self.matrix.values), n_folds=n_folds, seed=seed, n_seeds=n_seeds)
        if folds_sources and self.folder is not None:
            ref = load_matrix(self.folder, sources=folds_sources)
            as_ids = folds_to_json(read_folds(folds_file, ref.model_ids, ref.benchmark_ids),
                                   ref.model_ids, ref.benchmark_ids)
            return parse_folds(as_ids, self.matrix.model_ids, self.matrix.benchmark_ids)
        return read_folds(folds_file, self.matrix.model_ids, self.matrix.benchmark_ids)

    def evaluate(self, folds: Folds, *, progress=None, executor=None) -> EvaluationResult:
        """Hide each fold's cells, refit, predict them, and score the predictions;
        `progress(k, n, label)` is called after each fold's fit. `executor`: where the
        folds' fits run (None/"local", a Dask scheduler address or an `Executor`, see
        `benchpress.executor`); the figures are the same wherever they ran."""
        m = self.matrix
        return evaluate(self.estimator, m.values, self.scales, folds, model_ids=m.model_ids,
                        benchmark_ids=m.benchmark_ids, progress=progress, executor=executor,
                        **self._side_info())

    def rank(self, *, seed: int = 42, progress=None) -> RankDiagnostics:
        """Held-out error by rank, of soft-impute and (when it has a rank) of this
        predictor, on the same 3 folds; and the two-factor variance explained."""
        return rank_diagnostics(self.matrix.values, self.scales, self.folds(n_folds=3, seed=seed),
                                predictor=self.estimator,
                                covariates=self._side_info().get("covariates"),
                                progress=progress)

    def _resolve(self, scores: dict[str, float], *, ignore_unknown: bool | None = None
                 ) -> tuple[np.ndarray, list[str], dict[str, str]]:
        """A row (n_benchmarks,) of given scores (NaN elsewhere), the ignored unknown
        names and given name -> canonical id; checks each value against its range."""
        col = {b: k for k, b in enumerate(self.matrix.benchmark_ids)}
        found = self.resolve_benchmarks(list(scores), ignore_unknown=ignore_unknown)
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
        without covariates."""
        row, unknown, resolved = self._resolve(scores, ignore_unknown=ignore_unknown)
        if np.isnan(row).all():
            raise BadInputError("none of the given benchmarks is in the matrix: "
                                + listed(unknown, quote=False))
        cov = self.new_model_covariates(metadata)
        return Prediction(self._predicted_row(row, cov), unknown, resolved,
                          with_covariates=self.uses_covariates(cov),
                          provenance=self.provenance())

    def predict_rows(self, S: np.ndarray, support=None, covariates=None) -> dict:
        """The one definition of a model's predicted row: fold-in of its known scores S
        (n_rows, n_benchmarks) against the registry's fit, with "new_models" intervals;
        known cells keep their value and get no interval. Returns a dict of
        (n_rows, n_benchmarks) arrays predicted, lower, upper, trust. (A row folded in
        alone or with others differs at most by float rounding, ~1e-12.) `covariates`:
        per row a covariate row (n_features,) or None (that row is folded in without).
        The fold-in's products are small: they run on one BLAS thread (whose threads only
        wait on each other on a busy machine)."""
        from benchpress.predict._threads import single_blas_thread

        cal, support = self.calibrator("new_models"), support or self._support
        has = np.array([c is not None for c in covariates or [None] * S.shape[0]], dtype=bool)
        with single_blas_thread():
            out = conformal.fold_in_intervals(self.predictor, cal, S, support)
            if has.any():  # rows with metadata: again with their covariates
                with_cov = conformal.fold_in_intervals(
                    self.predictor, cal, S[has], support,
                    covariates=np.vstack([c for c in covariates if c is not None]))
                for k in out:
                    out[k][has] = with_cov[k]
        known = ~np.isnan(S)
        return {"predicted": np.where(known, S, out["predicted"]),
                **{k: np.where(known, np.nan, out[k]) for k in ("lower", "upper", "trust")}}

    def _predicted_row(self, row: np.ndarray, covariates=None) -> pl.DataFrame:
        cov = None if covariates is None else [covariates]
        out = {k: v[0] for k, v in self.predict_rows(row[None, :], covariates=cov).items()}
        kind = np.where(np.isnan(row), "predicted", "given")
        return self.matrix.benchmarks.select("benchmark_id", "name", "scale").with_columns(
            pl.Series("given", row), pl.Series("predicted", out["predicted"]),
            pl.Series("kind", kind.tolist(), dtype=pl.String),
            *(pl.Series(k, out[k]) for k in ("lower", "upper", "trust"))).with_columns(
            pl.col("given", "predicted", "lower", "upper", "trust").fill_nan(None)).with_columns(
            ((pl.col("upper") - pl.col("lower")) / 2).alias("pm"))  # the +- of the interval

    def calibrator(self, regime: str = "cells"):
        """The interval calibrator of this method on this matrix for `regime` ("cells":
        missing cells of known models, used by `complete`; "new_models": new models
        folded in from a few scores, used by `predict`), fitted on first use on held-out
        data of the matrix (see `benchpress.predict.intervals.calibrate`); new models on
        temporal splits when the models carry release dates (the last months, each folded
        into a fit of what came before: the future these intervals are used for)."""
        if regime not in self._calibrators:
            models = self.matrix.models
            dates = (models["release_date"].to_list()
                     if regime == "new_models" and "release_date" in models.columns else None)
            self._calibrators[regime] = conformal.calibrate(
                self.estimator, self.matrix.values, self.scales, regime=regime,
                release_dates=dates, **self._side_info())
        return self._calibrators[regime]

    def interval_coverage(self, folds: Folds | None, *, regime: str = "cells", seed: int = 2001,
                          calibration_seed: int = 1001, calibration_seeds: int = 2) -> dict:
        """Calibrate on our own partitions, then measure coverage and width of the 90%
        intervals on other held-out data (`folds` for "cells", whole models with `seed`
        for "new_models"); see `benchpress.predict.coverage.evaluate_intervals`."""
        from benchpress.predict.coverage import evaluate_intervals

        return evaluate_intervals(self.estimator, self.matrix.values, self.scales, folds,
                                  regime=regime, seed=seed, calibration_seed=calibration_seed,
                                  calibration_seeds=calibration_seeds,
                                  benchmark_ids=self.matrix.benchmark_ids, **self._side_info())

    def predict_model(self, model_id: str) -> Prediction:
        """A registered model's row from its observed scores, by the same definition as
        `predict` (so `predict(<its observed scores>)` gives the same numbers; for
        `--method side` the model's own metadata row is used, as `predict(...,
        metadata=<its metadata>)` does)."""
        mid = self.resolve_models([model_id]).ids[0]
        row = self.matrix.values[self.matrix.model_ids.index(mid)]
        resolved = {b: b for b, v in zip(self.matrix.benchmark_ids, row) if not np.isnan(v)}
        cov = self._covariate_rows([mid])
        return Prediction(self._predicted_row(row.copy(), None if cov is None else cov[0]),
                          [], resolved, provenance=self.provenance())

    # -- names -------------------------------------------------------------------------
    def _canonical_benchmark(self, given: str) -> str:
        """The canonical id of a benchmark name or alias (unchanged when unknown)."""
        if given in self.matrix.benchmark_ids or self._resolver is None:
            return given
        return self._resolver.resolve(given)[0]

    def benchmark_ids(self, given, *, ignore_unknown: bool | None = None) -> list[str]:
        """Canonical ids of benchmark names/aliases (see `resolve_benchmarks`)."""
        return self.resolve_benchmarks(list(given), ignore_unknown=ignore_unknown).ids

    # -- structure and versions --------------------------------------------------------
    def spectrum(self) -> dict:
        """Singular values of the largest complete submatrix and of the completed matrix
        (z units); see `benchpress.predict.rank.singular_spectra`."""
        from benchpress.predict.rank import singular_spectra

        return singular_spectra(self.matrix.values, self.scales, self.predictor)

    @staticmethod
    def drift(home=None, from_ref: str | None = None, to_ref: str | None = None, cfg=None, *,
              sources: list[str] | None = None, predictor: BasePredictor | None = None,
              probe_predictor: BasePredictor | None = None, progress=None):
        """Profile and compare matrix versions (snapshots, `current` or table folders; see
        `benchpress.versions.select_versions`) with `cfg` (a `DriftThresholds`), tracking
        the unfitted `predictor` and choosing probes with `probe_predictor` (default:
        `cfg.predictors()`, its methods with their default parameters); `progress(k, n,
        label)` after each version's profile."""
        from benchpress.predict.drift import DriftThresholds, drift
        from benchpress.versions import load_versions

        return drift(load_versions(_home(home), from_ref, to_ref, sources),
                     cfg or DriftThresholds(), predictor=predictor,
                     probe_predictor=probe_predictor, progress=progress)
