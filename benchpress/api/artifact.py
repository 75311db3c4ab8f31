"""Fitted-predictor artifacts: a folder of open-format files that loads without a refit.

Layout of an artifact folder (format :data:`FORMAT_VERSION`)::

    manifest.json       format and package version, method and parameters, snapshot,
                        sources, counts, ids, scales, calibrators, probes, the sha256
                        of every other file, and `manifest_sha256`: one digest over all of
                        that (so over every file, the parameters and the calibrators too;
                        checked on load, as the field types are)
    arrays.npz          fitted arrays (predictor, interval support, calibrators; no pickle)
    matrix.parquet      the training scores, long: model_id, benchmark_id, score
    models.parquet      model metadata rows, in matrix row order
    benchmarks.parquet  benchmark metadata rows, in matrix column order
    contracts/          the schemas/ files used to resolve benchmark names and aliases

A neutral module (it reads the store's ScoreMatrix and the predictor's state); the
predictor's own arrays come from :mod:`benchpress.predict.state`. Writing is atomic
(the folder appears whole or not at all). :func:`matrix_digest` names a matrix by its
content, which keys the CLI's cache of fits (:func:`cache_key`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from benchpress.clock import manifest_time
from benchpress.digest import sha256_of
from benchpress.errors import BadInputError, shown
from benchpress.version import __version__

__all__ = ["FORMAT", "FORMAT_VERSION", "MANIFEST", "MANIFEST_DIGEST", "DEFAULT_ARTIFACT",
           "save_artifact", "load_artifact", "read_manifest", "verify_artifact", "matrix_digest",
           "manifest_digest", "cache_key", "code_digest", "check_out_folder", "pretrained_path"]

FORMAT = "benchpress-fit"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: The manifest's field holding the digest of the rest of it (`manifest_digest`).
MANIFEST_DIGEST = "manifest_sha256"
#: The type of each manifest field a loader reads (None: may be null).
_FIELD_TYPES = {"method": (str,), "params": (dict,), "calibrators": (dict,), "files": (dict,),
                "model_ids": (list,), "benchmark_ids": (list,), "scales": (dict,),
                "matrix_sha256": (str,), "counts": (dict,), "snapshot": (dict, type(None)),
                "sources": (list, type(None)), "probes": (list, type(None))}
#: The per-model arrays of a cells-solver fit (see `load_artifact(..., lite=True)`).
ROWS_FILE = "rows.npz"
#: The artifact shipped inside the package (fitted on params.yaml's predict.sources).
DEFAULT_ARTIFACT = Path(__file__).resolve().parents[1] / "pretrained" / "default"
_CONTRACT_FILES = ("benchmarks.csv", "aliases.csv", "scales.yaml", "source_priority.csv",
                   "url_source_types.csv")


def _nan_none(a) -> list:
    return [None if not np.isfinite(v) else float(v) for v in np.asarray(a, dtype=float)]


def matrix_digest(matrix) -> str:
    """sha256 of a ScoreMatrix's content: ids, scales and every value (NaN included)."""
    h = hashlib.sha256()
    s = matrix.scales
    # directions only where one is not "higher is better" (how a fit turns its columns;
    # the digests of matrices without such a benchmark stay as they were)
    turned = [s.direction.tolist()] if (s.direction != 1).any() else []
    h.update(json.dumps([matrix.model_ids, matrix.benchmark_ids, s.kind.tolist(),
                         _nan_none(s.lower), _nan_none(s.upper), *turned]).encode())
    h.update(np.ascontiguousarray(matrix.values, dtype="<f8").tobytes())
    return h.hexdigest()


