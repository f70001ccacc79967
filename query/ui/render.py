"""One way to answer with a page: the Jinja2 templates shipped in the package, with the
headers every page carries (a strict Content-Security-Policy: the pages load only their
own script and stylesheet, and no other site may frame them)."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: with no-referrer Chromium sends "Origin: null" on the
    # page's own form posts, which the Origin check must refuse
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


@functools.cache
def environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(str(HERE / "templates")),
                      autoescape=select_autoescape(["html"]), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["when"] = when
    env.filters["seconds"] = seconds
    env.filters["home"] = home
    return env


def home(path: str | None) -> str:
    """``~/notes`` for a path under the home folder: shorter, and what people type."""
    if not path:
        return ""
    mine = os.path.expanduser("~").rstrip(os.sep)
    if mine and (path == mine or path.startswith(mine + os.sep)):
        return "~" + path[len(mine):]
    return path


def when(epoch: float | None) -> str:
    if not epoch:
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 60:
        return f"{value:.1f} s"
    return f"{int(value // 60)} min {value % 60:.0f} s"


def page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """Render ``template`` with what every page shows (nav, mode, the CSRF secret)."""
    ctx = request.app.state.ctx
    html = environment().get_template(template).render(
        csrf=ctx.csrf, read_only=ctx.read_only, path=request.url.path, **values)
    return HTMLResponse(html, status_code=status, headers=HEADERS)
