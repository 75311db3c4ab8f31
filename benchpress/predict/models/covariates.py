"""Per-model covariates for :mod:`benchpress.predict.models.side_info`: what is known about a model
before its scores, as a float matrix (n_models, n_features).

:func:`model_covariates` builds them from a models frame (release date and its square,
reasoning, open weights, named effort, providers with enough models; never a field
computed from scores), :func:`metadata_covariates` for one new model from a metadata
dict (:func:`parse_metadata` reads one typed as text), :func:`check_covariates` checks a given matrix and :func:`covariate_kwargs` passes
covariates to the predictors that take them.
"""

from __future__ import annotations

import difflib
import re
from datetime import date

import numpy as np
import polars as pl

from benchpress.errors import BadInputError, UsageError, shown

__all__ = ["DATE_COLUMN", "covariate_dates", "model_covariates", "metadata_covariates", "parse_metadata", "check_covariates", "covariate_kwargs",
           "METADATA_FIELDS", "FAMILY_LEVEL", "model_family", "name_tier", "family_columns"]

#: Family indicators take this value (not 1): it marks them for the predictor, which
#: shrinks their effects harder, towards the enclosing provider's (see ``family_scale``).
FAMILY_LEVEL = 0.5
_SMALL_TOKENS = frozenset(("mini", "nano", "flash", "haiku", "lite", "small"))

_EPOCH = date(2024, 1, 1)
_MID = (date(2025, 4, 1) - _EPOCH).days / 365.25  # centre of the squared date term


def _years(value) -> float:
    """Years from 2024-01-01 of an ISO date, a year-month (mid-month) or a year (mid-year);
    NaN when missing or unreadable."""
    text = str(value or "")[:10]
    for fmt, pad in ((10, ""), (7, "-15"), (4, "-07-01")):
        if len(text) == fmt:
            try:
                return (date.fromisoformat(text + pad) - _EPOCH).days / 365.25
            except ValueError:
                return np.nan
    return np.nan


def model_family(model_id) -> str:
    """A model's family from its id alone: the id's ``-``-separated tokens up to the first
    one that starts with a version number, cut to the version's major part, with a lone
    ``-`` before that number dropped ("claude-opus-4.5" -> "claude-opus-4", "gpt-5.1" and
    "gpt-5-mini" -> "gpt5", "qwen-2.5-7b" and "qwen2.5-72b" -> "qwen2", "deepseek-r1-0528"
    -> "deepseek-r1"). Never reads a score."""
    out = []
    for tok in str(model_id or "").lower().split("-"):
        head = re.match(r"^([a-z]*)(\d+)", tok)
        if head:
            out.append(head.group(1) + head.group(2))
            break
        out.append(tok)
    fam = "-".join(out)
    return re.sub(r"-(\d)", r"\1", fam) if re.fullmatch(r"[a-z]+-\d+", fam) else fam


def name_tier(model_id) -> tuple[float, float]:
    """(small, log10 parameters) from a model's id alone: small is 1 when a token is a
    small-tier word (mini, nano, flash, haiku, lite, small), the parameter count the first
    ``<number>b`` in the id (billions; NaN when the id names none); both NaN without an id."""
    if not model_id:
        return np.nan, np.nan
    text = str(model_id).lower()
    small = float(bool(_SMALL_TOKENS.intersection(re.split(r"[-_.\s]", text))))
    size = re.findall(r"(?<![a-z])(\d+(?:\.\d+)?)b\b", text)
    return small, (float(np.log10(float(size[0]))) if size and float(size[0]) > 0 else np.nan)


def family_columns(ids, reference_ids, min_family: int = 3) -> list[list[float]]:
    """One indicator column (values 0 / :data:`FAMILY_LEVEL`) per family of
    :func:`model_family` with at least ``min_family`` models among ``reference_ids``."""
    fams = [model_family(i) for i in ids]
    ref = [model_family(i) for i in reference_ids]
    keep = sorted(f for f in set(ref) if f and ref.count(f) >= min_family)
    return [[FAMILY_LEVEL * float(f == k) for f in fams] for k in keep]


