"""Who may use the dashboard: checked on every request before any page runs.

1. ``Host`` and ``Origin`` must name this server (``vq.query.http_guard``, the check
   `vq mcp --http` uses): a DNS-rebinding page or a cross-site form is refused.
2. ``?token=`` from the URL `vq ui` printed is exchanged for an HttpOnly,
   SameSite=Strict session cookie, then the browser is sent to the same URL without
   the token (so it leaves the address bar and the history).
3. Every other request needs that cookie: none is 401, a wrong one 403.
4. Every POST needs the CSRF secret (form field ``csrf`` or header ``X-CSRF-Token``);
   with ``--read-only`` every POST is refused. Other methods than GET, HEAD and POST
   are refused.
"""

from __future__ import annotations

import hmac
import time
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode

from vq.query.http_guard import header_map, host_refusal
from vq.query.ui.context import UiContext

COOKIE = "vq_ui"
MAX_FORM_BYTES = 256 * 1024
SAFE_METHODS = ("GET", "HEAD")


def _same(given: str | None, secret: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), secret.encode())


def cookie_value(headers: dict[str, str]) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


class UiGuard:
    """Pure ASGI middleware; a refusal never reaches the app (or reads the index)."""

    def __init__(self, app: Any, ctx: UiContext, hosts: frozenset[str]) -> None:
        self.app, self.ctx, self.hosts = app, ctx, hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = header_map(scope)
        refused = host_refusal(headers, self.hosts)
        if refused is not None:
            await _plain(send, *refused)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await self._exchange(scope, send, query)
            return
        cookie = cookie_value(headers)
        if cookie is None:
            await _plain(send, 401, "no session: open the URL that `vq ui` printed (it "
                         "carries a one-time token)")
            return
        if not _same(cookie, self.ctx.session):
            await _plain(send, 403, "wrong session: open the URL that `vq ui` printed")
            return
        method = scope.get("method", "GET")
        if method in SAFE_METHODS:
            await self.app(scope, receive, _timed(send))
        elif method != "POST":
            await _plain(send, 405, f"{method} is not used here")
        elif self.ctx.read_only:
            await _plain(send, 403, "read-only: `vq ui --read-only` changes nothing")
        else:
            await self._post(scope, receive, send, headers)

    async def _exchange(self, scope: dict[str, Any], send: Any, query: dict[str, str]) -> None:
        if not _same(query.pop("token"), self.ctx.token):
            await _plain(send, 403, "wrong token: open the URL that `vq ui` printed")
            return
        rest = urlencode(query)
        location = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = f"{COOKIE}={self.ctx.session}; HttpOnly; SameSite=Strict; Path=/"
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode()),
            (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer")]})
        await send({"type": "http.response.body", "body": b""})

    async def _post(self, scope: dict[str, Any], receive: Any, send: Any,
                    headers: dict[str, str]) -> None:
        """Read the (bounded) body, check the CSRF secret, then hand the body on."""
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_FORM_BYTES:
                await _plain(send, 413, "form too large")
                return
        given = headers.get("x-csrf-token")
        if given is None and headers.get("content-type", "").startswith(
                "application/x-www-form-urlencoded"):
            fields = parse_qs(body.decode("utf-8", "replace")).get("csrf") or []
            given = fields[0] if fields else None
        if not _same(given, self.ctx.csrf):
            await _plain(send, 403, "missing or wrong CSRF token: reload the page and retry")
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, _timed(send))


def _timed(send: Any) -> Any:
    """``send`` that adds ``Server-Timing: app;dur=<ms>`` (request in to response head out)
    to the response: the browser's developer tools and ``bench/ui.py`` read it."""
    started = time.perf_counter()

    async def timed_send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            ms = (time.perf_counter() - started) * 1000
            headers = [*message.get("headers", ()), (b"server-timing", f"app;dur={ms:.2f}"
                                                     .encode())]
            message = {**message, "headers": headers}
        await send(message)

    return timed_send


async def _plain(send: Any, status: int, text: str) -> None:
    head = [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})
