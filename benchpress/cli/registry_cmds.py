"""Registry commands: init, ingest, build, add-model, aliases, sql."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from benchpress.cli.common import (
    executor_option, format_option, handle_errors, home_option, mirror_option, one_line,
    out_option, progress_bar, render, stderr, wrapped, write_or_emit,
)
from benchpress.cli.notes import say
from benchpress.api.typed_scores import parse_scores
from benchpress.cli.shown import counts_line, grouped_warnings, headline_figures, order_by_columns
from benchpress.input_limits import input_limits
from benchpress.errors import EXIT_LANDED_WITH_REJECTS, BadInputError, UsageError
from benchpress.home import Home
from benchpress.store.diff import diff_tables, read_tables
from benchpress.store.sql import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT, QueryCancelled, execute
from benchpress.store.snapshot import list_snapshots, resolve_snapshot
from benchpress.store.tables import read_table, readable, registry_exists

if TYPE_CHECKING:
    from benchpress.store.build import BuildReport

__all__ = ["init", "ingest", "build", "pull", "add_model", "aliases", "sql", "summary"]

# the contracts shipped in the package (benchpress/contracts: in the repository, a link to
# schemas/), so that `benchpress init` works from an installed wheel too
_PACKAGE_SCHEMAS = Path(__file__).resolve().parents[1] / "contracts"


_FIELD = re.compile(r"field '([^']+)': (.*)$")
_PARENS = re.compile(r"\s*\([^()]*\)")


def rejection_reason(line: str) -> str:
    """The kind of a quarantine line, without its row and values: "field 'model_id': ...
    (value: missing): empty model name, the row names no model (...)" -> "model_id: empty
    model name, the row names no model"."""
    found = _FIELD.search(line)
    if not found:
        return "other"
    detail = found.group(2)
    while _PARENS.search(detail):  # innermost parentheses first: they may nest
        detail = _PARENS.sub("", detail)
    return f"{found.group(1)}: {detail.rsplit(': ', 1)[-1].strip(' ;:')}"


def _print_rejections(s, limit: int | None) -> None:
    """Rejected rows of one source: counts by reason, then up to ``limit`` lines (all: None)."""
    if not s.reasons:
        return
    counts = Counter(rejection_reason(line) for line in s.reasons)
    stderr.print(f"  rejected {len(s.reasons)}: " + "; ".join(
        f"{n} {one_line(reason)}" for reason, n in counts.most_common()), highlight=False,
        markup=False)
    shown = s.reasons if limit is None else s.reasons[:limit]
    for line in shown:
        stderr.print(f"  rejected: {one_line(line)}", highlight=False, markup=False)
    if len(shown) < len(s.reasons):
        more = f"{len(s.reasons) - len(shown)} more" if shown else "each row"
        stderr.print(f"  ({more}: --verbose, or SELECT * FROM quarantine)", highlight=False,
                     markup=False)


def _print_report(report: BuildReport, only: set[str] | None = None, *,
                  verbose: bool = False, limit: int | None = 0) -> int:
    """Summary per source on stderr; returns how many rows were quarantined.

    Rejected rows are counted by source and reason; ``limit`` rows are listed one per line
    (every row with ``verbose``)."""
    rejected = 0
    for s in report.sources:
        if only and s.source_id not in only:
            continue
        stderr.print(f"[bold]{s.source_id}[/] ({s.adapter}): read {s.rows_read}, accepted "
                     f"{s.rows_accepted}, merged by normalization {s.rows_merged}, "
                     f"quarantined {s.rows_quarantined}")
        for note in s.notes:
            stderr.print(f"  note: {one_line(note)}", highlight=False, markup=False)
        _print_rejections(s, None if verbose else limit)
        rejected += s.rows_quarantined
    for line in grouped_warnings(report.warnings, verbose=verbose):
        stderr.print(f"warning: {one_line(line)}", highlight=False, markup=False)
    for line in report.notes:
        stderr.print(one_line(line), highlight=False, markup=False)
    counts = counts_line(report.counts, len({s.source_id for s in report.sources}))
    stderr.print(f"registry: {counts}", highlight=False, markup=False)
    return rejected


