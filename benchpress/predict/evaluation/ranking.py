"""Pairwise ranking preservation of held-out predictions (the BenchPress paper's metric).

For every fold and benchmark, the benchmark's leaderboard is completed: models whose cell
was held out in that fold get their predicted score, every other observed model keeps its
true score. A pair of models on that leaderboard is scored when at least one of the two
cells was held out, both completed scores are finite, the true scores differ, and the
true gap is at least the margin; it is *kept* when the completed scores order the pair
the same way (a predicted tie counts as not kept). Pairs are pooled over folds per
benchmark; a benchmark's share is kept pairs / scored pairs, and the summary at each
margin is the median share over benchmarks with at least one scored pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, MissingExtraError, import_extra

__all__ = ["RankingPreservation", "ranking_preservation", "compare_models", "p_ahead_missing",
           "MARGINS", "NORMAL_Q95"]

#: Margins (score points) of the published table.
MARGINS = (0.0, 1.0, 2.0, 5.0)
#: The standard normal 95% quantile, ``scipy.stats.norm.ppf(0.95)``: a 90% two-sided
#: interval spans ``2 * NORMAL_Q95`` standard deviations (how ``compare`` turns an
#: interval into the sigma of its normal approximation).
NORMAL_Q95 = 1.6448536269514722


@dataclass(frozen=True)
class RankingPreservation:
    """Outcome of :func:`ranking_preservation`.

    Attributes
    ----------
    margins : tuple of float
    accuracy : tuple of float
        Median over benchmarks of the kept share, per margin, in percent.
    n_pairs : tuple of int
        Scored pairs per margin, all benchmarks and folds.
    n_benchmarks : tuple of int
        Benchmarks with at least one scored pair, per margin.
    per_benchmark : polars.DataFrame
        ``benchmark_id, margin, n_pairs, n_kept, n_predicted_ties, accuracy`` (percent).
    """

    margins: tuple
    accuracy: tuple
    n_pairs: tuple
    n_benchmarks: tuple
    per_benchmark: pl.DataFrame

    def summary(self) -> pl.DataFrame:
        """One row per margin: ``margin, accuracy, n_pairs, n_benchmarks``."""
        return pl.DataFrame({"margin": list(self.margins), "accuracy": list(self.accuracy),
                             "n_pairs": list(self.n_pairs),
                             "n_benchmarks": list(self.n_benchmarks)})

    def to_json(self) -> dict:
        """JSON-ready dict (NaN -> None)."""
        acc = [None if a != a else a for a in self.accuracy]
        return {"margins": list(self.margins), "accuracy": acc,
                "n_pairs": list(self.n_pairs), "n_benchmarks": list(self.n_benchmarks),
                "per_margin": self.summary().fill_nan(None).to_dicts()}


def ranking_preservation(Y, fold, model_index, benchmark_index, predicted, *,
                         margins=MARGINS, benchmark_ids=None) -> RankingPreservation:
    """Share of same-benchmark model pairs whose order the completed scores keep.

    Parameters
    ----------
    Y : array_like, shape (n_models, n_benchmarks)
        True observed scores, NaN = missing.
    fold, model_index, benchmark_index : array_like of int, shape (n_heldout,)
        Held-out cells and their fold (e.g. the columns of
        :attr:`EvaluationResult.cells <benchpress.predict.evaluation.heldout.EvaluationResult>`).
    predicted : array_like of float, shape (n_heldout,)
        Predictions of the held-out cells (NaN = not predicted: the model leaves that
        fold's leaderboard).
    margins : sequence of float
        Minimum true gaps, score points.
    benchmark_ids : sequence of str, optional
        Labels for ``per_benchmark``.

    Returns
    -------
    RankingPreservation
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2:
        raise BadInputError(f"Y must be 2-D (n_models, n_benchmarks), got {Y.shape}")
    fold = np.asarray(fold).astype(np.int64)
    ii = np.asarray(model_index).astype(np.int64)
    jj = np.asarray(benchmark_index).astype(np.int64)
    pred = np.asarray(predicted, dtype=float)
    if not (fold.shape == ii.shape == jj.shape == pred.shape) or fold.ndim != 1:
        raise BadInputError("fold, model_index, benchmark_index and predicted must be 1-D "
                            "arrays of equal length")
    if ii.size and (ii.min() < 0 or ii.max() >= Y.shape[0] or jj.min() < 0
                    or jj.max() >= Y.shape[1]):
        raise BadInputError("held-out cell index out of range for the score matrix")
    if np.isnan(Y[ii, jj]).any():
        raise BadInputError("some held-out cells are not observed in Y")
    margins = tuple(float(m) for m in margins)
    if any(m < 0 for m in margins):
        raise BadInputError(f"margins must be >= 0, got {margins}")
    n_m, n_b = Y.shape
    obs = ~np.isnan(Y)
    true_d = Y[:, None, :] - Y[None, :, :]                     # (n_models, n_models, n_b)
    upper = np.triu(np.ones((n_m, n_m), dtype=bool), k=1)[:, :, None]
    base = upper & obs[:, None, :] & obs[None, :, :] & (np.nan_to_num(true_d) != 0)
    gap = np.abs(np.nan_to_num(true_d))
    tsign = np.sign(np.nan_to_num(true_d))
    n_pairs = np.zeros((len(margins), n_b), dtype=np.int64)
    n_kept = np.zeros_like(n_pairs)
    n_ties = np.zeros_like(n_pairs)
    for f in np.unique(fold):  # one vectorised pass per fold
        sel = fold == f
        held = np.zeros((n_m, n_b), dtype=bool)
        held[ii[sel], jj[sel]] = True
        C = Y.copy()
        C[ii[sel], jj[sel]] = pred[sel]
        valid = np.isfinite(C)
        pd = C[:, None, :] - C[None, :, :]
        scored = (base & (held[:, None, :] | held[None, :, :])
                  & valid[:, None, :] & valid[None, :, :])
        psign = np.sign(np.nan_to_num(pd))
        kept = scored & (psign == tsign)
        tie = scored & (psign == 0)
        for k, m in enumerate(margins):
            big = gap >= m
            n_pairs[k] += (scored & big).sum(axis=(0, 1))
            n_kept[k] += (kept & big).sum(axis=(0, 1))
            n_ties[k] += (tie & big).sum(axis=(0, 1))
    bids = list(benchmark_ids) if benchmark_ids is not None else [str(j) for j in range(n_b)]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n_pairs > 0, n_kept / np.maximum(n_pairs, 1) * 100.0, np.nan)
    rows = pl.DataFrame({
        "benchmark_id": np.tile(np.asarray(bids, dtype=object), len(margins)).tolist(),
        "margin": np.repeat(margins, n_b),
        "n_pairs": n_pairs.ravel(), "n_kept": n_kept.ravel(),
        "n_predicted_ties": n_ties.ravel(), "accuracy": acc.ravel(),
    }).filter(pl.col("n_pairs") > 0).with_columns(pl.col("accuracy").fill_nan(None))
    med = tuple(float(np.nanmedian(a)) if np.isfinite(a).any() else float("nan") for a in acc)
    return RankingPreservation(
        margins=margins, accuracy=med, n_pairs=tuple(int(x) for x in n_pairs.sum(axis=1)),
        n_benchmarks=tuple(int(x) for x in (n_pairs > 0).sum(axis=1)), per_benchmark=rows)


