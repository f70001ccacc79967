"""Local HTTP servers (`vq mcp --http`, `vq ui`): bind the port, and answer only to this
server's ``Host`` and ``Origin``; one copy of each for every server.

`vq mcp --http` and `vq ui` both listen on a port that any local process, and any
web page by DNS rebinding, can reach. A rebinding page talks to 127.0.0.1 under its
own name, so its requests carry ``Host: evil.example``; a cross-site form post
carries ``Origin: http://evil.example``. Both are refused here before any app sees
the request; what else a server demands (a bearer token, a cookie) is its own.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from vq.core.errors import VqError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def machine_names() -> set[str]:
    """This machine's host names and the addresses they resolve to."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        with contextlib.suppress(OSError):
            names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
    return {n for n in names if n}


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` header values (lower case, with the port) this server answers to."""
    names = {h.strip("[]") for h in extra}
    if is_loopback(host) or is_wildcard(host):
        names.update(LOOPBACK_NAMES)
    if is_wildcard(host):
        names.update(machine_names())
    else:
        names.add(host)
    out = {f"{bracket(n)}:{port}".lower() for n in names}
    if port == 80:
        out |= {bracket(n).lower() for n in names}
    return frozenset(out)


def header_map(scope: Mapping[str, Any]) -> dict[str, str]:
    """An ASGI scope's headers, names lower-cased, the first of each kept."""
    headers: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return headers


def host_refusal(headers: Mapping[str, str], hosts: frozenset[str]) -> tuple[int, str] | None:
    """(status, reason) when ``Host`` or ``Origin`` names another server, else None.

    A missing ``Origin`` passes (same-origin GETs and non-browser clients send none);
    ``Origin: null`` (a sandboxed or file: page) does not.
    """
    if headers.get("host", "").lower() not in hosts:
        return 421, "Invalid Host header"
    origin = headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() not in hosts:
        return 403, "Invalid Origin header"
    return None


def listen(host: str, port: int, retry: str) -> socket.socket:
    """The server's socket, bound before anything says "serving": a taken port, a
    privileged one or an address this machine lacks is one ``VqError`` with the fix,
    not uvicorn's log line after the banner. ``retry`` is the command to suggest,
    with ``{port}`` for the next port (``"vq mcp --http {port}"``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise _bind_error(host, port, exc, retry) from None
    sock.set_inheritable(True)
    return sock


def _bind_error(host: str, port: int, exc: OSError, retry: str) -> VqError:
    where = f"{bracket(host)}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return VqError(f"cannot serve on {where}: the port is already in use",
                       f"stop what listens there (`ss -ltnp 'sport = :{port}'` names it) "
                       f"or pick another port: `{retry.format(port=port + 1)}`")
    if exc.errno == errno.EACCES:
        return VqError(f"cannot serve on {where}: not allowed to use port {port}",
                       "ports below 1024 need root: pick a port above 1024")
    if exc.errno == errno.EADDRNOTAVAIL:
        return VqError(f"cannot serve on {where}: {host} is not an address of this machine",
                       "use 127.0.0.1, 0.0.0.0 or one of this machine's addresses")
    return VqError(f"cannot serve on {where}: {exc.strerror or exc}",
                   "pick another address or port")
