"""Exceptions raised by the library; the CLI turns them into one-line messages."""

__all__ = [
    "BenchPressError",
    "BadInputError",
    "UnknownFormatError",
    "FetchError",
    "RegistryError",
    "SnapshotNotFound",
    "NotFittedError",
    "UsageError",
]


class BenchPressError(Exception):
    """Base class for every error the library raises on purpose."""


class BadInputError(BenchPressError):
    """An input file or value breaks a contract (names the file, row and field)."""


class UnknownFormatError(BadInputError):
    """No adapter recognises the file."""


class FetchError(BenchPressError):
    """A download failed, was too large, or did not match its pinned hash."""


class RegistryError(BenchPressError):
    """The registry is missing, locked or inconsistent."""


class SnapshotNotFound(RegistryError):
    """No snapshot matches the given id or tag."""


class NotFittedError(BenchPressError):
    """A predictor was used before `fit`."""


class UsageError(BenchPressError):
    """Arguments that do not fit together."""
