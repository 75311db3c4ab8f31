"""Every part of the default, scored on the same forecasts: the cells behind the gate study.

A forecast of a new model is a mix of parts: the low-rank half with and without the
model's metadata (side information; als4's own fit), the nearest models (plain, and
shifted by their gap to the model) and the local regression over them. This script fits
each part once per split and folds every later model in from k revealed scores, in every
reveal order, with and without metadata, and writes one row per hidden cell with every
part's prediction (z units of the default's space and score units), the cell's truth and
what a gate could observe before seeing it (how many scores were revealed, how far the
nearest models are, how many are near, which benchmark group, how new the model is).

Splits (``--splits``):

* ``yardstick``: the temporal yardstick of the whole registry (`evaluate --temporal`:
  the last 12 monthly cutoffs, scores as published before each);
* ``wyardstick``: the same cutoffs, each registry every model with a score published
  before it, dated or not (thousands of models, the cells solver; not in the default
  ``--splits``);
* ``paper``: the paper's matrix alone, whole models held out at random
  (`evaluate --new-models`, seeds ``--paper-seeds``);
* ``pairs``: the later-release pairs of `benchmarks/later_releases.py` (the paper's matrix
  beside one leaderboard's history);
* ``wpairs``: the same pairs of Artificial Analysis on the whole registry (every other
  source of the default registry, and AA as of the earlier version);
* ``epairs``: earlier pairs of other leaderboards on the whole registry the same way
  (:data:`EARLY_PAIRS`, all before 2026; not in the default ``--splits``).

Run from the repository root after `make main`::

    python benchmarks/forecast_parts.py --out /tmp/parts.parquet
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from benchpress.api import BenchPress
from benchpress.errors import run_script
from benchpress.predict import make_predictor
from benchpress.predict.estimator import check_scores, clone
from benchpress.predict.intervals.calibration import fold_in_rows
from benchpress.predict.models.knn import local_regression
from benchpress.predict.evaluation.new_models import new_model_split
from benchpress.predict.models.covariates import _years, model_covariates
from benchpress.predict.evaluation.temporal import monthly_cutoffs, reported_order
from benchpress.store.matrix import as_published

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from later_releases import build_history, history_versions  # noqa: E402 (benchmarks/)

#: What a user types first: a fixed list of single benchmarks, then the popular single ones.
FIXED = ("gpqa_diamond", "hle", "ifbench", "mmlu_pro", "livecodebench")

#: Split ``epairs``: later-release pairs of other leaderboards, each beside every other
#: source of the default registry, all before 2026 (earlier than the ``wpairs`` of
#: Artificial Analysis and LiveBench's 2026 pairs): what a gate of the whole registry
#: could learn from.
EARLY_PAIRS = {
    "open-llm-leaderboard": ["2024-10-04>2024-11-15", "2024-12-06>2025-01-17",
                             "2025-02-07>2025-03-21"],
    "bfcl": ["2025-03-24>2025-04-30", "2025-06-14>2025-08-28", "2025-08-28>2025-11-03"],
    "evalplus": ["2024-04-04>2024-05-07"],
}


def single_mask(matrix) -> np.ndarray:
    """Benchmarks a user runs (n_benchmarks,): percent scale, not a derived aggregate
    (LiveBench's averages) nor a composite index."""
    b = matrix.benchmarks
    cat = b["category"].fill_null("").to_list() if "category" in b.columns else [""] * b.height
    ids = matrix.benchmark_ids
    derived = {bid for bid, c in zip(ids, cat) if c in ("Composite", "LiveBench")}
    return np.array([(k == "percent") and (bid not in derived)
                     for bid, k in zip(ids, matrix.scales.kind)])


def reveal_sequences(T, order, popularity, single, reported, keys, col):
    """Per later model, its benchmark columns in reveal order (the columns it has)."""
    out = []
    for r in range(T.shape[0]):
        have = np.flatnonzero(~np.isnan(T[r]) & (popularity > 0))
        if order == "random":
            seq = have[np.random.default_rng(keys[r]).permutation(have.size)]
        elif order == "reported" and reported is not None and reported[r] is not None:
            ok = set(have.tolist())
            seq = np.array([j for j in reported[r] if j in ok], dtype=np.int64)
        else:
            pool = have
            if order in ("single", "fixed"):
                pool = have[single[have]]
            seq = pool[np.argsort(-popularity[pool], kind="stable")]
            if order == "fixed":
                first = [col[b] for b in FIXED if b in col and col[b] in set(pool.tolist())]
                seq = np.array(first + [j for j in seq if j not in set(first)], dtype=np.int64)
        out.append(seq)
    return out


def neighbour_features(Zq, Z, min_shared=3, dates=None):
    """Per query row: the nearest distance, the mean of the 5 nearest, how many fitted
    models lie within 0.3 and 0.6 (RMS z over shared benchmarks), and the shared count of
    the nearest."""
    M = ~np.isnan(Z)
    z = np.where(M, Z, 0.0)
    Mf = M.astype(float)
    Mq = ~np.isnan(Zq)
    zq = np.where(Mq, Zq, 0.0)
    shared = Mq.astype(float) @ Mf.T
    ssd = (zq * zq) @ Mf.T + Mq.astype(float) @ (z * z).T - 2 * zq @ z.T
    need = np.minimum(min_shared, Mq.sum(axis=1))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.sqrt(np.maximum(ssd, 0) / shared)
    d[shared < np.maximum(need, 1)] = np.inf
    order = np.argsort(d, axis=1)
    ds = np.take_along_axis(d, order, axis=1)
    near5 = ds[:, :5]
    out = {"d1": ds[:, 0], "d5": np.where(np.isfinite(near5), near5, np.nan).mean(axis=1)
           if near5.size else np.full(Zq.shape[0], np.nan),
           "n03": (d < 0.3).sum(axis=1), "n06": (d < 0.6).sum(axis=1),
           "n_train": np.full(Zq.shape[0], Z.shape[0])}
    if dates is not None:
        near = np.where(np.isfinite(near5), np.asarray(dates)[order[:, :5]], np.nan)
        with np.errstate(invalid="ignore"):
            out["t_nbr5"] = np.nanmean(near, axis=1)
    return out


def jackknife_errors(default, mix, S, tf) -> dict:
    """Per query row: each part's mean squared z error on the row's own known scores, each
    predicted from the others (``jk_low_rank``, ``jk_neighbours``, ``jk_regression``;
    NaN with fewer than 2 known): which part works for this model, seen before the truth."""
    n = S.shape[0]
    err = {p: np.zeros(n) for p in ("low_rank", "neighbours", "regression")}
    cnt = {p: np.zeros(n) for p in err}
    known = ~np.isnan(S)
    count = known.sum(axis=1)
    first = np.argsort(~known, axis=1, kind="stable")  # each row's known columns first
    for i in range(int(count.max(initial=0))):
        # each row's i-th known column left out, where it has at least 2 known
        pos = np.where((count >= 2) & (i < count), first[:, i], -1)
        rows = np.flatnonzero(pos >= 0)
        if rows.size == 0:
            continue
        S_i = S[rows].copy()
        S_i[np.arange(rows.size), pos[rows]] = np.nan
        truth = tf.transform(S[rows, pos[rows]], cols=pos[rows])
        Zq_i = tf.transform(S_i)
        low = tf.transform(default.low_rank_.fold_in(S_i)[np.arange(rows.size), pos[rows]],
                           cols=pos[rows])
        nb = mix.models_.predict_z(Zq_i, fallback=False)[np.arange(rows.size), pos[rows]]
        rg = local_regression(Zq_i, mix.models_.Z_, alpha=float(mix.reg_alpha),
                              bandwidth=float(mix.reg_bandwidth))[0][np.arange(rows.size),
                                                                     pos[rows]]
        for part, z in (("low_rank", low), ("neighbours", nb), ("regression", rg)):
            ok = np.isfinite(z)
            err[part][rows[ok]] += (z[ok] - truth[ok]) ** 2
            cnt[part][rows[ok]] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return {f"jk_{p}": np.where(cnt[p] > 0, err[p] / cnt[p], np.nan) for p in err}


def split_cells(name, label, Ytr, scales, Xtr, T, later_ids, X_later, *, orders, known,
                popularity, single, reported, keys, col, benchmark_ids, groups, dates_tr,
                dates_later, source_of):
    """Every part's predictions of one split's later models, one frame per (order, k)."""
    default = make_predictor("default").fit(Ytr, scales, Xtr)
    als4 = make_predictor("als4").fit(Ytr, scales)
    knn = make_predictor("knn").fit(Ytr, scales)
    tf = default.transform_
    mix = default.neighbours_
    newest = max(d for d in dates_tr if d) if any(dates_tr) else ""
    t_tr = np.array([_years(d) for d in dates_tr])
    t_new = np.nanmax(t_tr) if np.isfinite(t_tr).any() else np.nan
    t_later = np.array([_years(d) for d in dates_later])
    frames = []
    for order in orders:
        seqs = reveal_sequences(T, order, popularity, single, reported, keys, col)
        for k in known:
            S = np.full(T.shape, np.nan)
            hidden = np.zeros(T.shape, dtype=bool)
            for r, seq in enumerate(seqs):
                if seq.size <= k:
                    continue
                S[r, seq[:k]] = T[r, seq[:k]]
                hidden[r] = ~np.isnan(T[r]) & (popularity > 0)
                hidden[r, seq[:k]] = False
            rows = np.flatnonzero(hidden.any(axis=1))
            if rows.size == 0:
                continue
            S, Th, H = S[rows], T[rows], hidden[rows]
            Xl = None if X_later is None else [X_later[r] for r in rows]
            Zq = tf.transform(S)
            parts = {
                "default_meta": fold_in_rows(default, S, Xl)[0],
                "default_nometa": default.fold_in(S),
                # the low-rank half alone (side information; on a matrix of the cells
                # solver, the same ALS without covariates)
                "side_meta": fold_in_rows(default.low_rank_, S, Xl)[0],
                "side_nometa": default.low_rank_.fold_in(S),
                "als4": als4.fold_in(S),
                "knn": knn.fold_in(S),
            }
            Zk = mix.models_.predict_z(Zq, fallback=False)
            Zr, noise = local_regression(Zq, mix.models_.Z_, alpha=float(mix.reg_alpha),
                                         bandwidth=float(mix.reg_bandwidth))
            tq = t_later[rows]
            Zt_m, nt_m = local_regression(Zq, mix.models_.Z_, alpha=float(mix.reg_alpha),
                                          bandwidth=float(mix.reg_bandwidth), dates=t_tr,
                                          query_dates=np.where(np.isfinite(tq), tq, t_new))
            Zt_n, nt_n = local_regression(Zq, mix.models_.Z_, alpha=float(mix.reg_alpha),
                                          bandwidth=float(mix.reg_bandwidth), dates=t_tr,
                                          query_dates=np.full(rows.size, t_new))
            feats = neighbour_features(Zq, mix.models_.Z_, dates=t_tr)
            feats.update(jackknife_errors(default, mix, S, tf))
            ii, jj = np.nonzero(H)
            cols = {"split": name, "cutoff": label, "order": order, "k": int(k),
                    "model_id": [later_ids[rows[i]] for i in ii],
                    "benchmark_id": [benchmark_ids[j] for j in jj],
                    "group": [groups[j] for j in jj],
                    "source": [source_of.get(later_ids[rows[i]], "") for i in ii],
                    "scale": np.asarray(scales.kind)[jj].astype(str),
                    "actual": Th[ii, jj], "z_actual": tf.transform(Th[ii, jj], cols=jj),
                    "has_meta": np.array([Xl is not None and Xl[i] is not None for i in ii]),
                    "pop": popularity[jj], "release": [dates_later[rows[i]] or "" for i in ii],
                    "newest_train": newest}
            for p, P in parts.items():
                v = P[ii, jj]
                cols[p] = v
                cols[f"z_{p}"] = tf.transform(v, cols=jj)
            cols["z_kshift"] = Zk[ii, jj]
            cols["z_reg"] = Zr[ii, jj]
            cols["reg_noise"] = noise[ii, jj]
            cols["z_regt_meta"], cols["regt_noise_meta"] = Zt_m[ii, jj], nt_m[ii, jj]
            cols["z_regt_none"], cols["regt_noise_none"] = Zt_n[ii, jj], nt_n[ii, jj]
            cols["t_model"] = tq[ii]
            cols["t_newest"] = np.full(ii.size, t_new)
            for f, v in feats.items():
                cols[f] = v[ii]
            for attr in ("mean_", "std_"):
                cols[f"tf_{attr[:-1]}"] = getattr(tf, attr)[jj]
            frames.append(pl.DataFrame(cols))
    return frames


def _groups(matrix) -> list[str]:
    b = matrix.benchmarks
    return b["category"].fill_null("").to_list() if "category" in b.columns else [""] * b.height


def _sources(folder) -> dict:
    from benchpress.store.tables import read_table

    sc = read_table(folder, "scores").select("model_id", "source_id")
    return {m: s for m, s in sc.unique("model_id", keep="first", maintain_order=True).iter_rows()}


def first_seen(folder, model_ids) -> np.ndarray:
    """Per model (ISO date, "" for none): the first version of a source with a history
    that published a score of it; a source with one version says nothing of when."""
    from benchpress.store.tables import read_table

    sc = read_table(folder, "scores").filter(pl.col("source_version").is_not_null())
    many = (sc.group_by("source_id").agg(pl.col("source_version").n_unique().alias("n"))
            .filter(pl.col("n") > 1)["source_id"].to_list())
    seen = dict(sc.filter(pl.col("source_id").is_in(many)).group_by("model_id")
                .agg(pl.col("source_version").min()).iter_rows())
    return np.array([str(seen.get(m) or "")[:10] for m in model_ids])


def yardstick(home, args, *, published: bool = False):
    """The temporal yardstick's cells. With ``published`` (split ``wyardstick``), each
    cutoff's registry is every model with a score published before it, dated or not (an
    undated model counts from the first version of a history that holds it): the whole
    registry as it stood, thousands of models on the cells solver, not its dated models
    alone."""
    bp = BenchPress.from_snapshot(home, "latest")
    m = bp.matrix
    Y = check_scores(m.values, bp.scales)
    X = model_covariates(m.models)
    dates = np.array([str(d)[:10] if d else "" for d in m.models["release_date"].to_list()])
    seen = first_seen(bp.folder, m.model_ids) if published else np.full(dates.size, "")
    values_at = as_published(bp.folder, m)
    cutoffs = monthly_cutoffs(dates, 12)
    col = {b: j for j, b in enumerate(m.benchmark_ids)}
    single, groups, src = single_mask(m), _groups(m), _sources(bp.folder)
    obs = ~np.isnan(Y)
    name = "wyardstick" if published else "yardstick"
    for c, (start, end) in enumerate(zip(cutoffs, cutoffs[1:] + ["9999-12-31"])):
        if args.cutoffs and start not in args.cutoffs:
            continue
        train = ((dates != "") & (dates < start)) | ((dates == "") & (seen != "")
                                                      & (seen < start))
        test = np.flatnonzero((dates >= start) & (dates < end) & (obs.sum(axis=1) >= 6))
        if test.size == 0:
            continue
        Ytr = check_scores(values_at(start), bp.scales)[train] if values_at else Y[train]
        # (a model with no score published yet is not in the registry then)
        scored = ~np.isnan(Ytr).all(axis=1) if published else np.ones(len(Ytr), dtype=bool)
        train[np.flatnonzero(train)[~scored]] = False
        Ytr = Ytr[scored]
        pop = (~np.isnan(Ytr)).sum(axis=0).astype(float)
        print(f"{name} {start}: {train.sum()} train, {test.size} later", file=sys.stderr)
        yield from split_cells(
            name, start, Ytr, bp.scales, X[train], Y[test],
            [m.model_ids[i] for i in test], [X[i] for i in test],
            orders=("random", "popular", "single"), known=args.known, popularity=pop,
            single=single, reported=None, keys=[[42, c, int(i)] for i in test], col=col,
            benchmark_ids=m.benchmark_ids, groups=groups, dates_tr=list(dates[train]),
            dates_later=list(dates[test]), source_of=src)


def paper(home, args):
    bp = BenchPress.from_snapshot(home, "latest", sources=["benchpress"])
    m = bp.matrix
    Y = check_scores(m.values, bp.scales)
    X = model_covariates(m.models)
    dates = [str(d)[:10] if d else "" for d in m.models["release_date"].to_list()]
    col = {b: j for j, b in enumerate(m.benchmark_ids)}
    single, groups = single_mask(m), _groups(m)
    obs = ~np.isnan(Y)
    for seed in args.paper_seeds:
        groups_, position = new_model_split(obs, seed, n_groups=5, min_scores=8)
        for g, rows in enumerate(groups_):
            keep = np.ones(Y.shape[0], dtype=bool)
            keep[rows] = False
            pop = obs[keep].sum(axis=0).astype(float)
            # the stage's own random order: each model's seeded permutation
            reported = [np.argsort(np.where(position[i] >= 0, position[i], 10**6))[
                :int((position[i] >= 0).sum())] for i in rows]
            yield from split_cells(
                "paper", f"seed{seed}g{g}", Y[keep], bp.scales, X[keep], Y[rows],
                [m.model_ids[i] for i in rows], [X[i] for i in rows],
                orders=("reported", "single"), known=args.known, popularity=pop,
                single=single, reported=reported, keys=[[seed, int(i)] for i in rows],
                col=col, benchmark_ids=m.benchmark_ids, groups=groups,
                dates_tr=[d for d, k in zip(dates, keep) if k],
                dates_later=[dates[i] for i in rows], source_of={})


def later_pairs(ws: Path, pairs, name, args):
    """The later-release pairs of one workspace (snapshots tagged by version)."""
    from benchpress.home import Home
    from benchpress.store.matrix import load_matrix
    from benchpress.store.snapshot import resolve_snapshot
    from benchpress.store.tables import read_table

    for early, late in pairs:
        bp = BenchPress.from_snapshot(ws, early)
        m = bp.matrix
        folder = resolve_snapshot(Home(ws), late)
        lm, scores = load_matrix(folder, label=late), read_table(folder, "scores")
        col = {b: j for j, b in enumerate(m.benchmark_ids)}
        seen = set(m.model_ids)
        new_ids = [i for i in lm.model_ids if i not in seen]
        rows = {i: k for k, i in enumerate(lm.model_ids)}
        shared = [k for k, b in enumerate(lm.benchmark_ids) if b in col]
        T = np.full((len(new_ids), len(col)), np.nan)
        T[:, [col[lm.benchmark_ids[k]] for k in shared]] = \
            lm.values[np.ix_([rows[i] for i in new_ids], shared)]
        keep = [r for r in range(len(new_ids)) if (~np.isnan(T[r])).sum() >= 2]
        ids = [new_ids[r] for r in keep]
        order = reported_order(scores, ids, m.benchmark_ids)
        X = model_covariates(m.models)
        rows_later = lm.models[[rows[i] for i in ids]]
        Xl = model_covariates(rows_later, reference=m.models)
        fields = [c for c in ("provider", "release_date", "is_reasoning", "open_weights",
                              "effort") if c in rows_later.columns]
        given = rows_later.select(pl.any_horizontal(
            [pl.lit(False)] + [pl.col(c).is_not_null() for c in fields]))[:, 0].to_list()
        Xl = [x if g else None for x, g in zip(Xl, given)]
        Ytr = check_scores(m.values, bp.scales)
        pop = (~np.isnan(Ytr)).sum(axis=0).astype(float)
        dl = {i: str(d)[:10] if d else "" for i, d in
              zip(lm.model_ids, lm.models["release_date"].to_list())}
        print(f"{name} {early}>{late}: {len(ids)} later", file=sys.stderr)
        yield from split_cells(
            name, f"{ws.name} {early}>{late}", Ytr, bp.scales, X, T[keep], ids, Xl,
            orders=("reported", "random", "single", "fixed"), known=args.known,
            popularity=pop, single=single_mask(m),
            reported=[np.asarray(order.get(i, []), dtype=np.int64) for i in ids],
            keys=[[42, r] for r in range(len(ids))], col=col, benchmark_ids=m.benchmark_ids,
            groups=_groups(m), dates_tr=[str(d)[:10] if d else "" for d in
                                         m.models["release_date"].to_list()],
            dates_later=[dl[i] for i in ids], source_of={i: ws.name for i in ids})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", default="yardstick,paper,pairs,wpairs")
    ap.add_argument("--known", default="1,3,5")
    ap.add_argument("--cutoffs", default="", help="only these yardstick cutoffs (comma list)")
    ap.add_argument("--paper-seeds", default="42,43,44,45,46,1001,1002,1003,1004,1005")
    ap.add_argument("--keep", default="/tmp/fc/ws", help="workspaces of the pairs (kept)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    args.known = tuple(int(k) for k in args.known.split(","))
    args.cutoffs = [c for c in args.cutoffs.split(",") if c]
    args.paper_seeds = [int(s) for s in args.paper_seeds.split(",")]
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    mirror = (ROOT / params["data"]["mirror"]).resolve()
    frames = []
    splits = args.splits.split(",")
    if "yardstick" in splits:
        frames += list(yardstick(ROOT, args))
    if "wyardstick" in splits:
        frames += list(yardstick(ROOT, args, published=True))
    if "paper" in splits:
        frames += list(paper(ROOT, args))
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    hist = params["later_releases"]["histories"]
    # the later-release pairs: each history beside the paper's matrix (pairs), and
    # Artificial Analysis beside every other source of the default registry (wpairs)
    wanted = [("pairs", name, "paper") for name in hist if "pairs" in splits]
    if "wpairs" in splits:
        wanted.append(("wpairs", "artificial-analysis", "registry"))
    if "epairs" in splits:
        hist = {**hist, **{name: {"pairs": p} for name, p in EARLY_PAIRS.items()}}
        wanted += [("epairs", name, "registry") for name in EARLY_PAIRS]
    for split, name, base in wanted:
        spec = hist[name]
        ws = keep / (name if base == "paper" else f"{name}-registry")
        if not (ws / "snapshots").is_dir():
            source = spec.get("source", name)
            build_history(ws, mirror, source,
                          history_versions(ROOT / "sources", source, spec["pairs"]), base=base)
        frames += list(later_pairs(ws, [p.split(">") for p in spec["pairs"]], split, args))
    out = pl.concat(frames, how="diagonal_relaxed")
    out.write_parquet(args.out)
    print(f"{out.height} cells -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    run_script(main, "forecast_parts")
