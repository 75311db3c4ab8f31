"""BenchPress Registry: cited LLM benchmark scores and a rank-2 score predictor."""

import os as _os

from benchpress.version import __version__

# polars' bundled jemalloc: give freed memory back to the system at once instead of keeping
# it reserved (loading a 100k-model registry otherwise leaves ~3 GB of address space
# reserved, which counts against an address-space cap). Set before polars loads.
_os.environ.setdefault("_RJEM_MALLOC_CONF", "retain:false,dirty_decay_ms:0,muzzy_decay_ms:0")

__all__ = ["BenchPress", "__version__"]


def __getattr__(name):
    # The API pulls in the store and the predictor; import it only when asked for.
    if name == "BenchPress":
        from benchpress.api import BenchPress

        return BenchPress
    raise AttributeError(name)
