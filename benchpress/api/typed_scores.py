"""Known scores as people type them, read one way by every front end.

`benchpress predict --scores`, `benchpress add-model --scores` and the app's
``?scores=`` / ``?new=`` all call :func:`parse_scores`, so the same text gives the same
scores (or the same one-line error) at every door.
"""

from __future__ import annotations

import math
import re

from benchpress.errors import UsageError, shown

__all__ = ["parse_scores"]


def parse_scores(text: str | None, *, label: str = "--scores") -> dict[str, float]:
    """``"gpqa_diamond=71.2,hle:20.1"`` -> ``{"gpqa_diamond": 71.2, "hle": 20.1}``.

    ``=`` or ``:`` between a benchmark and its score; empty parts are skipped (empty text:
    ``{}``). A benchmark named twice is refused (a dict would keep the last value without
    a word), and so is a value that is not a finite number. `label` names the input in
    the message (``--scores``, ``scores``).

    Raises
    ------
    UsageError
        One line naming the part that broke the rule.

    >>> parse_scores("gpqa_diamond=71.2, hle:20.1")
    {'gpqa_diamond': 71.2, 'hle': 20.1}
    """
    scores: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, *value = (x.strip() for x in re.split(r"[=:]", part, maxsplit=1))
        if not value or not key:
            raise UsageError(f"{label}: {shown(part)} is not BENCHMARK=VALUE "
                             "(e.g. gpqa_diamond=71.2)")
        if key in scores:
            raise UsageError(f"{label} names benchmark '{key}' more than once; give each "
                             "benchmark once")
        try:
            number = float(value[0])
        except ValueError:
            raise UsageError(f"{label}: value of '{key}' is '{value[0]}', not a number") from None
        if not math.isfinite(number):
            raise UsageError(f"{label}: value of '{key}' is '{value[0]}', not a finite number")
        scores[key] = number
    return scores
