"""Hand-entered releases: `benchpress add-model` appends cited rows to sources/releases.csv.

The new rows are checked against the contracts before anything is written (a percent
score of 140 or a citation that is not an http(s) URL is refused outright), then
appended, and the registry is rebuilt. If the rebuild fails, the CSV is restored.
"""

from __future__ import annotations

import csv
import json
import io
import tempfile
from pathlib import Path

from benchpress.adapters.releases_csv import ADAPTER, RELEASE_COLUMNS
from benchpress.errors import BadInputError
from benchpress.home import Home
from benchpress.store.build import BuildReport
from benchpress.store.ingest import rebuild_with
from benchpress.store.sources import SourceConfig, restored_on_failure
from benchpress.validate.contracts import load_contracts
from benchpress.validate.prepare import SourceInfo, prepare_source

__all__ = ["add_model", "RELEASES_SOURCE_ID"]

RELEASES_SOURCE_ID = "releases"


def _csv_text(rows: list[dict], header: bool) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=RELEASE_COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def add_model(home: Home, model_id: str, scores: dict[str, float], *, source_url: str,
              name: str | None = None, provider: str | None = None,
              release_date: str | None = None, is_reasoning: bool | None = None,
              source_type: str = "official_blog", mirror: Path | None = None) -> BuildReport:
    """Record a model's cited scores and rebuild; raises BadInputError if any row is bad."""
    if not scores:
        raise BadInputError("add-model needs at least one score (--scores 'gpqa_diamond=71.2,...')")
    rows = [{
        "model_id": model_id, "name": name or model_id, "provider": provider or "",
        "release_date": release_date or "",
        "is_reasoning": "" if is_reasoning is None else str(is_reasoning).lower(),
        "benchmark_id": bench, "score": value, "reference_url": source_url,
        "source_type": source_type, "reported_setting": "", "notes": "",
    } for bench, value in scores.items()]

    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / "new.csv"
        trial.write_text(_csv_text(rows, header=True), encoding="utf-8")
        prepared = prepare_source(ADAPTER.read(trial), load_contracts(home.schemas),
                                  SourceInfo(RELEASES_SOURCE_ID, None, "", "check"))
    if prepared.quarantine.height:
        problems = "; ".join(f"score '{json.loads(r['record'])['benchmark_id']}': "
                             f"field '{r['field']}': {r['reason']}"
                             for r in prepared.quarantine.iter_rows(named=True))
        raise BadInputError(f"{home.releases_csv}: not added: {problems}")

    path = home.releases_csv
    with restored_on_failure(path):
        new_file = not path.exists() or not path.read_text(encoding="utf-8").strip()
        with open(path, "a", encoding="utf-8", newline="") as fh:
            fh.write(_csv_text(rows, header=new_file))
        config = SourceConfig(id=RELEASES_SOURCE_ID, adapter=ADAPTER.name,
                              path=str(path.relative_to(home.root)), order=5,
                              licence="project's own cited facts",
                              description="hand-entered releases (benchpress add-model)")
        return rebuild_with(home, config, mirror=mirror)
