"""What the CLI keeps in view at any terminal width: the columns a SQL query ranks by (the
key columns of its table), each kind of build warning said once, with a count, and the
headline figures of a metrics file."""

from __future__ import annotations

import re

__all__ = ["order_by_columns", "grouped_warnings", "headline_figures", "counts_line"]

_ORDER_BY = re.compile(r"\border\s+by\b(.*?)(?:\blimit\b|\boffset\b|;|$)", re.I | re.S)


def order_by_columns(sql_text: str, columns) -> list[str]:
    """The result's columns named in the query's last ORDER BY, in that order: the table
    keeps what the rows are ranked by in view at any width.

    >>> order_by_columns("SELECT * FROM conflicts ORDER BY abs(difference) DESC LIMIT 5",
    ...                  ["model_id", "benchmark_id", "difference"])
    ['difference']
    """
    found = _ORDER_BY.findall(sql_text)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", found[-1]) if found else []
    return [w for w in dict.fromkeys(words) if w in columns]


def counts_line(counts: dict, n_sources: int) -> str:
    """A registry's table counts as one line, its sources and their versions apart (the
    `sources` table holds a row per version of a source).

    >>> counts_line({"models": 3, "sources": 2}, 1)
    'models 3, sources 1 (2 versions)'
    >>> counts_line({"models": 3, "sources": 2}, 2)
    'models 3, sources 2'
    """
    versions = counts.get("sources", 0)
    shown = {**counts, "sources": f"{n_sources}" + (f" ({versions} versions)"
                                                     if versions > n_sources else "")}
    return ", ".join(f"{k} {v}" for k, v in shown.items() if k in counts)


_WARNING = re.compile(r"^(model|benchmark|source) '([^']+)': ([^;]+)(?:;.*)?$")


def grouped_warnings(warnings: list[str], *, verbose: bool = False) -> list[str]:
    """The build's warnings, each kind said once with a count (the ids it concerns, the
    first few by name); ``verbose`` keeps every line.

    >>> grouped_warnings(["model 'a': sources disagree on the provider; kept 'X'",
    ...                    "model 'b': sources disagree on the provider; kept 'Y'", "other"])
    ['2 models: sources disagree on the provider (a, b); -v lists each', 'other']
    """
    if verbose:
        return list(warnings)
    groups: dict[tuple[str, str], list[str]] = {}
    lines: list = []
    for line in warnings:
        m = _WARNING.match(line)
        if m is None:
            lines.append(line)
            continue
        kind = (m.group(1), m.group(3).strip())
        if kind not in groups:
            groups[kind] = []
            lines.append(kind)  # said where the first one was
        groups[kind].append(m.group(2))
    out = []
    for item in lines:
        if isinstance(item, str):
            out.append(item)
            continue
        ids = groups[item]
        if len(ids) == 1:
            out.append(next(w for w in warnings if w.startswith(f"{item[0]} '{ids[0]}': ")))
            continue
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        out.append(f"{len(ids)} {item[0]}s: {item[1]} ({shown}); -v lists each")
    return out


_PER_METHOD = re.compile(r"^(?P<method>[a-z0-9]+)_k\d+_(?P<figure>[a-z0-9_]+)$")
_VS_BASELINE = re.compile(r"^vs_[a-z0-9]+_k\d+_(?P<figure>ratio|lo|hi)$")


def headline_figures(figures: dict, limit: int = 16) -> tuple[dict, int]:
    """The first ``limit`` scalar figures of a metrics file, headline first, and how many
    were left out. Keys of the form ``<method>_k<n>_<figure>`` (the yardsticks' files,
    one block per method) are ordered: the file's own method's (``method``, else
    ``default``) MedAE and coverage, every other method's MedAE, its ratios to them
    (``vs_<baseline>_k<n>_ratio``), then the rest; other keys keep the file's order, after
    its text fields.

    >>> shown, left = headline_figures({"als4_k3_medae": 5.4, "als4_k3_bias": -2.0,
    ...     "default_k3_medae": 4.5, "default_k3_bias": -1.0, "default_k3_coverage90": 89.5},
    ...     limit=3)
    >>> list(shown), left
    (['default_k3_medae', 'default_k3_coverage90', 'als4_k3_medae'], 2)
    >>> list(headline_figures({"vs_als4_k3_lo": 0.8, "vs_als4_k3_ratio": 0.85,
    ...     "als4_k3_medae": 5.4, "default_k3_medae": 4.5}, limit=3)[0])
    ['default_k3_medae', 'als4_k3_medae', 'vs_als4_k3_ratio']
    """
    flat = {k: v for k, v in figures.items() if isinstance(v, (int, float, str, bool))}
    own = str(flat.get("method", "default"))

    def rank(key: str) -> int:
        vs = _VS_BASELINE.match(key)
        if vs is not None:
            return 4 if vs["figure"] == "ratio" else 5
        m = _PER_METHOD.match(key)
        if m is None:
            return 0 if isinstance(flat[key], str) else 1
        headline = m["figure"] in ("medae", "coverage90")
        return 2 if m["method"] == own and headline else 3 if m["figure"] == "medae" else 5

    order = sorted(flat, key=rank)  # stable: the file's order within a rank
    return {k: flat[k] for k in order[:limit]}, max(len(order) - limit, 0)
