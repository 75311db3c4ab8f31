"""YAML read safely, through libyaml where PyYAML was built with it.

``yaml.safe_load`` parses in pure Python: 8 ms for the 2 kB ``scales.yaml``, which every
build reads, against 0.9 ms for the same safe loader in C (``CSafeLoader``). Both refuse
the tags that would build Python objects, so nothing in a data folder runs as code. This
is the one place that picks the loader, and that reads the project's YAML files (source
configs, replay plans, ``scales.yaml``) under a size cap (it imports only `input_limits` and
`errors`, so any layer may use it).

>>> safe_load("a: [1, 2]\\nb: x")
{'a': [1, 2], 'b': 'x'}
>>> safe_load("retrieved_at: 2026-13-45")
Traceback (most recent call last):
...
yaml.constructor.ConstructorError: month must be in 1..12 (a value written as a date must be a real date; quote it to keep it as text)
"""

from __future__ import annotations

from pathlib import Path

import yaml

from benchpress.input_limits import read_capped_text

__all__ = ["safe_load", "read_file", "describe", "line_numbers"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    """The YAML document in ``text`` as Python lists, dicts and scalars (None if empty).

    Raises
    ------
    yaml.YAMLError
        Not YAML; also a value YAML reads as a date that is none (``2026-13-45``, which
        PyYAML's constructor raises as a bare ValueError).
    """
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, in C where built
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(
            problem=f"{exc} (a value written as a date must be a real date; quote it to keep "
                    "it as text)") from None


def read_file(path: Path):
    """`safe_load` of the file at ``path``, refused before it is read when it holds more
    than `InputLimits.max_config_bytes`, or when it is not UTF-8 text.

    Raises
    ------
    BadInputError
        Too large, or not UTF-8 (one line naming the file).
    OSError, yaml.YAMLError
        Unreadable, or not YAML (the caller names what the file should have been).
    """
    return safe_load(read_capped_text(path, "max_config_bytes", "a YAML settings file"))


def describe(exc: Exception) -> str:
    """``exc`` in one line for a message (PyYAML's errors with a position span several).

    >>> try:
    ...     safe_load("a: [1")
    ... except yaml.YAMLError as exc:
    ...     ("\\n" in str(exc), "\\n" in describe(exc))
    (True, False)
    """
    return " ".join(str(exc).split())


def line_numbers(text: str) -> dict[tuple, int]:
    """The line (1-based) where each key and item of the YAML document in ``text`` starts,
    keyed by its path of mapping keys and list indexes, so that a check of the loaded
    document can name the line of the value it refuses.

    >>> line_numbers("a:\\n  - x\\n  - {b: 1}\\n")[("a", 1, "b")]
    3
    """
    lines: dict[tuple, int] = {}

    def walk(node, path: tuple) -> None:
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    lines[(*path, key.value)] = key.start_mark.line + 1
                    walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for k, item in enumerate(node.value):
                walk(item, (*path, k))

    root = yaml.compose(text, Loader=_LOADER)  # noqa: S506 - composes nodes, builds nothing
    if root is not None:
        walk(root, ())
    return lines
