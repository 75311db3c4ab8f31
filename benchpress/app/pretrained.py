"""What the app reads when it serves the pre-fit model shipped in the package.

With no registry built (`python -m benchpress.app` outside a project, or from an installed
wheel), the app still predicts, compares and searches probes with
`BenchPress.from_pretrained()`. `PretrainedView` stands in for
:class:`~benchpress.app.registry.RegistryView`: it answers from the artifact's own tables
(models, benchmarks, the contracts' aliases), and the pages that need the registry's
citations, versions or SQL say so in one line.
"""

from __future__ import annotations

import polars as pl

from benchpress.api.artifact import DEFAULT_ARTIFACT
from benchpress.app.registry import benchmark_names
from benchpress.errors import BadInputError

__all__ = ["PretrainedView", "NO_REGISTRY", "served_label"]

NO_REGISTRY = ("this page needs a registry; the app serves the pre-fit model (no registry "
               "here): `benchpress init DIR`, `benchpress ingest FILE --home DIR`, then "
               "`python -m benchpress.app --home DIR`")


def served_label(bp) -> str:
    """The header's words for a pre-fit model: which one, fitted on which snapshot and sources."""
    snap = (bp.artifact.get("snapshot") or {}).get("id") or "?"
    return (f"pre-fit model ({bp.method}, snapshot {snap}, sources "
            f"{','.join(bp.artifact.get('sources') or []) or 'all'}; no registry)")


class PretrainedView:
    """The registry-shaped view of a pre-fit model (see the module docstring).

    Parameters
    ----------
    bp : BenchPress
        Loaded by `BenchPress.from_pretrained`; its matrix holds the models and benchmarks.
    """

    def __init__(self, bp):
        self.bp = bp
        self.models = bp.matrix.models
        self.benchmarks = bp.matrix.benchmarks
        aliases = DEFAULT_ARTIFACT / "contracts" / "aliases.csv"  # the fit's own contracts
        self.aliases = (pl.read_csv(aliases, infer_schema_length=0) if aliases.is_file()
                        else pl.DataFrame(schema={"kind": pl.String, "alias": pl.String,
                                                  "canonical_id": pl.String}))

    def model_meta(self, model_id: str) -> dict | None:
        rows = self.models.filter(pl.col("model_id") == model_id).to_dicts()
        return rows[0] if rows else None

    def benchmark_names(self) -> list[dict]:
        """Every benchmark with its name and aliases (for autocompletion)."""
        return benchmark_names(self.benchmarks, self.aliases)

    def snapshots(self) -> list[dict]:
        return []

    def _refuse(self, *args, **kwargs):
        raise BadInputError(NO_REGISTRY)

    # citations, versions and SQL live in a registry
    observations = model_cells = history = diff = sql = _refuse

    @property
    def cells(self):
        self._refuse()

    def close(self) -> None:
        pass
