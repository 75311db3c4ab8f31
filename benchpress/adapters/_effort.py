"""Reasoning effort, as leaderboards name it: the effort levels and thinking budgets.

Shared by the adapters (Aider, LiveBench) and `benchpress.validate.model_identity`.
"""

from __future__ import annotations

import re

__all__ = ["EFFORT_LEVELS", "LEVEL_PATTERN", "thinking_budget"]

EFFORT_LEVELS = ("minimal", "low", "medium", "high", "xhigh", "max")
# a regex group matching one level
LEVEL_PATTERN = "(" + "|".join(EFFORT_LEVELS) + ")"


def thinking_budget(tokens) -> str | None:
    """A thinking budget written as thousands of tokens, None when `tokens` is not one.

    >>> [thinking_budget(t) for t in ("32k", 32768, "16000", "n/a")]
    ['32k', '32k', '16k', None]
    """
    text = str(tokens).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?k", text):
        return text
    if text.isdigit():
        n = int(text)
        return f"{n // 1024}k" if n % 1024 == 0 else f"{round(n / 1000)}k"
    return None
