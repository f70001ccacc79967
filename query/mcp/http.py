"""`vq mcp --http`: who may talk to the server, checked on every request.

Over stdio only the process that started vq can reach it. Over HTTP anyone who
can open the port could search the index and read every indexed file, even
files their own permissions forbid; a web page could too, by DNS rebinding. So
every HTTP request must carry

* ``Authorization: Bearer <token>``: the token comes from ``VQ_MCP_TOKEN``, or
  from a file (default ``~/.config/vq/mcp-token``) generated with mode 0600 on
  first use and refused when others can read it;
* a ``Host`` header naming this server (the bind address and port; for a
  wildcard bind, this machine's names and addresses; plus ``--allow-host``);
* no ``Origin``, or one naming such a host (``vq.query.http_guard``, shared with
  `vq ui`).

Checked before the MCP SDK sees the request, whatever the bind address.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vq.core import paths
from vq.core.errors import VqError
from vq.query.http_guard import allowed_hosts, header_map, host_refusal
from vq.query.http_guard import listen as bind_socket
from vq.query.http_limits import ConnectionLimits

TOKEN_ENV = "VQ_MCP_TOKEN"
MIN_TOKEN_CHARS = 16


def default_token_file() -> Path:
    return paths.user_config_dir() / "mcp-token"


def load_token(token_file: Path | None = None) -> tuple[str, str]:
    """(token, where it came from): the environment, else the file (created if absent)."""
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        if len(env) < MIN_TOKEN_CHARS:
            raise VqError(f"{TOKEN_ENV} is shorter than {MIN_TOKEN_CHARS} characters",
                          'use a long random value, e.g. `python -c "import secrets; '
                          'print(secrets.token_urlsafe(32))"`')
        return env, f"env {TOKEN_ENV}"
    path = token_file or default_token_file()
    _create_token_file(path)
    _check_private(path)
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise VqError(f"the token in {path} is shorter than {MIN_TOKEN_CHARS} characters",
                      f"delete {path}: the next `vq mcp --http` writes a new one")
    return token, str(path)


def _create_token_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secrets.token_urlsafe(32) + "\n")


def _check_private(path: Path) -> None:
    st = path.stat()
    if st.st_mode & 0o077:
        raise VqError(f"{path} can be read by other users (mode {stat.filemode(st.st_mode)})",
                      f"chmod 600 {path} (and, since others may have read it, delete it so a "
                      "new token is made)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise VqError(f"{path} belongs to another user", "delete it, or set VQ_MCP_TOKEN")


class RequestGuard:
    """Pure ASGI middleware: Host, then Origin, then the bearer token, on every HTTP
    request; anything else (lifespan) passes. Refusals never reach the MCP app."""

    def __init__(self, app: Any, token: str, hosts: frozenset[str]) -> None:
        self.app, self.token, self.hosts = app, token.encode(), hosts

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        headers = header_map(scope)
        refused = host_refusal(headers, self.hosts)
        if refused is not None:
            return refused
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(),
                                                                 self.token):
            return 401, "missing or wrong bearer token (send Authorization: Bearer <token>)"
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, text = refused
        head = [(b"content-type", b"text/plain; charset=utf-8")]
        if status == 401:
            head.append((b"www-authenticate", b'Bearer realm="vq"'))
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": text.encode() + b"\n"})


def listen(host: str, port: int) -> socket.socket:
    """``vq.query.http_guard.listen`` with `vq mcp`'s retry hint."""
    return bind_socket(host, port, "vq mcp --http {port}")


def serve_http(server: Any, sock: socket.socket, token: str,
               extra_hosts: Iterable[str] = (), host: str = "",
               limits: ConnectionLimits | None = None) -> None:
    """Run the MCP server's streamable-HTTP app on ``sock`` (from ``listen``) behind
    ``RequestGuard`` until Ctrl-C; ``host`` is the address as the user gave it.
    Connections are capped before any request is read (``vq.query.http_limits``)."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from vq.query.http_limits import guarded_protocol

    bound, port = sock.getsockname()[:2]
    host = host or bound
    hosts = allowed_hosts(host, port, extra_hosts)
    security = TransportSecuritySettings(  # the SDK's own check, kept as a second layer
        enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"http://{h}" for h in hosts))
    app = server.streamable_http_app(host=host, transport_security=security)
    limits = limits or ConnectionLimits()
    config = uvicorn.Config(RequestGuard(app, token, hosts), host=host, port=port,
                            log_level="warning", http=guarded_protocol(limits),
                            limit_concurrency=limits.total)
    uvicorn.Server(config).run(sockets=[sock])
