"""The one-line notes printed beside a `BenchPress` prediction, by the CLI and the app.

Free functions for :class:`benchpress.api.BenchPress`: `pretrained_difference` (when a
registry's sources are not the shipped fit's), `metadata_note` (why a new model's metadata
did or did not reach its prediction), `contradicted_note` (a given score the others
contradict) and `left_out_note` (held-out cells of a fold file whose values a verdict took out).
"""

from __future__ import annotations

from benchpress.errors import BadInputError, UsageError

__all__ = ["pretrained_difference", "metadata_note", "contradicted_note", "left_out_note"]


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


def contradicted_note(contradicted: dict | None, model: str | None = None) -> str | None:
    """One line on a given score the others contradict (`BenchPress.predict`'s
    `contradicted`; `model`: the new model's name, for `compare`), None for None."""
    c = contradicted
    if c is None:
        return None
    return ((f"{model}: " if model else "")
            + f"{c['benchmark_id']}={c['given']:g} is far from what the other given scores "
            f"imply (about {c['expected']:.1f}; {abs(c['z']):.1f} standard deviations): "
            "check it (it was used as given)")


def left_out_note(left_out: int, n_cells: int, name: str) -> str:
    """One line on the `left_out` held-out cells of fold file `name` whose values a
    reviewed verdict took out of the matrix (`Folds.observed_in`), beside the `n_cells`
    scored."""
    return (f"{left_out:,} held-out cells of {name} hold values a reviewed verdict took "
            f"out (schemas/cell_reviews.csv): left out, {n_cells:,} scored")
