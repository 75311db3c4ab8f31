"""The intent file that makes a write of a source and the registry one transaction.

`add-model` and `ingest` change two things: a file under `sources/` (the new
`releases.csv`, a source config) and the registry. Under the registry lock they:

1. write the candidate file beside its target (`sources/.releases.csv.pending`);
2. build the tables from it (`store.build.build_locked`, reading the candidate);
3. write this journal (the source id, the digest the registry will record for it, the
   config to save, candidate -> target renames), fsynced;
4. write the new registry into a temporary folder and swap it in
   (`tables.write_registry`): the swap is **the commit point**;
5. roll forward: save the config, rename each candidate over its target, delete the journal.

`settle`, run by the next writer under the lock (after `tables.recover`), finishes a
transaction a crash interrupted: if the registry's `build.json` records the journal's
digest for its source, the registry holds the new rows and step 5 is redone (each part is
idempotent); otherwise the registry is the old one and the candidates are deleted. So a
row is in `releases.csv` only once the registry holds it, and a reported success is durable.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from benchpress.home import Home
from benchpress.store.sources import SourceConfig, save_config, source_id_problem
from benchpress.store.tables import fsync_path, readable, write_json_atomic

__all__ = ["Intent", "journal_path", "pending_path", "begin", "committed", "finish", "abort",
           "settle"]


@dataclass(frozen=True)
class Intent:
    """One pending write: `source_id`'s data with digest `sha256` goes into the registry,
    `config` (if any) is saved, and each candidate file replaces its target."""

    source_id: str
    sha256: str
    config: dict | None = None
    publish: dict[str, str] = field(default_factory=dict)  # candidate -> target (absolute)


def journal_path(home: Home) -> Path:
    return home.root / ".benchpress-journal.json"


def pending_path(target: Path) -> Path:
    """Where the candidate of `target` is written (hidden, beside it: same file system)."""
    return target.with_name(f".{target.name}.pending")


def begin(home: Home, intent: Intent) -> None:
    """Record `intent` durably (before the commit point)."""
    for candidate in intent.publish:
        fsync_path(Path(candidate))
    write_json_atomic(journal_path(home), {
        "source_id": intent.source_id, "sha256": intent.sha256,
        "config": intent.config, "publish": intent.publish})
    fsync_path(home.root)


def committed(home: Home, intent: Intent) -> bool:
    """Whether the registry on disk records `intent`'s digest for its source."""
    manifest = readable(home.registry) / "build.json"
    if not manifest.is_file():
        return False
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8")).get("sources", {})
    except (ValueError, OSError):
        return False
    return recorded.get(intent.source_id) == intent.sha256


def finish(home: Home, intent: Intent) -> None:
    """Roll forward (after the commit point): save the config, publish the candidates."""
    if intent.config is not None:
        save_config(home.sources, SourceConfig(**intent.config))
    for candidate, target in intent.publish.items():
        if Path(candidate).exists():
            os.replace(candidate, target)
            fsync_path(Path(target).parent)
    journal_path(home).unlink(missing_ok=True)
    fsync_path(home.root)


def abort(home: Home, intent: Intent | None) -> None:
    """Roll back (before the commit point): delete the candidates and the journal."""
    for candidate in (intent.publish if intent else {}):
        Path(candidate).unlink(missing_ok=True)
    journal_path(home).unlink(missing_ok=True)


def settle(home: Home) -> str | None:
    """Finish or undo an interrupted transaction; call under the lock after `recover`.

    Returns "rolled forward", "rolled back" or None (nothing was pending). Stray candidate
    and temporary files of a run killed before its journal was written are removed too.
    """
    path, outcome = journal_path(home), None
    if path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            intent = Intent(doc["source_id"], doc["sha256"], doc.get("config"),
                            dict(doc.get("publish") or {}))
        except (ValueError, KeyError, TypeError):
            intent = None  # unreadable: it never became durable, so nothing was committed
        if intent is not None and intent.config is not None and (
                not isinstance(intent.config, dict)
                or source_id_problem(intent.config.get("id"))):
            intent = None  # a config that cannot be saved (an unchecked id of an older
            # version): rolling forward would fail at every later write, so it is dropped
        if intent is not None and committed(home, intent):
            finish(home, intent)
            outcome = "rolled forward"
        else:
            abort(home, intent)
            outcome = "rolled back"
    for stray in [*home.sources.glob(".*.pending"), *home.sources.glob(".tmp-*.yaml"),
                  path.with_name(f".{path.name}.tmp")]:
        stray.unlink(missing_ok=True)
    return outcome
