"""Learn the default's gate on earlier cutoffs, and check it on splits not used for choosing.

Reads the cells of `benchmarks/forecast_parts.py` (every part of the default scored on the
same forecasts: the yardstick's 12 cutoffs, the paper matrix's whole-model splits, the
later-release pairs), builds each cell's parts and features exactly as
:class:`~benchpress.predict.models.blend.NeighbourBlend` does
(:func:`~benchpress.predict.models.gate.gate_features`), and fits the gate's coefficients
on the *choosing* cells only: the yardstick's cutoffs before ``--split`` (2025-12-01) and
the paper matrix's seeds 1001-1005. The loss is the mean of ``sqrt(e^2 + 1)``, ``e`` the
error in points (a smooth absolute error), with a small ridge penalty. Then it prints,
per split, reveal order, k and metadata run, the gate's MedAE beside each part's and the
old default's, on the choosing cells and on the rest (the yardstick's later cutoffs, the
paper's seeds 42-46, the later-release pairs on the paper's matrix and on the whole
registry), and the coefficients as the Python literal of ``GATE_COEF``.

Run from the repository root::

    python benchmarks/forecast_parts.py --out /tmp/parts.parquet     # ~30 min on 2 cores
    python benchmarks/gate_study.py /tmp/parts.parquet

Several parts files may be given. ``--learn-on`` names the splits whose choosing cells
the gate learns on: ``wyardstick`` (the yardstick's early cutoffs on the whole registry)
or ``epairs`` (earlier leaderboards' pairs on it) learn a gate of the whole registry, where
the low-rank half has no metadata (:data:`CELLS_SPLITS`; docs/results/tries.md, tenth
round).

``--offset-only`` holds the coefficients at ``GATE_COEF`` and fits the new-model offset
alone; ``--trend-from-later`` learns with each paper-split cell at its model's true
newness (its metadata withheld or not), so that only later releases teach the offset
(docs/results/tries.md, eighth round).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date

import numpy as np
import polars as pl
from scipy.optimize import minimize

from benchpress.errors import UsageError, run_script
from benchpress.predict.models.gate import (FEATURES, GATE_COEF, PARTS, TREND, Gate,
                                            part_weights,
                                            gate_features, newness, trend_features)

#: The runs of a later model: folded in with its metadata (where it has any), and without.
RUNS = ("given", "none")
#: Splits whose registries take the cells solver (thousands of models).
CELLS_SPLITS = ("wyardstick", "wpairs", "epairs")


def _read_parts(path) -> pl.DataFrame:
    """One parts file of `benchmarks/forecast_parts.py`; a file that is missing, is not
    Parquet or lacks the parts' columns is a one-line UsageError naming it."""
    try:
        d = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{path}: not a readable parts file ({reason})") from None
    missing = {"split", "scale"} - set(d.columns)
    if missing:
        raise UsageError(f"{path}: not a parts file of benchmarks/forecast_parts.py (no "
                         f"{', '.join(sorted(missing))} column)")
    return d


