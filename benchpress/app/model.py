"""The app's fitted model: one `BenchPress`, and the lookups its pages share.

`load_model` is the one place the app gets its `BenchPress` (from the registry or a
snapshot, with the same stored fit `benchpress predict` uses). `Engine` holds it with what
the Matrix and Cell pages look up (the completed matrix with its "cells" intervals, made
once at startup); every answer that is a prediction (Predict, Model, Compare) is the
library's own call (`BenchPress.predict`, `predict_model`, `compare`, and
`benchpress.api.next_steps`), so the app and the CLI give the same numbers. The app parses,
calls and renders; it has no engine of its own.
"""

from __future__ import annotations


import logging
import time

import numpy as np

from benchpress.api import BenchPress
from benchpress.errors import UsageError
from benchpress.api.next_steps import nearest_known, run_next
from benchpress.predict import make_predictor

__all__ = ["load_model", "Engine"]

log = logging.getLogger("benchpress.app")


def load_model(home, snapshot: str | None = None, *, sources: list[str] | None = None,
               method: str = "default") -> BenchPress:
    """The app's model: the registry (or snapshot) of `home` with `method`'s predictor.

    The single place where the app obtains a `BenchPress`: with the home's `FitStore`
    (the same store as `benchpress predict`), so the stored fit of an unchanged matrix is
    reused and a restart answers without refitting or recalibrating. `Engine` fits it.
    """
    from benchpress.api.fit_store import FitStore
    from benchpress.home import Home, find_home

    home = home if isinstance(home, Home) else (Home(home) if home else find_home())
    return BenchPress.from_snapshot(home, snapshot, sources=sources,
                                    predictor=make_predictor(method),
                                    store=FitStore.for_home(home),
                                    on_unknown=unknown_names_logged)


def unknown_names_logged(kind: str, names: list[str]) -> None:
    """Unknown names the app left out: its answers list them (`unknown`, `resolved`), so
    they go to the log's debug level, not to the server's stderr as Python warnings."""
    log.debug("unknown %ss left out: %s", kind, ", ".join(names))


def _log_step(k: int, n: int, label: str) -> None:
    """A cold start's progress (no stored fit yet: the app fits before it answers)."""
    log.info("startup: %s (step %d of %d; the fit is kept for the next start)", label, k + 1, n)


class Engine:
    """A loaded `BenchPress` with the completed matrix its pages look up.

    Attributes
    ----------
    bp : BenchPress
    values, observed : ndarray (n_models, n_benchmarks)
        Observed scores (NaN missing) and their mask.
    cells : dict of ndarray (n_models, n_benchmarks)
        ``predicted, lower, upper, trust`` of every cell (`BenchPress.completed_cells`).
    completed : ndarray (n_models, n_benchmarks)
        Observed where known, else predicted.
    timings : dict
        Seconds spent on each startup step.
    """

    def __init__(self, bp: BenchPress):
        t0 = time.perf_counter()
        self.bp = bp
        m = bp.matrix
        self.timings: dict[str, float] = {}
        t = time.perf_counter()
        # the fit and both calibrators, from the store when it has them (a cold start
        # fits here, step by step in the log): timed, so "model ready" says what it cost
        self.predictor = bp.fit(("cells", "new_models"), progress=_log_step).predictor
        self.timings["fit"] = time.perf_counter() - t
        t = time.perf_counter()
        self.cal_cells = bp.calibrator("cells")
        self.cal_new = bp.calibrator("new_models")
        self.timings["calibrate"] = time.perf_counter() - t
        t = time.perf_counter()
        self.cells = bp.completed_cells
        self.timings["intervals"] = time.perf_counter() - t
        self.values = m.values
        self.observed = ~np.isnan(m.values)
        self.completed = np.where(self.observed, m.values, self.cells["predicted"])
        self.col_count = self.observed.sum(axis=0)
        self.costs = bp.benchmark_costs()
        self.hib = m.benchmarks["higher_is_better"].fill_null(True).to_numpy().astype(bool)
        self.col = {b: j for j, b in enumerate(m.benchmark_ids)}
        self.row = {x: i for i, x in enumerate(m.model_ids)}
        self.timings["total"] = time.perf_counter() - t0
        log.info("model ready: %d models x %d benchmarks in %.1f s (%s)", *m.values.shape,
                 self.timings["total"],
                 ", ".join(f"{k} {v:.1f} s" for k, v in self.timings.items() if k != "total"))

    def resolve(self, names) -> dict[str, str | None]:
        """Each given benchmark name or alias -> its canonical id in the matrix (None:
        unknown after alias resolution), by the library's resolver."""
        found = self.bp.resolve_benchmarks(list(names), ignore_unknown=True)
        return {name: found.mapping.get(name.strip()) for name in names}

    def suggest(self, names) -> dict[str, list[str]]:
        """Each name the resolver does not know -> the closest benchmark ids (as the CLI's
        "did you mean"); known names are left out."""
        unknown = [n for n, found in self.resolve(names).items() if found is None]
        return self.bp.names.benchmark_suggestions(unknown)

    def predict(self, scores: dict[str, float], *, metadata: dict | None = None,
                n_nearest: int = 5) -> dict:
        """`BenchPress.predict` of known scores (unknown names listed, not refused), with
        the nearest known models and the benchmark to run next (`benchpress.api.next_steps`)."""
        if not scores:
            raise UsageError("enter at least one score, e.g. gpqa_diamond=71.2")
        result = self.bp.predict(scores, ignore_unknown=True, metadata=metadata)
        frame = result.frame
        arrays = {k: frame[k].fill_null(np.nan).to_numpy()
                  for k in ("given", "predicted", "lower", "upper", "trust")}
        row = arrays["given"]
        preds = [{**{k: r[k] for k in ("benchmark_id", "name", "scale", "given", "predicted",
                                       "lower", "upper", "trust")},
                  "n_models": int(self.col_count[j])}
                 for j, r in enumerate(frame.iter_rows(named=True))]
        cov = self.bp.new_model_covariates(metadata)  # as `predict` folded the row in
        names = self.bp.names  # unknown names: the CLI's and the API's suggestions
        return {"provenance": result.provenance, "unknown": result.unknown,
                "unknown_note": names.unknown_benchmarks_note(result.unknown),
                "suggestions": names.benchmark_suggestions(result.unknown),
                "resolved": result.resolved, "predictions": preds,
                "with_covariates": result.with_covariates,
                "metadata_note": self.bp.metadata_note(metadata, result.with_covariates),
                "contradicted": result.contradicted,
                "contradicted_note": result.contradicted_note,
                "nearest": nearest_known(self.bp, row, n_nearest),
                "run_next": run_next(self.bp, row, arrays, covariates=cov)}
