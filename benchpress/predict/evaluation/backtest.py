"""Temporal stress test: predict models released after a cutoff from a few probe scores.

Models released before the cutoff form the training matrix; every model released on or
after it is a *new release*. The probe set is either given or chosen by
:class:`~benchpress.predict.probes.search.ProbeSearch` on the training models alone (so nothing
about the new releases leaks into the choice). The predictor is fitted once on the
training matrix, and each new release's row is predicted by fold-in from its probe
scores alone (the new releases do not see each other). Errors are pooled over the new
releases' observed cells: ``medae`` counts probe cells as exact (error 0), as in the
paper; ``medae_hidden`` uses the non-probe cells alone. Models without a release date
are left out and counted.

When the probes are chosen here, the greedy objective counts only the training models
released in the ``recent_months`` before the cutoff (all training models still inform
every fit): new releases resemble recent ones and report the benchmarks recent models
report, so probes that older models happened to run are not favoured.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, UsageError, listed
from benchpress.predict.estimator import BasePredictor, check_scores, clone
from benchpress.predict.models.side_info import covariate_kwargs
from benchpress.predict.evaluation.metrics import Metrics, compute_metrics
from benchpress.predict.probes.search import ProbeSearch
from benchpress.predict.transform import BenchmarkScales

__all__ = ["months_before", "BacktestResult", "backtest", "as_date"]


@dataclass
class BacktestResult:
    """Outcome of :func:`backtest`.

    Attributes
    ----------
    cutoff : str
        ISO date; training models were released strictly before it.
    probes : tuple of str
    probes_chosen_on : str
        ``"given"`` or ``"training models"``.
    n_train, n_test, n_undated : int
    overall : Metrics
        Non-probe cells of the new releases (``medae`` here is the hidden-cell MedAE).
    medae, medape : float
        Pooled over all the new releases' observed cells, probe cells exact.
    per_model : polars.DataFrame
        ``model_id, release_date, n_probes, n_hidden, medae_hidden``.
    cells : polars.DataFrame
        ``model_id, benchmark_id, actual, predicted, is_probe``.
    """

    method: str
    cutoff: str
    probes: tuple
    probes_chosen_on: str
    n_train: int
    n_test: int
    n_undated: int
    medae: float
    medape: float
    overall: Metrics
    per_model: pl.DataFrame
    cells: pl.DataFrame

    def to_json(self) -> dict:
        o = self.overall
        doc = {"method": self.method, "cutoff": self.cutoff, "probes": list(self.probes),
               "probes_chosen_on": self.probes_chosen_on, "n_train": self.n_train,
               "n_test": self.n_test, "n_undated": self.n_undated, "medae": self.medae,
               "medape": self.medape, "medae_hidden": o.medae, "medape_hidden": o.medape,
               "within3_hidden": o.within3, "within5_hidden": o.within5,
               "coverage": o.coverage, "n_cells": int(self.cells.height),
               "n_hidden_cells": o.n_cells, "per_model": self.per_model.to_dicts()}
        return {k: None if isinstance(v, float) and v != v else v for k, v in doc.items()}


def months_before(day: dt.date, months: float) -> dt.date:
    """The date `months` (average) months before `day`."""
    return day - dt.timedelta(days=30.44 * float(months))


def as_date(value) -> dt.date | None:
    """A release date as a date; None when missing or not a full ISO date (e.g. '2025')."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def backtest(predictor: BasePredictor, Y, scales: BenchmarkScales, release_dates, cutoff, *,
             probes=5, model_ids=None, benchmark_ids=None, candidates=None,
             recent_months: float | None = 6.0, covariates=None) -> BacktestResult:
    """Fit on models released before ``cutoff``; predict each later model from its probes.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; the probe search and the training fit use clones of it.
    Y : array_like, shape (n_models, n_benchmarks)
        Scores, NaN = missing.
    release_dates : sequence, length n_models
        ISO date strings or dates (None = unknown: left out).
    cutoff : str or date
    probes : int or sequence of str
        A number: choose that many probes greedily on the training models (LOMO
        transcript recovery, pooled MedAE); a list of benchmark ids: use them.
    candidates : sequence of str, optional
        Allowed probes for the greedy choice.
    recent_months : float, optional, default 6
        The greedy objective counts the training models released this many months
        (30.44 days each) before the cutoff; None or 0: every training model. Falls back
        to every training model when fewer than 3 are that recent.
    covariates : ndarray, shape (n_models, n_features), optional
        Per-model covariates (predictors that accept them): the training rows reach the
        probe search and the fit, the test rows their fold-in.

    Returns
    -------
    BacktestResult
    """
    Y = check_scores(Y, scales)
    n_m, n_b = Y.shape
    mids = list(model_ids) if model_ids is not None else [str(i) for i in range(n_m)]
    bids = list(benchmark_ids) if benchmark_ids is not None else [str(j) for j in range(n_b)]
    if len(mids) != n_m or len(bids) != n_b or len(release_dates) != n_m:
        raise BadInputError("model_ids, benchmark_ids and release_dates must match Y's shape")
    cut = as_date(cutoff)
    if cut is None:
        raise UsageError(f"cutoff must be an ISO date (YYYY-MM-DD), got {cutoff!r}")
    dates = [as_date(d) for d in release_dates]
    dated = np.array([d is not None for d in dates])
    before = np.array([d is not None and d < cut for d in dates])
    test = dated & ~before & (~np.isnan(Y)).any(axis=1)
    if before.sum() < 3:
        raise BadInputError(f"only {int(before.sum())} models were released before {cut}; "
                            "need at least 3 to fit")
    if not test.any():
        raise BadInputError(f"no model with scores was released on or after {cut}")
    Y_train = Y[before]
    train_kw = covariate_kwargs(predictor, covariates, before)
    pred = clone(predictor).fit(Y_train, scales, **train_kw)
    test_kw = covariate_kwargs(predictor, covariates, test)
    if test_kw and not pred.covariates_apply(test_kw["covariates"]).any():
        train_kw = {}  # the new releases are folded in without them: choose probes so too
    if isinstance(probes, (int, np.integer)):
        search = ProbeSearch(predictor).fit(Y_train, scales, benchmark_ids=bids, **train_kw)
        recent, chosen_on = None, "training models"
        if recent_months:
            start = months_before(cut, recent_months)
            recent = np.array([d >= start for d, b in zip(dates, before) if b])
            if recent.sum() >= 3:
                chosen_on = f"training models released since {start.isoformat()}"
            else:
                recent = None
        chosen = list(search.select(int(probes), candidates=candidates, swap="none",
                                    models=recent).final.probes)
    else:
        chosen = list(probes)
        unknown = [p for p in chosen if p not in bids]
        if unknown:
            raise BadInputError(f"unknown probe benchmarks: {listed(unknown, quote=False)}")
        chosen_on = "given"
    pmask = np.isin(np.asarray(bids, dtype=object), chosen)
    Y_test = Y[test]
    rows = np.where(pmask, Y_test, np.nan)
    P = np.atleast_2d(pred.fold_in(rows, **test_kw))
    obs = ~np.isnan(Y_test)
    ti, tj = np.nonzero(obs)
    is_probe = pmask[tj]
    actual = Y_test[ti, tj]
    predicted = np.where(is_probe, actual, P[ti, tj])
    test_ids = [m for m, t in zip(mids, test) if t]
    test_dates = [str(d) for d, t in zip(dates, test) if t]
    err = np.abs(predicted - actual)
    hidden = ~is_probe
    overall = compute_metrics(actual[hidden], predicted[hidden])
    pooled = compute_metrics(actual, predicted)
    cells = pl.DataFrame({
        "model_id": [test_ids[i] for i in ti.tolist()],
        "benchmark_id": [bids[j] for j in tj.tolist()],
        "actual": actual, "predicted": predicted, "abs_error": err, "is_probe": is_probe,
    }).with_columns(pl.col("predicted").fill_nan(None), pl.col("abs_error").fill_nan(None))
    per_model = (cells.group_by("model_id", maintain_order=True).agg(
        pl.col("is_probe").sum().alias("n_probes"),
        (~pl.col("is_probe")).sum().alias("n_hidden"),
        pl.col("abs_error").filter(~pl.col("is_probe")).median().alias("medae_hidden"))
        .join(pl.DataFrame({"model_id": test_ids, "release_date": test_dates}), on="model_id")
        .select("model_id", "release_date", "n_probes", "n_hidden", "medae_hidden"))
    return BacktestResult(
        method=predictor.method, cutoff=cut.isoformat(), probes=tuple(chosen),
        probes_chosen_on=chosen_on, n_train=int(before.sum()), n_test=int(test.sum()),
        n_undated=int((~dated).sum()), medae=pooled.medae, medape=pooled.medape,
        overall=overall, per_model=per_model, cells=cells)
