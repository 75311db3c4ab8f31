"""`benchpress serve`: the local web app (see `benchpress.app`)."""

from __future__ import annotations

import ipaddress
import logging

import click

from benchpress.cli.common import handle_errors, home_option, split_list, stderr
from benchpress.predict.methods import available_methods

__all__ = ["serve"]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (loopback by default; the app is read-only).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer requests for this host name (repeatable); the loopback names "
                   "and --host are always allowed, any other Host header gets 403.")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port).")
@click.option("--snapshot", default=None, help="Snapshot id, tag or 'latest' (default: live registry).")
@click.option("--sources", default=None, help="Fit on these sources only, e.g. 'benchpress,epoch'.")
@click.option("--method", default="default", show_default=True,
              type=click.Choice(available_methods()), help="Predictor.")
@home_option
@handle_errors
def serve(host, port, allow_hosts, snapshot, sources, method, home):
    """Open the local web app: predict, compare, browse, diff, SQL (read-only)."""
    import uvicorn

    from benchpress.app import build_state, create_app
    from benchpress.app.guard import allowed_hosts

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not _loopback(host):
        stderr.print(f"warning: binding to {host}: the app is reachable from other machines "
                     "(it is read-only)", markup=False)
    state = build_state(home, snapshot, sources=split_list(sources), method=method)
    stderr.print(f"BenchPress app ready in {state.startup_seconds:.1f} s: "
                 f"http://{host}:{port}/predict", markup=False)
    app = create_app(state, hosts=allowed_hosts(host, allow_hosts))
    uvicorn.run(app, host=host, port=port, log_level="warning")
