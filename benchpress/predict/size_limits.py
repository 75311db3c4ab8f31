"""Every size threshold of the predictor and its answers, in one documented object.

`SizeLimits` holds each bound once, named for what it bounds, and `LIMITS` is the default.
The config object is passed where a bound applies: the functions and classes that apply one
take ``limits: SizeLimits`` (default `LIMITS`; e.g.
``MatrixSupport(predictor, limits=...)``, ``calibrate(..., limits=...)``,
``ProbeSearch(..., limits=...)``) or, for a bound a user sets per call, the one value
(``ProbeSearch(max_models=...)``, ``benchpress probes --max-models``) with its default
written as ``LIMITS.<field>``. No module copies a bound into a constant of its own
(`tests/test_limits.py`). The estimators read `LIMITS` where they apply a bound (the
"auto" solver and their memory blocks), since their parameters are what a stored fit
keeps and a bound is not a modelling choice. Two kinds of bound:

- **which computation** (exact below, blockwise or sampled above): they change how a
  number is computed, and on the 2026-05 matrices (at most 1,124 x 208 cells) every one
  keeps the exact, dense computation, so the published figures are bit-identical;
- **memory per block**: they change how much is held at once, never a number.

Units: cells are matrix cells (n_models * n_benchmarks, observed or not), floats are
8-byte numbers, models are matrix rows. (Limits on untrusted input, downloads and archives,
are another matter: :mod:`benchpress.input_limits`.)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SizeLimits", "LIMITS"]


@dataclass(frozen=True)
class SizeLimits:
    """The size thresholds (see the module docstring for units).

    Which computation
    -----------------
    cells_solver_min_cells : int
        `ALSPredictor(solver="auto")` fits on the observed cells only (the "cells"
        solver) for a matrix of at least this many cells; below, the dense arrays
        (n_starts, n_models, n_benchmarks): at 5e5 cells they reach 120 MB per copy at
        30 starts (`sparse_als.use_sparse`).
    support_exact_max_models : int
        The interval support computes model-by-model correlations in one product up to
        this many training models, in row blocks above it
        (`intervals.features.nearest_similarity`).
    support_max_candidates : int
        Above this many training models the nearest-model risk feature searches a seeded
        sample of this many candidates (approximate; exact at or below it;
        `intervals.features.nearest_similarity`).
    support_cells_candidates : int
        For a fit of the cells solver, the nearest-model feature searches a fixed seeded
        sample of at most this many training models, kept with the fit
        (`intervals.cells_support.CellsSupport`).
    calibration_max_models : int
        Above this many models, with the cells solver, interval calibration refits on a
        seeded sample of this many models (its intervals then err on the wide side;
        `intervals.calibration.calibrate`).
    knn_candidates : int
        The default's nearest models per benchmark are looked for among this many
        nearest models (`models.blend.NeighbourMix`).
    probe_max_models : int
        The probe search leaves out and scores at most this many models (a seeded sample
        above it; `ProbeSearch(max_models=...)`, `benchpress probes --max-models`).
    probe_groups : int
        A sampled probe search splits its sample into this many groups, each left out of
        one fit (`probes.search.ProbeSearch`).
    probe_max_train : int
        Most models a probe search's held-out fit trains on (a seeded sample beyond it;
        `ProbeSearch(max_train=...)`).
    probe_min_benchmark_scores : int
        Each benchmark keeps at least this many scores (or all it has) in that bounded
        training set (`ProbeSearch(min_scores=...)`).
    new_model_min_scores : int
        A model needs at least this many scores to be held out as a new model
        (`evaluation.new_models`).
    next_step_candidates : int
        At most this many unobserved benchmarks are tried as "run this next", each one
        more fold-in row (`benchpress.api.next_steps.run_next`).

    Memory per block
    ----------------
    completion_block_floats : int
        The cells solver completes rows in blocks of at most this many per-start values
        (n_starts * rows * n_benchmarks; ~160 MB; `ALSPredictor.complete_rows`).
    knn_block_floats : int
        Nearest-model queries run in blocks whose (rows, n_models, n_benchmarks) arrays
        stay under this many floats (~80 MB; `knn.neighbour_average`).
    support_block_rows : int
        Rows per block of the blockwise correlations and cell intervals
        (`intervals.features.nearest_similarity`, `complete_intervals`).
    probe_chunk_cells : int
        Probe candidate sets are scored in chunks of at most this many predicted cells
        (`ProbeSearch.objective_values`).
    write_cells_per_block : int
        `complete --out` writes a completion of the cells solver in row blocks of about
        this many cells (`FittedModel.complete_blocks`).
    """

    cells_solver_min_cells: int = 500_000
    support_exact_max_models: int = 2048
    support_max_candidates: int = 4096
    support_cells_candidates: int = 1024
    calibration_max_models: int = 20_000
    knn_candidates: int = 100
    probe_max_models: int = 200
    probe_groups: int = 10
    probe_max_train: int = 2000
    probe_min_benchmark_scores: int = 20
    new_model_min_scores: int = 8
    next_step_candidates: int = 40
    completion_block_floats: int = 20_000_000
    knn_block_floats: int = 10_000_000
    support_block_rows: int = 256
    probe_chunk_cells: int = 20_000_000
    write_cells_per_block: int = 5_000_000


#: The thresholds in use.
LIMITS = SizeLimits()
