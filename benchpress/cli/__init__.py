"""The `benchpress` command line: parses, calls one library function, renders.

Commands load on first use (a registry query never imports the predictor), so that
`benchpress sql ...` starts fast.
"""

from __future__ import annotations

import errno
import importlib
import os
import signal

import click

from benchpress import __version__
from benchpress.errors import EXIT_BAD_INPUT, as_os_error, describe_os_error, missing_extra

__all__ = ["main", "start_command"]

#: polars' bundled jemalloc gives freed memory back to the system at once instead of keeping
#: it reserved (loading a 100k-model registry otherwise leaves ~3 GB of address space
#: reserved, which counts against an address-space cap). Read when polars loads.
ALLOCATOR_SETTING = ("_RJEM_MALLOC_CONF", "retain:false,dirty_decay_ms:0,muzzy_decay_ms:0")


def start_command() -> None:
    """What a command sets in its own process before it runs, where it starts (the CLI's
    `main`, `python -m benchpress.app`): :data:`ALLOCATOR_SETTING`, unless the environment
    sets it already, before polars loads. Importing the package sets nothing."""
    os.environ.setdefault(*ALLOCATOR_SETTING)

# command name -> module that defines it (the module's function of the same name,
# with "-" read as "_"; `list` and friends are click groups)
COMMANDS = {
    **dict.fromkeys(["init", "ingest", "build", "pull", "add-model", "aliases", "sql", "summary"],
                    "registry_cmds"),
    **dict.fromkeys(["snapshot", "diff", "stats"], "snapshot_cmds"),
    **dict.fromkeys(["predict", "complete", "evaluate", "rank"], "predict_cmds"),
    **dict.fromkeys(["probes", "backtest", "compare", "ranking"], "probe_cmds"),
    **dict.fromkeys(["intervals", "drift", "report"], "trust_cmds"),
    "serve": "serve_cmds",
    "fit": "fit_cmds",
    "identity": "identity_cmds",
    **dict.fromkeys(["replay", "forecasts"], "replay_cmds"),
    "suspects": "suspects_cmds",
}


class OneLineUsageError(click.UsageError):
    """A click usage error shown as one line, ``Error: ...`` (exit 2), without the usage
    block and the ``Try ... --help`` hint."""

    def show(self, file=None) -> None:
        click.echo(f"Error: {one_line(self.format_message())}", err=True)


def one_line(text: str) -> str:
    """Collapse a message onto one line (click's messages may hold line breaks)."""
    return " ".join(str(text).split())


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when one is run (or help is shown)."""

    def main(self, *args, **kwargs):
        start_command()  # before a command's module loads polars
        return super().main(*args, **kwargs)

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        try:
            module = importlib.import_module(f"benchpress.cli.{COMMANDS[name]}")
        except ImportError as exc:
            missing = missing_extra(exc)
            if missing is None:
                raise
            return _needs_extra(name, missing)
        return getattr(module, name.replace("-", "_"))

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _one_line(exc) from None

    def invoke(self, ctx):
        """Run the command; a usage error of click becomes one line (exit 2); a fault of the
        file system (disk full, file size limit, read-only or forbidden folder) one line
        naming the path (exit 1); any other exception one line saying it is a bug (exit 1;
        BENCHPRESS_DEBUG=1 shows the traceback)."""
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C: writes are atomic, so nothing half-done is kept
            click.echo("Error: interrupted; nothing half-written was kept", err=True)
            ctx.exit(130)
        except Exception as exc:  # noqa: BLE001 (the last line of defence: no tracebacks)
            fault = as_os_error(exc)
            if fault is not None and fault.errno == errno.EPIPE:  # click handles a closed pipe
                raise
            if fault is None and os.environ.get("BENCHPRESS_DEBUG"):
                raise
            missing = missing_extra(exc)
            if missing is not None:  # an optional dependency imported by the command itself
                click.echo(f"Error: {missing}", err=True)
                ctx.exit(EXIT_BAD_INPUT)
            message = (describe_os_error(fault) if fault is not None else
                       f"internal error ({type(exc).__name__}: {exc}); please report it "
                       "(BENCHPRESS_DEBUG=1 shows the traceback)")
            click.echo(f"Error: {one_line(message)}", err=True)
            ctx.exit(EXIT_BAD_INPUT)


def _needs_extra(name: str, missing: Exception) -> click.Command:
    """Stands in for command `name` when its module needs an extra that is not installed:
    listed in `benchpress --help`, and run (with any arguments) it says which extra to
    install, in one line (exit 1)."""
    def refuse():
        click.echo(f"Error: benchpress {name}: {missing}", err=True)
        raise click.exceptions.Exit(EXIT_BAD_INPUT)
    return click.Command(name, callback=refuse, add_help_option=False,
                         help=f"(not installed: {str(missing).split(': ', 1)[-1]})",
                         context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True})


def _one_line(exc: click.UsageError) -> click.UsageError:
    """``exc`` as one line; a bare group (``benchpress``, ``benchpress snapshot``) keeps
    click's help page."""
    if isinstance(exc, (OneLineUsageError, getattr(click.exceptions, "NoArgsIsHelpError", ()))):
        return exc
    return OneLineUsageError(exc.format_message(), ctx=exc.ctx)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchpress")
def main():
    """BenchPress Registry: cited LLM benchmark scores, SQL over them, and a rank-2
    predictor for the scores nobody has measured yet."""
    if hasattr(signal, "SIGXFSZ"):  # over a file size limit: EFBIG (one line), not a core dump
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
