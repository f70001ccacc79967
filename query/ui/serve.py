"""Run the dashboard: bind, print the one-time URL, open the browser, serve until Ctrl-C."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vq.core.errors import VqError
from vq.query.http_guard import allowed_hosts, bracket, is_loopback, listen
from vq.query.ui.context import UiContext

LOOPBACK = "127.0.0.1"


@dataclass
class Bound:
    """A listening socket and what the guard needs to know about it."""

    sock: socket.socket
    host: str
    port: int
    hosts: frozenset[str]

    def url(self, token: str) -> str:
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "::") else bracket(self.host)
        return f"http://{shown}:{self.port}/?token={token}"


def bind(host: str = LOOPBACK, port: int = 0, allow_remote: bool = False,
         extra_hosts: tuple[str, ...] = ()) -> Bound:
    """Listen on ``host:port`` (0: any free port). Beyond loopback only with
    ``allow_remote``: the dashboard edits the config and reads indexed files."""
    host = host.strip("[]") or LOOPBACK
    if not is_loopback(host) and not allow_remote:
        raise VqError(f"--host {host} is beyond this machine: anyone who can reach it and "
                      "has the URL could read your indexed files and change your config",
                      "keep the default 127.0.0.1, or pass --allow-remote if you mean it")
    sock = listen(host, port, "vq ui --port {port}")
    sock.listen(64)
    port = sock.getsockname()[1]
    return Bound(sock, host, port, allowed_hosts(host, port, extra_hosts))


def new_token() -> str:
    return secrets.token_urlsafe(32)


def server(ctx: UiContext, bound: Bound) -> Any:
    """A uvicorn server for the app on ``bound`` (``.run(sockets=[bound.sock])``)."""
    import uvicorn

    from vq.query.http_limits import ConnectionLimits, guarded_protocol
    from vq.query.ui.app import create_app

    limits = ConnectionLimits()  # `vq mcp --http`'s caps: a pre-auth flood cannot starve it
    config = uvicorn.Config(create_app(ctx, bound.hosts), log_level="warning",
                            timeout_graceful_shutdown=2, lifespan="off",
                            http=guarded_protocol(limits), limit_concurrency=limits.total)
    return uvicorn.Server(config)


def serve(ctx: UiContext, bound: Bound, announce: Callable[[str], None],
          open_browser: bool) -> None:
    """Serve until Ctrl-C; ``announce`` gets the URL (with its token) to print."""
    url = bound.url(ctx.token)
    announce(url)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    server(ctx, bound).run(sockets=[bound.sock])
