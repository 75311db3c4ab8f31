"""The app's fitted model and everything precomputed from it once at startup.

`load_model` is the one place the app gets its `BenchPress` (today `from_snapshot`, which
fits on first use; a stored fit can replace it there). `Engine` then precomputes, once:
the fitted predictor, both interval calibrators, the predictor's `MatrixSupport` (risk
features of the training matrix, shared by every later fold-in), and the completed matrix
with calibrated 90% intervals and trust for every cell. Each answer after that is a
fold-in (a few ms) or a lookup.

What the app adds on top of `BenchPress` (candidates to move into `benchpress.api`):
`Engine.predict` (predict with a shared support: no per-call `MatrixSupport`),
`Engine.run_next` ("run this next": the benchmark whose score narrows the other intervals
most), `Engine.nearest` (known models nearest a new row) and `Engine.compare` (the
comparison of `BenchPress.compare` on the precomputed intervals).
"""

from __future__ import annotations


import logging
import math
import time

import numpy as np
import polars as pl

from benchpress.api import BenchPress
from benchpress.errors import BadInputError, listed, shown
from benchpress.predict import intervals as conformal
from benchpress.predict import make_predictor
from benchpress.predict._threads import single_blas_thread
from benchpress.predict.ranking import NORMAL_Q95, compare_models

__all__ = ["load_model", "Engine", "parse_scores", "MAX_CANDIDATES"]

log = logging.getLogger("benchpress.app")

#: At most this many unobserved benchmarks are tried as "run this next" (the ones most
#: models have a score on); each costs one extra fold-in row.
MAX_CANDIDATES = 40


def load_model(home, snapshot: str | None = None, *, sources: list[str] | None = None,
               method: str = "default") -> BenchPress:
    """The app's model: the registry (or snapshot) of `home` with `method`'s predictor.

    The single place where the app obtains a `BenchPress`: the stored fit of an unchanged
    matrix (the same cache as `benchpress predict`, see `api_fits.fit_cache_dir`) is
    reused, so a restart answers without refitting or recalibrating.
    """
    from benchpress.api_fits import fit_cache_dir
    from benchpress.api import _home

    home = _home(home)
    bp = BenchPress.from_snapshot(home, snapshot, sources=sources,
                                  predictor=make_predictor(method))
    cache = fit_cache_dir(home)
    return bp.use_stored_fit(cache) if cache is not None else bp


def parse_scores(text: str | None) -> dict[str, float]:
    """``"gpqa_diamond:71.2,hle=20.1"`` -> ``{"gpqa_diamond": 71.2, "hle": 20.1}``
    (``:`` or ``=`` between name and value; empty -> {}).

    >>> parse_scores("gpqa_diamond:71.2, hle=20.1")
    {'gpqa_diamond': 71.2, 'hle': 20.1}
    """
    scores: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        sep = ":" if ":" in part else "="
        name, found, value = part.rpartition(sep)
        if not found or not name.strip():
            raise BadInputError(f"'{part}' is not BENCHMARK:SCORE (for example gpqa_diamond:71.2)")
        try:
            number = float(value)
        except ValueError:
            raise BadInputError(f"the score of '{name.strip()}' is '{value.strip()}', "
                                "not a number") from None
        if not math.isfinite(number):
            raise BadInputError(f"the score of '{name.strip()}' is not a finite number")
        scores[name.strip()] = number
    return scores


