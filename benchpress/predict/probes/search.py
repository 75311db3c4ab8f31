"""Probe sets: which few benchmarks to run on a new model to recover the rest of its row.

Transcript recovery of a probe set ``P`` is scored the way a user meets it: for every
model ``i``, the predictor has seen every *other* model in full and only model ``i``'s
scores on ``P`` (those it has), and predicts the rest of model ``i``'s observed row.
Pooled over all observed cells of all models, with probe cells counting as exact
(error 0, as in the BenchPress paper), this gives the probe set's ``medae``/``medape``;
``*_hidden`` figures use the non-probe cells alone.

The predictor is an unfitted object; every fit here is a
:func:`~benchpress.predict.estimator.clone` of it. Speed: held-out fits made once
(:meth:`ProbeSearch.fit`), then scoring any number of candidate sets is a batched fold-in
per scored model against the benchmark parameters of the fit that left it out (what
``benchpress predict --scores`` does). Up to ``max_models`` models with scores, that is
one leave-one-model-out (LOMO) fit per model on every other model (exact). Past it, a
fixed seeded sample of ``max_models`` models is scored, split into ``n_groups`` groups,
each group left out of one fit, and each fit trains on at most ``max_train`` models (a
seeded sample keeping every benchmark's scores; :mod:`~benchpress.predict.probes.fits`):
``n_groups`` fits of bounded size, so the fits do not grow with the number of models
and the scoring grows with the sample, not the matrix.
The paper's design (refit the whole matrix with model ``i``'s row cut down to the
probes, once per model and per candidate set; :func:`refit_transcripts`,
``score(..., design="refit")``) is kept to validate and time against. The two differ only
in whether model ``i``'s probe cells also shape the benchmark parameters.

Models without a score on some probe are predicted from the probes they have (a model
with none gets the benchmark prior), and all their observed cells are counted.
"""

from __future__ import annotations

import copy
import time

import numpy as np

from benchpress.errors import BadInputError, NotFittedError, UsageError, listed
from benchpress.executor import get_executor
from benchpress.predict.estimator import BasePredictor, check_predictor, check_scores
from benchpress.predict.evaluation.metrics import abs_errors
from benchpress.predict.probes.results import ProbeScore, ProbeSelection, probe_set_change
from benchpress.predict.probes.fits import (fit_group, objective_block, predict_block,
                                           refit_transcripts, split_groups, train_sample)
from benchpress.predict.models.side_info import covariate_kwargs
from benchpress.predict.transform import BenchmarkScales
from benchpress.predict.size_limits import LIMITS, SizeLimits

__all__ = ["ProbeScore", "ProbeSelection", "ProbeSearch", "refit_transcripts", "probe_set_change",
           "OBJECTIVES", "SCOPES", "PAPER_SETS", "SAMPLE_SEED"]

#: The BenchPress paper's two five-probe sets (arXiv 2606.24020, section 5.1).
PAPER_SETS = {
    "paper (any benchmark)": ["gpqa_diamond", "hle", "codeforces_rating", "mmlu_pro", "arc_agi_1"],
    "paper (low-cost allowlist)": ["gpqa_diamond", "mmlu_pro", "aider_polyglot_diff",
                                   "math_500", "aime_2026"],
}
#: Seed of that sample (fixed, so a sampled search is reproducible).
SAMPLE_SEED = 0


def sample_cap(max_models: int, what: str = "max_models") -> int | None:
    """A cap on the models a probe search scores as a user gives it (0: every model) as
    `ProbeSearch` takes it (None: every model); `what` names it in the error of a cap of 1
    or 2 (a held-out fit needs at least 3 models).

    >>> sample_cap(0), sample_cap(20)
    (None, 20)
    >>> sample_cap(2, "--max-models")
    Traceback (most recent call last):
    benchpress.errors.UsageError: --max-models must be 0 (every model) or at least 3, got 2
    """
    if max_models < 0 or 0 < max_models < 3:
        raise UsageError(f"{what} must be 0 (every model) or at least 3, got {max_models}")
    return max_models or None
#: Greedy objectives: pooled median absolute error (score points) or median APE (%).
OBJECTIVES = ("medae", "medape")
#: Cells in the objective: all observed, probe cells exact ("all", paper) or non-probe only.
SCOPES = ("all", "hidden")