def pretrained_path(path_or_name: str | Path | None = None) -> Path:
    """The artifact folder `BenchPress.from_pretrained(path_or_name)` loads: a folder, or
    by name one shipped inside the package (`benchpress/pretrained/<name>/`); with no
    argument, the shipped "default"."""
    path = Path(path_or_name) if path_or_name is not None else DEFAULT_ARTIFACT
    shipped = DEFAULT_ARTIFACT.parent / str(path_or_name)
    if path_or_name is not None and not path.exists() and path.name == str(path_or_name) \
            and (shipped / "manifest.json").is_file():
        path = shipped
    return path


def manifest_digest(doc: dict) -> str:
    """sha256 of an artifact manifest's content but its own `MANIFEST_DIGEST` field (as
    canonical JSON: sorted keys, no spaces). The manifest lists every other file's
    sha256, so this one digest covers the whole artifact."""
    body = {k: v for k, v in doc.items() if k != MANIFEST_DIGEST}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def code_digest() -> str:
    """sha256 of the predictor's source files (a changed predictor never reuses a fit)."""
    h = hashlib.sha256(__version__.encode())
    predict = Path(__file__).resolve().parents[1] / "predict"
    for f in sorted(predict.rglob("*.py")):
        h.update(f.relative_to(predict).as_posix().encode() + f.read_bytes())
    return h.hexdigest()


def cache_key(matrix, method: str, params: dict) -> str:
    """Folder name of a cached fit: matrix content digest + method/params/code digest."""
    spec = json.dumps({"method": method, "params": params, "code": code_digest(),
                       "format": FORMAT_VERSION}, sort_keys=True, default=str)
    return f"{matrix_digest(matrix)[:24]}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}"


def _own_files(folder: Path) -> set[str] | None:
    """The files (relative, posix) the artifact manifest in `folder` lists, with the
    manifest; None when `folder` holds no readable manifest of ours."""
    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    files = doc.get("files") if isinstance(doc, dict) and doc.get("format") == FORMAT else None
    return {*files, MANIFEST} if isinstance(files, dict) else None


def check_out_folder(path, *, home=None) -> Path:
    """`path`, resolved, once it is safe to write an artifact there: a new or empty folder,
    or an artifact of ours holding nothing its manifest does not list. Never the current
    folder, the home (`home`: a :class:`~benchpress.home.Home`) or a folder above either:
    replacing the folder deletes what was in it. BadInputError (one line) otherwise."""
    target = Path(os.path.abspath(Path(path).expanduser()))
    real = target.resolve()
    guarded = [(Path.cwd().resolve(), "the current folder")]
    if home is not None:
        guarded.append((Path(home.root).resolve(), "the registry home"))
    for folder, what in guarded:
        if real == folder or real in folder.parents:
            raise BadInputError(f"--out {shown(str(path))}: refusing to replace {what} or a "
                                "folder above it; name a new folder for the artifact")
    if not real.exists():
        return target
    if not real.is_dir():
        raise BadInputError(f"--out {shown(str(path))}: not a folder")
    own = _own_files(real)
    for entry in real.rglob("*"):
        name = entry.relative_to(real).as_posix()
        ours = own is not None and (name in own if not entry.is_dir() or entry.is_symlink()
                                    else any(f.startswith(name + "/") for f in own))
        if not ours:
            raise BadInputError(
                f"--out {shown(str(path))}: refusing to replace a folder that is not a "
                f"benchpress fit (it holds {shown(name)}); name a new or empty folder")
    return target


