"""Reasoning effort, as leaderboards name it: the effort levels and thinking budgets, and the
settings a name carries in parentheses ("GPT-5.5 (xhigh reasoning)").

Shared by the adapters (Aider, LiveBench, NYT Connections, the spec adapter) and
`benchpress.validate.model_identity`.
"""

from __future__ import annotations

import re

__all__ = ["EFFORT_LEVELS", "LEVEL_PATTERN", "thinking_budget", "setting_in_name"]

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


def _setting(text: str) -> tuple[str, dict]:
    """One parenthesised item: (its spelling in the model id, what it sets)."""
    low = re.sub(r"\s+", " ", text.strip().lower()).replace("extra high", "xhigh")
    if low in ("no reasoning", "non-reasoning", "non reasoning"):
        return "non-reasoning", {"reasoning": False}
    if low in ("reasoning", "thinking"):
        return "reasoning", {"reasoning": True}
    level = re.fullmatch(r"(" + "|".join(EFFORT_LEVELS) + r")(?: reasoning)?", low)
    if level:
        return level.group(1), {"effort": level.group(1), "reasoning": True}
    return text.strip(), {}


def setting_in_name(name: str) -> tuple[str, dict]:
    """(model id text, parsed setting) of a README model name.

    >>> setting_in_name("GPT-5.5 (xhigh reasoning)")
    ('GPT-5.5 (xhigh)', {'effort': 'xhigh', 'reasoning': True})
    >>> setting_in_name("Claude Sonnet 4.5 (no reasoning)")
    ('Claude Sonnet 4.5 (non-reasoning)', {'reasoning': False})
    """
    setting: dict = {}

    def rewrite(m: re.Match) -> str:
        spelled, sets = _setting(m.group(1))
        setting.update(sets)
        return f"({spelled})"

    return re.sub(r"\(([^()]*)\)", rewrite, name.strip()), setting