def verbose_option(f):
    return click.option("--verbose", "-v", is_flag=True,
                        help="List every rejected row (default: counts by source and reason).")(f)


def _scores_held(home: Home) -> int:
    """How many observations the registry holds (its build.json counts; 0 if none)."""
    import json

    if not registry_exists(home.registry):
        return 0
    manifest = json.loads((readable(home.registry) / "build.json").read_text(encoding="utf-8"))
    return int(manifest.get("counts", {}).get("scores", 0))


def _tables_to_compare(home: Home):
    """The registry's tables before an ingest: {} for none yet, None when it is too large to
    read twice for the summary of changes (`InputLimits.max_ingest_diff_scores`)."""
    if _scores_held(home) > input_limits().max_ingest_diff_scores:
        return None
    return read_tables(home.registry) if registry_exists(home.registry) else {}


def _print_changes(home: Home, report, sid: str, before) -> None:
    """On stderr: what the ingest changed in the registry's cells, by cause (`store.diff`)."""
    if before is None or report.counts.get("scores", 0) > input_limits().max_ingest_diff_scores:
        stderr.print("changes by cause: `benchpress diff` between snapshots (the registry is "
                     "too large to compare here)", markup=False, highlight=False)
        return
    after = read_tables(home.registry)
    if not before:  # the first build: everything is new
        before = {name: df.clear() for name, df in after.items()}
    versions = [s.version for s in report.sources if s.source_id == sid and s.version]
    label = f"{sid}@{max(versions)}" if versions else sid
    stderr.print(f"{label} changed {diff_tables(before, after, a='before', b='after').brief()}",
                 markup=False, highlight=False)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-git", is_flag=True, help="Do not run `git init` / `dvc init`.")
@handle_errors
def init(directory: Path, no_git: bool):
    """Create an empty registry workspace in DIRECTORY."""
    home = Home(directory.resolve())
    if home.sources.exists() and any(home.sources.iterdir()):
        raise UsageError(f"{home.sources} already holds sources; refusing to overwrite")
    for folder in (home.sources, home.schemas, home.snapshots):
        folder.mkdir(parents=True, exist_ok=True)
    for contract in _PACKAGE_SCHEMAS.iterdir():
        if contract.is_file() and not (home.schemas / contract.name).exists():
            shutil.copyfile(contract, home.schemas / contract.name)
    (home.root / ".gitignore").write_text("/.cache/\n/registry/\n", encoding="utf-8")
    if not no_git and shutil.which("git") and not (home.root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(home.root)], check=True)
        subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=home.root, check=False)
    click.echo(f"created an empty registry workspace in {home.root}")


@click.command()
@click.argument("location", required=False)
@click.option("--adapter", help="Adapter name, a code adapter or a spec of sources/specs/ "
              "(default: detected from the content).")
@click.option("--source", "source", help="A saved source LOCATION is a new version of (an error "
              "if there is no such source; the error lists them).")
@click.option("--id", "source_id", help="Id of a new source (default: adapter and content hash).")
@click.option("--version", "version", help="The version's label (e.g. 2026-06-19T0954; default: "
              "the date the input carries; a new source without one: the day it is retrieved).")
@click.option("--licence", help="Licence of the data, recorded with the source.")
@click.option("--url", "--source-url", "url",
              help="Canonical URL of a local file (its citation, e.g. a model card's page or "
                   "the paper a wide CSV table comes from).")
@click.option("--all", "all_sources", is_flag=True, help="Pull and rebuild every configured source.")
@click.option("--allow-rejects", is_flag=True,
              help="Exit 0 even if rows were quarantined (default: exit 3, the good rows landed).")