def model_covariates(models: pl.DataFrame, *, min_provider: int = 5,
                     providers: bool = True, reference: pl.DataFrame | None = None,
                     identity: bool = True, min_family: int = 3) -> np.ndarray | None:
    """Per-model covariates from a models frame, shape (n_models, n_features), float.

    Columns: release date (years since 2024-01-01; always first, :data:`DATE_COLUMN`, NaN
    where not known) and its square about 2025-04-01 (about the 2026-05 matrix's mean
    release), is_reasoning, open_weights (0/1), a named reasoning
    effort (1 when ``effort`` is set, e.g. "high", else 0), and one indicator per provider
    with at least ``min_provider`` models in the frame (when ``providers``); then, when
    ``identity`` and the frame has ``model_id``, what the id says (:func:`name_tier`: a
    small-tier word, log10 of a named parameter count) and one indicator per family
    (:func:`family_columns`, families with ``min_family`` models, coded 0 /
    :data:`FAMILY_LEVEL`). Missing values are NaN (the predictor fills them with the
    training mean). None when the frame carries none of the metadata fields (e.g.
    ``ScoreMatrix.from_arrays``: the id alone adds no covariates). ``reference``
    (default: ``models``) is the frame whose providers and families are counted, so that
    rows of a new model get the columns of the fit's covariates.
    """
    # the release date first, always (NaN where not known): :data:`DATE_COLUMN`
    years = ([_years(v) for v in models["release_date"].to_list()]
             if "release_date" in models.columns else [np.nan] * models.height)
    cols = [years, [(y - _MID) ** 2 for y in years]]
    if not any(c in models.columns for c in METADATA_FIELDS if c != "model_id"):
        return None
    for name in ("is_reasoning", "open_weights"):
        if name in models.columns:
            cols.append([np.nan if v is None else float(v) for v in models[name].to_list()])
    if "effort" in models.columns:
        cols.append([float(bool(v)) for v in models["effort"].to_list()])
    if providers and "provider" in models.columns:
        prov = models["provider"].to_list()
        ref = prov if reference is None else reference["provider"].to_list()
        counts = {p: ref.count(p) for p in set(ref) if p}
        for p in sorted(k for k, n in counts.items() if n >= min_provider):
            cols.append([float(v == p) for v in prov])
    if identity and "model_id" in models.columns:
        ids = models["model_id"].to_list()
        tiers = [name_tier(i) for i in ids]
        cols += [[t[0] for t in tiers], [t[1] for t in tiers]]
        ref_ids = ids if reference is None else reference["model_id"].to_list()
        cols += family_columns(ids, ref_ids, min_family)
    return np.asarray(cols, dtype=float).T.reshape(models.height, len(cols))


#: The column of :func:`model_covariates` that holds the release date (years since
#: 2024-01-01; NaN where not known), which a blend's regression reads as its date term.
DATE_COLUMN = 0


def covariate_dates(covariates) -> np.ndarray | None:
    """The release dates (years; NaN: not known) in covariates made by
    :func:`model_covariates` ((n_rows, n_features), or per row a row or None), or None
    for None."""
    if covariates is None:
        return None
    return np.array([np.nan if row is None else float(np.asarray(row, dtype=float)[DATE_COLUMN])
                     for row in covariates])


METADATA_FIELDS = ("provider", "release_date", "is_reasoning", "open_weights", "effort",
                   "model_id")
_TEXT_FIELDS = ("provider", "release_date", "effort", "model_id")


_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def parse_metadata(text: str) -> dict[str, str]:
    """A new model's metadata as typed (``predict --metadata``, the app's ``?metadata=``):
    ``"provider=OpenAI,release_date:2025-09-01"`` -> ``{"provider": "OpenAI",
    "release_date": "2025-09-01"}``, ``=`` or ``:`` after each key. A part without a key,
    or a key given twice, is a one-line UsageError; an unknown key or a wrong value (an
    impossible date) a one-line BadInputError (:func:`checked_metadata`), whichever method
    the metadata then goes to.

    >>> parse_metadata("provider=OpenAI, is_reasoning:true")
    {'provider': 'OpenAI', 'is_reasoning': 'true'}
    """
    meta: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, *value = (x.strip() for x in re.split(r"[=:]", part, maxsplit=1))
        if not value or not key:
            raise UsageError(f"metadata {shown(part)} is not KEY=VALUE (e.g. provider=OpenAI)")
        if key in meta:
            raise UsageError(f"metadata names {shown(key)} more than once")
        meta[key] = value[0]
    checked_metadata(meta)
    return meta


