"""`benchpress fit`: save a fitted predictor as an artifact folder; and `fit_now`, the fit of
`predict` and `compare` taken from (or made into) the home's store of fits."""

from __future__ import annotations

from pathlib import Path

import click

from benchpress.cli.common import emit_json, format_option, progress_bar, stderr
from benchpress.cli.fit_options import matrix_options, method_fields
from benchpress.predict.size_limits import LIMITS
from benchpress.predict.probes.search import sample_cap

__all__ = ["fit", "fit_now"]


def fit_now(bp, regimes):
    """Fit `bp` now, or take its fit from its store (the home's cache of fits, see
    `benchpress.api.fit_store`), with calibrators for `regimes` and progress on stderr when it
    is a terminal. Returns `bp`."""
    kept = " (kept for the next call)" if bp.store.folder is not None else ""
    with progress_bar("fitting" + kept) as update:
        return bp.fit(regimes, progress=update)


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Artifact folder to write: a new or empty folder, or a fit of ours (replaced "
                   "atomically); never the home or the current folder.")
@click.option("--probes", "n_probes", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also choose and record a probe set of this many benchmarks (0: none).")
@click.option("--probe-max-models", type=click.IntRange(min=0), default=LIMITS.probe_max_models,
              show_default=True,
              help="With --probes: most models the probe search leaves out and scores (a "
                   "seeded sample beyond it, as `probes --max-models`); 0: every model.")
@format_option(choices=("table", "json"))
@matrix_options
def fit(out, n_probes, probe_max_models, fmt, bp, home):
    """Fit the predictor and save it as an artifact (NPZ + Parquet + JSON, no pickle) that
    `BenchPress.from_pretrained(DIR)` loads without a refit."""
    from benchpress.api.artifact import check_out_folder, read_manifest

    out = check_out_folder(out, home=home)  # before the fit: refused in a second, not minutes
    cap = sample_cap(probe_max_models, "--probe-max-models")
    probes = None
    if n_probes:
        with progress_bar("choosing probes") as update:
            probes = list(bp.probes(n_probes, progress=update, max_models=cap).final.probes)
    with progress_bar("fitting") as update:
        folder = bp.save_pretrained(out, probes=probes, progress=update)
    man = read_manifest(folder)
    doc = {**method_fields(bp), "artifact": str(folder),
           **{k: man.get(k) for k in ("snapshot", "sources", "counts", "probes")}}
    if fmt == "json":
        emit_json(doc)
    else:
        stderr.print(f"wrote {folder}: {bp!r}", markup=False)
