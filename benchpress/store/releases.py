"""Hand-entered releases: `benchpress add-model` records cited rows in sources/releases.csv.

The given ids, date and values are checked first (`validate.text`: no path separators,
invisible or non-ASCII letters in ids, a real YYYY-MM-DD date), then the new rows against
the contracts (a percent score of 140 or a citation that is not an http(s) URL is refused
outright). Under the registry lock the new file is written beside the old one, the registry
is built from it, and both are published as one transaction (`store.journal`): a killed
run leaves neither a phantom row nor a lost one.

Update semantics for a model that is already recorded:
- the same (model, benchmark, citation) with the same value: nothing is added;
- the same citation with another value: a correction, the line's value is replaced;
- another citation of the same source type: the new value supersedes the old one (its line
  goes before the old one, which stays for audit with `audit_status = superseded`: it makes
  no cell and is no live conflict, see `store.resolve`);
- the model's name, provider, date and reasoning flag come from its existing lines; a
  given value that contradicts them is refused.

`retract` marks a model's live values of some benchmarks `retracted` (the line stays, with
the reason and the retraction's citation in its notes), through the same transaction.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from benchpress.adapters._files import csv_records
from benchpress.adapters.releases_csv import ADAPTER, RELEASE_COLUMNS
from benchpress.errors import BadInputError
from benchpress.home import Home
from benchpress.validate.names import unknown_message
from benchpress.store.build import BuildReport, build_locked
from benchpress.store.journal import journal_path, pending_path, settle
from benchpress.store.sources import SourceConfig
from benchpress.store.tables import TABLE_NAMES, locked, readable, recover
from benchpress.validate.contracts import Contracts, load_contracts
from benchpress.validate.normalize import BenchmarkResolver, canonical_model_id, model_alias_map
from benchpress.validate.prepare import SourceInfo, prepare_source
from benchpress.validate.text import (
    check_date, check_identifier, identifier_problem, latest_release,
)

__all__ = ["add_model", "retract", "RELEASES_SOURCE_ID"]

RELEASES_SOURCE_ID = "releases"
_INACTIVE = ("superseded", "retracted")  # audit_status of a line kept for audit only
_REQUIRED = [c for c in RELEASE_COLUMNS if c != "audit_status"]  # files from older versions
_MODEL_FIELDS = (("name", "--name"), ("provider", "--provider"),
                 ("release_date", "--release-date"), ("is_reasoning", "--reasoning"))


def _csv_text(rows: list[dict], header: bool) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=RELEASE_COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _lines(rows: list[dict]) -> list[dict]:
    """Rows as CSV lines: every column, blanks for missing values (a 0 score stays 0)."""
    return [{c: "" if r.get(c) is None else r[c] for c in RELEASE_COLUMNS} for r in rows]


def _plain_text(value: str | None, what: str) -> str | None:
    """A display name or provider: any script, but no invisible or control characters."""
    if value is None:
        return None
    problem = identifier_problem(value.replace("/", " ").replace("..", " "))
    if problem and "invisible" in problem:
        raise BadInputError(f"{what} {value[:40]!r} {problem}")
    if len(value) > 200:
        raise BadInputError(f"{what} is {len(value)} characters long (at most 200)")
    return value.strip()


def _canonical_scores(scores: dict[str, float], contracts: Contracts) -> dict[str, tuple[str, float]]:
    """canonical benchmark id -> (the id as given, value); a benchmark named twice is refused."""
    resolver, out = BenchmarkResolver(contracts), {}
    unknown = [raw for raw in scores
               if resolver.resolve(check_identifier(raw, "benchmark id"))[0] not in resolver.ids]
    if unknown:
        raise BadInputError(unknown_message("benchmark", unknown, sorted(resolver.ids))
                            + " (the benchmark has no known scale in schemas/benchmarks.csv; "
                            "`benchpress aliases accept` adds an alias)")
    for raw, value in scores.items():
        bid = resolver.resolve(raw)[0] or raw
        if bid in out:
            raise BadInputError(f"--scores names benchmark '{bid}' twice ('{out[bid][0]}' and "
                                f"'{raw}'); give each benchmark once")
        out[bid] = (raw, float(value))
    return out


def _check_new_rows(rows: list[dict], contracts: Contracts, home: Home) -> None:
    """Refuse the new rows (one line naming each problem) if any fails the contracts."""
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / "new.csv"
        trial.write_text(_csv_text(rows, header=True), encoding="utf-8")
        prepared = prepare_source(ADAPTER.read(trial), contracts,
                                  SourceInfo(RELEASES_SOURCE_ID, None, "", "check"))
    if prepared.quarantine.height:
        problems = []
        for r in prepared.quarantine.iter_rows(named=True):
            record = json.loads(r["record"])
            what = (f"score '{record.get('benchmark_id')}'" if r["kind"] == "score"
                    else f"model '{record.get('model_id')}'")
            problems.append(f"{what}: field '{r['field']}': {r['reason']}")
        more = f"; ... and {len(problems) - 10:,} more" if len(problems) > 10 else ""
        raise BadInputError(f"{home.releases_csv}: not added: {'; '.join(problems[:10])}{more}")


def _merge(existing: list[dict], new: list[dict], resolver: BenchmarkResolver,
           aliases: dict[str, str]) -> tuple[list[dict] | None, list[dict], list[str]]:
    """Fold `new` rows (one model) into `existing`: (rewritten rows or None when only appended,
    rows to append, one note per change). See the module docstring for the rules."""
    mid = new[0]["model_id"]
    model_of = lambda r: aliases.get(canonical_model_id(r["model_id"]) or "", canonical_model_id(r["model_id"]))  # noqa: E731
    mine = [i for i, r in enumerate(existing) if r.get("model_id") and model_of(r) == mid]
    notes, rows, before, appended, rewritten = [], [dict(r) for r in existing], {}, [], False
    if mine:
        first = existing[mine[0]]
        for col, option in _MODEL_FIELDS:
            have, given = first.get(col), new[0][col]
            if given and have and str(given).lower() != str(have).lower():
                raise BadInputError(f"model '{mid}' already has {col} '{have}' in sources/releases.csv; "
                                    f"{option} '{given}' contradicts it (edit the file to change it)")
            for row in new:
                row[col] = row[col] or have or ""
        notes.append(f"model '{mid}' is already recorded ({len(mine)} score(s) in releases.csv)")
    for row in new:
        bid, value, url = row["benchmark_id"], float(row["score"]), row["reference_url"]
        same = [i for i in mine if resolver.resolve(existing[i]["benchmark_id"])[0] == bid]
        cited = [i for i in same if existing[i].get("reference_url") == url
                 and (existing[i].get("audit_status") or "") not in _INACTIVE]
        kind = [i for i in same if (existing[i].get("source_type") or "") == row["source_type"]
                and (existing[i].get("audit_status") or "") not in _INACTIVE]
        if cited:
            old = existing[cited[0]]["score"]
            if _same_value(old, value):
                notes.append(f"{bid}: {value:g} from {url} is already recorded; unchanged")
                continue
            rows[cited[0]]["score"], rewritten = value, True
            notes.append(f"{bid}: {old} -> {value:g} (a correction from the same citation {url}; "
                         "the line's value is replaced)")
        elif kind:
            old = existing[kind[0]]
            before.setdefault(min(kind), []).append(row)
            for i in kind:  # kept for audit, marked
                rows[i]["notes"] = "; ".join(filter(None, [rows[i].get("notes"), f"superseded by {url}"]))
                rows[i]["audit_status"] = "superseded"
            rewritten = True
            notes.append(f"{bid}: {old['score']} -> {value:g}: {url} supersedes "
                         f"{old.get('reference_url')} (both citations kept; the old value is "
                         "marked superseded in `scores`)")
        else:
            appended.append(row)
    if not rewritten:
        return None, appended, notes
    merged = [r for i, row in enumerate(rows) for r in (*before.get(i, []), row)]
    return merged + appended, [], notes


def _same_value(text: str | None, value: float) -> bool:
    try:
        return abs(float(text) - value) < 1e-9
    except (TypeError, ValueError):
        return False


def _counts(home: Home) -> dict[str, int]:
    manifest = readable(home.registry) / "build.json"
    counts = json.loads(manifest.read_text())["counts"] if manifest.is_file() else {}
    return {name: counts[name] for name in TABLE_NAMES if name in counts}


def add_model(home: Home, model_id: str, scores: dict[str, float], *, source_url: str,
              name: str | None = None, provider: str | None = None,
              release_date: str | None = None, is_reasoning: bool | None = None,
              source_type: str = "official_blog", mirror: Path | None = None) -> BuildReport:
    """Record a model's cited scores and rebuild, as one transaction.

    Raises BadInputError (nothing written) if an id, the date or any row is bad. The
    report's `notes` say what changed (an id normalised, a value corrected or superseded).
    """
    if not scores:
        raise BadInputError("add-model needs at least one score (--scores 'gpqa_diamond=71.2,...')")
    given = check_identifier(model_id, "model id")
    release_date = (check_date(release_date, "--release-date", latest=latest_release())
                    if release_date else None)
    name, provider = _plain_text(name, "--name"), _plain_text(provider, "--provider")
    contracts = load_contracts(home.schemas)
    aliases = model_alias_map(contracts)
    mid = canonical_model_id(given)
    if mid is None:
        raise BadInputError(f"model id {model_id!r} has no letter or digit to make an id from")
    mid = aliases.get(mid, mid)
    notes = [f"model id '{given}' is recorded as '{mid}'"] if mid != given else []
    rows = [{
        "model_id": mid, "name": name or "", "provider": provider or "",
        "release_date": release_date or "",
        "is_reasoning": "" if is_reasoning is None else str(is_reasoning).lower(),
        "benchmark_id": bid, "score": value, "reference_url": source_url,
        "source_type": source_type, "reported_setting": "", "notes": "",
    } for bid, (_, value) in _canonical_scores(scores, contracts).items()]
    _check_new_rows([{**r, "name": r["name"] or given} for r in rows], contracts, home)

    def change(existing: list[dict], old_text: str):
        rewritten, appended, changes = _merge(existing, rows, BenchmarkResolver(contracts), aliases)
        for row in rows:  # (the same dicts that were merged into the file)
            row["name"] = row["name"] or given
        if rewritten is None and appended and not _has_all_columns(old_text):
            rewritten, appended = existing + appended, []  # an older header: rewrite the file
        if rewritten is not None:
            return _csv_text(_lines(rewritten), True), changes
        if not appended:
            return None, changes
        return ((old_text if old_text.endswith("\n") or not old_text else old_text + "\n")
                + _csv_text(appended, header=not old_text.strip())), changes

    return _transaction(home, change, notes, mirror)


def _has_all_columns(text: str) -> bool:
    if not text.strip():
        return True
    header = next(csv.reader(io.StringIO(text.lstrip("\ufeff").split("\n", 1)[0])), [])
    return [h.strip() for h in header] == RELEASE_COLUMNS


def _transaction(home: Home, change, notes: list[str], mirror: Path | None) -> BuildReport:
    """Under the registry lock: read releases.csv, `change(rows, text) -> (new text or None,
    notes)`, and publish the new file with the registry built from it (one journal)."""
    path = home.releases_csv
    with locked(home.lock):
        recover(home.registry)
        settle(home)
        old_text = path.read_text(encoding="utf-8") if path.exists() else ""
        existing = ([r for _, r in csv_records(str(path), old_text.encode("utf-8"),
                                               required=_REQUIRED)]
                    if old_text.strip() else [])
        text, changes = change(existing, old_text)
        notes = notes + changes
        if text is None:
            return BuildReport([], _counts(home), notes=notes)
        candidate = pending_path(path)
        config = SourceConfig(id=RELEASES_SOURCE_ID, adapter=ADAPTER.name,
                              path=str(path.relative_to(home.root)), order=5,
                              licence="project's own cited facts",
                              description="hand-entered releases (benchpress add-model)")
        try:
            candidate.write_text(text, encoding="utf-8")
            report = build_locked(home, mirror=mirror, extra=config, read_from=candidate,
                                  publish={candidate: path}, settled=True)
        finally:
            # published (renamed away) or abandoned; kept only while a committed journal
            # still needs it to roll forward
            if not journal_path(home).exists():
                candidate.unlink(missing_ok=True)
    return replace(report, notes=notes)


def retract(home: Home, model_id: str, benchmarks: list[str], *, reason: str, source_url: str,
            mirror: Path | None = None) -> BuildReport:
    """Mark `model_id`'s live values of `benchmarks` in releases.csv as retracted.

    The lines stay (for audit) with `audit_status = retracted` and a note naming the
    reason and `source_url`; the cells they made are gone after the rebuild (another
    source's value, if any, takes the cell). Raises BadInputError (nothing written) when
    the reason or citation is missing or a benchmark has no live value of the model here.
    """
    if not benchmarks:
        raise BadInputError("--retract needs at least one benchmark")
    reason = _plain_text(reason, "--reason")
    if not reason:
        raise BadInputError("a retraction needs a --reason")
    if not source_url.lower().startswith(("http://", "https://")):
        raise BadInputError(f"--source {source_url[:60]!r} is not an http(s) URL")
    contracts = load_contracts(home.schemas)
    aliases, resolver = model_alias_map(contracts), BenchmarkResolver(contracts)
    mid = canonical_model_id(check_identifier(model_id, "model id")) or model_id
    mid = aliases.get(mid, mid)
    wanted = list(dict.fromkeys(resolver.resolve(check_identifier(b, "benchmark id"))[0] or b
                                for b in benchmarks))

    def change(existing: list[dict], old_text: str):
        rows, notes = [dict(r) for r in existing], []
        model_of = lambda r: aliases.get(canonical_model_id(r.get("model_id") or "") or "",  # noqa: E731
                                         canonical_model_id(r.get("model_id") or ""))
        for bid in wanted:
            live = [i for i, r in enumerate(rows) if model_of(r) == mid
                    and resolver.resolve(r.get("benchmark_id"))[0] == bid
                    and (r.get("audit_status") or "") not in _INACTIVE]
            if not live:
                raise BadInputError(f"model '{mid}' has no live value of '{bid}' in "
                                    "sources/releases.csv to retract (values of other sources "
                                    "are changed at their source)")
            for i in live:
                rows[i]["audit_status"] = "retracted"
                rows[i]["notes"] = "; ".join(filter(None, [rows[i].get("notes"),
                                                           f"retracted: {reason} ({source_url})"]))
                notes.append(f"{bid}: {rows[i]['score']} from {rows[i].get('reference_url')} "
                             f"retracted ({reason}; {source_url}); kept in `scores` for audit")
        return _csv_text(_lines(rows), True), notes

    return _transaction(home, change, [], mirror)