def cells_of(paths, split_at: str) -> pl.DataFrame:
    """The percent cells of parts files, once per metadata run, with the columns the
    gate reads: ``z_<part>`` for each part of :data:`PARTS` (NaN: no answer), ``meta``
    (metadata used), ``choose`` (a choosing cell), and ``nearest`` (the shifted nearest
    models alone, score units)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    d = pl.concat([_read_parts(p) for p in paths], how="diagonal_relaxed")
    d = d.filter(pl.col("scale") == "percent")
    d = d.with_columns(pl.col(c).fill_null(np.nan) for c in d.columns
                       if c.startswith("z_") or c.endswith("_noise") or "noise_" in c)
    # a registry of the cells solver: the low-rank half takes no metadata (the gate sees
    # none and has no plain half); the date still serves the regression and the offset
    cells = pl.col("split").is_in(list(CELLS_SPLITS))
    runs = []
    for run in RUNS:
        given = pl.col("has_meta") & pl.lit(run == "given")
        runs.append(d.with_columns(
            pl.lit(run).alias("metadata"), (given & ~cells).alias("meta"),
            given.alias("dated"),
            pl.when(given).then(pl.col("z_side_meta")).otherwise(pl.col("z_side_nometa"))
            .alias("z_low_rank"),
            pl.when(given & ~cells).then(pl.col("z_side_nometa")).otherwise(np.nan)
            .alias("z_low_rank_plain"),
            pl.col("z_kshift").alias("z_neighbours"),
            pl.when(pl.lit(run == "given")).then(pl.col("z_regt_meta"))
            .otherwise(pl.col("z_regt_none")).alias("z_regression"),
            pl.when(pl.lit(run == "given")).then(pl.col("regt_noise_meta"))
            .otherwise(pl.col("regt_noise_none")).alias("reg_noise_t"),
            pl.when(given).then(pl.col("default_meta")).otherwise(pl.col("default_nometa"))
            .alias("old_default"),
            pl.when(given).then(pl.col("side_meta")).otherwise(pl.col("side_nometa"))
            .alias("side"),
            (100.0 / (1.0 + (-(pl.col("z_kshift") * pl.col("tf_std") + pl.col("tf_mean")))
                      .exp())).alias("nearest")))
    choose = ((pl.col("split").is_in(["yardstick", "wyardstick"])
               & (pl.col("cutoff") < split_at))
              | (pl.col("split") == "epairs")
              | ((pl.col("split") == "paper") & pl.col("cutoff").str.starts_with("seed100")))
    return pl.concat(runs).with_columns(choose.alias("choose"))


def arrays(d: pl.DataFrame, *, learning: bool = False):
    """(features (n, n_features), trend features (n, len(TREND)), parts (n, n_parts) z,
    available, mean, std, actual). With ``learning``, a cell of the paper matrix's
    whole-model splits takes its model's true newness (0 without a date) even where its
    metadata is withheld: those splits hold random registered models, not later releases,
    so they say nothing of the trend of newer models (the offset), whereas a prediction
    (and the report here) counts a model given without a date as new."""
    F = gate_features(d["k"].to_numpy(), d["d1"].to_numpy(), d["n03"].to_numpy(),
                      d["n06"].to_numpy(), 1.0, d["meta"].to_numpy(),
                      d["reg_noise_t"].to_numpy()[:, None], d["pop"].to_numpy()[:1])[:, 0]
    # (n_models differs per split: its column is set per cell)
    F[:, FEATURES.index("log_models")] = np.log(d["n_train"].to_numpy() / 500.0)
    F[:, FEATURES.index("log_benchmark_models")] = np.log(
        np.maximum(d["pop"].to_numpy(), 1.0) / 100.0)
    # the model's own date where its metadata is given, else none: a new release
    dates = np.where(d["dated"].to_numpy(), d["t_model"].to_numpy(), np.nan)
    new = newness(dates, d["t_newest"].to_numpy())
    if learning:
        true = newness(d["t_model"].to_numpy(), d["t_newest"].to_numpy())
        undated = ~np.isfinite(d["t_model"].to_numpy().astype(float))
        new = np.where((d["split"] == "paper").to_numpy(), np.where(undated, 0.0, true), new)
    T = trend_features(d["k"].to_numpy(), new)
    Z = np.column_stack([d[f"z_{p}"].to_numpy() for p in PARTS]).astype(float)
    return (F, T, np.nan_to_num(Z), np.isfinite(Z), d["tf_mean"].to_numpy(),
            d["tf_std"].to_numpy(), d["actual"].to_numpy())


def gate_of(theta: np.ndarray) -> Gate:
    """The Gate of a flat parameter vector (coefficients, then the offset's)."""
    n = len(PARTS) * len(FEATURES)
    return Gate(tuple(map(tuple, theta[:n].reshape(len(PARTS), len(FEATURES)))),
                tuple(theta[n:]))


def scores_of(gate: Gate, F, T, Z, available, mean, std) -> np.ndarray:
    """The gated prediction of each cell, score units (percent benchmarks)."""
    return percent((gate.weights(F, available) * Z).sum(axis=1) + gate.offset(T), mean, std)


def percent(z, mean, std) -> np.ndarray:
    """Scores (percent) of z values in the cells' own transform (``mean``, ``std``)."""
    return 100.0 / (1.0 + np.exp(-(z * std + mean)))


def variant_scores(d: pl.DataFrame, F, T, Z, available, mean, std, *, jackknife: float = 0.0,
                   nearest_share: float | None = None, offset_besides=(),
                   beyond: float | None = None) -> np.ndarray:
    """The shipped gate's prediction of each cell with one change, score units:
    ``jackknife`` adds ``jackknife * -log(mse + 0.01)`` to each part's score, ``mse`` the
    part's error on the model's own known scores, each predicted from the others
    (``forecast_parts``' ``jk_*`` columns; centred over the parts); ``nearest_share`` mixes
    the nearest models and the regression at that share instead, where both answer (with
    ``beyond``: only where the two differ by more than ``beyond`` in z, the standardized
    logits of ``percent``; elsewhere the gate); ``offset_besides`` (names of
    :data:`PARTS`) scales a dated model's new-model offset by one minus those parts'
    weights (parts that see the release date already)."""
    gate = Gate()
    score = F @ gate.matrix().T
    if jackknife and "jk_low_rank" not in d.columns:
        raise UsageError("--jackknife needs parts files with the jk_* columns (written by "
                         "benchmarks/forecast_parts.py since 2026-12-07): run it again")
    if jackknife:
        J = np.column_stack([d[f"jk_{'low_rank' if p.startswith('low_rank') else p}"]
                             .to_numpy() for p in PARTS]).astype(float)
        bonus = np.nan_to_num(-np.log(J + 0.01), nan=0.0, posinf=0.0, neginf=0.0)
        score = score + jackknife * (bonus - bonus.mean(axis=1, keepdims=True))
    W = part_weights(score, available)
    z = (W * Z).sum(axis=1)
    if nearest_share is not None:
        nb, rg = PARTS.index("neighbours"), PARTS.index("regression")
        both = available[:, nb] & available[:, rg]
        if beyond is not None:
            both &= np.abs(Z[:, nb] - Z[:, rg]) > beyond
        z = np.where(both, nearest_share * Z[:, nb] + (1 - nearest_share) * Z[:, rg], z)
    seen = W[:, [PARTS.index(p) for p in offset_besides]].sum(axis=1)
    share = 1.0 - d["dated"].to_numpy().astype(float) * seen
    return percent(z + share * gate.offset(T), mean, std)


def fit_gate(F, T, Z, available, mean, std, y, *, l2: float = 1e-3, iters: int = 500,
             coef=None) -> Gate:
    """The gate (coefficients and offset) minimising the mean smooth absolute error; with
    ``coef`` (as :data:`GATE_COEF`), the coefficients are held at it and the offset alone
    is fitted."""
    n = len(PARTS) * len(FEATURES)
    fixed = None if coef is None else np.asarray(coef, dtype=float).ravel()

    def loss(free):
        theta = free if fixed is None else np.concatenate([fixed, free])
        gate = gate_of(theta)
        W = gate.weights(F, available)
        zm = (W * Z).sum(axis=1)
        z = zm + gate.offset(T)
        s = 100.0 / (1.0 + np.exp(-(z * std + mean)))
        r = s - y
        q = np.sqrt(r * r + 1.0)
        g = (r / q) * s * (1.0 - s / 100.0) * std / len(r)
        if fixed is not None:
            return q.mean() + l2 * free @ free, T.T @ g + 2 * l2 * free
        grad = np.concatenate([((g[:, None] * W * (Z - zm[:, None])).T @ F).ravel(),
                               T.T @ g]) + 2 * l2 * theta
        return q.mean() + l2 * theta @ theta, grad

    start = np.zeros(len(TREND) if fixed is not None else n + len(TREND))
    res = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": iters})
    return gate_of(res.x if fixed is None else np.concatenate([fixed, res.x]))


def report(d: pl.DataFrame, by=("choose", "split", "order", "k", "metadata")) -> pl.DataFrame:
    cols = ["gate", "old_default", "side", "nearest", "knn", "als4"]
    return (d.group_by(list(by)).agg(
        pl.len().alias("n"),
        *[(pl.col(c) - pl.col("actual")).abs().median().round(2).alias(c) for c in cols],
        (pl.col("gate") - pl.col("actual")).mean().round(2).alias("bias"))
        .sort(list(by)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parts", nargs="+",
                    help="the cells of benchmarks/forecast_parts.py (Parquet files)")
    ap.add_argument("--learn-on", default="yardstick,paper",
                    help="the splits whose choosing cells the gate learns on (comma list; "
                         "wyardstick, epairs: a gate of the whole registry)")
    ap.add_argument("--split", default="2025-12-01", help="first cutoff of the check half")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--out", default=None, help="write the gated cells here (Parquet)")
    ap.add_argument("--offset-only", action="store_true",
                    help="hold the coefficients at GATE_COEF and fit the new-model offset alone")
    ap.add_argument("--trend-from-later", action="store_true",
                    help="learn with each paper-split cell at its model's true newness (see arrays)")
    ap.add_argument("--jackknife", type=float, default=0.0, metavar="BETA",
                    help="no learning: the shipped gate with each part's jackknife error "
                         "on the model's known scores added to its score (see variant_scores)")
    ap.add_argument("--nearest-share", type=float, default=None, metavar="SHARE",
                    help="no learning: the nearest models and the regression mixed at SHARE")
    ap.add_argument("--beyond", type=float, default=None, metavar="Z",
                    help="with --nearest-share: mix only where the two parts differ by more "
                         "than Z (standardized logits), elsewhere the shipped gate")
    ap.add_argument("--offset-besides", default="", metavar="PARTS",
                    help="no learning: a dated model's new-model offset times one minus "
                         "these parts' weights (comma list, e.g. regression)")
    ap.add_argument("--sample", type=int, default=60000,
                    help="choosing cells the fit sees (a seeded sample; 0: all)")
    args = ap.parse_args(argv)
    try:
        date.fromisoformat(args.split)
    except ValueError:
        raise UsageError(f"--split: {args.split!r} is not an ISO date (YYYY-MM-DD)") from None
    besides = [p for p in args.offset_besides.split(",") if p]
    if args.beyond is not None and args.nearest_share is None:
        raise UsageError("--beyond needs --nearest-share SHARE (the mix where the parts differ)")
    if set(besides) - set(PARTS):
        raise UsageError(f"--offset-besides: parts are {', '.join(PARTS)}, got "
                         f"{args.offset_besides!r}")
    d = cells_of(args.parts, args.split)
    if args.jackknife or args.nearest_share is not None or besides:  # the shipped gate, one change
        gate = Gate()
        *xs, _ = arrays(d)
        d = d.with_columns(pl.Series("gate", variant_scores(
            d, *xs, jackknife=args.jackknife, nearest_share=args.nearest_share,
            offset_besides=besides, beyond=args.beyond)))
    else:
        learn_on = [s for s in args.learn_on.split(",") if s]
        fit_on = d.filter(pl.col("choose") & pl.col("split").is_in(learn_on))
        if fit_on.is_empty():
            held = ", ".join(sorted(d["split"].unique())) or "none"
            raise UsageError(f"--learn-on {args.learn_on}: no learning cells of those splits "
                             f"in the parts files (their splits: {held})")
        if args.sample and fit_on.height > args.sample:
            fit_on = fit_on.sample(n=args.sample, seed=0)
        *xs, y = arrays(fit_on, learning=args.trend_from_later)
        gate = fit_gate(*xs, y, l2=args.l2, coef=GATE_COEF if args.offset_only else None)
        *xs, _ = arrays(d)
        d = d.with_columns(pl.Series("gate", scores_of(gate, *xs)))
    d.select("split", "cutoff", "order", "k", "metadata", "model_id", "benchmark_id",
             "choose", "actual", "gate", "old_default", "side", "knn", "als4").write_parquet(
        args.out) if args.out else None
    with pl.Config(tbl_rows=400, tbl_cols=20, tbl_width_chars=160,
                   tbl_hide_dataframe_shape=True):
        print(report(d))
        print("orders pooled:")
        print(report(d, ("choose", "split", "k", "metadata")))
        print("the shipped gate's mean weights:")
        W = Gate().weights(xs[0], xs[3])
        print(d.select("split", "k").with_columns(
            pl.Series(p, W[:, i]) for i, p in enumerate(PARTS))
            .group_by("split", "k").mean().sort("split", "k")
            .with_columns(pl.col(PARTS).round(2)))
    print("GATE_COEF = (")
    for p, row in zip(PARTS, gate.coef):
        print(f"    ({', '.join(f'{v:.3f}' for v in row)}),  # {p}")
    print(")")
    print(f"GATE_SHIFT = ({', '.join(f'{v:.4f}' for v in gate.shift)})")


if __name__ == "__main__":
    run_script(main, "gate_study")
