"""Probe sets: which few benchmarks to run on a new model to recover the rest of its row.

Transcript recovery of a probe set ``P`` is scored the way a user meets it: for every
model ``i``, the predictor has seen every *other* model in full and only model ``i``'s
scores on ``P`` (those it has), and predicts the rest of model ``i``'s observed row.
Pooled over all observed cells of all models, with probe cells counting as exact
(error 0, as in the BenchPress paper), this gives the probe set's ``medae``/``medape``;
``*_hidden`` figures use the non-probe cells alone.

The predictor is an unfitted object; every fit here is a
:func:`~benchpress.predict.base.clone` of it. Speed: one leave-one-model-out (LOMO) fit per
model, made once (:meth:`ProbeSearch.fit`) -- or, past ``max_models`` models, for a fixed
seeded sample of ``max_models`` models (every model still informs each fit; only the
sample is left out and scored), so the search grows linearly with the number of models;
scoring any number of candidate sets is then a batched fold-in per model against that
model's LOMO benchmark parameters (what ``benchpress predict --scores`` does).
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
from dataclasses import asdict, dataclass, field

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, NotFittedError, UsageError
from benchpress.predict._threads import single_blas_thread
from benchpress.predict.base import BasePredictor, check_predictor, check_scores, clone
from benchpress.predict.metrics import abs_errors
from benchpress.predict.side import covariate_kwargs
from benchpress.predict.transform import BenchmarkScales

__all__ = ["ProbeScore", "ProbeSelection", "ProbeSearch", "refit_transcripts", "probe_set_change",
           "OBJECTIVES", "SCOPES", "PAPER_SETS", "MAX_MODELS", "SAMPLE_SEED"]

#: The BenchPress paper's two five-probe sets (arXiv 2606.24020, section 5.1).
PAPER_SETS = {
    "paper (any benchmark)": ["gpqa_diamond", "hle", "codeforces_rating", "mmlu_pro", "arc_agi_1"],
    "paper (low-cost allowlist)": ["gpqa_diamond", "mmlu_pro", "aider_polyglot_diff",
                                   "math_500", "aime_2026"],
}
#: Default cap on the models left out and scored (above it: a seeded sample of this size).
MAX_MODELS = 200
#: Seed of that sample (fixed, so a sampled search is reproducible).
SAMPLE_SEED = 0
#: Greedy objectives: pooled median absolute error (score points) or median APE (%).
OBJECTIVES = ("medae", "medape")
#: Cells in the objective: all observed, probe cells exact ("all", paper) or non-probe only.
SCOPES = ("all", "hidden")


@dataclass(frozen=True)
class ProbeScore:
    """Transcript-recovery error of one probe set (see module doc); ``cost`` is the
    probes' summed cost (None when some cost is unknown)."""

    probes: tuple
    cost: float | None
    medae: float
    medape: float
    medae_hidden: float
    medape_hidden: float
    within5_hidden: float
    n_cells: int
    n_probe_cells: int
    n_unpredicted: int
    n_models: int
    n_models_missing_probe: int
    n_models_without_probes: int

    def to_json(self) -> dict:
        """JSON-ready dict (NaN -> None)."""
        return {**{k: None if isinstance(v, float) and v != v else v
                   for k, v in asdict(self).items()}, "probes": list(self.probes)}


@dataclass
class ProbeSelection:
    """Outcome of :meth:`ProbeSearch.select`: the chosen set at every k = 1..K."""

    objective: str
    scope: str
    method: str
    steps: list            # ProbeScore of the chosen set at k = 1..K
    candidates: tuple
    budget: float | None
    swaps: list = field(default_factory=list)   # {"k", "out", "in", "before", "after"}
    n_sets_scored: int = 0
    seconds: float = 0.0
    fit_seconds: float = 0.0

    @property
    def final(self) -> ProbeScore:
        """The chosen set at the largest k."""
        return self.steps[-1]

    def curve(self) -> pl.DataFrame:
        """One row per k: ``k, probes, cost, medae, medape, medae_hidden, medape_hidden``."""
        return pl.DataFrame([{
            "k": len(s.probes), "probes": ",".join(s.probes), "cost": s.cost,
            "medae": s.medae, "medape": s.medape, "medae_hidden": s.medae_hidden,
            "medape_hidden": s.medape_hidden} for s in self.steps],
            schema_overrides={"cost": pl.Float64})

    def to_json(self) -> dict:
        return {"objective": self.objective, "scope": self.scope, "method": self.method,
                **self.final.to_json(), "budget": self.budget, "candidates": list(self.candidates),
                "n_candidates": len(self.candidates), "steps": [s.to_json() for s in self.steps],
                "swaps": self.swaps, "n_sets_scored": self.n_sets_scored,
                "seconds": self.seconds, "fit_seconds": self.fit_seconds}


