"""Model identity: split a model name into family, version date and effort, before any matching.

Leaderboards name one model many ways: ``o3-2025-04-16_high`` (Epoch), ``o3 (high)`` (Aider),
``claude-4-1-opus-20250805-thinking-32k`` (LiveBench), ``claude-opus-4.1`` (vendor matrices).
`parse_model` reads the parts every one of them spells differently:

- **family**: the model without date or effort, with Claude's version order made uniform
  (``claude-3-7-sonnet`` -> ``claude-3.7-sonnet``, ``claude-4-1-opus`` -> ``claude-opus-4.1``);
- **version_date**: a pinned snapshot: ``2025-04-16`` (from ``20250416`` or ``2025-04-16``),
  ``2025-07`` (from a year-month tag such as Mistral's ``2507`` or ``09-2025``) or ``--06-05``
  (ISO 8601's month-day form, from ``0605`` or ``06-05``: the year is not stated);
- **effort**: the reasoning effort (``minimal`` .. ``xhigh``, ``max``), a thinking budget
  (``thinking-32k``), plain ``thinking`` or ``no-thinking``; combined as ``high+thinking-64k``.

The rules are deterministic and only *describe* a row: ids are never rewritten from them, so
different efforts of one model stay different rows unless the alias table says otherwise.
Fuzzy matching (`benchpress aliases suggest`) compares these fields, not raw strings.

>>> parse_model("o3-2025-04-16_high")
ModelIdentity(family='o3', version_date='2025-04-16', effort='high')
>>> parse_model("claude-3-7-sonnet-20250219 (32k thinking tokens)")
ModelIdentity(family='claude-3.7-sonnet', version_date='2025-02-19', effort='thinking-32k')
>>> parse_model("claude-opus-4-5-20251101-thinking-64k-high-effort").effort
'high+thinking-64k'
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from dataclasses import dataclass

from benchpress.adapters._effort import EFFORT_LEVELS, LEVEL_PATTERN, thinking_budget
from benchpress.validate.normalize import canonical_model_id

__all__ = ["ModelIdentity", "parse_model", "effort_from_setting", "EFFORT_LEVELS"]

_BUDGET = r"(\d+(?:\.\d+)?k)"
_END = r"(?=-|$)"

# (pattern, what it sets); applied in order, each match removed from the name
_EFFORT_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"-(?:no-?thinking|no-?think|non-?reasoning|thinking-off|nothink)" + _END), "off"),
    (re.compile(r"-default-effort$"), "default"),
    (re.compile(r"-thinking-" + _BUDGET + _END), "budget"),
    (re.compile(r"-(\d+(?:\.\d+)?k|\d{4,6})-think(?:ing)?(?:-tokens?)?" + _END), "budget"),
    (re.compile(r"(?<=\d{8})-base$"), "off"),  # LiveBench: claude-...-20250805-base
    (re.compile(r"-" + LEVEL_PATTERN + r"-?(?:reasoning-)?effort" + _END), "level"),
    (re.compile(r"-(?:reasoning-)?effort-" + LEVEL_PATTERN + _END), "level"),
    (re.compile(r"-" + LEVEL_PATTERN + r"-?thinking" + _END), "level+on"),
    (re.compile(r"-(?:default|auto)-think(?:ing)?" + _END), "on"),
    (re.compile(r"-thinking(?:-auto)?" + _END), "on"),
    (re.compile(r"-reasoning" + _END), "on"),
    # a bare trailing level; not "max", which names models (qwen3-max, gpt-5.1-codex-max)
    (re.compile(r"-(minimal|low|medium|high|xhigh)$"), "level"),
    (re.compile(r"-(\d+k)$"), "budget"),  # Epoch's thinking budgets: claude-..._16K
]
_DATE_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"-(20\d\d)-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])" + _END), "ymd"),
    (re.compile(r"-(0[1-9]|1[0-2])-(20\d\d)" + _END), "my"),
    (re.compile(r"-(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])" + _END), "md"),
    (re.compile(r"-(2[3-9])(0[1-9]|1[0-2])" + _END), "ym"),
]
_CLAUDE_TIERS = "opus|sonnet|haiku"


@dataclass(frozen=True)
class ModelIdentity:
    """What a model name says about itself; every field may be None."""

    family: str | None
    version_date: str | None = None
    effort: str | None = None


def _normalize(raw: str) -> str:
    """The canonical id (see `normalize.canonical_model_id`) with "+" read as "-", led by
    "-" so that every suffix rule can anchor on a dash."""
    text = (canonical_model_id(raw) or "").replace("+", "-")
    return "-" + re.sub(r"-{2,}", "-", text).strip("-.")


def _claude_family(family: str) -> str:
    m = re.match(rf"^claude-(\d)(?:[.-](\d))?-({_CLAUDE_TIERS})(.*)$", family)
    if m:
        major, minor, tier, rest = m.groups()
        version = f"{major}.{minor}" if minor else major
        return (f"claude-{tier}-{version}" if int(major) >= 4 else f"claude-{version}-{tier}") + rest
    m = re.match(rf"^claude-({_CLAUDE_TIERS})-(\d)-(\d)" + _END + r"(.*)$", family)
    if m:
        tier, major, minor, rest = m.groups()
        return f"claude-{tier}-{major}.{minor}{rest}"
    return family


@lru_cache(maxsize=1 << 16)  # pure; a history repeats the same names version after version
def parse_model(raw: str | None) -> ModelIdentity:
    """Family, version date and effort of a model name or id (see the module docstring)."""
    if raw is None or not raw.strip():
        return ModelIdentity(None)
    text = _normalize(raw)
    level, thinking = None, None
    for pattern, kind in _EFFORT_RULES:
        m = pattern.search(text)
        if not m:
            continue
        if kind == "off":
            thinking = thinking or "no-thinking"
        elif kind == "budget":
            thinking = f"thinking-{thinking_budget(m.group(1))}"
        elif kind == "default":
            level = level or "default"
        elif kind == "on":
            thinking = thinking or "thinking"
        else:
            level = level or m.group(1)
            if kind == "level+on":
                thinking = thinking or "thinking"
        text = text[: m.start()] + text[m.end():]
    date = None
    for pattern, kind in _DATE_RULES:
        m = pattern.search(text)
        if not m or len(text[: m.start()]) < 2:  # never eat the whole name
            continue
        g = m.groups()
        date = {"ymd": lambda: f"{g[0]}-{g[1]}-{g[2]}", "my": lambda: f"{g[1]}-{g[0]}",
                "md": lambda: f"--{g[0]}-{g[1]}", "ym": lambda: f"20{g[0]}-{g[1]}"}[kind]()
        text = text[: m.start()] + text[m.end():]
        break
    family = _claude_family(text.strip("-.")) or None
    if level and thinking == "thinking":
        effort = level
    elif level and thinking:
        effort = f"{level}+{thinking}"
    else:
        effort = level or thinking
    return ModelIdentity(family, date, effort)


def effort_from_setting(setting: str | None) -> str | None:
    """The effort level a source's setting JSON states, if it is one of `EFFORT_LEVELS`.

    >>> effort_from_setting('{"effort": "high (default)", "mode": "thinking"}')
    'high'
    >>> effort_from_setting('{"effort": "n/a"}') is None
    True
    """
    if not setting:
        return None
    try:
        doc = json.loads(setting)
    except (TypeError, ValueError):
        return None
    value = doc.get("effort") if isinstance(doc, dict) else None
    if not isinstance(value, str):
        return None
    m = re.match(r"^\s*" + LEVEL_PATTERN + r"\b", value.lower())
    return m.group(1) if m else None
