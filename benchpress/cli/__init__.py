"""The `benchpress` command line: parses, calls one library function, renders."""

from __future__ import annotations

import click

from benchpress import __version__
from benchpress.cli import predict_cmds, registry_cmds
from benchpress.cli import snapshot_cmds
from benchpress.cli import probe_cmds
from benchpress.cli import trust_cmds

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchpress")
def main():
    """BenchPress Registry: cited LLM benchmark scores, SQL over them, and a rank-2
    predictor for the scores nobody has measured yet."""


for command in registry_cmds.COMMANDS + predict_cmds.COMMANDS:
    main.add_command(command)
for command in snapshot_cmds.COMMANDS:
    main.add_command(command)
for command in probe_cmds.COMMANDS:
    main.add_command(command)
for command in trust_cmds.COMMANDS:
    main.add_command(command)
