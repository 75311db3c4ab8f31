"""Side-information study: does `--method side` beat the default, on our own partitions?

The default these rounds were measured against is als4 (the default until 2026-12-01),
so the study runs it as `make_predictor("als4")`; its figures are als4's.

Run from the repository root after `make main` (single process, one fit at a time)::

    python benchmarks/side_info_study.py                 # choice grid on seeds 1001-1005
    python benchmarks/side_info_study.py --report        # chosen config vs default vs published

Two error measures, both pooled medians of absolute error (score points) on the 2026-05
matrix (`--sources benchpress`) with covariates from its model rows
(`benchpress.predict.models.side_info.model_covariates`):

* cells: per-model 3-fold partitions (`make_folds(..., seed)`), as `benchpress evaluate
  --make-folds 3 --seed S`;
* new models: models with at least 8 scores are split into 5 groups by seed; each group is
  held out whole, the predictor is fitted on the rest, and every held-out model is folded
  in from the first k (3 or 5) of a seeded random order of its scores; the error is
  measured on all its other scores, as `benchpress evaluate --new-models 3,5 --seed S`
  (`benchpress.predict.evaluation.new_models`).

Everything is chosen on seeds 1001-1005 only: the parameter grids (default, then `--fine`,
were run with the first covariate set: date, reasoning, open weights, providers with 3+
models), then `--covariate-sets`, then `--ablate`, then `--decay` (not adopted) and
`--blend` (blend weight 0.5 with covariates adopted), then `--gauss` (the Gaussian
posterior fold-in, covariance scale 0.5 in the fit, adopted) and `--spread` (the
ALS/regression disagreement in the interval spread, 0.5 adopted; intervals calibrated on
seeds 1001-1002, chosen on 1003-1005). Rounds one to six ran without the covariates from
the model's id (`--no-identity` reproduces them); `--identity` (seventh: small-tier word,
log10 named size, family indicators with family_scale 0.3 adopted), `--count-blend` (blend
weight per score count, not adopted), `--posterior` (eighth: the Gaussian fold-in's
posterior variance in the interval spread, 1.0 adopted), `--benchmark-scale` (a
per-benchmark conformal scale, measured, not in the product) and `--interval-eps` (ninth:
the logit margin of the interval space, the predictor's own 0.5 adopted),
`--rank-average` (side fits of other ranks averaged in, `extra_ranks`; not adopted) and
`--interval-space` (eleventh: intervals without a logit, adopted) came after.
`--pseudo-backtest` compares the two rules for a model outside the covariates' training
range on our own temporal splits (models released before 2026-01-01, cutoffs 2025-07-01
and 2025-09-01). `--report` adds fresh seeds (2001-2005, pooled and per seed) and the
published folds (reported, never used for a choice);
`--intervals` measures the 90% intervals (`--risk-covariates`: covariates as risk features);
`--backtest` the reported backtest from 2026-01-01 (5 probes).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchpress.api import BenchPress
from benchpress.api.fold_files import read_folds
from benchpress.predict import ALSPredictor, clone, evaluate, make_folds, make_predictor
from benchpress.predict.evaluation.new_models import evaluate_new_models, new_model_split
from benchpress.predict.models.side_info import model_covariates

PUBLISHED = Path("../shared/data/benchpress-2026-05/folds_s10_f3_bs42_ms1.json")
CHOICE, FRESH = (1001, 1002, 1003, 1004, 1005), (2001, 2002, 2003, 2004, 2005)


def cell_errors(pred, Y, scales, X, folds):
    res = evaluate(pred, Y, scales, folds, covariates=X)
    return res.cells["abs_error"].drop_nulls().to_numpy(), res.seconds


def blend_weight_errors(pred, Y, scales, X, seed, weights, ks=(3, 5)):
    """Pooled absolute errors per (k, w) of whole held-out models (the split of
    `benchpress evaluate --new-models`, :func:`new_model_split`): each group's fit folds
    its models in from k scores with each covariate blend weight w."""
    groups, position = new_model_split(~np.isnan(Y), seed)
    errs = {(k, w): [] for k in ks for w in weights}
    for g in groups:
        keep = np.setdiff1d(np.arange(len(Y)), g)
        fitted = clone(pred).fit(Y[keep], scales, covariates=X[keep])
        for k, w in errs:
            pos = position[g]
            S = np.where((pos >= 0) & (pos < k), Y[g], np.nan)
            fitted.covariate_regression_weight = w
            P = fitted.fold_in(S, covariates=X[g])
            errs[(k, w)].append(np.abs(P - Y[g])[pos >= k])
    return {key: np.concatenate(v) for key, v in errs.items()}


def score(pred, Y, scales, X, seeds):
    cells = np.concatenate([cell_errors(pred, Y, scales, X, make_folds(~np.isnan(Y), n_folds=3,
                                                                        seed=s))[0] for s in seeds])
    nm = evaluate_new_models(pred, Y, scales, known=(3, 5), seeds=seeds, covariates=X).overall
    return (float(np.median(cells)), *map(float, nm["medae"]))


def intervals(bp, X, side_params=None) -> None:
    """90% interval coverage and median width (percent cells), cells regime: calibrated on
    seeds 1001-1002, measured on seeds 1003-1005 (choice), 2001-2005 (fresh) and the
    published folds (reported only); covariates reach every fit (`covariates=`)."""
    from benchpress.predict.evaluation.coverage import coverage_json, evaluate_intervals

    m = bp.matrix
    obs = ~np.isnan(m.values)
    side = make_predictor("side", **(side_params or {}))
    for name, pred, Xp in (("als4", make_predictor("als4"), None), ("side", side, X)):
        for label, folds in (("1003-1005", make_folds(obs, n_folds=3, seed=1003, n_seeds=3)),
                             ("2001-2005", make_folds(obs, n_folds=3, seed=2001, n_seeds=5)),
                             ("published", read_folds(PUBLISHED, m.model_ids, m.benchmark_ids))):
            js = coverage_json(evaluate_intervals(pred, m.values, m.scales, folds, covariates=Xp))
            print(f"{name} {label}: coverage {js['coverage']:.3f} median width "
                  f"{js['median_width']:.2f}", flush=True)


def risk_covariates(bp, X) -> None:
    """Side information in the trust estimate itself: the interval risk regression gets the
    model's standardised covariates as extra features (cells regime; calibrated on seeds
    1001-1002 as `calibrate` does). Prints coverage and median width (percent cells) with
    and without them, on seeds 1003-1005 (choice), 2001-2005 and the published folds."""
    from benchpress.predict.intervals.calibration import heldout_records
    from benchpress.predict.intervals.calibrator import IntervalCalibrator

    m = bp.matrix
    Y, scales, obs = m.values, m.scales, ~np.isnan(m.values)
    sd = np.nanstd(X, axis=0)
    C = np.nan_to_num((X - np.nanmean(X, axis=0)) / np.where(sd > 0, sd, 1.0))
    side = make_predictor("side")
    cal_rec = heldout_records(side, Y, scales, make_folds(obs, n_folds=3, seed=1001, n_seeds=2),
                              covariates=X)
    sets = (("1003-1005", make_folds(obs, n_folds=3, seed=1003, n_seeds=3)),
            ("2001-2005", make_folds(obs, n_folds=3, seed=2001, n_seeds=5)),
            ("published", read_folds(PUBLISHED, m.model_ids, m.benchmark_ids)))
    recs = {label: heldout_records(side, Y, scales, f, covariates=X) for label, f in sets}
    for name, feats in (("risk features", lambda r: r["X"]),
                        ("+ covariates", lambda r: np.hstack([r["X"], C[r["i"]]]))):
        cal = IntervalCalibrator(0.1).fit(cal_rec["residual_z"], feats(cal_rec))
        for label, rec in recs.items():
            F = feats(rec)
            lo, up = np.empty(rec["j"].size), np.empty(rec["j"].size)
            for k, tr in enumerate(rec["transforms"]):
                sel = rec["fold"] == k
                lo[sel], up[sel] = cal.predict_interval(rec["zhat"][sel], F[sel], tr,
                                                        rec["j"][sel])
            pct = scales.kind[rec["j"]] == "percent"
            a = rec["actual"][pct]
            cov = np.mean((a >= lo[pct] - 1e-9) & (a <= up[pct] + 1e-9))
            print(f"side, {name}, {label}: coverage {cov:.3f} median width "
                  f"{np.median(up[pct] - lo[pct]):.2f}", flush=True)


# rounds one to four ran before the Gaussian fold-in: their grids keep the rules of then
EARLIER = dict(prior_cov_scale=None, outside_range="clip")
# third round (task: new models from 5 scores): the prior's weight per row as a function
# of its score count, weight * (prior_n / n) ** prior_decay; the negative decays (rows with
# more scores lean more on their covariates: the other direction) were added later
DECAY = [dict(prior_weight=w, prior_decay=d, prior_n=n, **EARLIER)
         for w in (3.0, 10.0) for d in (-1.0, -0.5, 0.5, 1.0, 2.0) for n in (3.0, 5.0, 8.0)]


def covariate_sets(m) -> None:
    """Covariate sets compared with the side predictor's parameters, seeds 1001-1005
    (columns of `model_covariates`: date, date squared, reasoning, open weights, effort,
    then providers)."""
    Y, scales, pred = m.values, m.scales, make_predictor("side")
    for mp in (3, 5):
        X = model_covariates(m.models, min_provider=mp, identity=False)
        prov = list(range(5, X.shape[1]))
        for name, cols in (("date, reasoning, open", [0, 2, 3]),
                           ("+ providers", [0, 2, 3] + prov),
                           ("+ providers, effort", [0, 2, 3, 4] + prov),
                           ("+ providers, date squared", [0, 1, 2, 3] + prov),
                           ("all", list(range(X.shape[1])))):
            r = score(pred, Y, scales, X[:, cols], CHOICE)
            print(f"providers >= {mp} models | {name} ({len(cols)})",
                  *(f"{v:.3f}" for v in r), flush=True)


GRID = [dict(prior_alpha=a, prior_in_fit=f, prior_weight=w, effect_alpha=e, **EARLIER)
        for a in (None, 3.0, 10.0, 30.0) for f in (False, True) for w in (1.0, 3.0)
        for e in (None, 30.0, 100.0)
        if not (a is None and (f or w != 1.0))]
# second round, around the best of the first (prior 3, in fit, weight 3, effects 30)
FINE = [dict(prior_alpha=a, prior_in_fit=True, prior_weight=w, effect_alpha=e, **EARLIER)
        for a in (1.0, 3.0) for w in (3.0, 10.0) for e in (5.0, 10.0, 20.0)]


# fourth round (new models from 5 scores): the regression blend and the ALS ridge with
# side information (the default's values were chosen without it)
BLEND = [dict(regression_weight=w, regularization=r, **EARLIER)
         for w in (0.2, 0.35, 0.5) for r in (0.05, 0.1, 0.2) if (w, r) != (0.35, 0.1)]
BLEND += [dict(regression_weight=w, regularization=0.1, **EARLIER) for w in (0.6, 0.7)]


# fifth round (new models from 5 scores): the Gaussian posterior fold-in instead of the
# isotropic ridge (prior_cov_scale None), with and without re-solving the training rows
GAUSS = [dict(prior_cov_scale=c, prior_in_fit=f) for c in (None, 0.25, 0.35, 0.5, 0.7, 1.0, 2.0)
         for f in (False, True)]
# sixth round (intervals): how much ALS/regression disagreement widens the spread
# (rounds six to nine ran in the default's interval space, logit with margin 0.05, then 0.5)
LOGIT_005 = dict(interval_logit_rule="percent_or_0_100", interval_eps=0.05)
SPREAD = [dict(spread_disagreement=k, spread_posterior=0.0, **LOGIT_005)
          for k in (0.0, 0.25, 0.35, 0.5, 0.7, 1.0, 2.0)]
# eighth round (intervals): the Gaussian fold-in's posterior predictive variance in the
# spread, then the disagreement weight again with it
POSTERIOR = ([dict(spread_posterior=w, **LOGIT_005) for w in (0.0, 0.5, 1.0, 2.0, 4.0)]
             + [dict(spread_posterior=1.0, spread_disagreement=k, **LOGIT_005)
                for k in (0.35, 0.7, 1.0)])
# ninth round (intervals): the logit margin of the interval space of a fit with covariates
# (0.05 is the default predictor's; 0.5 the predictor's own, adopted), then the spread
# weights again with it
LOGIT_05 = dict(interval_logit_rule="percent_or_0_100", interval_eps=0.5)
INTERVAL_EPS = ([dict(interval_logit_rule="percent_or_0_100", interval_eps=e)
                 for e in (0.05, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0)]
                + [dict(spread_posterior=w, **LOGIT_05) for w in (0.5, 2.0)]
                + [dict(spread_disagreement=k, **LOGIT_05) for k in (0.35, 0.7)])
# eleventh round (intervals): which benchmarks the interval space puts through a logit
# ("none": z-scores of the scores themselves, clipped to the range; adopted), then the
# spread weights again in that space
INTERVAL_SPACE = ([LOGIT_05, dict(interval_logit_rule="percent", interval_eps=0.5),
                   dict(interval_logit_rule="none")]
                  + [dict(spread_posterior=w) for w in (0.0, 0.5, 2.0)]
                  + [dict(spread_disagreement=k) for k in (0.0, 0.35, 0.7)])


class _ALS4WithoutLogit(ALSPredictor):
    """als4 (the default when these rounds ran) with its intervals made as side makes its own (no logit in
    the interval space): measured here, not in the product (`--interval-space`)."""

    def _fit(self, Y, scales) -> None:
        super()._fit(Y, scales)
        self.interval_logit_rule_ = "none"


def interval_spaces(bp, X) -> None:
    """Both interval spaces for the default and for side: coverage and median width
    (percent cells) on 1003-1005, 2001-2005 and the published folds (the default without
    the logit: measured only), then per band of predicted score on 2001-2005, and the
    median width at exactly 90% coverage."""
    from benchpress.predict.evaluation.coverage import coverage_json, evaluate_intervals
    from benchpress.predict.intervals.calibration import calibrate, heldout_records
    from benchpress.predict.intervals.calibrator import score_bounds

    m = bp.matrix
    Y, scales, obs = m.values, m.scales, ~np.isnan(m.values)
    configs = (("als4", make_predictor("als4"), None),
               ("als4 without logit",
                _ALS4WithoutLogit(**make_predictor("als4").get_params()), None),
               ("side with logit", make_predictor("side", **LOGIT_05), X),
               ("side", make_predictor("side"), X))
    for name, pred, Xp in configs:
        for label, folds in (("1003-1005", make_folds(obs, n_folds=3, seed=1003, n_seeds=3)),
                             ("2001-2005", make_folds(obs, n_folds=3, seed=2001, n_seeds=5)),
                             ("published", read_folds(PUBLISHED, m.model_ids, m.benchmark_ids))):
            js = coverage_json(evaluate_intervals(pred, Y, scales, folds, covariates=Xp))
            print(f"{name} {label}: coverage {js['coverage']:.3f} median width "
                  f"{js['median_width']:.2f}", flush=True)
    for name, pred, Xp in configs:
        cal = calibrate(pred, Y, scales, covariates=Xp)
        rec = heldout_records(pred, Y, scales, make_folds(obs, n_folds=3, seed=2001, n_seeds=5),
                              covariates=Xp)
        half = cal.q_ * cal.risk(rec["X"])
        lo, up = np.empty(half.size), np.empty(half.size)
        for k, tr in enumerate(rec["transforms"]):
            f = rec["fold"] == k
            lo[f], up[f] = score_bounds(tr, rec["zhat"][f] - half[f], rec["zhat"][f] + half[f],
                                        rec["j"][f])
        pct = scales.kind[rec["j"]] == "percent"
        hit = (rec["actual"] >= lo - 1e-9) & (rec["actual"] <= up + 1e-9)
        cells = []
        for a, b in ((-np.inf, 20), (20, 50), (50, 80), (80, 95), (95, np.inf)):
            band = pct & (rec["predicted"] >= a) & (rec["predicted"] < b)
            cells.append(f"{a:g}-{b:g}: {hit[band].mean():.3f} / {np.median((up - lo)[band]):.1f}")
        print(f"{name}, 2001-2005, coverage / median width by predicted score:",
              "; ".join(cells), flush=True)
        at90 = [_width_at(r, scales.kind[r["j"]] == "percent", cal.risk(r["X"]))
                 for r in (heldout_records(pred, Y, scales, make_folds(obs, n_folds=3, seed=1003,
                                                                       n_seeds=3), covariates=Xp),
                           rec, heldout_records(pred, Y, scales, read_folds(
                               PUBLISHED, m.model_ids, m.benchmark_ids), covariates=Xp))]
        print(f"{name}, median width at exactly 90% coverage (the same risk model, each set's "
              "own multiplier), 1003-1005 / 2001-2005 / published: "
              + " / ".join(f"{w:.2f}" for w in at90), flush=True)


def spread_grid(bp, X, grid) -> None:
    """90% interval coverage and median width (percent cells) per `grid` entry: calibrated
    on seeds 1001-1002, measured on seeds 1003-1005 (the choice)."""
    from benchpress.predict.evaluation.coverage import coverage_json, evaluate_intervals

    m = bp.matrix
    folds = make_folds(~np.isnan(m.values), n_folds=3, seed=1003, n_seeds=3)
    for cfg in grid:
        js = coverage_json(evaluate_intervals(make_predictor("side", **cfg), m.values, m.scales,
                                              folds, covariates=X))
        print(cfg, f"coverage {js['coverage']:.3f} median width {js['median_width']:.2f}",
              flush=True)


# seventh round (new models from 5 scores): covariates from the model's id (small-tier word,
# log10 of a named parameter count, family indicators shrunk by family_scale)
def identity_grid(m) -> None:
    """New-model and cell MedAE (seeds 1001-1005) per id covariate set and family_scale."""
    from benchpress.predict.models.side_info import FAMILY_LEVEL

    Y, scales = m.values, m.scales
    X = model_covariates(m.models)
    n_old = model_covariates(m.models, identity=False).shape[1]
    fam = list(np.flatnonzero((X == FAMILY_LEVEL).any(axis=0)))
    base = list(range(n_old))
    for name, cols, scale in (("no id covariates", base, 0.3),
                              ("+ small tier", base + [n_old], 0.3),
                              ("+ small tier, log10 size", base + [n_old, n_old + 1], 0.3),
                              *((f"+ families, family_scale {c}", list(range(X.shape[1])), c)
                                for c in (0.15, 0.3, 0.5, 1.0))):
        r = score(make_predictor("side", family_scale=scale), Y, scales, X[:, cols], CHOICE)
        print(f"{name} ({len(cols)} columns, {len(fam)} families)", *(f"{v:.3f}" for v in r),
              flush=True)


def count_blend(m, X, weights=(0.35, 0.5, 0.6, 0.7, 0.8)) -> None:
    """New models folded in from 3 and 5 scores (seeds 1001-1005) with the ALS/regression
    blend weight set per score count: one fit per group, one fold-in per weight."""
    errs = [blend_weight_errors(make_predictor("side"), m.values, m.scales, X, s, weights)
            for s in CHOICE]
    for key in errs[0]:
        print(f"from {key[0]} scores, blend weight {key[1]}: "
              f"{np.median(np.concatenate([e[key] for e in errs])):.3f}", flush=True)


def benchmark_scale(bp, X, shrinks=(10.0, 30.0, 100.0)) -> None:
    """A per-benchmark conformal scale on top of the risk model (not in the product: it
    would change the calibrator and its artifact): log |r / s| per benchmark, shrunk to 0
    with weight ``shrink`` cells, rescales each benchmark's risk; the global quantile is
    then taken on the rescaled ratios. Calibrated on seeds 1001-1002; coverage and median
    width (percent cells) on 1003-1005 (choice) and 2001-2005 (reported)."""
    from benchpress.predict.intervals.calibration import heldout_records
    from benchpress.predict.intervals.calibrator import IntervalCalibrator, score_bounds

    m = bp.matrix
    Y, scales, obs, nb = m.values, m.scales, ~np.isnan(m.values), m.values.shape[1]
    side = make_predictor("side")
    cal_rec = heldout_records(side, Y, scales, make_folds(obs, n_folds=3, seed=1001, n_seeds=2),
                              covariates=X)
    cal = IntervalCalibrator(0.1).fit(cal_rec["residual_z"], cal_rec["X"])
    r = cal_rec["residual_z"]
    ok = np.isfinite(r)
    ratio, jj = np.abs(r[ok] / cal.risk(cal_rec["X"][ok])), cal_rec["j"][ok]
    lr = np.log(ratio + 1e-6)
    qs = {"global": np.full(nb, cal.q_)}
    for lam in shrinks:
        b = np.bincount(jj, weights=lr - lr.mean(), minlength=nb) / (
            np.bincount(jj, minlength=nb) + lam)
        adj = ratio / np.exp(b[jj])
        level = min(1.0, np.ceil((adj.size + 1) * 0.9) / adj.size)
        qs[f"shrink {lam:g}"] = float(np.quantile(adj, level, method="higher")) * np.exp(b)
    for label, seed, n in (("1003-1005", 1003, 3), ("2001-2005", 2001, 5)):
        rec = heldout_records(side, Y, scales, make_folds(obs, n_folds=3, seed=seed, n_seeds=n),
                              covariates=X)
        s = cal.risk(rec["X"])
        pct = scales.kind[rec["j"]] == "percent"
        for name, q in qs.items():
            half = q[rec["j"]] * s
            lo, up = np.empty(s.size), np.empty(s.size)
            for k, tr in enumerate(rec["transforms"]):
                sel = rec["fold"] == k
                lo[sel], up[sel] = score_bounds(tr, rec["zhat"][sel] - half[sel],
                                                rec["zhat"][sel] + half[sel], rec["j"][sel])
            a = rec["actual"][pct]
            cov = np.mean((a >= lo[pct] - 1e-9) & (a <= up[pct] + 1e-9))
            print(f"{label}, {name}: coverage {cov:.3f} median width "
                  f"{np.median(up[pct] - lo[pct]):.2f}", flush=True)
    # the same cells are held out in every partition: learned on half the models' cells
    # (shrink 30), is the scale any sharper on the other half's? Width at 90% coverage on
    # 1003-1005 (each set's own multiplier), ten random halves
    rec = heldout_records(side, Y, scales, make_folds(obs, n_folds=3, seed=1003, n_seeds=3),
                          covariates=X)
    pct = scales.kind[rec["j"]] == "percent"
    out = []
    for rep in range(10):
        half = np.random.default_rng(100 + rep).random(Y.shape[0]) < 0.5
        a = half[cal_rec["i"][ok]]
        c = IntervalCalibrator(0.1).fit(r[ok][a], cal_rec["X"][ok][a])
        lr_a = np.log(np.abs(r[ok][a]) / c.risk(cal_rec["X"][ok][a]) + 1e-6)
        b = np.bincount(jj[a], weights=lr_a - lr_a.mean(), minlength=nb) / (
            np.bincount(jj[a], minlength=nb) + 30.0)
        s = c.risk(rec["X"])
        out.append([_width_at(rec, pct & (half[rec["i"]] == same), sc)
                    for same in (False, True) for sc in (s, s * np.exp(b[rec["j"]]))])
    print("90%%-coverage width, other models: global %.2f, per benchmark %.2f; same models: "
          "global %.2f, per benchmark %.2f" % tuple(np.mean(out, axis=0)), flush=True)


def _width_at(rec, sel, s, level=0.9) -> float:
    """Median width (score units) of the cells ``sel`` of held-out records ``rec`` with
    half-widths ``q * s`` (z units), ``q`` the ``level`` quantile of their own ``|r / s|``."""
    from benchpress.predict.intervals.calibrator import score_bounds

    q = np.quantile(np.abs(rec["residual_z"][sel] / s[sel]), level)
    w = np.empty(0)
    for k, tr in enumerate(rec["transforms"]):
        m = sel & (rec["fold"] == k)
        lo, up = score_bounds(tr, rec["zhat"][m] - q * s[m], rec["zhat"][m] + q * s[m],
                              rec["j"][m])
        w = np.concatenate([w, up - lo])
    return float(np.median(w))


def backtests(m, X, pseudo: bool) -> None:
    """Backtests, 5 probes chosen on the training models: pooled MedAE (probe cells exact)
    and non-probe MedAE. ``pseudo``: our own temporal splits (models released before
    2026-01-01; cutoffs 2025-07-01 and 2025-09-01) for the rule on rows outside the
    covariates' training range (`outside_range`); else the reported 2026-01-01 backtest."""
    from benchpress.predict.evaluation.backtest import as_date, backtest

    dates = m.models["release_date"].to_list()
    keep = np.arange(len(dates))
    if pseudo:
        keep = np.array([i for i, d in enumerate(dates)
                         if as_date(d) is not None and as_date(d) < as_date("2026-01-01")])
    Y, Xk, dk = m.values[keep], X[keep], [dates[i] for i in keep]
    runs = [("als4", make_predictor("als4"), None)]
    rules = ("default", "clip") if pseudo else ("default",)
    runs += [(f"side, outside_range={r}", make_predictor("side", outside_range=r), Xk)
             for r in rules]
    for cut in (("2025-07-01", "2025-09-01") if pseudo else ("2026-01-01",)):
        for name, pred, Xp in runs:
            r = backtest(pred, Y, m.scales, dk, cut, probes=5, benchmark_ids=m.benchmark_ids,
                         covariates=Xp)
            print(f"cutoff {cut}, {name}: pooled {r.medae:.3f} non-probe {r.overall.medae:.3f} "
                  f"({r.n_test} new releases; probes {', '.join(r.probes)})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", action="store_true", help="chosen config: fresh and published too")
    ap.add_argument("--fine", action="store_true", help="the second, finer grid")
    ap.add_argument("--decay", action="store_true", help="the third grid: prior weight by count")
    ap.add_argument("--blend", action="store_true", help="the fourth grid: blend weight, ALS ridge")
    ap.add_argument("--intervals", action="store_true", help="interval coverage and width")
    ap.add_argument("--risk-covariates", action="store_true",
                    help="intervals with the covariates as extra risk features")
    ap.add_argument("--covariate-sets", action="store_true",
                    help="which covariates earn their keep (default parameters)")
    ap.add_argument("--ablate", action="store_true", help="the chosen config minus each part")
    ap.add_argument("--gauss", action="store_true", help="the fifth grid: Gaussian fold-in")
    ap.add_argument("--spread", action="store_true", help="the sixth grid: interval spread")
    ap.add_argument("--identity", action="store_true", help="the seventh grid: id covariates")
    ap.add_argument("--count-blend", action="store_true",
                    help="blend weight per score count of new models")
    ap.add_argument("--posterior", action="store_true",
                    help="the eighth grid: posterior variance in the interval spread")
    ap.add_argument("--interval-eps", action="store_true",
                    help="the ninth grid: logit margin of the interval space")
    ap.add_argument("--interval-space", action="store_true",
                    help="the eleventh grid: logit or none in the interval space")
    ap.add_argument("--rank-average", action="store_true",
                    help="side fits of ranks 3 (and 2) averaged with the rank-4 one")
    ap.add_argument("--benchmark-scale", action="store_true",
                    help="a per-benchmark conformal scale on top of the risk model")
    ap.add_argument("--pseudo-backtest", action="store_true",
                    help="rows outside the covariates' range, on our own temporal splits")
    ap.add_argument("--backtest", action="store_true", help="the 2026-01-01 backtest")
    ap.add_argument("--no-providers", action="store_true", help="covariates without providers")
    ap.add_argument("--no-identity", action="store_true",
                    help="covariates without the id's (as rounds one to six ran)")
    args = ap.parse_args()
    bp = BenchPress.from_snapshot(".", sources=["benchpress"])
    m = bp.matrix
    Y, scales = m.values, m.scales
    X = model_covariates(m.models, providers=not args.no_providers,
                         identity=not args.no_identity)
    print(f"matrix {Y.shape}, covariates {X.shape}")
    base = make_predictor("als4")  # the default when these rounds ran
    if args.intervals:
        return intervals(bp, X)
    if args.interval_space:
        interval_spaces(bp, X)
    if args.spread or args.posterior or args.interval_eps or args.interval_space:
        return spread_grid(bp, X, INTERVAL_SPACE if args.interval_space
                           else INTERVAL_EPS if args.interval_eps
                           else POSTERIOR if args.posterior else SPREAD)
    if args.identity:
        return identity_grid(m)
    if args.count_blend:
        return count_blend(m, X)
    if args.benchmark_scale:
        return benchmark_scale(bp, X)
    if args.rank_average:  # tenth round: measured, not adopted (probes, fit time)
        for cfg in (dict(extra_ranks=()), dict(extra_ranks=(3,)), dict(extra_ranks=(2, 3))):
            p = make_predictor("side", **cfg)
            print(cfg, "cells / new k=3 / k=5, choice:",
                  *(f"{v:.3f}" for v in score(p, Y, scales, X, CHOICE)), "fresh:",
                  *(f"{v:.3f}" for v in score(p, Y, scales, X, FRESH)), flush=True)
            intervals(bp, X, cfg)
        return
    if args.pseudo_backtest or args.backtest:
        return backtests(m, X, args.pseudo_backtest)
    if args.risk_covariates:
        return risk_covariates(bp, X)
    if args.covariate_sets:
        return covariate_sets(m)
    if args.ablate:
        for name, cfg in (("chosen", {}), ("no prior", dict(prior_alpha=None)),
                          ("prior only at fold-in", dict(prior_in_fit=False)),
                          ("no effects", dict(effect_alpha=None)),
                          ("effects 2", dict(effect_alpha=2.0))):
            r = score(make_predictor("side", **cfg), Y, scales, X, CHOICE)
            print(name, *(f"{v:.3f}" for v in r), flush=True)
        return
    if not args.report:
        print("config | cells MedAE | new-model k=3 | k=5   (seeds 1001-1005)")
        print("als4", *(f"{v:.3f}" for v in score(base, Y, scales, None, CHOICE)))
        grid = (GAUSS if args.gauss else BLEND if args.blend else DECAY if args.decay
                else FINE if args.fine else GRID)
        for cfg in grid:
            t = time.perf_counter()
            r = score(make_predictor("side", **cfg), Y, scales, X, CHOICE)
            print(cfg, *(f"{v:.3f}" for v in r), f"({time.perf_counter() - t:.0f}s)", flush=True)
        return
    side = make_predictor("side")
    for name, pred, Xp in (("published", make_predictor("published"), None),
                           ("als4", base, None), ("side", side, X)):
        c = score(pred, Y, scales, Xp, CHOICE)
        f = score(pred, Y, scales, Xp, FRESH)
        folds = read_folds(PUBLISHED, m.model_ids, m.benchmark_ids)
        e, secs = cell_errors(pred, Y, scales, Xp, folds)
        print(f"{name}: choice {c[0]:.3f} | fresh {f[0]:.3f} | published {np.median(e):.3f} "
              f"({secs:.2f}s for 30 folds) | new k=3 choice {c[1]:.3f} fresh {f[1]:.3f} | "
              f"k=5 choice {c[2]:.3f} fresh {f[2]:.3f}", flush=True)
        per_seed = [float(np.median(cell_errors(pred, Y, scales, Xp, make_folds(
            ~np.isnan(Y), n_folds=3, seed=s))[0])) for s in range(2001, 2006)]
        print(f"  {name}: cells MedAE per fresh seed 2001-2005:",
              " ".join(f"{v:.3f}" for v in per_seed), flush=True)


if __name__ == "__main__":
    main()
