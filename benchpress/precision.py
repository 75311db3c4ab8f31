"""The precision of the figures the pipeline keeps: metrics files, plot data, drift reports.

A fit's figures move in their 15th-16th significant digit from one CPU to another (OpenBLAS
picks its kernels per CPU), so written at full precision the files kept in git, and their
md5 in dvc.lock, would differ on every machine. Four significant digits is more than any of
them means (a median error of 3.918 points, a coverage of 0.9012) and the same everywhere.
The commands still print full precision; only the files written for the pipeline are rounded.

>>> rounded({"medae": 3.9176391728040123, "n_cells": 2604, "fill": 0.23308270676691728,
...          "per_pair": [{"coverage": 0.7777777777777778}], "alarm": False, "tiny": 1.23456e-7})
{'medae': 3.918, 'n_cells': 2604, 'fill': 0.2331, 'per_pair': [{'coverage': 0.7778}], 'alarm': False, 'tiny': 1.235e-07}
"""

from __future__ import annotations

import math

__all__ = ["SIGNIFICANT", "rounded"]

SIGNIFICANT = 4


def rounded(value, significant: int = SIGNIFICANT):
    """`value` with every float (in dicts, lists and tuples, recursively) rounded to
    `significant` significant digits; integers, strings, None, NaN and infinities as they
    are."""
    if isinstance(value, float):
        if value == 0 or not math.isfinite(value):
            return value
        return float(f"{value:.{significant - 1}e}")
    if isinstance(value, dict):
        return {k: rounded(v, significant) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, significant) for v in value]
    return value
