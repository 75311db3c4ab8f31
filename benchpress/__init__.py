"""BenchPress Registry: cited LLM benchmark scores and a rank-2 score predictor."""

from benchpress.version import __version__

__all__ = ["BenchPress", "__version__"]


def __getattr__(name):
    # The API pulls in the store and the predictor; import it only when asked for.
    if name == "BenchPress":
        from benchpress.api import BenchPress

        return BenchPress
    raise AttributeError(name)
