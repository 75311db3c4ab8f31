"""The analyses of one predictor on one matrix: probe sets, backtests, new-model and temporal
evaluations, held-out evaluation and ranking preservation.

`Analyses` holds an unfitted estimator, a matrix, the models' covariates and the matrix's
name resolver, all given to its constructor; each method is a thin call of a free
function of :mod:`benchpress.predict` over (estimator, matrix). `BenchPress` holds one and
passes its calls through. Every fit is a clone of the estimator; the probe search's
held-out fits are made once (`probe_search`) and shared.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from benchpress.errors import BadInputError
from benchpress.predict.size_limits import LIMITS

__all__ = ["Analyses"]


class Analyses:
    """Analyses over (estimator, matrix).

    Parameters
    ----------
    estimator : BasePredictor
        Unfitted; every fit is a clone.
    matrix : ScoreMatrix
        Scores (n_models, n_benchmarks) with ids, benchmark metadata and scales.
    names : benchpress.validate.names.NameResolver
        Resolves the benchmark names a call is given.
    covariates : ndarray of shape (n_models, n_features), optional
        The models' covariates, for a predictor that takes them (`--method side`).
    probe_max_models : int or None
        Most models left out and scored by the probe search (a seeded sample beyond it;
        None: every model); see :class:`~benchpress.predict.probes.search.ProbeSearch`.
    """

    def __init__(self, estimator, matrix, *, names, covariates=None,
                 probe_max_models=LIMITS.probe_max_models):
        self.estimator = estimator
        self.matrix = matrix
        self.names = names
        self.covariates = covariates
        self.probe_max_models = probe_max_models
        self._search = None  # the fitted ProbeSearch, made on first use

    @property
    def method(self) -> str:
        return self.estimator.method

    @property
    def scales(self):
        return self.matrix.scales

    def _side_info(self) -> dict:
        return {} if self.covariates is None else {"covariates": self.covariates}

    def benchmark_ids(self, given) -> list[str]:
        return self.names.resolve_benchmarks(list(given)).ids

    def _canonical_benchmark(self, given: str) -> str:
        return self.names.canonical_benchmark(given)

    def evaluate(self, folds, *, progress=None, executor=None):
        """Hide each fold's cells, refit, predict them, and score the predictions (see
        `benchpress.predict.evaluation.heldout`); `progress(k, n, label)` after each fold's fit;
        `executor`: where the folds' fits run (the figures do not depend on it)."""
        from benchpress.predict import evaluate

        m = self.matrix
        return evaluate(self.estimator, m.values, self.scales, folds, model_ids=m.model_ids,
                        benchmark_ids=m.benchmark_ids, progress=progress, executor=executor,
                        **self._side_info())

    def benchmark_costs(self, costs: dict | None = None) -> np.ndarray:
        """Cost per benchmark, shape (n_benchmarks,): registry metadata (`cost`), overridden
        by `costs` ({benchmark id or alias: cost}; the benchmarks this matrix lacks are
        ignored, `unused_costs` names them); NaN = unknown."""
        meta = self.matrix.benchmarks
        base = (meta["cost"].cast(pl.Float64).fill_null(np.nan).to_numpy().copy()
                if "cost" in meta.columns else np.full(len(self.matrix.benchmark_ids), np.nan))
        for j, value in zip(self._cost_columns(costs), (costs or {}).values()):
            if j is not None:
                base[j] = float(value)
        return base

    def unused_costs(self, costs: dict | None) -> list[str]:
        """The names of `costs` that no benchmark of this matrix answers to (by id or alias):
        the costs `benchmark_costs` leaves unused."""
        return [given for given, j in zip(costs or {}, self._cost_columns(costs)) if j is None]

    def _cost_columns(self, costs: dict | None) -> list[int | None]:
        """The matrix column of each name of `costs`, in order (None: not in the matrix)."""
        pos = {b: j for j, b in enumerate(self.matrix.benchmark_ids)}
        return [pos.get(self._canonical_benchmark(given)) for given in costs or {}]

    def _fit_probe_search(self, progress=None, executor=None):
        from benchpress.predict.probes.search import ProbeSearch

        return ProbeSearch(self.estimator, max_models=self.probe_max_models,
                           executor=executor).fit(
            self.matrix.values, self.scales, benchmark_ids=self.matrix.benchmark_ids,
            progress=progress, **self._side_info())

    def probe_search(self, *, objective: str = "medae", scope: str = "all", progress=None,
                     max_models="default", executor=None):
        """The fitted :class:`~benchpress.predict.probes.search.ProbeSearch` (held-out fits made on
        first use and shared: one per model, or one per group of a seeded sample on a large
        matrix) scored by `objective` and `scope`; `progress(k, n, label)` reports those
        fits when they are made now. `max_models` (int or None) replaces
        `probe_max_models`, refitting if it differs. `executor` (see
        `benchpress.executor.get_executor`; None: this process) runs the fits made now and
        the candidate scoring; the numbers do not depend on it."""
        if max_models != "default" and max_models != self.probe_max_models:
            self.probe_max_models, self._search = max_models, None
        if self._search is None:
            self._search = self._fit_probe_search(progress, executor)
        return self._search.using(objective=objective, scope=scope, executor=executor)

    def probes(self, k: int = 5, *, candidates=None, costs: dict | None = None,
               budget: float | None = None, objective: str = "medae", scope: str = "all",
               swap: str = "each", recent_months: float | None = None, progress=None,
               max_models="default", executor=None):
        """Greedy (+ swap) choice of up to `k` probe benchmarks; see `ProbeSearch.select`.

        `recent_months`: the objective counts only models released within that many
        months of the newest release (every model still informs the fits). `max_models`,
        `executor`: see `probe_search`."""
        from benchpress.predict.evaluation.backtest import as_date, months_before

        cand = self.benchmark_ids(candidates) if candidates is not None else None  # before any fit
        search = self.probe_search(objective=objective, scope=scope, progress=progress,
                                   max_models=max_models, executor=executor)
        models = None
        if recent_months:
            dates = [as_date(d) for d in self.matrix.models["release_date"].to_list()]
            if not any(dates):
                raise BadInputError("recent_months needs release dates, and no model has one")
            start = months_before(max(d for d in dates if d), recent_months)
            models = np.array([d is not None and d >= start for d in dates])
        return search.select(k, candidates=cand, costs=self.benchmark_costs(costs),
                             budget=budget, swap=swap, models=models, progress=progress)

    def score_probes(self, probe_sets, *, costs: dict | None = None,
                     design: str = "fold_in", progress=None, max_models="default",
                     executor=None) -> list:
        """Transcript-recovery error (`ProbeScore`) of each given probe set; `design="refit"`
        scores it the paper's way (one refit per model); `max_models`, `executor`: see
        `probe_search`."""
        probe_sets = [self.benchmark_ids(p) for p in probe_sets]  # names first, before any fit
        search = self.probe_search(progress=progress, max_models=max_models, executor=executor)
        cost = self.benchmark_costs(costs)
        return [search.score(p, costs=cost, design=design) for p in probe_sets]

    def backtest(self, cutoff, *, probes=5, candidates=None, recent_months: float | None = 6.0):
        """Fit on models released before `cutoff`, predict later ones from their probes."""
        from benchpress.predict.evaluation.backtest import backtest

        m = self.matrix
        chosen = probes if isinstance(probes, int) else self.benchmark_ids(probes)
        cand = self.benchmark_ids(candidates) if candidates is not None else None
        return backtest(self.estimator, m.values, self.scales, m.models["release_date"].to_list(),
                        cutoff, probes=chosen, model_ids=m.model_ids,
                        benchmark_ids=m.benchmark_ids, candidates=cand,
                        recent_months=recent_months, **self._side_info())

    def evaluate_new_models(self, known=(3, 5), *, seeds=(1001,), progress=None):
        """Hold out whole models (5 groups per seed), fold each in from `known` of its own
        scores and score the rest (`benchpress.predict.evaluation.new_models`): how well `predict
        --scores` does for a model that arrives with k scores."""
        from benchpress.predict.evaluation.new_models import evaluate_new_models

        m = self.matrix
        return evaluate_new_models(self.estimator, m.values, self.scales, known=known,
                                   seeds=seeds, progress=progress,
                                   covariates=self._side_info().get("covariates"))

    def evaluate_temporal(self, *, methods=(), cutoffs=None, known=(1, 3, 5),
                          orders=("random", "popular"), probes=(), seed: int = 42,
                          intervals: bool = True, progress=None, values_at=None, single=None,
                          metadata=("given", "none")):
        """The temporal yardstick (`benchpress.predict.evaluation.temporal`): fit on the models released
        before each cutoff (on `values_at(cutoff)`, the scores as published by then, when
        given), fold in each model of the following month from `known` of its scores, score
        the rest. This predictor is scored under its method name, beside `methods` (other
        method names, with their default parameters); `single` marks the benchmarks of the
        "single" order, `metadata` the runs (with the models' metadata, without)."""
        from benchpress.predict import make_predictor
        from benchpress.predict.evaluation.temporal import temporal_evaluation

        m = self.matrix
        estimators = {self.method: self.estimator,
                      **{name: make_predictor(name) for name in methods if name != self.method}}
        return temporal_evaluation(estimators, m.values, self.scales,
                                   m.models["release_date"].to_list(),
                                   benchmark_ids=m.benchmark_ids, model_ids=m.model_ids,
                                   cutoffs=cutoffs, known=known, orders=orders, probes=probes,
                                   seed=seed, intervals=intervals, progress=progress,
                                   covariates=self._side_info().get("covariates"),
                                   values_at=values_at, single=single, metadata=metadata)

    def evaluate_later(self, later, *, methods=(), known=(1, 3, 5),
                       orders=("reported", "random"), probes=(), seed: int = 42,
                       intervals: bool = True, progress=None, single=None,
                       metadata=("given", "none")):
        """The snapshot-to-snapshot form of the temporal yardstick: this matrix is the
        earlier version; `later` (a ScoreMatrix of a later version, same sources, plus its
        `scores` table as `later_scores`) brings new models, each folded in from the first
        `known` scores its sources reported (`benchpress.predict.evaluation.temporal`)."""
        import polars as pl

        from benchpress.predict import make_predictor
        from benchpress.predict.evaluation.temporal import later_snapshot_evaluation, reported_order

        matrix, scores = later
        m = self.matrix
        col = {b: j for j, b in enumerate(m.benchmark_ids)}
        seen = set(m.model_ids)
        new_ids = [i for i in matrix.model_ids if i not in seen]
        rows = {i: k for k, i in enumerate(matrix.model_ids)}
        late_cols = [k for k, b in enumerate(matrix.benchmark_ids) if b in col]  # shared ones
        T = np.full((len(new_ids), len(col)), np.nan)
        T[:, [col[matrix.benchmark_ids[k]] for k in late_cols]] = \
            matrix.values[np.ix_([rows[i] for i in new_ids], late_cols)]
        order = reported_order(scores, new_ids, m.benchmark_ids)
        keep = [r for r in range(len(new_ids)) if (~np.isnan(T[r])).any()]
        estimators = {self.method: self.estimator,
                      **{name: make_predictor(name) for name in methods if name != self.method}}
        # the later models' own metadata (provider, release date, ...) in the fit's columns;
        # those without any are folded in as a model typed in without metadata is
        later_ids = [new_ids[r] for r in keep]
        X_later = None
        if self.covariates is not None and later_ids:
            from benchpress.predict.models.covariates import METADATA_FIELDS, model_covariates

            rows_later = matrix.models[[rows[i] for i in later_ids]]
            fields = [c for c in METADATA_FIELDS if c != "model_id" and c in rows_later.columns]
            given = rows_later.select(pl.any_horizontal(
                [pl.lit(False)] + [pl.col(c).is_not_null() for c in fields]))[:, 0].to_list()
            X = model_covariates(rows_later, reference=m.models)
            X_later = None if X is None else [x if g else None for x, g in zip(X, given)]
        return later_snapshot_evaluation(
            estimators, m.values, self.scales, m.models["release_date"].to_list(),
            benchmark_ids=m.benchmark_ids, T=T[keep], later_ids=later_ids,
            reported=[np.asarray(order.get(new_ids[r], []), dtype=np.int64) for r in keep],
            label=matrix.label or "later", known=known, orders=orders, probes=probes,
            seed=seed, intervals=intervals, covariates=self.covariates,
            later_covariates=X_later, single=single, metadata=metadata, progress=progress)

    def ranking_preservation(self, folds=None, *, margins=(0.0, 1.0, 2.0, 5.0), cells=None):
        """Pairwise ranking preservation of this method's held-out predictions on `folds`
        (or of already computed held-out `cells`: a frame with fold, model_index,
        benchmark_index and predicted, e.g. `interval_coverage(...)["cells"]`)."""
        from benchpress.predict.evaluation.ranking import ranking_preservation

        cells = self.evaluate(folds).cells if cells is None else cells
        return ranking_preservation(
            self.matrix.values, cells["fold"].to_numpy(), cells["model_index"].to_numpy(),
            cells["benchmark_index"].to_numpy(), cells["predicted"].fill_null(np.nan).to_numpy(),
            margins=margins, benchmark_ids=self.matrix.benchmark_ids)
