"""`benchpress` commands run as processes forked from one that imported the CLI once.

A test that runs a command dozens of times as a process (the kill loop) paid Python's start
and the imports of polars, pandera and DuckDB on each run, 0.5-0.8 s, most of the run; a
kill landing then hit an interpreter still importing. Here one helper process (the
"zygote") imports the CLI and the modules named in `preload`, and forks a child per
command: each child is a real process running `benchpress.cli.main` with the given
arguments, its stderr in a file, killed by SIGKILL after `kill_after` seconds when still
running. The zygote kills only its own children that it has not reaped, so a pid is never
signalled after the system could have reused it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

__all__ = ["ForkedCLI"]

_ZYGOTE = r"""
import importlib, json, os, signal, sys, time
from benchpress.cli import main
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        err = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0); os.dup2(null, 1); os.dup2(err, 2)
        code = 1
        try:
            main(job["argv"], prog_name="benchpress")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    done, status = 0, 0
    if job["kill_after"] is not None:
        time.sleep(job["kill_after"])
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:  # not reaped yet: the pid is still our child's
            os.kill(pid, signal.SIGKILL)
    if not done:
        status = os.waitpid(pid, 0)[1]
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class ForkedCLI:
    """A zygote in ``cwd`` with ``preload`` (module names) imported; `run` one command at a
    time. Use as a context manager (the zygote ends when it closes)."""

    def __init__(self, cwd: Path, preload: tuple[str, ...] = ()):
        self.proc = subprocess.Popen([sys.executable, "-c", _ZYGOTE, json.dumps(list(preload))],
                                     cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        if self.proc.stdout.readline().strip() != "ready":  # imported: runs time commands only
            raise RuntimeError(f"the CLI zygote did not start (exit {self.proc.wait()})")

    def run(self, argv: list[str], err_file: Path, kill_after: float | None = None
            ) -> tuple[int, str]:
        """Run ``benchpress argv`` in a forked child: ``(exit code, stderr)``, the exit code
        ``-9`` when it was killed. Waits for the child to end."""
        self.proc.stdin.write(json.dumps({"argv": argv, "stderr": str(err_file),
                                          "kill_after": kill_after}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the CLI zygote ended (exit {self.proc.wait()})")
        return int(line), Path(err_file).read_text(encoding="utf-8", errors="replace")

    def __enter__(self) -> "ForkedCLI":
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
