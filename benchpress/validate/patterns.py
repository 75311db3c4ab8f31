"""Regular expressions from contract files, compiled only when their matching time is bounded.

A maintainer's pattern (`schemas/vendor_urls.csv`, `url_source_types.csv`, `scales.yaml`'s
metric patterns) runs against every URL and label of every build; Python's `re`
backtracks, so one pattern such as ``^(a+)+$`` could hang a build on one long URL. A
pattern is accepted when its parse tree shows none of the shapes whose backtracking grows
faster than a polynomial of low degree in the text's length:

* a repeat inside a repeat, unless the inner one is followed by a required character it
  cannot match (``([a-z0-9-]+\\.)*`` is fine: every ``.`` ends the inner repeat);
* alternatives inside a repeat that can start with the same character (``(a|ab)*``);
* a back-reference inside a repeat;
* more than :data:`MAX_OPEN_REPEATS` unbounded repeats in all (each adds a degree);

and the text it is matched against is cut to :data:`MAX_TEXT_CHARS` (`bounded_text`).
"""

from __future__ import annotations

import functools
import re

try:  # Python 3.11+
    from re import _constants as _c, _parser as _sre
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _c
    import sre_parse as _sre

__all__ = ["compile_pattern", "bounded_text", "MAX_PATTERN_CHARS", "MAX_TEXT_CHARS",
           "MAX_OPEN_REPEATS"]

MAX_PATTERN_CHARS = 500
MAX_TEXT_CHARS = 2048
MAX_OPEN_REPEATS = 3
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
_WIDE_RANGE = 512  # a character range wider than this counts as "any character"


def bounded_text(text: str) -> str:
    """`text` cut to the length a contract pattern is matched against."""
    return text[:MAX_TEXT_CHARS]