@verbose_option
@mirror_option
@home_option
@handle_errors
@executor_option
def ingest(location, adapter, source, source_id, version, licence, url, all_sources,
           allow_rejects, verbose, mirror, home, executor):
    """Ingest a file, folder or URL (LOCATION) as a source, then rebuild the registry.

    Exit 0: every row landed; 1: refused, nothing changed; 2: bad usage; 3: the good rows
    landed and the rest are in the quarantine table (--allow-rejects: exit 0). With
    --executor ADDRESS the sources are read on a Dask cluster whose workers see this
    home at the same path."""
    from benchpress.store.build import build as build_registry
    from benchpress.store.ingest import ingest as ingest_source

    if all_sources == bool(location):
        raise UsageError("give either LOCATION or --all")
    if all_sources:
        with progress_bar("building") as update:
            report = build_registry(home, mirror=mirror, on_source=update, executor=executor)
        rejected = _print_report(report, verbose=verbose)
    else:
        before = _tables_to_compare(home)
        with progress_bar("ingesting") as update:
            sid, report = ingest_source(home, location, adapter=adapter, source_id=source_id,
                                        licence=licence, url=url, mirror=mirror, on_source=update,
                                        version=version, executor=executor, source=source)
        rejected = _print_report(report, only={sid}, verbose=verbose, limit=20)
        _print_changes(home, report, sid, before)
        click.echo(sid)
    if rejected and not allow_rejects and not all_sources:
        click.echo(f"Error: {rejected} row(s) were rejected and kept in the quarantine table; the "
                   f"other rows landed (see above; exit {EXIT_LANDED_WITH_REJECTS}; "
                   "--allow-rejects to exit 0)", err=True)
        sys.exit(EXIT_LANDED_WITH_REJECTS)


@click.command()
@verbose_option
@mirror_option
@home_option
@handle_errors
@executor_option
def build(verbose, mirror, home, executor):
    """Rebuild the registry from every source under sources/ (what `dvc repro` runs), then
    check it for suspect values (one line; `benchpress suspects` lists them).

    With --executor ADDRESS the sources are read and checked on a Dask cluster whose
    workers see this home at the same path; the tables are the same."""
    from benchpress.cli.suspects_cmds import check_after_build
    from benchpress.store.build import build as build_registry

    with progress_bar("building") as update:
        report = build_registry(home, mirror=mirror, on_source=update, executor=executor)
    _print_report(report, verbose=verbose)
    check_after_build(home)


@click.command()
@mirror_option
@home_option
@handle_errors
def pull(mirror, home):
    """Fetch every configured source's raw files into the cache (every version of a
    versioned source; verifying pinned hashes)."""
    from benchpress.store.build import materialize
    from benchpress.store.sources import config_versions, load_configs

    home.cache.mkdir(parents=True, exist_ok=True)  # a DVC output even when nothing is fetched
    steps = [(config, version) for config in load_configs(home.sources)
             for version in config_versions(config)]
    with progress_bar("pulling") as update:
        for n, (config, version) in enumerate(steps, start=1):
            path, digest, _ = materialize(home, version, mirror=mirror)
            label = f"{config.id}@{version.version}" if config.versions else config.id
            update(n, len(steps), label)
            click.echo(f"{label}\t{digest[:12]}\t{path}")


@click.command(name="add-model")
@click.argument("model_id")
@click.option("--scores", "scores_text", help='"gpqa_diamond=71.2,hle=20.1"')
@click.option("--source", "source_url", required=True, help="Citation URL for these scores "
              "(or for the retraction).")
@click.option("--retract", "retract_text", help="Retract the model's values of these "
              "benchmarks (comma-separated; kept in scores for audit, gone from cells).")
@click.option("--reason", help="Why the values are retracted (required with --retract).")
@click.option("--name", help="Display name (default: MODEL_ID).")
@click.option("--provider", help="Who makes the model (e.g. OpenAI).")
@click.option("--release-date", help="YYYY-MM-DD")
@click.option("--reasoning/--no-reasoning", default=None,
              help="Whether it is a reasoning (thinking) model (default: not stated).")
@click.option("--source-type", default="official_blog", show_default=True,
              help="Kind of citation, a row of schemas/source_priority.csv (e.g. official_blog, tech_report, model_card).")
