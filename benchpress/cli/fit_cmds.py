"""`benchpress fit`: save a fitted predictor as an artifact folder; and the stored-fit fast
path of `predict` and `compare` (a content-addressed cache of fits under the home)."""

from __future__ import annotations

from pathlib import Path

import click

from benchpress.cli.common import emit_json, format_option, progress_bar, stderr
from benchpress.cli.matrix import matrix_options, method_fields

__all__ = ["fit", "stored_fit", "stored_fit_first", "fast_stored_fit"]


def stored_fit(bp, home, *, regimes=("cells", "new_models")):
    """`bp` using the cached fit of its matrix, method and parameters (made on first use,
    with progress on stderr when it is a terminal). Returns `bp`."""
    from benchpress.api_fits import fit_cache_dir

    cache = fit_cache_dir(home)
    if cache is None or getattr(bp, "lite", False):  # lite: already the stored fit
        return bp
    with progress_bar("fitting (kept for the next call)") as update:
        return bp.use_stored_fit(cache, regimes=regimes, progress=update)


def stored_fit_first(f):
    """Mark a `matrix_options` command (predict) to try `fast_stored_fit` before loading
    the matrix (with `model_id` given, the matrix is needed: not tried)."""
    f.stored_fit_first = fast_stored_fit
    return f


def fast_stored_fit(home, snapshot, sources, predictor, kwargs):
    """A lite `BenchPress` from the stored fit of the registry folder's current files
    (`BenchPress.from_stored_fit`), or None (then the matrix is loaded as usual)."""
    if kwargs.get("model_id"):
        return None
    from benchpress.api import BenchPress, _home
    from benchpress.api_fits import fit_cache_dir
    from benchpress.store.snapshot import resolve_snapshot

    home = _home(home)
    cache = fit_cache_dir(home)
    if cache is None:
        return None
    return BenchPress.from_stored_fit(cache, resolve_snapshot(home, snapshot), predictor,
                                      home=home, sources=sources)


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Artifact folder to write: a new or empty folder, or a fit of ours (replaced "
                   "atomically); never the home or the current folder.")
@click.option("--probes", "n_probes", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also choose and record a probe set of this many benchmarks (0: none).")
@format_option(choices=("table", "json"))
@matrix_options
def fit(out, n_probes, fmt, bp, home):
    """Fit the predictor and save it as an artifact (NPZ + Parquet + JSON, no pickle) that
    `BenchPress.from_pretrained(DIR)` loads without a refit."""
    from benchpress.artifact import check_out_folder, read_manifest

    out = check_out_folder(out, home=home)  # before the fit: refused in a second, not minutes
    probes = None
    if n_probes:
        with progress_bar("choosing probes") as update:
            probes = list(bp.probes(n_probes, progress=update).final.probes)
    with progress_bar("fitting") as update:
        folder = bp.save_pretrained(out, probes=probes, progress=update)
    man = read_manifest(folder)
    doc = {**method_fields(bp), "artifact": str(folder),
           **{k: man.get(k) for k in ("snapshot", "sources", "counts", "probes")}}
    if fmt == "json":
        emit_json(doc)
    else:
        stderr.print(f"wrote {folder}: {bp!r}", markup=False)
