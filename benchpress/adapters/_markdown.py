"""Markdown pipe tables, as READMEs and model cards write them.

Shared by the model-card adapter and the spec adapter (`adapters.spec_reader`). A table is
a header row of ``|`` cells, a rule row (``|---|:--:|``), then body rows; each table
remembers the nearest heading above it (``## Leaderboard``), so that a spec can pick "the
table under this heading" in a README that holds several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MarkdownTable", "markdown_tables", "parse_tables", "cells"]

_ROW = re.compile(r"^\s*\|.*\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class MarkdownTable:
    """One pipe table: the line of its header (1-based), the header cells, the body rows as
    (line, cells), and the text of the nearest heading above it ("" if none)."""

    line: int
    header: list[str]
    rows: list[tuple[int, list[str]]]
    heading: str


def cells(line: str) -> list[str]:
    """The cells of one table row, stripped (``| a | b |`` -> ``["a", "b"]``)."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_tables(text: str) -> list[MarkdownTable]:
    """Every pipe table of `text`, in order; tables inside code fences are skipped.

    >>> t = markdown_tables("# Board\\n\\n|Model|Score|\\n|---|--:|\\n|A|1.5 %|\\n")
    >>> t[0].line, t[0].header, t[0].rows, t[0].heading
    (3, ['Model', 'Score'], [(5, ['A', '1.5 %'])], 'Board')
    """
    lines = text.splitlines()
    tables, heading, fenced, k = [], "", False, 0
    while k < len(lines):
        line = lines[k]
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (found := _HEADING.match(line)):
            heading = found.group(1)
        elif not fenced and k + 1 < len(lines) and _ROW.match(line) and _RULE.match(lines[k + 1]):
            header, body, start = cells(line), [], k
            k += 2
            while k < len(lines) and _ROW.match(lines[k]):
                body.append((k + 1, cells(lines[k])))
                k += 1
            tables.append(MarkdownTable(start + 1, header, body, heading))
            continue
        k += 1
    return tables


def parse_tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """Markdown tables as (header line number, header cells, [(line number, cells)])."""
    return [(t.line, t.header, t.rows) for t in markdown_tables(text)]
