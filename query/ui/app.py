"""The dashboard's Starlette app behind its guard (``vq.query.ui.guard``)."""

from __future__ import annotations

from typing import Any

from vq.query.ui.context import UiContext


def create_app(ctx: UiContext, hosts: frozenset[str]) -> Any:
    """The ASGI app to serve: every request passes ``UiGuard`` first."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from vq.query.ui import builds_page, health_page, search_page, vaults_page
    from vq.query.ui.builds_run import BuildRunner
    from vq.query.ui.guard import UiGuard
    from vq.query.ui.render import STATIC

    routes = [
        Route("/", search_page.page),
        Route("/preview", search_page.preview),
        Route("/vaults", vaults_page.page),
        Route("/vaults/add", vaults_page.add, methods=["POST"]),
        Route("/vaults/{vault_id}/edit", vaults_page.edit, methods=["POST"]),
        Route("/vaults/{vault_id}/remove", vaults_page.remove, methods=["POST"]),
        Route("/builds", builds_page.page),
        Route("/builds/run", builds_page.run, methods=["POST"]),
        Route("/builds/events", builds_page.events),
        Route("/health", health_page.page),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.ctx = ctx
    app.state.runner = BuildRunner(ctx)
    return UiGuard(app if ctx.host is None else _Touching(app, ctx.host), ctx, hosts)


class _Touching:
    """Inside the resident service, each request the guard let through counts as use, so
    the service's idle exit does not end a dashboard someone is using."""

    def __init__(self, app: Any, host: Any) -> None:
        self.app, self.host = app, host

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.host.touch()
        await self.app(scope, receive, send)
