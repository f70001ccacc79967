"""`vq mcp`: serve search, status and get to AI assistants over MCP (stdio or HTTP)."""

from __future__ import annotations

import ipaddress

import click

from vq.core.cli import settings_from

LOOPBACK = "127.0.0.1"


def parse_address(value: str) -> tuple[str, int]:
    """``PORT``, ``:PORT``, ``HOST:PORT`` or ``[::1]:PORT``; the host defaults to loopback."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r}: expected [HOST:]PORT, e.g. 127.0.0.1:8765",
                                 param_hint="--http")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--http", "http", metavar="[HOST:]PORT", default=None,
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio. "
                   f"HOST defaults to {LOOPBACK}; any other address is reachable from the "
                   "network without authentication.")
@click.pass_context
def mcp(ctx: click.Context, http: str | None) -> None:
    """Serve search to AI assistants over the Model Context Protocol.

    Tools: search (hybrid search with filters), status (counts and freshness),
    get (lines of an indexed file). Read-only: it never builds or writes the
    index and reads only files listed in it. Register it with a client as

    \b
      {"mcpServers": {"vq": {"command": "vq", "args": ["mcp"]}}}

    and keep the index fresh with `vq build` from cron or `vq schedule`.
    """
    from vq.query.mcp_server import serve

    settings = settings_from(ctx)
    address = parse_address(http) if http else None
    if address and not is_loopback(address[0]):
        click.echo(f"warning: serving on {address[0]}: anyone who can reach this address can "
                   "search the index and read indexed files", err=True)
    if address:
        host = f"[{address[0]}]" if ":" in address[0] else address[0]
        click.echo(f"vq mcp: serving http://{host}:{address[1]}/mcp", err=True)
    serve(settings, address)
