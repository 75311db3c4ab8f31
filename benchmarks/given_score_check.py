"""How often the given-score check (`benchpress.predict.checks.consistency`) speaks, on the
temporal yardstick: for every later model folded in from k revealed scores (the pipeline's
cutoffs, random and popular orders, seed 42), the share of reveals whose scores, as
published, get a note, and the share of typos it names when one revealed percent score of
20 or more is divided by ten (a dropped digit), per threshold.

The script wraps the yardstick's fold-in (`benchpress.predict.evaluation.temporal.fold_in_rows`) so
that every batch of revealed rows is also checked; predictions are unchanged. Run from the
repository root after `make main` (about 30 s on 2 cores)::

    python benchmarks/given_score_check.py
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

import benchpress.predict.evaluation.temporal as temporal
from benchpress.api import BenchPress
from benchpress.cli.predict_cmds import known_counts
from benchpress.errors import UsageError, run_script
from benchpress.predict import make_predictor
from benchpress.predict.checks.consistency import check_space, leave_one_out, most_contradicted


class CheckedFoldIn:
    """`fold_in_rows` that also runs the check on each row with 3+ revealed scores, as
    given and with a typo, and counts what it finds per threshold."""

    def __init__(self, fold_in_rows, thresholds):
        self.fold_in_rows, self.thresholds = fold_in_rows, thresholds
        self.counts = {t: dict(reveals=0, flagged=0, typos=0, caught=0, other=0)
                       for t in thresholds}
        self.spaces = {}  # one check space per fit (a fit is folded into several times)

    def __call__(self, predictor, S, covariates=None):
        out = self.fold_in_rows(predictor, S, covariates)
        if (~np.isnan(S)).sum(axis=1).max() < 3:
            return out
        if id(predictor) not in self.spaces:
            self.spaces = {id(predictor): check_space(predictor.Y_, predictor.scales_)}
        space = self.spaces[id(predictor)]
        percent = np.asarray(predictor.scales_.kind) == "percent"
        for r in range(S.shape[0]):
            cov = None if covariates is None else covariates[r]
            z = leave_one_out(predictor, space, S[r], cov)[1]
            typo_at = np.flatnonzero(~np.isnan(S[r]) & percent & (S[r] >= 20))
            z_typo = None
            if typo_at.size:
                typo = S[r].copy()
                typo[typo_at[0]] /= 10
                z_typo = leave_one_out(predictor, space, typo, cov)[1]
            for t, c in self.counts.items():
                c["reveals"] += 1
                c["flagged"] += most_contradicted(z, t) is not None
                if z_typo is not None:
                    named = most_contradicted(z_typo, t)
                    c["typos"] += 1
                    c["caught"] += named == typo_at[0]
                    c["other"] += named is not None and named != typo_at[0]
        return out

    def table(self) -> pl.DataFrame:
        return pl.DataFrame([
            {"threshold": t, "reveals": c["reveals"],
             "noted_pct": 100 * c["flagged"] / max(c["reveals"], 1),
             "typos": c["typos"], "named_pct": 100 * c["caught"] / max(c["typos"], 1),
             "other_pct": 100 * c["other"] / max(c["typos"], 1)}
            for t, c in self.counts.items()])


def thresholds_of(text: str) -> tuple[float, ...]:
    """``"2.5,3"`` -> ``(2.5, 3.0)``; anything but positive numbers is a one-line error."""
    try:
        values = tuple(float(t) for t in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) <= 0:
        raise UsageError(f"--thresholds {text!r}: expected positive numbers separated by "
                         "commas, e.g. 2.5,3")
    return values


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--thresholds", default="2.5,3,3.5,4",
                    help="standardized units (the check's is 3)")
    ap.add_argument("--known", default="3,5")
    ap.add_argument("--home", default=".", help="the workspace (default: here)")
    ap.add_argument("--snapshot", default="latest")
    args = ap.parse_args(argv)
    thresholds = thresholds_of(args.thresholds)
    known = known_counts(args.known, "--known")
    checked = CheckedFoldIn(temporal.fold_in_rows, thresholds)
    temporal.fold_in_rows = checked
    bp = BenchPress.from_snapshot(args.home, args.snapshot, predictor=make_predictor("default"))
    bp.evaluate_temporal(methods=(), known=known,
                         orders=("random", "popular"), seed=42, intervals=False)
    with pl.Config(float_precision=2, tbl_hide_dataframe_shape=True, tbl_width_chars=80):
        print(checked.table())
    print("noted_pct: reveals as published that get a note; named_pct / other_pct: reveals\n"
          "with one score divided by ten where the note names it / names another score")


if __name__ == "__main__":
    run_script(main, "given_score_check")