def _metadata_value(field: str, value):
    """One metadata value as the models table holds it: text, or a boolean for
    is_reasoning / open_weights (True/False, or the words true/false, yes/no, 1/0: a
    string "false" is not True); a date that names no day, or another word, raises
    BadInputError in one line."""
    if value is None or not str(value).strip():  # empty: not known
        return None
    if field in _TEXT_FIELDS:
        text = str(value).strip()
        if field == "release_date" and text and np.isnan(_years(text)):
            raise BadInputError(f"metadata release_date={shown(text)} is not a date: use YYYY-MM-DD "
                                "(or YYYY-MM, YYYY)")
        return text or None
    word = str(value).strip().lower()
    if isinstance(value, (bool, np.bool_)) or word in _TRUE + _FALSE:
        return bool(value) if isinstance(value, (bool, np.bool_)) else word in _TRUE
    raise BadInputError(f"metadata {field}={shown(value)}: expected true or false")


def checked_metadata(metadata: dict) -> dict:
    """Every field of :data:`METADATA_FIELDS` as the models table holds it (None: not
    given), from ``metadata``; an unknown key or a value of the wrong kind (see
    :func:`_metadata_value`) raises BadInputError in one line."""
    unknown = sorted(set(metadata) - set(METADATA_FIELDS))
    if unknown:
        close = difflib.get_close_matches(unknown[0], METADATA_FIELDS, n=1)
        names = ", ".join(u if len(u) <= 40 else shown(u, 40) for u in unknown)
        raise BadInputError(f"unknown metadata field(s) {names}"
                            + (f"; did you mean '{close[0]}'?" if close else "")
                            + f" (use {', '.join(METADATA_FIELDS)})")
    return {c: _metadata_value(c, metadata.get(c)) for c in METADATA_FIELDS}


def metadata_covariates(metadata: dict, reference: pl.DataFrame) -> np.ndarray | None:
    """Covariates (1, n_features) of one new model from ``metadata`` (keys among
    :data:`METADATA_FIELDS`; missing ones are unknown), with the columns that
    :func:`model_covariates` gives the registry's models frame ``reference``; None when
    ``reference`` has no such field. An unknown key or a value of the wrong kind (see
    :func:`_metadata_value`) raises BadInputError."""
    values = checked_metadata(metadata)
    cols = [c for c in METADATA_FIELDS if c in reference.columns]
    row = pl.DataFrame({c: [values[c]] for c in cols},
                       schema={c: pl.String if c in _TEXT_FIELDS else pl.Boolean
                               for c in cols})
    return model_covariates(row, reference=reference) if cols else None


def check_covariates(covariates, n_rows: int, n_features: int | None = None):
    """``covariates`` as a float (n_rows, n_features) array (None stays None); a wrong shape
    or an infinite value raises BadInputError in one line."""
    if covariates is None:
        return None
    X = np.array(covariates, dtype=float, copy=True)
    if X.ndim != 2 or X.shape[0] != n_rows or (n_features is not None and X.shape[1] != n_features):
        want = f"({n_rows}, {'n_features' if n_features is None else n_features})"
        raise BadInputError(f"covariates must have shape {want}, got {X.shape}")
    if np.isinf(X).any():
        raise BadInputError("covariates contain infinite values")
    return X


def covariate_kwargs(predictor, covariates, rows=None) -> dict:
    """``{"covariates": covariates[rows]}`` for a ``fit``/``fold_in`` call when
    ``predictor`` accepts covariates and ``covariates`` (n_models, n_features) is given;
    ``{}`` otherwise (every other predictor is called exactly as before). ``rows`` is any
    numpy row index (ints or a bool mask); None = all rows."""
    if covariates is None or not getattr(predictor, "accepts_covariates", False):
        return {}
    X = np.asarray(covariates, dtype=float)
    return {"covariates": X if rows is None else X[rows]}