def probe_set_change(previous, current) -> dict:
    """How a probe set moved between two selections: ``kept`` and ``added`` (in the order
    of ``current``) and ``dropped`` (in the order of ``previous``), lists of ids."""
    prev, cur = set(previous), set(current)
    return {"kept": [b for b in current if b in prev], "added": [b for b in current if b not in prev],
            "dropped": [b for b in previous if b not in cur]}


def refit_transcripts(predictor: BasePredictor, Y, scales: BenchmarkScales, probe_mask, *,
                      models=None, covariates=None) -> np.ndarray:
    """The paper's design: per model, refit (a clone of the unfitted ``predictor``) on the
    matrix with that model's row cut down to the probes, and read its predicted row.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; each refit is a clone.
    probe_mask : array_like of bool, shape (n_benchmarks,)
    models : sequence of int, optional
        Model rows to predict (default: all).
    covariates : ndarray, shape (n_models, n_features), optional
        Reach every refit of a predictor that accepts them.

    Returns
    -------
    ndarray, shape (n_models, n_benchmarks): predicted rows (NaN for rows not in ``models``).
    """
    Y = check_scores(Y, scales)
    probe = np.asarray(probe_mask, dtype=bool)
    out = np.full(Y.shape, np.nan)
    rows = range(Y.shape[0]) if models is None else models
    with single_blas_thread():
        for i in rows:  # one refit per model: the slow design this module replaces
            Yt = Y.copy()
            Yt[i, ~probe] = np.nan
            out[i] = clone(predictor).fit(
                Yt, scales, **covariate_kwargs(predictor, covariates)).complete(
                keep_observed=False)[i]
    return out


