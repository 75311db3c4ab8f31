"""The README's fenced code blocks, each marked with the install it runs on, and how to run
them (tests/test_readme_blocks.py; the core-install ones in tests/test_package.py, which has
the clean venv).

Every fenced block of README.md sits under one marker line, ``<!-- readme-test: KIND ARG
-->``:

- ``core``: runs on the core install (``pip install benchpress-llm``, a clean venv with the
  wheel): a ``console`` block's ``$ ...`` commands, each output compared with what the block
  shows (a ``...`` line stands for any lines); a ``python`` block as a doctest;
- ``registry``: a ``bash`` block whose commands run one by one with the ``[registry]``
  install (this environment) in a small built workspace;
- ``pip``: ``pip install`` lines; checked: they name this distribution and extras it has
  (the install itself is what tests/test_package.py does with the wheel, offline);
- ``make``: ``make TARGET`` lines; checked: each is a target of the Makefile;
- ``covered-by FILE::TEST``: run by that test; checked: the test exists.

Every output line a command prints (stdout and stderr) must fit 80 columns.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
KINDS = ("core", "registry", "pip", "make", "covered-by")
COLUMNS = 80
MARKER = re.compile(r"^<!-- readme-test: (?P<kind>[\w-]+)(?: (?P<arg>[^\n]*?))? -->\n"
                    r"```(?P<lang>\w*)\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.S | re.M)

__all__ = ["Block", "blocks", "unmarked_blocks", "commands", "console_steps", "run_console",
           "too_wide", "matches"]


@dataclass(frozen=True)
class Block:
    kind: str
    arg: str | None
    lang: str
    body: str
    line: int  # the fence's line in the README (1-based)

    def where(self) -> str:
        return f"README.md line {self.line} ({self.kind} {self.lang} block)"


def blocks(text: str | None = None) -> list[Block]:
    text = README.read_text(encoding="utf-8") if text is None else text
    return [Block(m["kind"], m["arg"], m["lang"], m["body"],
                  text.count("\n", 0, m.start("lang")) + 1)
            for m in MARKER.finditer(text)]


def unmarked_blocks(text: str | None = None) -> list[int]:
    """Lines of the fenced blocks that have no marker line right above them."""
    text = README.read_text(encoding="utf-8") if text is None else text
    marked = {b.line for b in blocks(text)}
    return [line for m in FENCE.finditer(text)
            if (line := text.count("\n", 0, m.start()) + 1) not in marked]


def commands(body: str) -> list[str]:
    """The commands of a shell block: comment lines dropped, `\\` continuations joined (a
    comment after a command stays: bash ignores it, `shlex.split(cmd, comments=True)` too).

    >>> commands('# set up\\nmake main   # all of it\\nfoo --a 1 \\\\\\n    --b "x # y"\\n')
    ['make main   # all of it', 'foo --a 1 --b "x # y"']
    """
    out, pending = [], ""
    for line in body.splitlines():
        if not pending and not line.strip() or line.lstrip().startswith("#"):
            continue
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        pending = ""
        out.append(line)
    return out


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """A console block as (command, the output lines it shows).

    >>> console_steps('$ a \\\\\\n    --b\\nout 1\\nout 2\\n$ c\\n')
    [('a --b', ['out 1', 'out 2']), ('c', [])]
    """
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            raise ValueError(f"console block line {i + 1} is output before any command: {line!r}")
        cmd = line[2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i].rstrip())
            i += 1
        steps.append((cmd, shown))
    return steps


def matches(shown: list[str], got: list[str]) -> bool:
    """Whether the output lines `got` are what a block `shows`; a line `...` stands for any
    number of lines; trailing spaces and blank lines at the end do not count.

    >>> matches(['a', '...', 'z'], ['a', 'b', 'c', 'z'])
    True
    >>> matches(['a', 'z'], ['a', 'b'])
    False
    """
    shown = _trim(shown)
    got = _trim(got)
    pattern = "\n".join(".*?" if line == "..." else re.escape(line) for line in shown)
    return re.fullmatch(pattern, "\n".join(got), re.S) is not None


def _trim(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def too_wide(text: str, columns: int = COLUMNS) -> list[str]:
    """The lines of `text` wider than `columns` characters."""
    return [line for line in text.splitlines() if len(line) > columns]


def run_console(cmd: str, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    """One command as a user types it (a shell line), at 80 columns."""
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env={**env, "COLUMNS": str(COLUMNS)},
                          capture_output=True, text=True, timeout=timeout)
