"""`vq mcp`: serve search, status and get to AI assistants over MCP (stdio or HTTP)."""

from __future__ import annotations

import click

from vq.cli.shared import settings_from

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


@click.command()
@click.option("--http", "http", metavar="[HOST:]PORT", default=None,
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio. "
                   f"HOST defaults to {LOOPBACK}. Every request needs the header "
                   "'Authorization: Bearer TOKEN' (see --show-token) and a Host header "
                   "naming this server.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="With --http: also answer requests whose Host header is NAME (a DNS name "
                   "or address clients use to reach this machine; repeatable).")
@click.option("--token-file", type=click.Path(dir_okay=False), default=None,
              help="With --http: the bearer token file (default ~/.config/vq/mcp-token, "
                   "created 0600 on first use). VQ_MCP_TOKEN overrides it.")
@click.option("--show-token", is_flag=True,
              help="Print the HTTP bearer token (creating it if needed) and exit.")
@click.option("--max-connections", type=click.IntRange(min=1), default=128, show_default=True,
              help="With --http: open connections in all; more are closed at once.")
@click.option("--max-per-peer", type=click.IntRange(min=1), default=16, show_default=True,
              help="With --http: open connections from one address.")
@click.option("--header-timeout", type=click.FloatRange(min=0.1), default=10.0,
              show_default=True, metavar="SECONDS",
              help="With --http: close a connection that has not sent a request's "
                   "headers within this time.")
@click.pass_context
def mcp(ctx: click.Context, http: str | None, allow_hosts: tuple[str, ...],
        token_file: str | None, show_token: bool, max_connections: int, max_per_peer: int,
        header_timeout: float) -> None:
    """Serve search to AI assistants over the Model Context Protocol.

    Tools: search (hybrid search with filters), status (counts and freshness),
    get (lines of an indexed file). Read-only: it never builds or writes the
    index and reads only files listed in it. Register it with a client as

    \b
      {"mcpServers": {"vq": {"command": "vq", "args": ["mcp"]}}}

    Over HTTP, give the client the URL and the token header:

    \b
      {"mcpServers": {"vq": {"type": "http", "url": "http://127.0.0.1:8765/mcp",
        "headers": {"Authorization": "Bearer <output of vq mcp --show-token>"}}}}

    and keep the index fresh with `vq build` from cron or `vq schedule`.
    """
    from pathlib import Path

    from vq.query.http_guard import is_loopback
    from vq.query.mcp.http import listen, load_token

    path = Path(token_file).expanduser() if token_file else None
    if show_token:
        click.echo(load_token(path)[0])
        return
    from vq.query.mcp.server import serve

    settings = settings_from(ctx)
    if not http:
        serve(settings)
        return
    host, port = parse_address(http)
    token, where = load_token(path)
    sock = listen(host, port)  # a taken port is an error before any "serving" line
    if not is_loopback(host):
        click.echo(f"warning: serving on {host}: anyone who can reach it and holds the token "
                   "can search the index and read indexed files (HTTP is not encrypted: "
                   "put TLS in front for other machines)", err=True)
    shown_host = f"[{host}]" if ":" in host else host
    click.echo(f"vq mcp: serving http://{shown_host}:{port}/mcp; clients send "
               f"'Authorization: Bearer <token>' (token: {where})", err=True)
    from vq.query.http_limits import ConnectionLimits

    limits = ConnectionLimits(max_connections, max_per_peer, header_timeout)
    serve(settings, (sock, host), token, allow_hosts, limits)
