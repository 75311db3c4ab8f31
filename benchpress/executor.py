"""Where independent pieces of work run: in this process, or on a distributed cluster.

The work that grows with users is a list of independent calls (the folds of an evaluation,
the models a probe search leaves out, the dates of a replay, the sources of a build). Code
that has such a list asks for an executor and maps over it::

    ex = get_executor(spec)            # None or "local": here, in order
    results = ex.map(fit_fold, folds)  # a list, in the order of ``folds``

``map`` always returns results in input order, so the numbers do not depend on where the
work ran. This module imports nothing from the rest of the package's stages, so every stage
may use it.
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["Executor", "LocalExecutor", "get_executor"]


class Executor:
    """Runs ``fn`` over ``items`` and returns the results as a list in input order."""

    #: printable description ("local", or the scheduler address)
    name = "executor"

    def map(self, fn: Callable, items: Iterable) -> list:  # pragma: no cover - interface
        raise NotImplementedError


class LocalExecutor(Executor):
    """Runs everything in this process, one item after the other (the default)."""

    name = "local"

    def map(self, fn: Callable, items: Iterable) -> list:
        return [fn(x) for x in items]


def get_executor(spec: "str | Executor | None" = None) -> Executor:
    """The executor for ``spec``: None or ``"local"`` gives :class:`LocalExecutor`; an
    :class:`Executor` is returned as it is."""
    if spec is None or spec == "local":
        return LocalExecutor()
    if isinstance(spec, Executor):
        return spec
    from benchpress.errors import UsageError

    raise UsageError(f"--executor {spec!r}: only 'local' is available in this build")