def p_ahead_missing() -> str | None:
    """Why `compare_models` leaves ``p_ahead`` empty on this install, as one line (None when
    it can compute it): its normal CDF is scipy's, which the core install lacks."""
    try:
        import_extra("scipy.special")
    except MissingExtraError as exc:
        return f"p_ahead left out: {exc}"
    return None


def compare_models(names, values, observed, higher_is_better, *, sigma=None, noise=None,
                   ranges=None, intervals: dict | None = None,
                   benchmark_ids=None) -> pl.DataFrame:
    """Models side by side per benchmark: who is ahead, by how much, and how sure.

    Parameters
    ----------
    names : sequence of str, length n_cmp
    values : array_like, shape (n_cmp, n_benchmarks)
        Observed score where there is one, else the prediction (NaN = none).
    observed : array_like of bool, shape (n_cmp, n_benchmarks)
    higher_is_better : array_like of bool, shape (n_benchmarks,)
    sigma : array_like, shape (n_cmp, n_benchmarks), optional
        Uncertainty (std, score units) of each predicted value. Without it ``p_ahead`` is
        left empty where a predicted value takes part.
    noise : array_like, shape (n_benchmarks,), optional
        Each benchmark's measurement noise (std, score units; `store.noise`): the
        uncertainty of an observed value (NaN or not given: exact).
    ranges : array_like, shape (n_benchmarks,), optional
        What a gap is measured against (score units; the scale's width): gives
        ``relative_gap`` (NaN or not given: null).
    intervals : dict, optional
        ``lower``, ``upper`` (score units) and ``trust`` arrays shaped like ``values``:
        each predicted value's 90% interval and trust probability (ignored where
        observed).

    Returns
    -------
    polars.DataFrame
        ``benchmark_id``, per model ``<name>`` (score) and ``<name>_src`` (observed /
        predicted), with ``intervals`` also ``<name>_lower``, ``<name>_upper`` and
        ``<name>_trust`` (null for observed scores); then ``leader``, ``gap`` (leader
        minus runner-up, score points) and ``p_ahead`` (normal approximation of
        P(leader ahead of runner-up), each value's uncertainty its sigma or noise; 1 for
        two exact values apart; empty without scipy, see `p_ahead_missing`), and
        ``relative_gap``, the gap as a share of the benchmark's range (how big it is
        there: the people's table lists the biggest first).
    """

    V = np.atleast_2d(np.asarray(values, dtype=float))
    O = np.atleast_2d(np.asarray(observed, dtype=bool))
    n_cmp, n_b = V.shape
    if len(names) != n_cmp or O.shape != V.shape or len(set(names)) != n_cmp:
        raise BadInputError("compare needs distinct names and equally shaped values/observed")
    hib = np.asarray(higher_is_better, dtype=bool)
    signed = np.where(hib, V, -V)
    order = np.argsort(np.where(np.isnan(signed), -np.inf, -signed), axis=0, kind="stable")
    lead, second = order[0], order[1] if n_cmp > 1 else order[0]
    cols = np.arange(n_b)
    finite = np.isfinite(V[lead, cols]) & np.isfinite(V[second, cols]) & (n_cmp > 1)
    gap = np.where(finite, np.abs(V[lead, cols] - V[second, cols]), np.nan)
    p = np.full(n_b, np.nan)
    if (sigma is not None or noise is not None) and p_ahead_missing() is None:
        ndtr = import_extra("scipy.special").ndtr  # here: slow to import, and not in the core
        exact = np.zeros(n_b) if noise is None else np.nan_to_num(np.asarray(noise, float))
        spread = (np.full(V.shape, np.nan) if sigma is None
                  else np.atleast_2d(np.asarray(sigma, dtype=float)))
        S = np.where(O, exact[None, :], spread)
        sd = np.sqrt(S[lead, cols] ** 2 + S[second, cols] ** 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            zz = np.where(sd > 0, gap / sd, np.where(gap > 0, np.inf, 0.0))
        p = np.where(finite & np.isfinite(sd), ndtr(zz), np.nan)
    bids = list(benchmark_ids) if benchmark_ids is not None else [str(j) for j in range(n_b)]
    data = {"benchmark_id": bids}
    for k, name in enumerate(names):
        data[name] = V[k]
        data[f"{name}_src"] = np.where(O[k], "observed",
                                       np.where(np.isfinite(V[k]), "predicted", "")).tolist()
        for key in ("lower", "upper", "trust") if intervals is not None else ():
            data[f"{name}_{key}"] = np.where(O[k], np.nan, np.asarray(intervals[key], float)[k])
    names = list(names)
    data["leader"] = [names[int(x)] if f else None for x, f in zip(lead, finite)]
    data["gap"] = gap
    data["p_ahead"] = p
    width = np.full(n_b, np.nan) if ranges is None else np.asarray(ranges, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        data["relative_gap"] = np.where(width > 0, gap / width, np.nan)
    frame = pl.DataFrame(data)
    return frame.with_columns([pl.col(c).fill_nan(None) for c, t in frame.schema.items()
                               if t == pl.Float64])