def save_artifact(path, matrix, predictor, *, support=None, calibrators=None,
                  snapshot: dict | None = None, sources: list[str] | None = None,
                  probes: list[str] | None = None, contracts_dir: Path | None = None) -> Path:
    """Write a fitted predictor of `matrix` as an artifact folder at `path` (replaced
    atomically when it exists). Returns the folder.

    Parameters
    ----------
    matrix : ScoreMatrix
        The training matrix (n_models, n_benchmarks) the predictor was fitted on.
    predictor : ALSPredictor
        Fitted on ``matrix.values``.
    support, calibrators
        See :func:`benchpress.predict.state.fitted_state`.
    snapshot : dict, optional
        ``{"id": ..., "label": ...}`` of the registry version.
    probes : list of str, optional
        A probe set (benchmark ids) to record.
    contracts_dir : Path, optional
        The schemas/ folder whose name and alias files are copied in.
    """
    import polars as pl

    from benchpress.predict.estimator import fit_matrix
    from benchpress.predict.state import fitted_state
    from benchpress.store.tables import write_folder_atomic

    if predictor.Y_.shape != matrix.values.shape or not np.array_equal(
            predictor.Y_, fit_matrix(matrix.values, predictor.scales_), equal_nan=True):
        raise BadInputError("the predictor was not fitted on this matrix")
    arrays, meta = fitted_state(predictor, support=support, calibrators=calibrators)
    ids = {"model_ids": matrix.model_ids, "benchmark_ids": matrix.benchmark_ids}
    i, j = np.nonzero(~np.isnan(matrix.values))
    cells = pl.DataFrame({"model_id": [matrix.model_ids[k] for k in i],
                          "benchmark_id": [matrix.benchmark_ids[k] for k in j],
                          "score": matrix.values[i, j]})

    from benchpress.predict.state import ROW_ARRAYS, rows_apart

    row_arrays = {k: arrays.pop(k) for k in ROW_ARRAYS} if rows_apart(meta) else {}

    def fill(tmp: Path) -> None:
        np.savez(tmp / "arrays.npz", **arrays)
        if row_arrays:  # per-model arrays apart: predicting a new model reads none of them
            np.savez(tmp / ROWS_FILE, **row_arrays)
        cells.write_parquet(tmp / "matrix.parquet")
        matrix.models.write_parquet(tmp / "models.parquet")
        matrix.benchmarks.write_parquet(tmp / "benchmarks.parquet")
        if contracts_dir is not None:
            (tmp / "contracts").mkdir()
            for name in _CONTRACT_FILES:
                if (Path(contracts_dir) / name).is_file():
                    shutil.copyfile(Path(contracts_dir) / name, tmp / "contracts" / name)

    def document(tmp: Path) -> dict:
        files = sorted(p for p in tmp.rglob("*") if p.is_file() and p.name != MANIFEST)
        s = matrix.scales
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "benchpress_version": __version__,
            "created_at": manifest_time().isoformat(timespec="seconds"),
            **meta, "snapshot": snapshot or {"id": None, "label": matrix.label},
            "sources": sources, "matrix_sha256": matrix_digest(matrix),
            "counts": {"models": len(matrix.model_ids), "benchmarks": len(matrix.benchmark_ids),
                       "scores": int(i.size)},
            **ids, "scales": {"kind": s.kind.tolist(), "lower": _nan_none(s.lower),
                              "upper": _nan_none(s.upper), "unit": s.unit.tolist(),
                              "direction": s.direction.tolist()},
            "probes": probes,
            "files": {p.relative_to(tmp).as_posix(): sha256_of(p) for p in files},
        }

    def sealed(tmp: Path) -> dict:
        doc = document(tmp)
        return {**doc, MANIFEST_DIGEST: manifest_digest(doc)}

    path = check_out_folder(path)
    write_folder_atomic(path, fill, MANIFEST, sealed)
    return path


