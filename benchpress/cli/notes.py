"""Notes for people on stderr: wrapped to the terminal's width, and the standing ones (a
table's legend, which fit answers) said once per session, not before every table.

A session is the terminal's: the POSIX session id (`os.getsid`) that every command typed in
one terminal window shares, for at most `SESSION_HOURS`. A note said in a project (a home
with `sources/` and `schemas/`) is remembered in `<home>/.cache/notes.json` by the sha256 of
its text, with the session and the time; the same text in the same session is not said
again (another text, another terminal or a day later, it is). Outside a project nothing is
written and every note is said. `BENCHPRESS_NOTES=always` says every note every time (for
logs), `never` none. Notes about this answer (a contradicted score, columns left out) are
always said: they use `say`, the standing ones `say_once`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from benchpress.cli.common import stderr, wrapped
from benchpress.store.tables import write_atomic

__all__ = ["say", "say_once", "NOTES_ENV", "SESSION_HOURS"]

NOTES_ENV = "BENCHPRESS_NOTES"  # "once" (default), "always" or "never"
SESSION_HOURS = 12.0  # a terminal left open longer is a new session
_KEPT = 200  # notes remembered at most (the oldest are forgotten)


def say(text: str) -> None:
    """Print `text` on stderr, wrapped to the terminal's width (unless notes are off)."""
    if os.environ.get(NOTES_ENV, "").strip().lower() == "never":
        return
    stderr.print(wrapped(text), markup=False, highlight=False, soft_wrap=True)


def _session() -> int:
    try:
        return os.getsid(0)
    except (AttributeError, OSError):  # no POSIX sessions: the parent process stands in
        return os.getppid()


def _marker(home) -> "os.PathLike | None":
    root = getattr(home, "root", None)
    if root is None or not (root / "sources").is_dir() or not (root / "schemas").is_dir():
        return None
    return root / ".cache" / "notes.json"


def say_once(text: str, home) -> None:
    """`say(text)` unless this session already saw it in this home (module docstring)."""
    mode = os.environ.get(NOTES_ENV, "").strip().lower()
    marker = None if mode == "always" else _marker(home)
    if marker is None or mode == "never":
        say(text)
        return
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    now, session = time.time(), _session()
    try:
        seen = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() else {}
        if not isinstance(seen, dict):
            seen = {}
    except (OSError, ValueError):
        seen = {}
    last = seen.get(key)
    if (isinstance(last, dict) and last.get("session") == session
            and now - float(last.get("at", 0)) < SESSION_HOURS * 3600):
        return
    say(text)
    seen[key] = {"session": session, "at": now}
    newest = sorted(seen.items(), key=lambda kv: -float(kv[1].get("at", 0))
                    if isinstance(kv[1], dict) else 0)[:_KEPT]
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(marker, lambda tmp: tmp.write_text(json.dumps(dict(newest)),
                                                         encoding="utf-8"))
    except OSError:  # a read-only home: the note is said again next time
        pass
