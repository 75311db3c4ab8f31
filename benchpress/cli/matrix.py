"""The options of every command that fits the predictor: --snapshot, --sources, --method."""

from __future__ import annotations

import functools

import click

from benchpress.cli.common import handle_errors, home_option, split_list
from benchpress.predict.predictor import available_methods

__all__ = ["matrix_options"]


def matrix_options(f):
    """--snapshot, --sources and --method -> `bp: BenchPress` (fitted lazily)."""
    @click.option("--snapshot", default=None, help="Snapshot id, tag or 'latest' (default: live registry).")
    @click.option("--sources", default=None, help="Use only these sources, e.g. 'benchpress,epoch'.")
    @click.option("--method", default="default", show_default=True,
                  type=click.Choice(available_methods()), help="Predictor.")
    @home_option
    @functools.wraps(f)
    @handle_errors  # loading the matrix can fail before the command body runs
    def wrapper(*args, snapshot, sources, method, home, **kwargs):
        from benchpress.api import BenchPress  # the predictor loads only where it is used

        bp = BenchPress.from_snapshot(home, snapshot, sources=split_list(sources), method=method)
        return f(*args, bp=bp, home=home, **kwargs)
    return wrapper
