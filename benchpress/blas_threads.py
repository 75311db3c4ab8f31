"""Run the predictor's many small matrix products on one BLAS thread.

The ALS sweeps multiply (84 x 133)-sized matrices thousands of times. OpenBLAS spreads
each product over all cores, which gains little at this size and is very slow when the
cores are busy with other work (10x slower measured on a loaded 2-core machine).
:func:`single_blas_thread` sets OpenBLAS (as bundled with numpy) to one thread for the
duration of a block and restores the previous count. If the library or its symbols are
not found (another BLAS, another platform) it does nothing.
"""

from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager

import numpy as np

__all__ = ["single_blas_thread"]

_API: tuple | None = None
_DEPTH = 0


def _find_api():
    global _API
    if _API is not None:
        return _API if _API else None
    libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    pairs = [("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
             ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
             ("openblas_get_num_threads", "openblas_set_num_threads")]
    for path in sorted(glob.glob(os.path.join(libdir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in pairs:
            get = getattr(lib, get_name, None)
            put = getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype = ctypes.c_int
                put.argtypes = [ctypes.c_int]
                _API = (get, put)
                return _API
    _API = ()
    return None


@contextmanager
def single_blas_thread():
    """Context manager: OpenBLAS uses one thread inside the block (re-entrant)."""
    global _DEPTH
    api = _find_api() if _DEPTH == 0 else None
    previous = None
    if api is not None:
        try:
            previous = int(api[0]())
            api[1](1)
        except Exception:  # pragma: no cover - exotic BLAS builds
            previous = None
    _DEPTH += 1
    try:
        yield
    finally:
        _DEPTH -= 1
        if api is not None and previous is not None:
            api[1](previous)