class ProbeSearch:
    """Held-out fits, then fast scoring and greedy selection of probe sets.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted predictor (:func:`~benchpress.predict.factory.make_predictor`); each
        leave-one-model-out fit is a clone of it.
    objective : {"medae", "medape"}, default "medae"
        What the greedy search minimises.
    scope : {"all", "hidden"}, default "all"
        Cells in the objective: all observed cells, probe cells exact (paper), or the
        non-probe cells only.
    max_models : int or None, default ``LIMITS.probe_max_models``
        With more models with observations than this, only a seeded random sample of
        ``max_models`` of them is left out and scored; None or fewer models: every model
        (exact).
    seed : int, default :data:`SAMPLE_SEED`
        Seed of that sample, of the groups and of the training sample.
    n_groups : int or None, default None
        Held-out fits: the scored models are split into this many seeded groups, each
        left out of one fit. None: ``limits.probe_groups`` for a sampled search, one fit per
        model (LOMO) for an exact one; at least the number of scored models: LOMO.
    max_train : int or None, default ``LIMITS.probe_max_train``
        With more models with observations than this, each fit trains on a seeded sample
        of this many (plus the fewest needed for every benchmark to keep ``min_scores``
        scores, or all it has), minus its held-out group; None: every model but the group.
    min_scores : int, default ``LIMITS.probe_min_benchmark_scores``
        Each benchmark keeps at least this many scores (or all it has) in that bounded
        training set.
    limits : SizeLimits
        ``probe_groups`` (above) and ``probe_chunk_cells``: candidate sets are scored in
        chunks of at most this many predicted cells (memory, never a number).
    executor : str or Executor, optional
        Where the fits and the candidate scoring run
        (:func:`benchpress.executor.get_executor`; None: in this process).

    Attributes
    ----------
    fits_ : list
        The held-out fits (slim: fold-in only), one per group.
    group_of_ : ndarray of int, shape (n_models,)
        Index into ``fits_`` of the fit that left each model out (-1: not scored);
        ``predictors_[i]`` is that fit (None for a model not scored).
    scored_ : ndarray of int, shape (n_scored,)
        The models left out and scored (ascending); ``sampled_`` is True when that is a
        sample of the models with observations rather than all of them.
    train_models_ : int
        Most models any fit trained on; ``train_bounded_``: whether ``max_train`` bound it.
    cell_model_, cell_bench_ : ndarray of int, shape (n_cells,)
        The observed cells of the scored models, row-major.
    """

    def __init__(self, predictor: BasePredictor, *, objective: str = "medae",
                 scope: str = "all", max_models: int | None = LIMITS.probe_max_models,
                 seed: int = SAMPLE_SEED, n_groups: int | None = None,
                 max_train: int | None = LIMITS.probe_max_train,
                 min_scores: int = LIMITS.probe_min_benchmark_scores,
                 limits: SizeLimits = LIMITS, executor=None):
        self.predictor = predictor
        self.objective = objective
        self.scope = scope
        self.max_models = max_models
        self.seed = seed
        self.n_groups = n_groups
        self.max_train = max_train
        self.min_scores = min_scores
        self.limits = limits
        self.executor = executor

    @property
    def method(self) -> str:
        """The predictor's method name."""
        return self.predictor.method

    def _check_objective(self) -> None:
        if self.objective not in OBJECTIVES:
            raise UsageError(f"unknown objective {self.objective!r}; choose one of {OBJECTIVES}")
        if self.scope not in SCOPES:
            raise UsageError(f"unknown scope {self.scope!r}; choose one of {SCOPES}")

    def using(self, *, objective: str, scope: str, executor=None) -> "ProbeSearch":
        """The same fitted search scored by another objective or scope (the held-out fits
        do not depend on them, so they are shared, not refitted), its scoring run by
        ``executor`` (None: in this process, whatever ran the fits)."""
        other = copy.copy(self)
        other.objective, other.scope, other.executor = objective, scope, executor
        other._check_objective()
        return other

    def fit(self, Y, scales: BenchmarkScales, *, benchmark_ids=None,
            covariates=None, progress=None) -> "ProbeSearch":
        """Make the held-out fits on ``Y`` (n_models, n_benchmarks): one per scored model
        (exact), or one per group of the scored sample, each on at most ``max_train``
        training models (see the class doc). ``covariates`` (n_models, n_features), for
        a predictor that accepts them, reach each fit with its training rows and the
        fold-ins with the held-out rows.

        ``progress(k, n, label)``, when given, is called after each fit (``k`` of ``n``;
        once at the end when the executor is not local); it only reports."""
        self._check_objective()
        Y = check_scores(Y, scales)
        if Y.shape[0] < 3:
            raise BadInputError(f"probe search needs at least 3 models, got {Y.shape[0]}")
        check_predictor(self.predictor)
        for name in ("max_models", "max_train"):
            if getattr(self, name) is not None and int(getattr(self, name)) < 3:
                raise UsageError(f"{name} must be at least 3, got {getattr(self, name)}")
        if self.n_groups is not None and int(self.n_groups) < 1:
            raise UsageError(f"n_groups must be at least 1, got {self.n_groups}")
        t0 = time.perf_counter()
        self.Y_, self.scales_ = Y, scales
        self.covariates_ = covariate_kwargs(self.predictor, covariates).get("covariates")
        self.obs_ = ~np.isnan(Y)
        self.benchmark_ids_ = (list(benchmark_ids) if benchmark_ids is not None
                               else [str(j) for j in range(Y.shape[1])])
        if len(self.benchmark_ids_) != Y.shape[1]:
            raise BadInputError("benchmark_ids do not match the matrix columns")
        n_m = Y.shape[0]
        active = np.flatnonzero(self.obs_.any(axis=1))
        self.scored_, self.sampled_ = self._sample(active)
        groups = split_groups(self.scored_, self.n_groups if self.n_groups is not None
                              else (self.limits.probe_groups if self.sampled_ else None),
                              self.seed)
        train = train_sample(self.obs_, active, self.scored_, self.max_train, self.seed,
                             self.min_scores)
        self.train_bounded_ = train is not None

        kind = ("leave-one-model-out fit" if all(g.size == 1 for g in groups)
                else "held-out group fit")
        report = None if progress is None else (
            lambda k, n: progress(k, n, f"{kind} {k} of {n}"))
        # the matrix and the predictor are shared (sent to each worker once); each task
        # is one group, whose training matrix is made where the fit runs
        self.fits_ = get_executor(self.executor).map(
            fit_group, groups, progress=report, predictor=self.predictor, Y=Y,
            scales=scales, covariates=self.covariates_, train=train)
        self.group_of_ = np.full(n_m, -1)
        for k, g in enumerate(groups):
            self.group_of_[g] = k
        self.train_models_ = max(n_m - g.size if train is None else np.setdiff1d(train, g).size
                                 for g in groups)
        self.obs_scored_ = self.obs_ & (self.group_of_ >= 0)[:, None]
        self.cell_model_, self.cell_bench_ = np.nonzero(self.obs_scored_)
        self.actual_ = Y[self.cell_model_, self.cell_bench_]
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    @property
    def predictors_(self) -> list:
        """``predictors_[i]``: the (slim) fit that left model ``i`` out, None for a model
        not scored; models of one group share one fit."""
        self._fitted()
        return [self.fits_[g] if g >= 0 else None for g in self.group_of_]

    @property
    def sample_fields(self) -> dict:
        """The sizes this search ran with, for output: ``models_scored``, ``sample_size``
        (None when every model with scores was scored), ``fits`` (held-out fits made),
        ``train_models`` (most models any fit trained on) and ``train_bounded``."""
        self._fitted()
        return {"models_scored": int(self.scored_.size),
                "n_models_with_scores": int(self.obs_.any(axis=1).sum()),
                "sample_size": int(self.scored_.size) if self.sampled_ else None,
                "fits": len(self.fits_), "train_models": int(self.train_models_),
                "train_bounded": bool(self.train_bounded_)}

    def _sample(self, active):
        """``(scored model rows, sampled?)``: all of ``active`` (exact) or a seeded sample
        of ``max_models`` of them, ascending."""
        if self.max_models is None or active.size <= int(self.max_models):
            return active, False
        rng = np.random.default_rng(self.seed)
        return np.sort(rng.choice(active, int(self.max_models), replace=False)), True

    def _covariates(self, rows) -> dict:
        """``{"covariates": rows of the search's covariates}`` or ``{}`` without them."""
        cov = getattr(self, "covariates_", None)
        return {} if cov is None else {"covariates": cov[rows]}

    def _fitted(self) -> None:
        if not hasattr(self, "fits_"):
            raise NotFittedError("ProbeSearch is not fitted; call fit(Y, scales) first")

    # ------------------------------------------------------------------ scoring core
    def _block(self) -> list:
        """Per scored model (ascending): ``(fit, score row, observed columns, fold-in
        keywords)``, what :func:`~benchpress.predict.probes.fits.predict_block` reads."""
        cov = getattr(self, "covariates_", None)
        return [(self.fits_[self.group_of_[i]], self.Y_[i], np.flatnonzero(self.obs_[i]),
                 {} if cov is None else {"covariates": cov[i]}) for i in self.scored_]

    def predict_cells(self, masks) -> np.ndarray:
        """Predicted score of every observed cell under each probe set.

        Parameters
        ----------
        masks : array_like of bool, shape (n_sets, n_benchmarks)
            Probe sets as column masks.

        Returns
        -------
        ndarray, shape (n_sets, n_cells)
            Fold-in prediction of each observed scored cell (row-major order of
            ``cell_model_``/``cell_bench_``) from its model's probe scores against the
            fit that left it out; probe cells hold the observed score.
        """
        self._fitted()
        return predict_block(self._block(), np.atleast_2d(np.asarray(masks, dtype=bool)))

    def _errors(self, masks, pred):
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        err, ape = abs_errors(self.actual_, pred)
        return err, ape, masks[:, self.cell_bench_]

    def objective_values(self, masks, target=None) -> np.ndarray:
        """The search objective (``objective`` over ``scope``) of each probe set, shape
        (n_sets,), for ``masks`` (n_sets, n_benchmarks); ``target`` (n_cells,) of bool
        restricts the cells counted. The sets are scored in chunks of at most
        ``limits.probe_chunk_cells`` predicted cells, each chunk one call of the executor's ``map``."""
        self._fitted()
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        executor = get_executor(self.executor)
        size = max(1, self.limits.probe_chunk_cells // max(self.actual_.size, 1))
        # at least one chunk per worker of a parallel executor (each chunk is scored alone:
        # the same numbers however they are cut)
        size = min(size, max(1, -(-masks.shape[0] // executor.parallelism)))
        block = self._block()
        chunks = [masks[s:s + size] for s in range(0, masks.shape[0], size)]
        return np.concatenate(executor.map(
            objective_block, chunks, block=block, actual=self.actual_,
            cell_bench=self.cell_bench_, objective=self.objective, scope=self.scope,
            target=target))

    def mask(self, idx) -> np.ndarray:
        """Column mask (n_benchmarks,) of the probe set ``idx`` (column indices)."""
        m = np.zeros(self.Y_.shape[1], dtype=bool)
        m[list(idx)] = True
        return m

    def index_of(self, ids) -> list[int]:
        """Column indices of benchmark ids; unknown ids raise :class:`BadInputError`."""
        self._fitted()
        pos = {b: j for j, b in enumerate(self.benchmark_ids_)}
        unknown = [b for b in ids if b not in pos]
        if unknown:
            raise BadInputError(f"unknown benchmark ids: {listed(unknown, quote=False)}")
        return [pos[b] for b in ids]

    def score(self, probes, *, costs=None, design: str = "fold_in") -> ProbeScore:
        """Score one probe set given as benchmark ids (or column indices); ``design``
        "refit" uses the paper's slow design (:func:`refit_transcripts`) instead."""
        idx = [p if isinstance(p, (int, np.integer)) else self.index_of([p])[0] for p in probes]
        mask = self.mask(idx)
        if design not in ("fold_in", "refit"):
            raise UsageError(f"design must be 'fold_in' or 'refit', got {design!r}")
        if design == "fold_in":
            return self.summary(idx, mask, self.predict_cells(mask[None])[0], costs)
        full = refit_transcripts(self.predictor, self.Y_, self.scales_, mask,
                                 models=self.scored_)
        pred = np.where(mask[self.cell_bench_], self.actual_, full[self.cell_model_, self.cell_bench_])
        return self.summary(idx, mask, pred, costs)

    def summary(self, idx, mask, pred, costs) -> ProbeScore:
        """:class:`ProbeScore` of the set ``idx`` (column indices; ``mask`` its column mask)
        from the predictions ``pred`` (n_cells,) of :meth:`predict_cells`."""
        err, ape, probe = self._errors(mask[None], pred[None])
        err, ape, probe = err[0], ape[0], probe[0]
        ok = np.isfinite(err)
        hid = ok & ~probe
        has = self.obs_scored_[:, mask]
        active = self.obs_scored_.any(axis=1)
        nan = float("nan")

        def med(x):
            x = x[np.isfinite(x)]
            return float(np.median(x)) if x.size else nan

        cost = None
        if costs is not None and len(idx):
            c = np.asarray(costs, dtype=float)[list(idx)]
            cost = float(c.sum()) if np.isfinite(c).all() else None
        return ProbeScore(
            probes=tuple(self.benchmark_ids_[j] for j in idx), cost=cost,
            medae=med(err[ok]), medape=med(ape[ok]), medae_hidden=med(err[hid]),
            medape_hidden=med(ape[hid]),
            within5_hidden=float(np.mean(err[hid] <= 5.0) * 100) if hid.any() else nan,
            n_cells=int(err.size), n_probe_cells=int(probe.sum()),
            n_unpredicted=int((~ok).sum()), n_models=int(active.sum()),
            n_models_missing_probe=int((active & ~has.all(axis=1)).sum()) if len(idx) else 0,
            n_models_without_probes=int((active & ~has.any(axis=1)).sum()))

    # ------------------------------------------------------------------ search
    def select(self, k: int = 5, **options) -> ProbeSelection:
        """Greedy forward selection of up to ``k`` probes with a swap pass; see
        :func:`~benchpress.predict.probes.select.select_probes` for the options."""
        from benchpress.predict.probes.select import select_probes

        return select_probes(self, k, **options)
