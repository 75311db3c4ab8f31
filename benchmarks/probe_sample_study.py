"""What the probe search's bounds cost in error: the model sample (``max_models``), the
group fits (``n_groups``) and the bounded training sample (``max_train``).

On the 2026-05 matrix (``--sources benchpress``, 84 models) the greedy + swap search
(k=5) is run under each bound, and the chosen set is then scored by the exact search
(every model left out of its own fit on all other models): its full leave-one-model-out
pooled MedAE. ``max_models`` = 84 with no groups and no training bound is the exact search.

Run from the repository root after ``benchpress build``::

    python benchmarks/probe_sample_study.py [--sizes 20,40,84] [--groups 5,10,20]
        [--train 30,65] [--seeds 0,1,2] [--k 5]

On a ladder rung too big for the exact search, the reference is the previous design (a
sample of 200 models, one fit each on all other models), and the rows bound only the
fits::

    python benchmarks/probe_sample_study.py --home /tmp/ladder/rung_3000x300/home \
        --sources "" --reference-models 200 --sizes "" --groups 10,20 --train 1000,2000 --seeds 0

Rows: the sample sizes alone (one fit per scored model, all other models trained on);
the sample with its default group fits (``n_groups`` "-": ten groups); every model
scored with ``n_groups`` group fits; every model scored with one fit per model on at most
``max_train`` models; both bounds together (``LIMITS.probe_groups`` groups with each ``--train``).
"""

from __future__ import annotations

import argparse
import time

from benchpress.api import BenchPress
from benchpress.predict.probes.search import ProbeSearch
from benchpress.predict.size_limits import LIMITS

__all__ = ["main"]


def _ints(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20,40,84", help="comma-separated max_models")
    ap.add_argument("--groups", default="5,10,20", help="comma-separated n_groups (all scored)")
    ap.add_argument("--train", default="30,65", help="comma-separated max_train (all scored)")
    ap.add_argument("--min-scores", type=int, default=5,
                    help="min_scores of a bounded training sample (the 2026-05 benchmarks "
                         "are sparse: with the default 20 nearly every model is kept)")
    ap.add_argument("--seeds", default="0,1,2", help="seeds (one run per seed)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--sources", default="benchpress", help="sources ('' for all)")
    ap.add_argument("--home", default=None, help="another registry (e.g. a ladder rung's)")
    ap.add_argument("--reference-models", type=int, default=None,
                    help="on a matrix too big for the exact search: the reference is the "
                         "previous design, a seeded sample of this many models with one fit "
                         "each on every other model, and the --groups/--train rows score "
                         "that sample (use one seed, 0, so the sample is the same)")
    a = ap.parse_args(argv)
    bp = BenchPress.from_snapshot(a.home, sources=a.sources.split(",") if a.sources else None)
    Y, costs = bp.matrix.values, bp.benchmark_costs()
    n, ref = Y.shape[0], a.reference_models

    def search(seed=0, **bounds):
        return ProbeSearch(bp.estimator, seed=seed, min_scores=a.min_scores, **bounds).fit(
            Y, bp.scales, benchmark_ids=bp.matrix.benchmark_ids, covariates=bp.covariates)

    ref_cfg = dict(max_models=ref, n_groups=ref, max_train=None)
    exact = search(**ref_cfg)
    print(f"matrix: {n} models x {Y.shape[1]} benchmarks; k={a.k}; reference ('exact') = "
          + ("every model" if ref is None else f"a seeded sample of {ref} models")
          + " left out of its own fit on all other models")
    print("| max_models | n_groups | max_train | seed | models scored | fits | train models "
          "| fits (s) | chosen probes | search MedAE | reference MedAE of the set |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    configs = [ref_cfg] + [dict(max_models=m, n_groups=m, max_train=None)
                           for m in _ints(a.sizes) if (m < n if ref is None else m != ref)]
    configs += [dict(max_models=m, n_groups=None, max_train=None) for m in _ints(a.sizes)
                if m < n]
    configs += [dict(max_models=ref, n_groups=g, max_train=None) for g in _ints(a.groups)]
    configs += [dict(max_models=ref, n_groups=ref, max_train=t) for t in _ints(a.train)
                if ref is None]  # one fit per model on a big matrix: too slow to be a row
    configs += [dict(max_models=ref, n_groups=LIMITS.probe_groups, max_train=t) for t in _ints(a.train)]
    for cfg in configs:
        is_exact = cfg == ref_cfg or (
            ref is None and (cfg["max_models"] is None or cfg["max_models"] >= n)
            and (cfg["n_groups"] is None or cfg["n_groups"] >= n)
            and (cfg["max_train"] is None or cfg["max_train"] >= n))
        for seed in _ints(a.seeds):
            t0 = time.perf_counter()
            s = exact if is_exact else search(seed, **cfg)
            fit_s = exact.fit_seconds_ if s is exact else time.perf_counter() - t0
            sel = s.select(a.k, costs=costs)
            full = exact.score(list(sel.final.probes), costs=costs)
            f = s.sample_fields
            g = cfg["n_groups"]
            groups = "-" if g is None or g >= (cfg["max_models"] or n) else g
            print(f"| {cfg['max_models'] or n} | {groups} | "
                  f"{cfg['max_train'] or '-'} | {'-' if is_exact else seed} | "
                  f"{f['models_scored']} | {f['fits']} | {f['train_models']} | {fit_s:.1f} "
                  f"| {', '.join(sel.final.probes)} | {sel.final.medae:.4f} | {full.medae:.4f} |",
                  flush=True)
            if is_exact:
                break  # exact: the seed plays no part
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
