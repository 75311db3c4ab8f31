"""Held-out cell sets ("folds") of the score matrix: generate, decode, encode.

Folds are lists of held-out ``(model_index, benchmark_index)`` cells of the score matrix.
Two JSON layouts are decoded (:func:`parse_folds`; reading the file is
:func:`benchpress.api.fold_files.read_folds`):

* the published index form ``{"n_models":..., "n_bench":..., "folds": [{"seed": 42,
  "fold": 0, "test_cells": [[i, j], ...]}, ...]}`` (indices in data order);
* an id form ``{"folds": [{"test_cells": [[model_id, benchmark_id], ...]}, ...]}``,
  resolved against given model and benchmark id lists.

:func:`make_folds` reproduces the published generator ("per-model k-fold",
``folds_s{n_seeds}_f{k}_bs{seed}_ms{min_scores}``): for each seed, one
``numpy.random.RandomState(seed)`` shuffles every model's observed benchmarks in model
order (models with fewer than ``min_scores`` observed cells are skipped); fold ``f`` of a
model holds positions ``[f*size, (f+1)*size)`` of its shuffled list with
``size = max(1, n_i // k)``, the last fold taking the remainder.

>>> import numpy as np
>>> folds = make_folds(np.ones((4, 6), dtype=bool), n_folds=3, seed=0)
>>> len(folds), folds.n_cells
(3, 24)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchpress.errors import BadInputError, UsageError

__all__ = ["Folds", "make_folds", "parse_folds", "folds_to_json"]


@dataclass(frozen=True)
class Folds:
    """Held-out cell sets.

    Attributes
    ----------
    test_cells : tuple of ndarray, each shape (n_cells, 2), int
        ``[model_index, benchmark_index]`` rows of each fold.
    seeds : tuple of int or None
        Generating seed per fold (None when unknown).
    fold_ids : tuple of int
        Fold number within its seed.
    left_out : int
        Held-out cells of the file these folds were read from whose values a reviewed
        verdict took out of the matrix, left out (:meth:`observed_in`); 0 for folds made
        here.
    """

    test_cells: tuple
    seeds: tuple
    fold_ids: tuple
    left_out: int = 0

    def __len__(self) -> int:
        return len(self.test_cells)

    def __iter__(self):
        return iter(self.test_cells)

    @property
    def n_cells(self) -> int:
        """Total held-out cells over all folds."""
        return int(sum(len(c) for c in self.test_cells))

    def observed_in(self, values, excused) -> "Folds":
        """The same folds without the held-out cells that ``values`` (n_models,
        n_benchmarks; NaN: not observed) does not hold and ``excused`` (bool, the same
        shape) accounts for, counted in ``left_out``: a fold file written for the published
        matrix, read on a registry whose reviewed verdicts took some of its values out.

        Raises BadInputError when a fold holds an unobserved cell that is not excused (a
        file whose cells do not line up with this matrix) or keeps no cell."""
        values = np.asarray(values, dtype=float)
        kept, gone = [], 0
        for k, cells in enumerate(self.test_cells):
            cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
            i, j = cells[:, 0], cells[:, 1]
            seen = ~np.isnan(values[i, j])
            stray = int((~seen & ~np.asarray(excused, dtype=bool)[i, j]).sum())
            if stray:
                raise BadInputError(f"fold {k}: {stray} held-out cells are not observed")
            if cells.size and not seen.any():
                raise BadInputError(f"fold {k}: none of its {len(cells)} held-out cells is observed")
            kept.append(cells[seen])
            gone += int((~seen).sum())
        return Folds(tuple(kept), self.seeds, self.fold_ids, self.left_out + gone)

def make_folds(observed, *, n_folds: int = 3, seed: int = 42, n_seeds: int = 1,
               min_scores: int = 1) -> Folds:
    """Per-model k-fold partitions of the observed cells, for seeds ``seed .. seed+n_seeds-1``.

    Parameters
    ----------
    observed : array_like of bool, shape (n_models, n_benchmarks)
        Which cells have a score (e.g. ``~np.isnan(Y)``).
    n_folds : int, default 3
    seed : int, default 42
    n_seeds : int, default 1
        Number of independent partitions; ``n_seeds * n_folds`` folds are returned.
    min_scores : int, default 1
        Models with fewer observed cells are never held out.

    Returns
    -------
    Folds
        With ``seed=42, n_seeds=10, n_folds=3, min_scores=1`` on the published matrix this
        equals the published ``folds_s10_f3_bs42_ms1.json``.
    """
    obs = np.asarray(observed, dtype=bool)
    if obs.ndim != 2:
        raise BadInputError(f"observed must be 2-D, got shape {obs.shape}")
    if n_folds < 2 or n_seeds < 1:
        raise UsageError("need n_folds >= 2 and n_seeds >= 1")
    cells, seeds, ids = [], [], []
    counts = obs.sum(axis=1)
    held = counts >= min_scores
    rows = np.repeat(np.arange(obs.shape[0]), np.where(held, counts, 0))
    # position of each cell within its row's shuffled order, and that row's fold size
    pos = np.arange(rows.size) - np.repeat(np.cumsum(counts * held) - counts * held,
                                           np.where(held, counts, 0))
    size = np.maximum(1, counts[rows] // n_folds)
    fold = np.minimum(pos // size, n_folds - 1)
    for s in range(int(seed), int(seed) + int(n_seeds)):
        rng = np.random.RandomState(s)
        # one shuffle per model, in model order: this consumes the random stream exactly
        # as the published fold generator does, so the published folds are reproduced
        shuffled = [rng.shuffle(js) or js for js in
                    (np.flatnonzero(obs[i]) for i in np.flatnonzero(held))]
        cols = np.concatenate(shuffled) if shuffled else np.zeros(0, np.int64)
        for f in range(n_folds):
            sel = fold == f
            cells.append(np.column_stack([rows[sel], cols[sel]]).astype(np.int64))
            seeds.append(s)
            ids.append(f)
    return Folds(tuple(cells), tuple(seeds), tuple(ids))


def _whole(value, what: str) -> int:
    """A JSON integer (not a bool, a float or text) as int, else BadInputError naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInputError(f"{what}: expected a whole number, got {value!r:.40}")
    return value


