"""Stored fits and the user-facing predictions of :class:`benchpress.api.BenchPress`.

A mixin, so that `BenchPress` keeps one front door: `from_pretrained` / `save_pretrained` /
`use_stored_fit` load or store a fitted predictor as an artifact (:mod:`benchpress.artifact`);
`compare_models`, `nearest_models` and `compare_with_known_models` are the friendly entry
points beside `predict`. Unknown names follow one rule everywhere here: BadInputError naming
the closest known names, or left out with ``ignore_unknown=True``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, UsageError
from benchpress.predict import intervals as conformal

__all__ = ["FitsMixin", "fit_cache_dir", "fast_key", "INDEX_DIR"]


class FitsMixin:
    """Methods of :class:`~benchpress.api.BenchPress` about stored fits, a new model's
    metadata and comparisons (they use its `matrix`, `estimator`, `predictor`, `_support`, `_calibrators`,
    `calibrator`, `predict`, `compare` and `_canonical_benchmark`)."""

    # from_pretrained / save_pretrained / use_stored_fit load or store a fitted predictor
    # (benchpress.artifact); compare_models and compare_with_known_models are the friendly
    # entry points; unknown names follow one rule: BadInputError with suggestions, or left
    # out with ignore_unknown=True.
    @classmethod
    def from_pretrained(cls, path_or_name: str | Path | None = None) -> "BenchPress":
        """Load a fitted predictor from an artifact folder (see `benchpress.artifact`), or
        by name one shipped inside the package (`benchpress/pretrained/<name>/`); with no
        argument, the shipped "default". Nothing is refitted: predictions and intervals
        equal those of the fit that was saved. A damaged or incompatible artifact raises
        BadInputError (one line)."""
        from benchpress.artifact import DEFAULT_ARTIFACT

        path = Path(path_or_name) if path_or_name is not None else DEFAULT_ARTIFACT
        shipped = DEFAULT_ARTIFACT.parent / str(path_or_name)
        if path_or_name is not None and not path.exists() and path.name == str(path_or_name) \
                and (shipped / "manifest.json").is_file():
            path = shipped
        return cls._from_artifact(path)

    @classmethod
    def _from_artifact(cls, path: Path, *, home=None) -> "BenchPress":
        from benchpress.artifact import load_artifact
        from benchpress.predict.artifact import make_estimator

        art = load_artifact(path)
        doc = art["manifest"]
        contracts = art["contracts_dir"] or (home.schemas if home else None)
        bp = cls(art["matrix"], make_estimator(doc["method"], doc["params"]),
                 contracts_dir=contracts)
        bp._attach(art)
        bp.sources = doc.get("sources")
        return bp

    def _attach(self, art: dict) -> None:
        """Use the fitted objects of a loaded artifact instead of fitting."""
        self.__dict__["predictor"] = art["predictor"]
        self.__dict__["_support"] = art["support"]
        self._calibrators.update(art["calibrators"])
        self.artifact = {**art["manifest"], "path": str(art.get("path", ""))}

    def save_pretrained(self, path: str | Path, *, probes: list[str] | None = None,
                        regimes=("cells", "new_models"), progress=None) -> Path:
        """Fit (what is not fitted yet) and write this predictor as an artifact folder:
        the fit, its interval calibrators for `regimes`, the matrix and its metadata,
        `probes` (benchmark ids) and the contracts used for names. `progress(k, n, label)`
        is called before each step. Returns the folder."""
        from benchpress.artifact import save_artifact
        from benchpress.predict.artifact import storable

        if not storable(self.estimator):  # say so before any fit
            raise UsageError(f"only the ALS methods and side (without extra_ranks) can be "
                             f"saved as an artifact, not {self.method!r}")
        steps = [("fit", lambda: self.predictor), ("interval features", lambda: self._support),
                 *((f"calibrating intervals ({r})", lambda r=r: self.calibrator(r))
                   for r in regimes)]
        for k, (label, step) in enumerate(steps):
            if progress:
                progress(k, len(steps), label)
            try:
                step()
            except BadInputError:  # too little held-out data to calibrate: stored without
                if not label.startswith("calibrating"):
                    raise
        snapshot = {"id": self._snapshot_id(), "label": self.matrix.label}
        cals = {r: c for r, c in self._calibrators.items() if r in conformal.REGIMES}
        return save_artifact(path, self.matrix, self.predictor, support=self._support,
                             calibrators=cals,
                             snapshot=snapshot, sources=self.sources or self.source_ids,
                             probes=self.benchmark_ids(probes) if probes else None,
                             contracts_dir=self.contracts_dir)

    def pretrained_difference(self) -> str | None:
        """One line when this object predicts from other sources than
        `BenchPress.from_pretrained()` (the shipped fit) does, else None: for a registry
        loaded without `sources` (the CLI's default, every source of the registry), whose
        sources are not the ones the shipped fit names. The same input then gives other
        numbers; the line says which `sources` give the shipped fit's."""
        from benchpress.artifact import DEFAULT_ARTIFACT, read_manifest
        from benchpress.store.matrix import match_sources

        if self.sources or self.folder is None:
            return None
        try:
            shipped = read_manifest(DEFAULT_ARTIFACT).get("sources")
        except BadInputError:  # no shipped fit (a trimmed install): nothing to differ from
            return None
        used = self.source_ids or []
        try:
            picked = set(match_sources(used, shipped)) if shipped else set(used)
        except UsageError:  # a shipped source this registry does not hold
            picked = None
        if picked == set(used):
            return None
        return (f"predicted from every source of this registry ({', '.join(used)}); "
                f"BenchPress.from_pretrained() was fitted on {','.join(shipped)}, so the same "
                "scores give other numbers there" + (
                    f" (--sources {','.join(shipped)}: the same sources)" if picked else ""))

    def _snapshot_id(self) -> str | None:
        import json

        manifest = self.folder / "manifest.json" if self.folder is not None else None
        if manifest is not None and manifest.is_file():
            return json.loads(manifest.read_text(encoding="utf-8")).get("id")
        return None if self.artifact is None else (self.artifact.get("snapshot") or {}).get("id")

    @classmethod
    def from_stored_fit(cls, cache_dir: str | Path, folder: Path, predictor, *, home,
                        sources=None, regimes=("new_models",)) -> "BenchPress | None":
        """The stored fit of the registry or snapshot `folder` (its files unchanged since
        the fit was stored by `use_stored_fit`), without reading the registry's matrix: a
        `BenchPress` that predicts new models (`predict`), or None when there is no such
        fit (then load the matrix and `use_stored_fit`). A fit of the sparse path (a large
        registry) loads lite (`load_artifact(..., lite=True)`: no matrix at all, its time
        does not grow with the models); a small one loads whole."""
        from benchpress.artifact import load_artifact, read_manifest

        try:
            entry = Path(cache_dir) / INDEX_DIR / fast_key(folder, sources, predictor)
            fit = Path(cache_dir) / entry.read_text(encoding="utf-8").strip()
            doc = read_manifest(fit)
            if not set(regimes) <= set(doc.get("calibrators", {})):
                return None
            art = load_artifact(fit, lite=bool(doc.get("sparse")))
        except (OSError, BadInputError):
            return None
        bp = cls(art["matrix"], predictor, contracts_dir=home.schemas, folder=Path(folder))
        bp._attach(art)
        bp.sources, bp.lite = sources, True
        return bp

    def use_stored_fit(self, cache_dir: str | Path, *, regimes=("cells", "new_models"),
                       progress=None) -> "BenchPress":
        """Reuse the fit of this very matrix, method and parameters from `cache_dir`
        (content-addressed: `<matrix digest>-<method, params and code digest>/`), or make
        and store it there first, with interval calibrators for `regimes` (a stored fit
        that lacks one is completed and stored again). Returns self. Only ALS methods and
        side are stored (others fit as usual, on first use); side's key holds its
        covariates too (the model rows' metadata, which the matrix digest leaves out)."""
        import hashlib

        from benchpress.artifact import cache_key, check_out_folder, load_artifact
        from benchpress.predict.artifact import storable

        if not storable(self.estimator):
            return self
        params = self.estimator.get_params()
        X = self._side_info().get("covariates")
        if X is not None:
            params = {**params, "covariates_sha256": hashlib.sha256(
                np.ascontiguousarray(X, dtype="<f8").tobytes()).hexdigest()}
        folder = Path(cache_dir) / cache_key(self.matrix, self.method, params)
        if (folder / "manifest.json").is_file():
            try:
                art = load_artifact(folder)
            except BadInputError:
                art = None  # damaged: made again below
            if art is not None and art["matrix"].model_ids == self.matrix.model_ids:
                self._attach(art)
                if set(regimes) <= set(art["calibrators"]):
                    self._index_fit(Path(cache_dir), folder)
                    return self
        try:
            check_out_folder(folder)  # a cache entry holding what we did not write: kept
        except BadInputError:
            return self
        try:
            self.save_pretrained(folder, regimes=regimes, progress=progress)
            _prune(Path(cache_dir), keep=folder)
            self._index_fit(Path(cache_dir), folder)
        except OSError:  # a cache that cannot be written costs the next call a refit, no more
            pass
        return self

    def _index_fit(self, cache_dir: Path, fit: Path) -> None:
        """Note that the fit `fit` belongs to this registry folder's current files (see
        `from_stored_fit`), for a matrix loaded from a folder."""
        from benchpress.store.tables import write_atomic

        if self.folder is None:
            return
        key = fast_key(self.folder, self.sources, self.estimator)
        try:
            write_atomic(cache_dir / INDEX_DIR / key,
                         lambda tmp: tmp.write_text(fit.name, encoding="utf-8"))
            for entry in (cache_dir / INDEX_DIR).iterdir():  # entries of pruned fits go too
                if entry.is_file() and not entry.name.startswith(".") and not (
                        cache_dir / entry.read_text(encoding="utf-8").strip()).is_dir():
                    entry.unlink(missing_ok=True)
        except OSError:
            pass

    def __repr__(self) -> str:
        m = self.matrix
        n_scores = int((~np.isnan(m.values)).sum())
        snap = self._snapshot_id() or m.label or "unnamed"
        fit = ("pretrained " + str(self.artifact.get("path") or "")).strip() if self.artifact \
            else ("fitted" if "predictor" in self.__dict__ else "not fitted yet")
        return (f"BenchPress(snapshot={snap!r}, sources={','.join(self.source_ids or []) or 'all'}, "
                f"{len(m.model_ids)} models x {len(m.benchmark_ids)} benchmarks, "
                f"{n_scores} scores, method={self.method!r}"
                + (f", params={self.params}" if self.params else "") + f", {fit})")

    def new_model_covariates(self, metadata: dict | None) -> np.ndarray | None:
        """A new model's covariate row (n_features,) from `metadata` (the keys of
        `predict`), or None: no metadata, a predictor that takes none, or a registry whose
        models carry no such field. An unknown key or a bad value raises BadInputError."""
        if metadata is None or not self._side_info():
            return None
        from benchpress.predict.side import metadata_covariates

        cov = metadata_covariates(metadata, self.matrix.models)
        return None if cov is None else cov[0]

    def uses_covariates(self, covariates) -> bool:
        """Whether a new model with this covariate row (or None) is folded in with it
        (False: outside the training range, folded in as the default does)."""
        return covariates is not None and bool(self.predictor.covariates_apply(covariates[None])[0])

    def metadata_note(self, metadata: dict | None, used: bool) -> str | None:
        """Why a new model's `metadata` did not reach its prediction (None: it did, or
        none was given): one line for the CLI's note and the app's page."""
        if not metadata:
            return None
        latest = self._latest_release()
        given = str(metadata.get("release_date") or "")[:10]
        if used:  # a release after every registered model's counts as the newest one's
            if given and latest and given > latest[:10]:
                return (f"release_date {given} is after every registered model's (latest "
                        f"{latest}): its effect is taken at the latest date (clipped)")
            return None
        if not self._side_info():
            return (f"the metadata is used by the side method only (--method side); "
                    f"'{self.method}' predicted from the scores alone")
        why = ("a value lies outside what the registered models span (a release date or a "
               "size named in the id), or the registry has no such fields")
        if given and latest and given > latest[:10]:
            why = f"release_date {given} is after every registered model's (latest {latest})"
        return (f"the metadata was not used: {why}; predicted from the scores alone, as the "
                "default does (side does not extrapolate)")

    def _latest_release(self) -> str | None:
        """The newest release date of the registered models (ISO text), or None."""
        if "release_date" not in self.matrix.models.columns:
            return None
        dates = self.matrix.models["release_date"].drop_nulls().cast(pl.String)
        return dates.max() if dates.len() else None

    def compare_models(self, *models, scores: dict | None = None, benchmarks=None,
                       ignore_unknown: bool | None = None) -> pl.DataFrame:
        """Two or more models side by side: one row per benchmark with each model's score
        (observed, or predicted with its 90% interval `<model>_lower`/`_upper`), the
        `leader`, the `gap` to the runner-up and `p_ahead`, the chance the leader is
        really ahead. `models` are registered model ids; `scores` adds new models
        ({name: {benchmark: score}}). Unknown names follow `predict`'s rule."""
        known = self.resolve_models(list(models), ignore_unknown=ignore_unknown).ids
        new = {}
        for name, given in (scores or {}).items():
            found = self.resolve_benchmarks(list(given), ignore_unknown=ignore_unknown).mapping
            new[name] = {b: v for b, v in given.items() if b in found}
        bench = self.benchmark_ids(benchmarks, ignore_unknown=ignore_unknown) if benchmarks else None
        return self.compare(known, benchmarks=bench, new_models=new or None).frame

    def nearest_models(self, scores: dict[str, float], k: int = 5, *,
                       ignore_unknown: bool | None = None) -> pl.DataFrame:
        """The `k` registered models closest to a new model with `scores`: model_id and
        distance, the RMS gap in z units between the new model's completed row (given
        scores kept, the rest predicted) and each model's (observed kept), nearest first."""
        row = self._resolve(scores, ignore_unknown=ignore_unknown)[0]
        new = np.where(np.isnan(row), self.predictor.fold_in(row), row)
        t = self._support.transform
        diff = t.transform(self.predictor.complete()) - t.transform(new)[None, :]
        dist = np.sqrt(np.nanmean(diff * diff, axis=1))
        order = np.argsort(dist, kind="stable")[: max(int(k), 0)]
        return pl.DataFrame({"model_id": [self.matrix.model_ids[i] for i in order],
                             "distance": dist[order]})

    def compare_with_known_models(self, scores: dict[str, float], k: int = 3, *,
                                  name: str = "new", ignore_unknown: bool | None = None) -> pl.DataFrame:
        """A new model beside its `k` nearest registered models (`nearest_models`): one
        row per benchmark with the new model's score (`name`: given, or predicted with
        `<name>_pm`, the interval's half-width) and each neighbour's score (observed or
        predicted), neighbours ordered nearest first."""
        pred = self.predict(scores, ignore_unknown=ignore_unknown).frame
        near = self.nearest_models(scores, k, ignore_unknown=True)["model_id"].to_list()
        full = self.predictor.complete()
        idx = [self.matrix.model_ids.index(m) for m in near]
        return pred.select(
            "benchmark_id", pl.coalesce("given", "predicted").alias(name),
            pl.when(pl.col("given").is_null()).then(pl.col("pm")).alias(f"{name}_pm"),
        ).hstack([pl.Series(m, full[i]) for m, i in zip(near, idx)]).with_columns(
            pl.col(near).fill_nan(None))

#: Folder (in the fit cache) of the index from registry-folder fingerprints to fits.
INDEX_DIR = ".index"


def fast_key(folder: Path, sources, predictor) -> str:
    """A registry or snapshot folder's current state, cheaply: the names, sizes and
    modification times of its files, with the sources, method, parameters and predictor
    code (any change to the files gives another key, so an index entry is never stale)."""
    import hashlib
    import json

    from benchpress.artifact import FORMAT_VERSION, code_digest

    files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                   for p in Path(folder).iterdir() if p.is_file())
    spec = json.dumps({"folder": str(Path(folder).resolve()), "files": files,
                       "sources": sources, "method": predictor.method,
                       "params": predictor.get_params(), "code": code_digest(),
                       "format": FORMAT_VERSION}, sort_keys=True, default=str)
    return hashlib.sha256(spec.encode()).hexdigest()[:32]


def fit_cache_dir(home) -> Path | None:
    """Where fits of unchanged registries are kept: `<home>/.cache/fits/` (env:
    BENCHPRESS_FIT_CACHE; an empty value turns the cache off: None)."""
    import os

    override = os.environ.get("BENCHPRESS_FIT_CACHE")
    if override is not None:
        return Path(override) if override else None
    return home.root / ".cache" / "fits"


def _prune(cache_dir: Path, *, keep: Path, n_keep: int = 6) -> None:
    """Remove all but the `n_keep` newest cached fits in `cache_dir` (never `keep`). Only
    what this cache made is a fit: a folder named by a cache key (`artifact.cache_key`)
    holding an artifact manifest; anything else there (BENCHPRESS_FIT_CACHE may name a
    folder of the user's) is never removed."""
    import re
    import shutil

    from benchpress.artifact import MANIFEST

    key = re.compile(r"[0-9a-f]{24}-[0-9a-f]{16}")
    fits = sorted((d for d in cache_dir.iterdir() if d.is_dir() and not d.is_symlink()
                   and key.fullmatch(d.name) and (d / MANIFEST).is_file()),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for old in fits[n_keep:]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)
