"""The `benchpress` command line: parses, calls one library function, renders.

Commands load on first use (a registry query never imports the predictor), so that
`benchpress sql ...` starts fast.
"""

from __future__ import annotations

import errno
import importlib
import signal

import click

from benchpress import __version__
from benchpress.errors import EXIT_BAD_INPUT, as_os_error, describe_os_error

__all__ = ["main"]

# command name -> module that defines it (the module's function of the same name,
# with "-" read as "_"; `list` and friends are click groups)
COMMANDS = {
    **dict.fromkeys(["init", "ingest", "build", "pull", "add-model", "aliases", "sql", "summary"],
                    "registry_cmds"),
    **dict.fromkeys(["snapshot", "diff", "stats"], "snapshot_cmds"),
    **dict.fromkeys(["predict", "complete", "evaluate", "rank"], "predict_cmds"),
    **dict.fromkeys(["probes", "backtest", "compare", "ranking"], "probe_cmds"),
    **dict.fromkeys(["intervals", "drift", "report"], "trust_cmds"),
    **dict.fromkeys(["replay", "forecasts"], "replay_cmds"),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when one is run (or help is shown)."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module = importlib.import_module(f"benchpress.cli.{COMMANDS[name]}")
        return getattr(module, name.replace("-", "_"))

    def invoke(self, ctx):
        """Run the command; a fault of the file system (disk full, file size limit,
        read-only or forbidden folder) becomes one line naming the path, exit 1."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 (only OS faults are translated)
            fault = as_os_error(exc)
            if fault is None or fault.errno == errno.EPIPE:  # click handles a closed pipe
                raise
            click.echo(f"Error: {describe_os_error(fault)}", err=True)
            ctx.exit(EXIT_BAD_INPUT)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchpress")
def main():
    """BenchPress Registry: cited LLM benchmark scores, SQL over them, and a rank-2
    predictor for the scores nobody has measured yet."""
    if hasattr(signal, "SIGXFSZ"):  # over a file size limit: EFBIG (one line), not a core dump
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