class Engine:
    """A loaded `BenchPress` with its completion, intervals and support precomputed.

    Attributes
    ----------
    bp : BenchPress
    values, observed : ndarray (n_models, n_benchmarks)
        Observed scores (NaN missing) and their mask.
    cells : dict of ndarray (n_models, n_benchmarks)
        ``predicted, lower, upper, trust`` of every cell (cells regime).
    completed : ndarray (n_models, n_benchmarks)
        Observed where known, else predicted.
    points : ndarray (n_benchmarks,)
        One point (1% of the range) per benchmark, for widths in points.
    timings : dict
        Seconds spent on each startup step.
    """

    def __init__(self, bp: BenchPress):
        t0 = time.perf_counter()
        self.bp = bp
        m = bp.matrix
        self.timings: dict[str, float] = {}
        t = time.perf_counter()
        self.predictor = bp.predictor
        self.timings["fit"] = time.perf_counter() - t
        t = time.perf_counter()
        self.cal_cells = bp.calibrator("cells")
        self.cal_new = bp.calibrator("new_models")
        self.timings["calibrate"] = time.perf_counter() - t
        t = time.perf_counter()
        self.support = bp._support  # shared with BenchPress (restored from a stored fit)
        self.cells = conformal.complete_intervals(self.predictor, self.cal_cells, self.support)
        self.timings["intervals"] = time.perf_counter() - t
        self.values = m.values
        self.observed = ~np.isnan(m.values)
        self.completed = np.where(self.observed, m.values, self.cells["predicted"])
        self.Zc = self.support.transform.transform(self.completed)
        self.points = conformal.point_size(m.scales, m.values)
        self.col_count = self.observed.sum(axis=0)
        self.costs = bp.benchmark_costs()
        self.hib = m.benchmarks["higher_is_better"].fill_null(True).to_numpy().astype(bool)
        self.col = {b: j for j, b in enumerate(m.benchmark_ids)}
        self.row = {x: i for i, x in enumerate(m.model_ids)}
        self.timings["total"] = time.perf_counter() - t0
        log.info("model ready: %d models x %d benchmarks in %.1f s (%s)", *m.values.shape,
                 self.timings["total"],
                 ", ".join(f"{k} {v:.1f} s" for k, v in self.timings.items() if k != "total"))

    # -- scores in -----------------------------------------------------------------------
    def resolve(self, names) -> dict[str, str | None]:
        """Each given benchmark name or alias -> its canonical id in the matrix (None:
        unknown after alias resolution)."""
        out = {}
        for name in names:
            try:
                out[name] = self.bp.benchmark_ids([name])[0]
            except BadInputError:
                out[name] = None
        return out

    def row_of(self, scores: dict[str, float]) -> tuple[np.ndarray, list[str], dict[str, str]]:
        """Known scores -> a row (n_benchmarks,) with NaN elsewhere, the unknown names and
        {given: canonical id}; a score outside its benchmark's range is refused."""
        meta = self.bp.matrix.benchmarks
        row = np.full(len(self.col), np.nan)
        unknown, resolved = [], {}
        for given, bid in self.resolve(scores).items():
            if bid is None:
                unknown.append(given)
                continue
            j, value = self.col[bid], scores[given]
            lo, hi = meta["lower"][j], meta["upper"][j]
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise BadInputError(f"the score for '{given}' is {value:g}, outside {bid}'s "
                                    f"{meta['scale'][j]} range [{lo:g}, {hi:g}]")
            resolved[given] = bid
            row[j] = value
        return row, unknown, resolved

    def fold_in(self, rows: np.ndarray, covariates=None) -> dict:
        """Fold-in predictions with 90% intervals and trust for rows (n_rows, n_benchmarks),
        with their covariates (n_rows, n_features) when given (`--method side`)."""
        # one BLAS thread: these products are small, and OpenBLAS's threads only wait on
        # each other when the cores are busy (several times slower on a loaded machine)
        extra = {} if covariates is None else {"covariates": np.atleast_2d(covariates)}
        with single_blas_thread():
            return conformal.fold_in_intervals(self.predictor, self.cal_new,
                                               np.atleast_2d(rows), self.support, **extra)

    # -- answers ---------------------------------------------------------------------------
    def predict(self, scores: dict[str, float], *, metadata: dict | None = None,
                n_nearest: int = 5) -> dict:
        """The whole row predicted from known scores (and, for `--method side`, what is
        known about the model: `metadata`, the keys of `BenchPress.predict`), the nearest
        known models and the benchmark to run next (see `run_next`)."""
        row, unknown, resolved = self.row_of(scores)
        if np.isnan(row).all():
            raise BadInputError("no known benchmark given" + (
                f" ({listed(unknown)} matched none after alias resolution)" if unknown else
                ": enter at least one score, e.g. gpqa_diamond:71.2"))
        cov = self.bp.new_model_covariates(metadata)  # outside the range: side folds in as
        out = {k: v[0] for k, v in self.fold_in(row, cov).items()}  # the default does
        given = ~np.isnan(row)
        m = self.bp.matrix
        preds = []
        for j, bid in enumerate(m.benchmark_ids):
            g = bool(given[j])
            preds.append({
                "benchmark_id": bid, "name": m.benchmarks["name"][j],
                "scale": m.benchmarks["scale"][j], "given": float(row[j]) if g else None,
                "predicted": float(row[j]) if g else _num(out["predicted"][j]),
                "lower": None if g else _num(out["lower"][j]),
                "upper": None if g else _num(out["upper"][j]),
                "trust": None if g else _num(out["trust"][j]),
                "n_models": int(self.col_count[j])})
        used = self.bp.uses_covariates(cov)
        return {"unknown": unknown, "resolved": resolved, "predictions": preds,
                "with_covariates": used, "metadata_note": self.bp.metadata_note(metadata, used),
                "nearest": self.nearest(row, n_nearest),
                "run_next": self.run_next(row, out, covariates=cov)}

    def run_next(self, row: np.ndarray, out: dict, *, top: int = 5, covariates=None) -> dict:
        """Which unobserved benchmark would narrow the other intervals most.

        For each candidate (the `MAX_CANDIDATES` unobserved benchmarks with the most
        scores in the matrix), the row is folded in again with that benchmark set to its
        predicted value; the gain is the summed 90% interval width (in points, 1% of each
        benchmark's range) of the other unobserved benchmarks, before minus after (with the
        model's ``covariates`` row, (n_features,), when its prediction used them).
        """
        unobs = np.isnan(row) & np.isfinite(out["lower"])
        cand = np.flatnonzero(unobs)
        cand = cand[np.argsort(-self.col_count[cand], kind="stable")][:MAX_CANDIDATES]
        if cand.size == 0:
            return {"best": None, "ranked": [], "n_candidates": 0}
        R = np.tile(row, (cand.size, 1))
        R[np.arange(cand.size), cand] = out["predicted"][cand]
        after = self.fold_in(R, None if covariates is None else
                             np.tile(covariates, (cand.size, 1)))
        w0 = (out["upper"] - out["lower"]) / self.points
        w1 = (after["upper"] - after["lower"]) / self.points
        others = np.tile(unobs, (cand.size, 1))
        others[np.arange(cand.size), cand] = False
        gain = np.where(others, w0[None, :] - w1, 0.0)
        gain = np.nansum(gain, axis=1)
        width_before = np.nansum(np.where(others, w0[None, :], 0.0), axis=1)
        order = np.argsort(-gain, kind="stable")
        m = self.bp.matrix
        ranked = [{"benchmark_id": m.benchmark_ids[cand[k]],
                   "name": m.benchmarks["name"][int(cand[k])],
                   "width_reduction_points": float(gain[k]),
                   "width_reduction_share": float(gain[k] / width_before[k]) if width_before[k] else None,
                   "cost": _num(self.costs[cand[k]])} for k in order[:top]]
        return {"best": ranked[0], "ranked": ranked, "n_candidates": int(cand.size)}

    def nearest(self, row: np.ndarray, n: int = 5) -> list[dict]:
        """Known models closest to `row` on its given benchmarks: RMS distance in the
        interval space (z units) between the given scores and each model's scores there
        (observed where measured, else predicted); `n_measured` counts the measured ones.
        Models measured on at least half of the given benchmarks rank first, then those
        measured on one."""
        given = ~np.isnan(row)
        z = self.support.transform.transform(np.where(given, row, np.nan)[None, :])[0]
        diff = self.Zc[:, given] - z[given]
        dist = np.sqrt(np.nanmean(diff ** 2, axis=1))
        measured = self.observed[:, given].sum(axis=1)
        # models measured on at least half of the given benchmarks (else on one) come first
        need = max(1, math.ceil(given.sum() / 2))
        tier = np.where(measured >= need, 0, np.where(measured >= 1, 1, 2))
        order = np.lexsort((-measured, dist, tier))[:n]
        ids = self.bp.matrix.model_ids
        return [{"model_id": ids[i], "distance_z": float(dist[i]),
                 "n_measured": int(measured[i]), "n_given": int(given.sum()),
                 "scores": {self.bp.matrix.benchmark_ids[j]: _num(self.completed[i, j])
                            for j in np.flatnonzero(given)}} for i in order]

    def compare(self, model_ids: list[str], new_models: dict[str, dict[str, float]] | None = None,
                *, benchmarks: list[str] | None = None) -> pl.DataFrame:
        """`BenchPress.compare` on the precomputed intervals: one row per benchmark with
        each model's value (observed or predicted, with interval and trust), leader, gap
        and p_ahead."""
        new_models = new_models or {}
        missing = [x for x in model_ids if x not in self.row]
        if missing:
            raise BadInputError(f"models not in the registry: {listed(missing, quote=False)}")
        names = list(model_ids) + list(new_models)
        if len(names) < 2 or len(names) > 5:
            raise BadInputError(f"compare takes two to five models, got {len(names)}")
        if len(set(names)) != len(names):
            raise BadInputError("compare needs distinct model names")
        idx = [self.row[x] for x in model_ids]
        values, observed = self.completed[idx], self.observed[idx]
        iv = {k: self.cells[k][idx] for k in ("lower", "upper", "trust")}
        for name, scores in new_models.items():
            row, unknown, _ = self.row_of(scores)
            if unknown or np.isnan(row).all():
                raise BadInputError(f"model {shown(name)}: unknown benchmarks {listed(unknown, quote=False)}"
                                    if unknown else f"model '{name}' has no scores")
            out = self.fold_in(row)
            values = np.vstack([values, np.where(np.isnan(row), out["predicted"][0], row)])
            observed = np.vstack([observed, ~np.isnan(row)])
            iv = {k: np.vstack([iv[k], out[k]]) for k in iv}
        cols = (np.arange(len(self.col)) if not benchmarks
                else np.array([self.col[b] for b in self.bp.benchmark_ids(benchmarks)]))
        sigma = (iv["upper"] - iv["lower"]) / (2 * NORMAL_Q95)
        frame = compare_models(names, values[:, cols], observed[:, cols], self.hib[cols],
                               sigma=sigma[:, cols], intervals={k: v[:, cols] for k, v in iv.items()},
                               benchmark_ids=[self.bp.matrix.benchmark_ids[j] for j in cols])
        n_obs = observed[:, cols].sum(axis=0)
        return frame.with_columns(pl.Series("n_observed", n_obs)).sort(
            "n_observed", descending=True, maintain_order=True)


def _num(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
