"""The fit store: a content-addressed cache of fitted models, one fit per (matrix, method,
params).

Every door that needs a fit asks a `FitStore` for it (`FitStore.fitted`): the CLI
(`predict`, `compare`, ...; the store of the home, `FitStore.for_home`), the Python API
(`BenchPress`, which has its own in-memory store unless given one), the app, replay and the
forecast ledger (one store per replay run, so a snapshot is fitted once for its analysis
and its forecasts). A store keeps fits in memory, and, when it has a folder, on disk:

    <folder>/<matrix digest>-<method, params and code digest>/   an artifact (see
                                                                  `benchpress.api.artifact`)
    <folder>/.index/<registry-folder fingerprint>                the name of the fit made
                                                                  on that folder's files

The key of a fit is the matrix's content (ids, scales, every value), the predictor's
method and parameters, the predictor code and, for `--method side`, its covariates (the
model rows' metadata, which the matrix digest leaves out); a fit is never reused for
anything else. Only the ALS methods and side (without extra_ranks) are written to disk
(`benchpress.predict.state.storable`); every fit is kept in memory. The disk keeps the
`keep` newest fits and never removes a folder it did not make. The index lets `predict`
answer from a stored fit without reading the registry's matrix (`lookup`); it keeps the
`INDEX_PER_FIT * keep` newest entries.

The disk is hostile until verified: a fit read from it must be a real folder (no symbolic
link) whose whole artifact verifies (`artifact.load_artifact`: one digest over every
file, the parameters and the calibrators) and whose content gives back its own key (the
method, parameters and matrix digest it holds are those asked for). One that fails is
set aside and fitted again, once: the new fit replaces it. Writes hold the folder's lock
(`WRITE_LOCK`, waited for at most `LOCK_WAIT_S`, else the fit is not stored), under which
the temporary folders of writes that were killed are swept.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from benchpress.errors import BadInputError
from benchpress.api.fitted_model import FitIdentity, FittedModel

__all__ = ["FitStore", "fit_cache_dir", "from_artifact", "save_fitted", "INDEX_DIR"]

#: Folder (in the store's folder) of the index from registry-folder fingerprints to fits.
INDEX_DIR = ".index"
#: Index entries kept per fit kept (each rebuild of an unchanged registry adds one).
INDEX_PER_FIT = 4
#: The lock file every write to the store's folder holds (in that folder).
WRITE_LOCK = ".write.lock"
#: How long a write waits for another process's write to end before it gives up.
LOCK_WAIT_S = 30.0
_KEY = re.compile(r"[0-9a-f]{24}-[0-9a-f]{16}")  # a fit folder's name (`FitStore.key`)
# what a write of `write_folder_atomic` leaves when it is killed: its temporary folder, or
# the old folder set aside during the swap
_LEFTOVER = re.compile(r"(\.[0-9a-f]{24}-[0-9a-f]{16}\.tmp-.+|[0-9a-f]{24}-[0-9a-f]{16}\.old)")


def _remove_aside(path: Path, why: str) -> None:
    """Remove the fit folder `path` by renaming it aside first: a process killed while
    deleting leaves a leftover the next write lock sweeps, never a half-deleted fit under
    its key's name."""
    aside = path.with_name(f".{path.name}.tmp-{why}-{os.getpid()}")
    os.replace(path, aside)
    shutil.rmtree(aside, ignore_errors=True)


def fit_cache_dir(home) -> Path | None:
    """Where fits of unchanged registries are kept: `<home>/.cache/fits/` (env:
    BENCHPRESS_FIT_CACHE; an empty value turns the disk cache off: None)."""
    override = os.environ.get("BENCHPRESS_FIT_CACHE")
    if override is not None:
        return Path(override) if override else None
    return home.root / ".cache" / "fits"