class ProbeSearch:
    """Leave-one-model-out fits, then fast scoring and greedy selection of probe sets.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted predictor (:func:`~benchpress.predict.predictor.make_predictor`); each
        leave-one-model-out fit is a clone of it.
    objective : {"medae", "medape"}, default "medae"
        What the greedy search minimises.
    scope : {"all", "hidden"}, default "all"
        Cells in the objective: all observed cells, probe cells exact (paper), or the
        non-probe cells only.
    max_models : int or None, default :data:`MAX_MODELS`
        With more models with observations than this, only a seeded random sample of
        ``max_models`` of them is left out, fitted and scored (one fit each on all other
        models); None or fewer models: every model (exact).
    seed : int, default :data:`SAMPLE_SEED`
        Seed of that sample.

    Attributes
    ----------
    predictors_ : list
        ``predictors_[i]`` was fitted on every model but ``i`` (None for a model with no
        observations or outside the sample).
    scored_ : ndarray of int, shape (n_scored,)
        The models left out and scored (ascending); ``sampled_`` is True when that is a
        sample of the models with observations rather than all of them.
    cell_model_, cell_bench_ : ndarray of int, shape (n_cells,)
        The observed cells, row-major.
    """

    def __init__(self, predictor: BasePredictor, *, objective: str = "medae",
                 scope: str = "all", max_models: int | None = MAX_MODELS,
                 seed: int = SAMPLE_SEED):
        self.predictor = predictor
        self.objective = objective
        self.scope = scope
        self.max_models = max_models
        self.seed = seed

    @property
    def method(self) -> str:
        """The predictor's method name."""
        return self.predictor.method

    def _check_objective(self) -> None:
        if self.objective not in OBJECTIVES:
            raise UsageError(f"unknown objective {self.objective!r}; choose one of {OBJECTIVES}")
        if self.scope not in SCOPES:
            raise UsageError(f"unknown scope {self.scope!r}; choose one of {SCOPES}")

    def using(self, *, objective: str, scope: str) -> "ProbeSearch":
        """The same fitted search scored by another objective or scope (the leave-one-model-
        out fits do not depend on them, so they are shared, not refitted)."""
        other = copy.copy(self)
        other.objective, other.scope = objective, scope
        other._check_objective()
        return other

    def fit(self, Y, scales: BenchmarkScales, *, benchmark_ids=None,
            covariates=None, progress=None) -> "ProbeSearch":
        """Fit one predictor per held-out model on ``Y`` (n_models, n_benchmarks);
        ``covariates`` (n_models, n_features), for a predictor that accepts them, reach
        each fit without the held-out model's row and its fold-ins with that row.

        ``progress(k, n, label)``, when given, is called after each model's fit (``k`` of
        ``n`` models); it only reports (the fits are the same without it)."""
        self._check_objective()
        Y = check_scores(Y, scales)
        if Y.shape[0] < 3:
            raise BadInputError(f"probe search needs at least 3 models, got {Y.shape[0]}")
        check_predictor(self.predictor)
        t0 = time.perf_counter()
        self.Y_, self.scales_ = Y, scales
        self.covariates_ = covariate_kwargs(self.predictor, covariates).get("covariates")
        self.obs_ = ~np.isnan(Y)
        self.benchmark_ids_ = (list(benchmark_ids) if benchmark_ids is not None
                               else [str(j) for j in range(Y.shape[1])])
        if len(self.benchmark_ids_) != Y.shape[1]:
            raise BadInputError("benchmark_ids do not match the matrix columns")
        if self.max_models is not None and int(self.max_models) < 3:
            raise UsageError(f"max_models must be at least 3, got {self.max_models}")
        n_m = Y.shape[0]
        self.scored_, self.sampled_ = self._sample(np.flatnonzero(self.obs_.any(axis=1)))
        # one LOMO fit per scored model (a loop over fits, each vectorised)
        fits = [None] * n_m
        with single_blas_thread():
            for n, i in enumerate(self.scored_):
                fits[i] = clone(self.predictor).fit(np.delete(Y, i, axis=0), scales,
                                                    **self._covariates(np.arange(n_m) != i))
                if progress is not None:
                    progress(n + 1, self.scored_.size,
                             f"leave-one-model-out fit {n + 1} of {self.scored_.size}")
        self.predictors_ = fits
        self.obs_scored_ = self.obs_ & np.isin(np.arange(n_m), self.scored_)[:, None]
        self.cell_model_, self.cell_bench_ = np.nonzero(self.obs_scored_)
        self.actual_ = Y[self.cell_model_, self.cell_bench_]
        self.fit_seconds_ = time.perf_counter() - t0
        return self

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
        if not hasattr(self, "predictors_"):
            raise NotFittedError("ProbeSearch is not fitted; call fit(Y, scales) first")

    # ------------------------------------------------------------------ scoring core
    def predict_cells(self, masks) -> np.ndarray:
        """Predicted score of every observed cell under each probe set.

        Parameters
        ----------
        masks : array_like of bool, shape (n_sets, n_benchmarks)
            Probe sets as column masks.

        Returns
        -------
        ndarray, shape (n_sets, n_cells)
            Fold-in prediction of each observed cell (row-major order of
            ``cell_model_``/``cell_bench_``) from its model's probe scores; probe cells
            hold the observed score.
        """
        with single_blas_thread():
            return self._predict_cells(masks)

    def _predict_cells(self, masks) -> np.ndarray:
        self._fitted()
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        n_sets, n_b = masks.shape
        out = np.empty((n_sets, self.actual_.size))
        start = 0
        for i in self.scored_:  # per scored model: its own LOMO parameters
            pred, js = self.predictors_[i], np.flatnonzero(self.obs_[i])
            seen = masks[:, js]                                   # (n_sets, n_obs_i)
            uniq, inv = np.unique(seen, axis=0, return_inverse=True)
            rows = np.full((uniq.shape[0], n_b), np.nan)
            rows[:, js] = np.where(uniq, self.Y_[i, js], np.nan)
            extra = self._covariates(np.full(rows.shape[0], i))
            P = pred.fold_in(rows, **extra)[:, js]                # (n_unique, n_obs_i)
            P = np.where(uniq, self.Y_[i, js], P)                 # probe cells are exact
            out[:, start:start + js.size] = P[inv.reshape(-1)]
            start += js.size
        return out

    def _errors(self, masks, pred):
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        err, ape = abs_errors(self.actual_, pred)
        return err, ape, masks[:, self.cell_bench_]

    def objective_values(self, masks, target=None) -> np.ndarray:
        """The search objective (``objective`` over ``scope``) of each probe set, shape
        (n_sets,), for ``masks`` (n_sets, n_benchmarks); ``target`` (n_cells,) of bool
        restricts the cells counted."""
        err, ape, probe = self._errors(masks, self.predict_cells(masks))
        vals = err if self.objective == "medae" else ape
        if self.scope == "hidden":
            vals = np.where(probe, np.nan, vals)
        return np.nanmedian(vals if target is None else vals[:, target], axis=1)

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
            raise BadInputError(f"unknown benchmark ids: {', '.join(unknown)}")
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
        :func:`~benchpress.predict.probe_select.select_probes` for the options."""
        from benchpress.predict.probe_select import select_probes

        return select_probes(self, k, **options)