def read_manifest(path) -> dict:
    """The manifest of the artifact folder `path`, its format checked (BadInputError)."""
    path = Path(path)
    try:
        doc = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"{path}: not a fitted-predictor artifact (no {MANIFEST})") from None
    except (OSError, ValueError, RecursionError) as exc:  # (nested past Python's limit)
        raise BadInputError(f"{path / MANIFEST}: unreadable artifact manifest "
                            f"({' '.join(str(exc).split())[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BadInputError(f"{path}: not a {FORMAT} artifact")
    if doc.get("format_version") != FORMAT_VERSION:
        raise BadInputError(f"{path}: artifact format version {doc.get('format_version')!r}, "
                            f"this benchpress {__version__} reads version {FORMAT_VERSION}; "
                            "remake it with `benchpress fit`")
    if doc.get(MANIFEST_DIGEST) != manifest_digest(doc):
        raise BadInputError(f"{path / MANIFEST}: does not match its own digest "
                            f"({MANIFEST_DIGEST}; edited, damaged or made by an older "
                            "benchpress); remake it with `benchpress fit`")
    for name, types in _FIELD_TYPES.items():
        if not isinstance(doc.get(name), types):
            raise BadInputError(f"{path / MANIFEST}: field {name!r} is "
                                f"{type(doc.get(name)).__name__}, not "
                                f"{' or '.join(t.__name__ for t in types)}; remake it with "
                                "`benchpress fit`")
    if not all(isinstance(v, dict) for v in doc["calibrators"].values()):
        raise BadInputError(f"{path / MANIFEST}: field 'calibrators' holds a value that is "
                            "not an object; remake it with `benchpress fit`")
    return doc


def verify_artifact(path, doc: dict | None = None, *, skip=()) -> dict:
    """Check every file of the artifact at `path` (but those named in `skip`) against its
    manifest's sha256 (and the format version); returns the manifest, BadInputError (one
    line) when damaged."""
    path = Path(path)
    doc = doc or read_manifest(path)
    files = doc.get("files")
    if not isinstance(files, dict) or "arrays.npz" not in files:
        raise BadInputError(f"{path}: artifact manifest lists no files")
    if path.is_symlink():
        raise BadInputError(f"{path}: an artifact folder is never a symbolic link")
    for entry in path.rglob("*"):
        name = entry.relative_to(path).as_posix()
        if entry.is_symlink() or (not entry.is_dir() and name not in files and name != MANIFEST):
            raise BadInputError(f"{path}: holds {shown(name)}, which its manifest does not "
                                "list (a symbolic link or a file added); remake it with "
                                "`benchpress fit`")
    for name, digest in files.items():
        if name in skip:
            continue
        f = path / name
        if not f.is_file():
            raise BadInputError(f"{path}: artifact file {name} is missing; remake it with "
                                "`benchpress fit`")
        if sha256_of(f) != digest:
            raise BadInputError(f"{path}: artifact file {name} does not match its manifest "
                                "digest (damaged or edited); remake it with `benchpress fit`")
    return doc


def load_artifact(path, *, lite: bool = False) -> dict:
    """Read and verify the artifact at `path`.

    Returns a dict: ``manifest``, ``matrix`` (ScoreMatrix), ``predictor`` (fitted),
    ``support``, ``calibrators`` ({regime: IntervalCalibrator}) and ``contracts_dir``
    (Path or None).

    ``lite=True`` (an artifact of a cells-solver fit that is not a blend only, see
    :func:`benchpress.predict.state.rows_apart`)
    reads and verifies only what predicting a new model needs: not the training scores,
    the model table nor the per-model arrays; ``matrix`` then has no rows (its
    benchmarks and scales are complete). Its time does not grow with the models.
    """
    import polars as pl

    from benchpress.predict.state import restore_state
    from benchpress.store.matrix import ScoreMatrix

    path = Path(path)
    if lite:
        return _load_lite(path)
    doc = verify_artifact(path)
    with _read_errors(path):
        arrays = _load_npz(path / "arrays.npz")
        if ROWS_FILE in doc["files"]:
            arrays.update(_load_npz(path / ROWS_FILE))
        cells = pl.read_parquet(path / "matrix.parquet")
        models = pl.read_parquet(path / "models.parquet")
        benchmarks = pl.read_parquet(path / "benchmarks.parquet")
        model_ids, bench_ids = list(doc["model_ids"]), list(doc["benchmark_ids"])
        scales = _scales(doc)
        row = {m: k for k, m in enumerate(model_ids)}
        col = {b: k for k, b in enumerate(bench_ids)}
        values = np.full((len(model_ids), len(bench_ids)), np.nan)
        values[[row[m] for m in cells["model_id"]],
               [col[b] for b in cells["benchmark_id"]]] = cells["score"].to_numpy()
        label = (doc.get("snapshot") or {}).get("label") or ""
        matrix = ScoreMatrix(values, model_ids, bench_ids, benchmarks, models, label, scales)
        state = restore_state(arrays, doc, values, scales)
    if matrix_digest(matrix) != doc.get("matrix_sha256"):
        raise BadInputError(f"{path}: artifact matrix does not match its manifest digest")
    contracts = path / "contracts"
    return {"manifest": doc, "path": path, "matrix": matrix, **state,
            "contracts_dir": contracts if (contracts / "benchmarks.csv").is_file() else None}


def _load_npz(file: Path) -> dict:
    """The arrays of an artifact's NPZ file, once its members' declared sizes are checked:
    ours are stored uncompressed (`np.savez`), so together they inflate to at most a few
    times the file's own size; a member that would inflate to gigabytes from a small file
    is refused (one line) before anything is read."""
    import zipfile

    try:
        with zipfile.ZipFile(file) as zf:
            inflated = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise BadInputError(f"{file.name} is not an NPZ file ({exc})") from None
    size = file.stat().st_size
    if inflated > 4 * size + 2**20:
        raise BadInputError(f"{file.name} would inflate to {inflated:,} bytes from {size:,} "
                            "(an NPZ of ours is stored uncompressed); remake it with "
                            "`benchpress fit`")
    with np.load(file, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


@contextmanager
def _read_errors(path: Path):
    """Turn what reading an artifact's files can raise into one line naming ``path``."""
    try:
        yield
    except BadInputError as exc:
        raise BadInputError(f"{path}: {exc}") from None
    except (KeyError, ValueError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise BadInputError(f"{path}: inconsistent artifact ({type(exc).__name__}: {exc}); "
                            "remake it with `benchpress fit`") from None


def _scales(doc: dict):
    from benchpress.scales import BenchmarkScales

    sc = doc["scales"]
    # an artifact made before directions (2026-12-07) was fitted with every column as given
    return BenchmarkScales(np.array(sc["kind"], dtype=str),
                           np.array([np.nan if v is None else v for v in sc["lower"]]),
                           np.array([np.nan if v is None else v for v in sc["upper"]]),
                           np.array(sc.get("unit") or [""] * len(sc["kind"]), dtype=object),
                           np.array(sc.get("direction") or [1.0] * len(sc["kind"]), dtype=float))


def _load_lite(path: Path) -> dict:
    """:func:`load_artifact` with ``lite=True``."""
    import polars as pl

    from benchpress.predict.state import restore_state, rows_apart
    from benchpress.store.matrix import ScoreMatrix

    doc = read_manifest(path)
    if not rows_apart(doc):
        raise BadInputError(f"{path}: only an artifact of a cells-solver fit (not a "
                            "blend, whose nearest models are its rows) loads lite")
    verify_artifact(path, doc, skip=("matrix.parquet", "models.parquet", ROWS_FILE))
    with _read_errors(path):
        arrays = _load_npz(path / "arrays.npz")
        models = pl.read_parquet(path / "models.parquet", n_rows=0)
        benchmarks = pl.read_parquet(path / "benchmarks.parquet")
        bench_ids = list(doc["benchmark_ids"])
        scales = _scales(doc)
        matrix = ScoreMatrix(np.zeros((0, len(bench_ids))), [], bench_ids, benchmarks, models,
                             (doc.get("snapshot") or {}).get("label") or "", scales)
        state = restore_state(arrays, doc, None, scales)
    contracts = path / "contracts"
    return {"manifest": doc, "path": path, "matrix": matrix, **state, "lite": True,
            "contracts_dir": contracts if (contracts / "benchmarks.csv").is_file() else None}