def compile_pattern(pattern, flags: int = 0) -> re.Pattern:
    """`pattern` compiled, once it is a bounded one (see the module docstring); ValueError
    saying why not.

    >>> compile_pattern(r"^https?://([a-z0-9-]+\\.)*openai\\.com/").pattern[:8]
    '^https?:'
    >>> compile_pattern(r"^(a+)+$")
    Traceback (most recent call last):
    ...
    ValueError: a repeat inside a repeat can backtrack without bound: '^(a+)+$'
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("empty pattern")
    compiled, problem = _checked(pattern, flags)
    if problem:
        raise ValueError(problem)
    return compiled


@functools.lru_cache(maxsize=4096)
def _checked(pattern: str, flags: int) -> tuple[re.Pattern | None, str | None]:
    """(compiled, None) or (None, why not) for `compile_pattern`, once per pattern: every
    build and name resolution reads the same contract files."""
    try:
        return _compile_bounded(pattern, flags), None
    except ValueError as exc:
        return None, str(exc)


def _compile_bounded(pattern: str, flags: int) -> re.Pattern:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"pattern of {len(pattern)} characters (at most {MAX_PATTERN_CHARS})")
    try:
        compiled = re.compile(pattern, flags)
        tree = _sre.parse(pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"not a regular expression ({exc})") from None
    ignore_case = bool(compiled.flags & re.IGNORECASE)
    problem = _problem(list(tree), inside=False, wrap=False, ignore_case=ignore_case)
    if problem is None and _open_repeats(list(tree)) > MAX_OPEN_REPEATS:
        problem = f"more than {MAX_OPEN_REPEATS} unbounded repeats"
    if problem:
        raise ValueError(f"{problem}: {pattern[:80]!r}")
    return compiled


def _open_repeats(items) -> int:
    n = 0
    for op, av in items:
        for sub in _children(op, av):
            n += _open_repeats(sub)
        if op in _REPEATS and av[1] > 1:
            n += 1
    return n


def _children(op, av) -> list:
    """The sub-sequences of a parse-tree node."""
    if op in _REPEATS:
        return [list(av[2])]
    if op is _c.SUBPATTERN:
        return [list(av[3])]
    if op is _c.BRANCH:
        return [list(b) for b in av[1]]
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        return [list(av[1])]
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return [list(av)]
    return []


def _chars(items, ignore_case: bool):
    """The characters a sequence can consume: a set of code points, None for any."""
    out: set[int] = set()
    for op, av in items:
        if op is _c.LITERAL:
            out.add(av)
        elif op is _c.IN:
            if any(o in (_c.NEGATE, _c.CATEGORY) for o, _ in av):
                return None
            for o, a in av:
                if o is _c.LITERAL:
                    out.add(a)
                elif o is _c.RANGE:
                    if a[1] - a[0] > _WIDE_RANGE:
                        return None
                    out.update(range(a[0], a[1] + 1))
        elif op in (_c.ASSERT, _c.ASSERT_NOT, _c.AT):
            continue
        elif op in (_c.ANY, _c.NOT_LITERAL, _c.GROUPREF):
            return None
        else:
            for sub in _children(op, av):
                inner = _chars(sub, ignore_case)
                if inner is None:
                    return None
                out |= inner
    if ignore_case:
        out |= {ord(ch) for c in out for ch in (chr(c).lower(), chr(c).upper()) if len(ch) == 1}
    return out


def _first(items, ignore_case: bool):
    """The characters a sequence can start with (None: any)."""
    out: set[int] = set()
    for op, av in items:
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        head = _chars([(op, av)], ignore_case) if op not in _REPEATS and op is not _c.BRANCH \
            and op is not _c.SUBPATTERN else (
                _first(list(av[2]), ignore_case) if op in _REPEATS else
                _first(list(av[3]), ignore_case) if op is _c.SUBPATTERN else
                _union([_first(list(b), ignore_case) for b in av[1]]))
        if head is None:
            return None
        out |= head
        if not (op in _REPEATS and av[0] == 0):  # a required item ends the start
            return out
    return out


def _nullable(items) -> bool:
    """Whether a sequence can match the empty text."""
    for op, av in items:
        if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        if op in _REPEATS:
            if av[0] == 0 or _nullable(list(av[2])):
                continue
            return False
        if op is _c.SUBPATTERN:
            if _nullable(list(av[3])):
                continue
            return False
        if op is _c.BRANCH:
            if any(_nullable(list(b)) for b in av[1]):
                continue
            return False
        return False
    return True


def _union(sets):
    out: set[int] = set()
    for s in sets:
        if s is None:
            return None
        out |= s
    return out


def _separated(items, k: int, wrap: bool, ignore_case: bool) -> bool:
    """Whether the repeat `items[k]` is always ended by a required character it cannot
    match: the next item (or, at the end of a repeat's body, the body's first)."""
    follower = items[k + 1] if k + 1 < len(items) else (items[0] if wrap and k else None)
    if follower is None or follower[0] not in (_c.LITERAL, _c.IN):
        return False
    inner = _chars(list(items[k][1][2]), ignore_case)
    after = _chars([follower], ignore_case)
    return inner is not None and after is not None and not (inner & after)


def _problem(items, *, inside: bool, wrap: bool, ignore_case: bool) -> str | None:
    for k, (op, av) in enumerate(items):
        if op in _REPEATS:
            unbounded = av[1] > 1
            if unbounded and inside and not _separated(items, k, wrap, ignore_case):
                return "a repeat inside a repeat can backtrack without bound"
            body = list(av[2])
            if len(body) == 1 and body[0][0] is _c.SUBPATTERN:
                body = list(body[0][1][3])
            found = _problem(body, inside=inside or unbounded, wrap=unbounded,
                             ignore_case=ignore_case)
        elif op is _c.BRANCH:
            branches = [list(b) for b in av[1]]
            if inside:
                starts = [_first(b, ignore_case) for b in branches]
                if sum(map(_nullable, branches)) > 1:  # two ways to match nothing
                    return ("alternatives inside a repeat that can start alike "
                            "backtrack without bound")
                for i, a in enumerate(starts):
                    for b in starts[i + 1:]:
                        if a is None or b is None or a & b:
                            return ("alternatives inside a repeat that can start alike "
                                    "backtrack without bound")
            found = next((p for p in (_problem(b, inside=inside, wrap=False,
                                               ignore_case=ignore_case) for b in branches)
                          if p), None)
        elif op is _c.GROUPREF and inside:
            return "a back-reference inside a repeat"
        else:
            found = next((p for p in (_problem(sub, inside=inside, wrap=False,
                                               ignore_case=ignore_case)
                                      for sub in _children(op, av)) if p), None)
        if found:
            return found
    return None