@verbose_option
@mirror_option
@home_option
@handle_errors
def add_model(model_id, scores_text, source_url, retract_text, reason, name, provider,
              release_date, reasoning, source_type, verbose, mirror, home):
    """Add a new model release with cited scores (kept in sources/releases.csv).

    A newer citation of a recorded value supersedes it (both kept, the change is printed);
    --retract BENCHMARK --reason TEXT --source URL retracts a value (kept for audit)."""
    from benchpress.store.releases import add_model as add_release
    from benchpress.store.releases import retract

    if bool(scores_text) == bool(retract_text):
        raise UsageError("give either --scores or --retract")
    if retract_text:
        if not reason:
            raise UsageError("--retract needs --reason TEXT")
        _print_report(retract(home, model_id, [b.strip() for b in retract_text.split(",")
                                               if b.strip()],
                              reason=reason, source_url=source_url, mirror=mirror),
                      only={"releases"}, verbose=verbose)
        return

    report = add_release(home, model_id, parse_scores(scores_text), source_url=source_url,
                         name=name, provider=provider, release_date=release_date,
                         is_reasoning=reasoning, source_type=source_type, mirror=mirror)
    _print_report(report, only={"releases"}, verbose=verbose, limit=20)


@click.group()
def aliases():
    """Review and accept alias suggestions (near-duplicate names)."""


@aliases.command()
@click.option("--kind", type=click.Choice(["model", "benchmark"]), default="model", show_default=True,
              help="Aliases of model ids or of benchmark ids.")
@click.option("--source", help="Only suggest for ids that come from this source.")
@click.option("--min-score", type=float, default=85.0, show_default=True,
              help="Smallest match score (0-100) worth suggesting.")
@format_option()
@out_option()
@home_option
@handle_errors
def suggest(kind, source, min_score, fmt, out, home):
    """Fuzzy candidate matches with scores; nothing is merged until accepted."""
    from benchpress.store.aliases import suggest_aliases

    table = lambda name: read_table(home.registry, name)  # noqa: E731
    render(suggest_aliases(table("models"), table("cells"), table("scores"),
                           kind=kind, source=source, min_score=min_score,
                           quarantine=table("quarantine")), fmt, out=out,
           key=("alias", "canonical_id", "similarity"))


@aliases.command()
@click.argument("alias")
@click.argument("canonical_id")
@click.option("--kind", type=click.Choice(["model", "benchmark"]), default="model", show_default=True,
              help="Aliases of model ids or of benchmark ids.")
@click.option("--note", default="", help="Why the two names are one (kept in aliases.csv).")
@home_option
@handle_errors
def accept(alias, canonical_id, kind, note, home):
    """Add ALIAS -> CANONICAL_ID to schemas/aliases.csv (applies on the next build).

    CANONICAL_ID must be a model of the registry (a benchmark of the registry or of
    schemas/benchmarks.csv with --kind benchmark)."""
    from benchpress.store.aliases import accept_alias

    from benchpress.validate.text import identifier_problem

    if not any(identifier_problem(v, paths=False) for v in (alias, canonical_id)):
        _check_alias_target(home, kind, canonical_id)  # (accept_alias names a bad id)
    accept_alias(home.schemas, kind, alias, canonical_id, note)
    click.echo(f"{kind} alias {alias} -> {canonical_id} added; run `benchpress build` to apply")


def _check_alias_target(home: Home, kind: str, canonical_id: str) -> None:
    """Refuse an alias whose target names no known model (benchmark), with the closest ids."""
    import difflib

    import polars as pl

    from benchpress.validate.normalize import canonical_benchmark_id, canonical_model_id

    column = f"{kind}_id"
    known: set[str] = set()
    if registry_exists(home.registry):
        known |= set(read_table(home.registry, f"{kind}s")[column].to_list())
    if kind == "benchmark" and (home.schemas / "benchmarks.csv").is_file():
        known |= set(pl.read_csv(home.schemas / "benchmarks.csv",
                                 columns=[column], infer_schema=False)[column].to_list())
    if not known:
        raise BadInputError(f"no {kind}s known yet to alias to: run `benchpress build` first")
    target = (canonical_model_id if kind == "model" else canonical_benchmark_id)(canonical_id)
    if target not in known:
        close = difflib.get_close_matches(target, sorted(known), n=3)
        raise BadInputError(f"{kind} '{canonical_id}' is not in the registry; an alias must point "
                            f"to a known {kind}"
                            + (f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""))