def parse_folds(obj, model_ids=None, benchmark_ids=None) -> Folds:
    """Folds from an already-decoded JSON object (index or id form, see module doc); a
    value of the wrong kind is a BadInputError naming the fold, cell and field."""
    if not isinstance(obj, dict) or not isinstance(obj.get("folds"), list):
        raise BadInputError('fold file must be an object with a "folds" list')
    midx = None if model_ids is None else {m: k for k, m in enumerate(model_ids)}
    bidx = None if benchmark_ids is None else {b: k for k, b in enumerate(benchmark_ids)}
    for key, ids in (("n_models", model_ids), ("n_bench", benchmark_ids)):
        if key in obj and ids is not None and _whole(obj[key], key) != len(ids):
            raise BadInputError(f"fold file {key}={obj[key]} but the matrix has {len(ids)}")
    cells, seeds, fids = [], [], []
    for k, rec in enumerate(obj["folds"]):
        if not isinstance(rec, dict) or not isinstance(rec.get("test_cells"), list):
            raise BadInputError(f'fold {k} has no "test_cells" list')
        rows = []
        for n, cell in enumerate(rec["test_cells"]):
            if not isinstance(cell, (list, tuple)) or len(cell) != 2:
                raise BadInputError(f"fold {k}: bad cell {cell!r:.40}")
            m, b = cell
            if isinstance(m, str) or isinstance(b, str):
                if midx is None or bidx is None:
                    raise UsageError("id-form folds need model_ids and benchmark_ids")
                if m not in midx or b not in bidx:
                    raise BadInputError(f"fold {k}: unknown cell {cell!r:.80}")
                rows.append((midx[m], bidx[b]))
            else:
                rows.append((_whole(m, f"fold {k}, cell {n}, model index"),
                             _whole(b, f"fold {k}, cell {n}, benchmark index")))
        arr = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
        if midx is not None and arr.size and (arr[:, 0].max() >= len(midx) or arr.min() < 0):
            raise BadInputError(f"fold {k}: model index out of range")
        if bidx is not None and arr.size and arr[:, 1].max() >= len(bidx):
            raise BadInputError(f"fold {k}: benchmark index out of range")
        seed = rec.get("seed")
        cells.append(arr)
        seeds.append(None if seed is None else _whole(seed, f"fold {k}, seed"))
        fids.append(_whole(rec.get("fold", k), f"fold {k}, fold"))
    return Folds(tuple(cells), tuple(seeds), tuple(fids))


def folds_to_json(folds: Folds, model_ids=None, benchmark_ids=None) -> dict:
    """JSON-ready dict: id form when both id lists are given, index form otherwise."""
    recs = []
    for cells, s, f in zip(folds.test_cells, folds.seeds, folds.fold_ids):
        if model_ids is not None and benchmark_ids is not None:
            tc = [[model_ids[i], benchmark_ids[j]] for i, j in cells.tolist()]
        else:
            tc = cells.tolist()
        recs.append({"seed": s, "fold": f, "test_cells": tc})
    return {"folds": recs}