class FitStore:
    """Fitted models by key: in memory, and on disk under `folder` (None: memory only).

    Parameters
    ----------
    folder : Path, optional
        Where fits are written as artifacts (made on first write).
    keep : int
        How many fits the disk and the memory keep (the newest; older ones are pruned).

    Attributes
    ----------
    n_fits : int
        How many predictors this store has fitted on a whole matrix (a fit found in
        memory or on disk is not counted).
    """

    def __init__(self, folder: str | Path | None = None, *, keep: int = 6):
        self.folder = Path(folder) if folder is not None else None
        self.keep = keep
        self.n_fits = 0
        self._memory: OrderedDict[str, FittedModel] = OrderedDict()

    @classmethod
    def for_home(cls, home) -> "FitStore":
        """The store of a registry home (`fit_cache_dir`: disk unless turned off)."""
        return cls(fit_cache_dir(home))

    def __repr__(self) -> str:
        return f"FitStore({str(self.folder) if self.folder else 'memory'!r}, {len(self._memory)} in memory)"

    # -- keys --------------------------------------------------------------------------
    @staticmethod
    def key(matrix, estimator, covariates: np.ndarray | None = None) -> str:
        """The name of the fit of `estimator` on `matrix` (with its models' `covariates`):
        24 hex digits of the matrix content, 16 of the method, parameters, covariates and
        predictor code."""
        from benchpress.api.artifact import cache_key
        from benchpress.predict.estimator import flat_params

        params = flat_params(estimator)
        if covariates is not None:
            params = {**params, "covariates_sha256": hashlib.sha256(
                np.ascontiguousarray(covariates, dtype="<f8").tobytes()).hexdigest()}
        return cache_key(matrix, estimator.method, params)

    @staticmethod
    def folder_key(folder: Path, sources, estimator) -> str:
        """A registry or snapshot folder's current state, cheaply: the names, sizes and
        modification times of its files, with the sources, method, parameters and
        predictor code (any change to the files gives another key, so an index entry is
        never stale)."""
        from benchpress.api.artifact import FORMAT_VERSION, code_digest
        from benchpress.predict.estimator import flat_params

        files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                       for p in Path(folder).iterdir() if p.is_file())
        spec = json.dumps({"folder": str(Path(folder).resolve()), "files": files,
                           "sources": sources, "method": estimator.method,
                           "params": flat_params(estimator), "code": code_digest(),
                           "format": FORMAT_VERSION}, sort_keys=True, default=str)
        return hashlib.sha256(spec.encode()).hexdigest()[:32]

    # -- the one way to a fit ------------------------------------------------------------
    def fitted(self, estimator, matrix, *, identity: FitIdentity, covariates=None,
               regimes=(), progress=None, sources=None, contracts_dir=None,
               folder: Path | None = None) -> FittedModel:
        """The fit of the unfitted `estimator` on `matrix`, with interval calibrators for
        `regimes` where the matrix allows them (a regime with too little held-out data is
        left out; ask `FittedModel.calibrated` for its error). Taken from memory, else
        from disk, else fitted now (`progress(k, n, label)` before each step) and stored.

        `sources` (as the user named them; default `identity.sources`) and
        `contracts_dir` go into a stored artifact; `folder` (the registry or snapshot
        folder the matrix was read from, with `sources`) is indexed for `lookup`.
        """
        key = self.key(matrix, estimator, covariates)
        fit = self._memory.get(key) or self._read(key, matrix, covariates)
        fresh = [("fit", None), *([("interval features", None)] if regimes else [])]
        steps = (fresh if fit is None else []) + [
            (f"calibrating intervals ({r})", r) for r in regimes
            if fit is None or r not in fit.calibrators]
        for k, (label, regime) in enumerate(steps):
            if progress:
                progress(k, len(steps), label)
            if label == "fit":
                fit = FittedModel.fit(estimator, matrix, identity=identity, covariates=covariates)
                self.n_fits += 1
                continue
            if regime is None:  # the interval support, which every calibrator uses
                fit.support
                continue
            try:
                fit = fit.calibrated([regime], covariates=covariates)
            except BadInputError:  # too little held-out data to calibrate: kept without
                pass
        self._remember(key, fit)
        if steps:
            self._write(key, fit, sources=sources or identity.sources,
                        contracts_dir=contracts_dir)
        if folder is not None:
            self._index(self.folder_key(folder, sources, estimator), key)
        return fit

    def lookup(self, folder: Path, sources, estimator, *, regimes=("new_models",)
               ) -> FittedModel | None:
        """The stored fit of the registry or snapshot `folder` (its files unchanged since
        `fitted` indexed it), with calibrators for `regimes`, without reading the
        registry's matrix; None when there is none. A fit of the cells solver (a large
        registry) whose new models need no registered row (not a blend) loads lite
        (`load_artifact(..., lite=True)`: its matrix has no rows, its time does not grow
        with the models); the others load whole."""
        from benchpress.api.artifact import load_artifact, read_manifest
        from benchpress.predict.state import rows_apart

        if self.folder is None:
            return None
        try:
            entry = self.folder / INDEX_DIR / self.folder_key(folder, sources, estimator)
            name = entry.read_text(encoding="utf-8").strip()
            path = self.folder / name
            if not _KEY.fullmatch(name) or path.is_symlink():  # never outside the store
                return None
            doc = read_manifest(path)
            if not set(regimes) <= set(doc["calibrators"]):
                return None
            fit = from_artifact(load_artifact(path, lite=rows_apart(doc)))
        except (OSError, BadInputError):
            return None
        from benchpress.predict.estimator import flat_params

        # (flat: a blend's parts are objects, equal by their parameters, not by identity)
        asked = (estimator.method, flat_params(estimator))
        if (fit.predictor.method, flat_params(fit.predictor)) != asked or \
                not doc["matrix_sha256"].startswith(name[:24]):
            return None  # another fit's content under this name: `fitted` replaces it
        return fit

    # -- memory and disk -----------------------------------------------------------------
    def _remember(self, key: str, fit: FittedModel) -> None:
        self._memory[key] = fit
        self._memory.move_to_end(key)
        while len(self._memory) > self.keep:
            self._memory.popitem(last=False)

    def _read(self, key: str, matrix, covariates=None) -> FittedModel | None:
        """The fit stored on disk under `key`, once verified whole and found to be the fit
        `key` names (its matrix is `matrix`; its method, parameters and `covariates` give
        back `key`). None when there is none; one that fails is set aside (`_discard`), so
        the fit made instead replaces it."""
        from benchpress.api.artifact import load_artifact, matrix_digest

        if self.folder is None:
            return None
        path = self.folder / key
        if not (path.is_symlink() or path.exists()):
            return None
        try:
            if path.is_symlink() or not path.is_dir():
                raise BadInputError(f"{path}: not a folder of this store")
            fit = from_artifact(load_artifact(path))
            if fit.matrix.model_ids != matrix.model_ids or \
                    matrix_digest(fit.matrix) != matrix_digest(matrix) or \
                    self.key(fit.matrix, fit.predictor, covariates) != key:
                raise BadInputError(f"{path}: holds another fit than its name says")
        except BadInputError:
            self._discard(path)
            return None
        return fit

    def _discard(self, path: Path) -> None:
        """Remove the entry `path` of the store that failed its checks (a link itself, not
        what it points to; only a name of this store's keys)."""
        if not _KEY.fullmatch(path.name) or path.parent != self.folder:
            return
        try:
            with self._write_lock():
                if path.is_symlink() or path.is_file():
                    path.unlink()
                elif path.is_dir():
                    _remove_aside(path, "discarded")
        except (OSError, TimeoutError):
            pass

    @contextmanager
    def _write_lock(self):
        """The store folder's write lock (waits at most `LOCK_WAIT_S`: TimeoutError),
        sweeping what killed writes left before it yields: no write runs while it is
        held, so every temporary folder there is a dead write's."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / WRITE_LOCK, "a") as fh:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{self.folder}: another write holds the lock") from None
                    time.sleep(0.05)
            try:
                for entry in self.folder.iterdir():
                    if _LEFTOVER.fullmatch(entry.name) and not entry.is_symlink():
                        shutil.rmtree(entry, ignore_errors=True)
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _write(self, key: str, fit: FittedModel, *, sources, contracts_dir) -> None:
        """Store `fit` as the artifact `<folder>/<key>` and prune the oldest fits. A store
        without a folder, a predictor that cannot be stored, a folder holding what we did
        not write, or a disk that cannot be written: nothing stored (the next call fits
        again, no more)."""
        from benchpress.api.artifact import check_out_folder
        from benchpress.predict.state import storable

        if self.folder is None or not storable(fit.predictor):
            return
        target = self.folder / key
        try:
            with self._write_lock():
                check_out_folder(target)
                save_fitted(target, fit, snapshot={"id": fit.identity.snapshot,
                                                   "label": fit.matrix.label},
                            sources=sources, contracts_dir=contracts_dir)
                self._prune(keep=target)
        except (OSError, TimeoutError, BadInputError):
            pass

    def _prune(self, *, keep: Path) -> None:
        """Remove all but the `keep` newest fits on disk (never `keep`). Only what this
        store made is a fit: a folder named by a key holding an artifact manifest;
        anything else there (BENCHPRESS_FIT_CACHE may name a folder of the user's) is
        never removed."""
        from benchpress.api.artifact import MANIFEST

        fits = sorted((d for d in self.folder.iterdir() if d.is_dir() and not d.is_symlink()
                       and _KEY.fullmatch(d.name) and (d / MANIFEST).is_file()),
                      key=lambda d: d.stat().st_mtime, reverse=True)
        for old in fits[self.keep:]:
            if old != keep:
                _remove_aside(old, "pruned")

    def _index(self, folder_key: str, key: str) -> None:
        """Note that the fit `key` belongs to the registry folder whose current files
        give `folder_key` (see `lookup`); entries of pruned fits go."""
        from benchpress.store.tables import write_atomic

        if self.folder is None or not (self.folder / key).is_dir():
            return
        index = self.folder / INDEX_DIR
        try:
            write_atomic(index / folder_key, lambda tmp: tmp.write_text(key, encoding="utf-8"))
            entries = sorted((e for e in index.iterdir() if e.is_file() and not e.is_symlink()
                              and not e.name.startswith(".")),
                             key=lambda e: e.stat().st_mtime, reverse=True)
            for k, entry in enumerate(entries):
                name = entry.read_text(encoding="utf-8").strip()
                if k >= INDEX_PER_FIT * self.keep or not _KEY.fullmatch(name) or not (
                        self.folder / name).is_dir():
                    entry.unlink(missing_ok=True)
        except OSError:
            pass


def from_artifact(art: dict) -> FittedModel:
    """The `FittedModel` of a loaded artifact (`benchpress.api.artifact.load_artifact`)."""
    from benchpress.predict.state import make_estimator

    doc = art["manifest"]
    snapshot = doc.get("snapshot") or {}
    sources = doc.get("sources")
    identity = FitIdentity.of(make_estimator(doc["method"], doc["params"]),
                              sources=sources, snapshot=snapshot.get("id"),
                              label=snapshot.get("label") or "")
    return FittedModel(art["matrix"], art["predictor"], identity=identity,
                       support=art["support"], calibrators=art["calibrators"])


def save_fitted(path, fit: FittedModel, *, snapshot: dict, sources=None, probes=None,
                contracts_dir=None) -> Path:
    """Write `fit` as the artifact folder `path` (`benchpress.api.artifact.save_artifact`):
    its matrix, predictor, support and calibrators, with `snapshot` (``{"id": ...,
    "label": ...}``), `sources` (as named), `probes` (benchmark ids) and the contracts of
    `contracts_dir`. Returns the folder."""
    from benchpress.api.artifact import save_artifact

    return save_artifact(path, fit.matrix, fit.predictor, support=fit.support,
                         calibrators=dict(fit.calibrators), snapshot=snapshot,
                         sources=None if sources is None else list(sources), probes=probes,
                         contracts_dir=contracts_dir)