@click.command()
@click.argument("sql_text", metavar="QUERY")
@click.option("--param", "-p", "params", multiple=True, type=(str, str),
              help="Bind $NAME to VALUE (repeatable).")
@click.option("--snapshot", default=None, help="Query a snapshot (id, tag or 'latest').")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT,
              show_default=True, metavar="SECONDS", help="Stop the query after this long.")
@click.option("--max-rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS,
              show_default=True, help="Print at most this many rows (a note on stderr says when "
              "more matched).")
@format_option()
@out_option("the result")
@home_option
@handle_errors
def sql(sql_text, params, snapshot, timeout, max_rows, fmt, out, home):
    """Run a read-only SQL query over the registry's views.

    Tables: models, benchmarks, scores (every observation), cells (resolved), aliases,
    sources, quarantine. Views: matrix (wide), conflicts (losing observations),
    source_values, source_kinds, source_comparison (leaderboard beside vendor value) and
    source_disagreements (more than 5 points apart). The query runs in a sealed DuckDB
    (no file access) with a time limit, a memory limit and a row cap; Ctrl-C stops it (exit 130)."""
    try:
        result = execute(resolve_snapshot(home, snapshot), sql_text, dict(params) or None,
                         timeout=timeout, max_rows=max_rows)
    except (KeyboardInterrupt, QueryCancelled) as exc:
        if isinstance(exc, QueryCancelled) and not exc.interrupted:
            raise
        click.echo("Error: SQL query interrupted", err=True)
        sys.exit(130)
    render(result.frame, fmt, out=out, key=order_by_columns(sql_text, result.frame.columns))
    if result.truncated:
        say(f"note: showing the first {max_rows} rows; more matched (--max-rows to show "
            "more, or narrow the query)")


@click.command()
@format_option()
@out_option()
@home_option
@handle_errors
def summary(fmt, out, home):
    """What the pipeline made: registry counts, sources, snapshots and metrics files
    (csv: the sources table)."""
    import json

    if not registry_exists(home.registry):
        raise BadInputError(f"{home.registry}: no registry built yet; run `make main` or `benchpress build`")
    import polars as pl

    manifest = json.loads((readable(home.registry) / "build.json").read_text())
    # one row per source: its newest version's counts, and how many versions it has
    label = pl.col("source_version").fill_null("")
    sources = (read_table(home.registry, "sources")
               .with_columns(pl.len().over("source_id").alias("versions"))
               .filter(label == label.max().over("source_id"))
               .select("source_id", "adapter", "versions", "rows_read", "rows_accepted",
                       "rows_merged", "rows_quarantined"))
    snapshots = list_snapshots(home)
    metrics = {str(m.relative_to(home.root)): json.loads(m.read_text())
               for m in sorted((home.root / "metrics").glob("*.json"))}
    doc = {"registry": str(home.registry), "counts": manifest["counts"],
           "sources": sources.to_dicts(), "snapshots": len(snapshots),
           "latest_snapshot": snapshots[-1].id if snapshots else None, "metrics": metrics}
    if write_or_emit(doc, out, fmt, rows=sources):
        return
    click.echo(wrapped(f"registry {home.registry}: "
                       + counts_line(manifest["counts"], sources["source_id"].n_unique())))
    render(sources, "table", title="sources")
    click.echo(wrapped(f"snapshots: {len(snapshots)}"
                    + (f", latest {snapshots[-1].id} in {home.snapshots}" if snapshots else "")))
    for name, figures in metrics.items():
        shown, left = headline_figures(figures)
        click.echo(wrapped(f"{name}: " + ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items())
            + (f" (+{left} more: --format json)" if left else "")))
