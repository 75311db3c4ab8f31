"""The Python API: `from benchpress import BenchPress`.

It ties the store (a registry or snapshot folder -> numpy matrix) to the predictor, the
same way the CLI does; results are polars frames or small dataclasses.

>>> bp = BenchPress.from_snapshot(home="path/to/project")           # doctest: +SKIP
>>> bp.predict({"gpqa_diamond": 70.1, "hle": 21.0}).frame           # doctest: +SKIP
>>> bp.complete()                                                   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.errors import BadInputError
from benchpress.home import Home, find_home
from benchpress.predict import (
    BenchmarkScales, EvaluationResult, Folds, RankDiagnostics, evaluate, folds_to_json, make_folds,
    make_predictor, parse_folds, rank_diagnostics, read_folds,
)
from benchpress.store.matrix import ScoreMatrix, load_matrix
from benchpress.validate.contracts import load_contracts
from benchpress.validate.normalize import BenchmarkResolver

__all__ = ["BenchPress", "Prediction"]


@dataclass(frozen=True)
class Prediction:
    """A new model's predicted row.

    `frame` has one row per benchmark: benchmark_id, name, scale, given (the score you
    passed, else null), predicted (score units, clipped to the benchmark's range).
    """

    frame: pl.DataFrame
    unknown: list[str] = field(default_factory=list)    # given ids no benchmark matched
    resolved: dict[str, str] = field(default_factory=dict)  # given id -> canonical id


class BenchPress:
    """A predictor fitted on one registry state.

    Parameters
    ----------
    matrix : ScoreMatrix
        Scores (n_models, n_benchmarks) with ids and benchmark metadata.
    method : str
        A predictor name from `benchpress.predict.available_methods()`.
    contracts_dir : Path, optional
        The `schemas/` folder, for resolving benchmark names and aliases in `predict`.
    """

    def __init__(self, matrix: ScoreMatrix, *, method: str = "default",
                 contracts_dir: Path | None = None, folder: Path | None = None, **params):
        self.matrix = matrix
        self.folder = folder  # the registry or snapshot folder the matrix came from
        self.method = method
        self.params = params
        self.contracts_dir = contracts_dir
        self._predictor = None

    @classmethod
    def from_snapshot(cls, home: str | Path | Home | None = None, snapshot: str | None = None, *,
                      sources: list[str] | None = None, method: str = "default",
                      **params) -> "BenchPress":
        """Load the live registry (`snapshot=None`) or a snapshot (id, tag or 'latest')."""
        home = home if isinstance(home, Home) else (Home(Path(home).resolve()) if home else find_home())
        if snapshot is None:
            folder = home.registry
        else:
            from benchpress.store.snapshot import resolve_snapshot

            folder = resolve_snapshot(home, snapshot)
        matrix = load_matrix(folder, sources=sources)
        return cls(matrix, method=method, contracts_dir=home.schemas, folder=folder, **params)

    @property
    def scales(self) -> BenchmarkScales:
        return BenchmarkScales.from_records(self.matrix.benchmarks.to_dicts(), self.matrix.benchmark_ids)

    @property
    def predictor(self):
        """The fitted predictor (fitted on first use)."""
        if self._predictor is None:
            self._predictor = make_predictor(self.method, **self.params).fit(self.matrix.values, self.scales)
        return self._predictor

    def complete(self) -> pl.DataFrame:
        """The full matrix, observed cells kept: a wide frame, model_id + one column per benchmark."""
        full = self.predictor.complete()
        return pl.DataFrame({"model_id": self.matrix.model_ids}).hstack(
            pl.DataFrame(full, schema=self.matrix.benchmark_ids, orient="row"))

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

    def evaluate(self, folds: Folds) -> EvaluationResult:
        """Hide each fold's cells, refit, predict them, and score the predictions."""
        m = self.matrix
        return evaluate(self.method, m.values, self.scales, folds, model_ids=m.model_ids,
                        benchmark_ids=m.benchmark_ids, **self.params)

    def rank(self, *, seed: int = 42) -> RankDiagnostics:
        """Held-out error of soft-impute by rank and two-factor variance explained."""
        folds = make_folds(~np.isnan(self.matrix.values), n_folds=3, seed=seed)
        return rank_diagnostics(self.matrix.values, self.scales, folds)

    def _resolve(self, scores: dict[str, float]) -> tuple[np.ndarray, list[str], dict[str, str]]:
        resolver = BenchmarkResolver(load_contracts(self.contracts_dir)) if self.contracts_dir else None
        col = {b: k for k, b in enumerate(self.matrix.benchmark_ids)}
        row = np.full(len(col), np.nan)
        unknown, resolved = [], {}
        meta = self.matrix.benchmarks
        for given, value in scores.items():
            bid = resolver.resolve(given)[0] if resolver else given
            if bid not in col:
                unknown.append(given)
                continue
            lo, hi = meta["lower"][col[bid]], meta["upper"][col[bid]]
            if not np.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
                raise BadInputError(f"score for '{given}' is {value:g}, outside {bid}'s "
                                    f"{meta['scale'][col[bid]]} range [{lo}, {hi}]")
            resolved[given] = bid
            row[col[bid]] = value
        return row, unknown, resolved

    def predict(self, scores: dict[str, float]) -> Prediction:
        """Predict every benchmark for a new model from its known scores (fold-in, no refit)."""
        row, unknown, resolved = self._resolve(scores)
        if np.isnan(row).all():
            raise BadInputError("none of the given benchmarks is in the matrix: "
                                + ", ".join(unknown))
        predicted = self.predictor.fold_in(row)
        frame = self.matrix.benchmarks.select("benchmark_id", "name", "scale").with_columns(
            pl.Series("given", row), pl.Series("predicted", predicted)).with_columns(
            pl.col("given").fill_nan(None))
        return Prediction(frame, unknown, resolved)

    def predict_model(self, model_id: str) -> Prediction:
        """Predict the rest of a registered model's row from its observed scores,
        as if it were new (its row is left out of the fit)."""
        if model_id not in self.matrix.model_ids:
            raise BadInputError(f"model '{model_id}' is not in the registry")
        i = self.matrix.model_ids.index(model_id)
        keep = np.arange(len(self.matrix.model_ids)) != i
        others = ScoreMatrix(self.matrix.values[keep], [m for m in self.matrix.model_ids if m != model_id],
                             self.matrix.benchmark_ids, self.matrix.benchmarks,
                             self.matrix.models.filter(pl.col("model_id") != model_id))
        row = self.matrix.values[i]
        given = {b: float(v) for b, v in zip(self.matrix.benchmark_ids, row) if not np.isnan(v)}
        return BenchPress(others, method=self.method, contracts_dir=None, **self.params).predict(given)
