"""Where a `BenchPress` fit comes from, and the notes printed beside its predictions.

Free functions for :class:`benchpress.api.BenchPress`: `pretrained_path` (the artifact
`from_pretrained` loads), `pretrained_difference` (the one line saying when a registry's
sources are not the shipped fit's) and `metadata_note` (why a new model's metadata did or
did not reach its prediction). The fits themselves live in :mod:`benchpress.api.fitted_model`
(`FittedModel`) and :mod:`benchpress.api.fit_store` (`FitStore`).
"""

from __future__ import annotations

from pathlib import Path

from benchpress.errors import BadInputError, UsageError

__all__ = ["pretrained_path", "pretrained_difference", "metadata_note"]


def pretrained_path(path_or_name: str | Path | None = None) -> Path:
    """The artifact folder `BenchPress.from_pretrained(path_or_name)` loads: a folder, or
    by name one shipped inside the package (`benchpress/pretrained/<name>/`); with no
    argument, the shipped "default"."""
    from benchpress.api.artifact import DEFAULT_ARTIFACT

    path = Path(path_or_name) if path_or_name is not None else DEFAULT_ARTIFACT
    shipped = DEFAULT_ARTIFACT.parent / str(path_or_name)
    if path_or_name is not None and not path.exists() and path.name == str(path_or_name) \
            and (shipped / "manifest.json").is_file():
        path = shipped
    return path


def pretrained_difference(used: list[str]) -> str | None:
    """One line when a registry loaded without `sources` (the CLI's default: every source
    of the registry, `used`) predicts from other sources than `BenchPress.from_pretrained()`
    (the shipped fit), else None. The same input then gives other numbers; the line says
    which `sources` give the shipped fit's."""
    from benchpress.api.artifact import DEFAULT_ARTIFACT, read_manifest
    from benchpress.store.matrix import match_sources

    try:
        shipped = read_manifest(DEFAULT_ARTIFACT).get("sources")
    except BadInputError:  # no shipped fit (a trimmed install): nothing to differ from
        return None
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


def metadata_note(metadata: dict | None, used: bool, *, method: str, takes_covariates: bool,
                  latest: str | None) -> str | None:
    """Why a new model's `metadata` did not reach its prediction (None: it did, or none
    was given): one line for the CLI's note and the app's page. `used`: whether it was
    folded in with its covariates; `takes_covariates`: whether the predictor (`method`)
    takes them on this registry; `latest`: the newest release date of the registered
    models (ISO text, or None)."""
    if not metadata:
        return None
    given = str(metadata.get("release_date") or "")[:10]
    if used:  # a release after every registered model's counts as the newest one's
        if given and latest and given > latest[:10]:
            return (f"release_date {given} is after every registered model's (latest "
                    f"{latest}): its effect is taken at the latest date (clipped)")
        return None
    if not takes_covariates:
        return (f"the metadata is used by the default and side methods only; "
                f"'{method}' predicted from the scores alone")
    why = ("a value lies outside what the registered models span (a release date or a "
           "size named in the id), or the registry has no such fields")
    if given and latest and given > latest[:10]:
        why = f"release_date {given} is after every registered model's (latest {latest})"
    return (f"the metadata was not used: {why}; predicted from the scores alone (with "
            "outside_range='default', side information does not extrapolate)")
