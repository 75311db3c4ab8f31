"""`benchpress fit`: save a fitted predictor as an artifact folder; and `fit_now`, the fit of
`predict` and `compare` taken from (or made into) the home's store of fits."""

from __future__ import annotations

from pathlib import Path

import click

from benchpress.cli.common import emit_json, format_option, progress_bar, stderr
from benchpress.cli.fit_options import matrix_options, method_fields, provenance_fields
from benchpress.cli.probe_cmds import read_probes_file
from benchpress.errors import BadInputError, UsageError, shown
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


def _chosen_probes(path: Path, bp) -> list[str]:
    """The probe set of a `probes --out` file, when it was chosen for what `bp` fits (its
    snapshot, sources, method and parameters); a file of another fit is one line."""
    doc = {"params": {}, **read_probes_file(path)}  # (a file leaves out empty params)
    ours = provenance_fields(bp)
    for field in ("snapshot", "sources", "method", "params"):
        if doc.get(field) != ours[field]:
            raise BadInputError(f"{path}: its probe set was chosen with {field} "
                                f"{shown(doc.get(field))}, and this fit's is "
                                f"{shown(ours[field])}; run `benchpress probes` on this fit")
    return bp.benchmark_ids(doc["selection"]["probes"])


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
@click.option("--probes-from", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None,
              help="Record the probe set chosen by an earlier `benchpress probes --out FILE` "
                   "of the same snapshot, sources and method, instead of searching again "
                   "(the pipeline's pretrained stage takes its probes stage's).")
@format_option(choices=("table", "json"))
@matrix_options
def fit(out, n_probes, probe_max_models, probes_from, fmt, bp, home):
    """Fit the predictor and save it as an artifact (NPZ + Parquet + JSON, no pickle) that
    `BenchPress.from_pretrained(DIR)` loads without a refit."""
    from benchpress.api.artifact import check_out_folder, read_manifest

    out = check_out_folder(out, home=home)  # before the fit: refused in a second, not minutes
    cap = sample_cap(probe_max_models, "--probe-max-models")
    probes = None
    if probes_from is not None:
        if n_probes:
            raise UsageError("--probes and --probes-from both choose the probe set; give one")
        probes = _chosen_probes(probes_from, bp)
    elif n_probes:
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
