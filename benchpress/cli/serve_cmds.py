"""`benchpress serve`: the local web app (see `benchpress.app`)."""

from __future__ import annotations

import ipaddress
import logging

import click

from benchpress.cli.common import handle_errors, home_option, split_list, stderr
from benchpress.cli.fit_options import method_choice

__all__ = ["serve", "forwarding"]


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
@click.option("--proxy", "proxies", multiple=True, metavar="ADDRESS",
              help="The address of a reverse proxy in front of the app (repeatable): only "
                   "its X-Forwarded-For / X-Forwarded-Proto headers are believed. Off by "
                   "default: no forwarding header is trusted, from any peer.")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port).")
@click.option("--snapshot", default=None, help="Snapshot id, tag or 'latest' (default: live registry).")
@click.option("--sources", default=None, help="Fit on these sources only, e.g. 'benchpress,epoch'.")
@click.option("--method", default="default", show_default=True, **method_choice("Predictor."))
@home_option
@handle_errors
def serve(host, port, allow_hosts, proxies, snapshot, sources, method, home):
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
    uvicorn.run(app, host=host, port=port, log_level="warning", **forwarding(proxies))


def forwarding(proxies) -> dict:
    """uvicorn's settings for forwarding headers: none believed (uvicorn's own default
    believes them from loopback peers, so any local page's request could name its peer),
    unless `proxies` names the proxies whose headers are."""
    proxies = [p.strip() for p in proxies if p.strip()]
    if not proxies:
        return {"proxy_headers": False, "forwarded_allow_ips": ""}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(proxies)}
