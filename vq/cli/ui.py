"""`vq ui`: parse, bind, print the one-time URL, serve the dashboard (``vq.query.ui``)."""

from __future__ import annotations

import os
from typing import Any

import click
from click.core import ParameterSource


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; beyond loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow --host beyond this machine (warns: the URL's token is then all "
                   "that guards your files).")
@click.option("--no-open", is_flag=True, help="Print the URL; do not open a browser.")
@click.option("--read-only", is_flag=True,
              help="Search and look only: no vault edits, no builds.")
@click.pass_context
def ui(ctx: click.Context, port: int, host: str, allow_remote: bool, no_open: bool,
       read_only: bool) -> None:
    """Open the dashboard: search, vaults, builds and health in the browser.

    It listens on 127.0.0.1 and prints a URL with a one-time token; the browser
    trades it for a session cookie. Requests without it, from another site or
    under another host name are refused. Ctrl-C stops it. When the resident
    service serves the dashboard (`vq serve --ui`, serve.ui), it prints (and
    opens) that one's URL instead and exits.
    """
    from vq.query.http_guard import is_loopback
    from vq.query.ui.context import UiContext
    from vq.query.ui.serve import bind, new_token, serve

    if _use_the_service(ctx, read_only, no_open):
        return
    root = ctx.find_root().obj or {}
    bound = bind(host, port, allow_remote)
    if not is_loopback(bound.host):
        click.echo(f"warning: listening on {bound.host}, beyond this machine: anyone with the "
                   "URL can read your indexed files" + ("" if read_only else
                                                        " and change your config"), err=True)
    config = root.get("config")
    overrides = {k: v for k, v in (root.get("overrides") or {}).items() if v is not None}
    context = UiContext(config, new_token(), overrides, read_only)
    context.settings()  # a broken config fails here, not on the first page

    def announce(url: str) -> None:
        click.echo(url)  # stdout is data: the one line a script may read
        mode = " (read-only)" if read_only else ""
        click.echo(f"vq ui{mode}: open the URL above (it carries this session's token); "
                   "Ctrl-C stops", err=True)

    serve(context, bound, announce, not no_open)


def _use_the_service(ctx: click.Context, read_only: bool, no_open: bool) -> bool:
    """When the running service for this index serves the dashboard, print (and open) its
    URL instead of starting a second server; not when --host, --port or --allow-remote
    ask for another server, nor when --read-only asks for less than it allows."""
    from vq.cli.shared import settings_from
    from vq.query.ui import hosted

    if any(ctx.get_parameter_source(p) not in (None, ParameterSource.DEFAULT)
           for p in ("host", "port", "allow_remote")):
        return False
    found = hosted.find(settings_from(ctx).index_dir)
    if found is None or (read_only and not found["read_only"]):
        return False
    click.echo(found["url"])
    mode = " (read-only)" if found["read_only"] else ""
    click.echo(f"vq ui: the vq service (pid {found['pid']}) serves the dashboard{mode}: open "
               "the URL above; `vq serve --stop` stops both", err=True)
    if not no_open:
        import webbrowser

        webbrowser.open(found["url"])
    return True


def host_dashboard(ctx: click.Context, settings: Any, service: Any,
                   say: Any) -> Any:
    """The dashboard inside a resident service (``vq.query.ui.hosted``) when ``serve.ui``
    asks for it, else None; ``say(text)`` reports where (never the token: logs outlive
    it; `vq ui` prints the URL with it). A taken port is said, and the service serves
    searches without the dashboard."""
    from vq.core.errors import VqError
    from vq.query.ui import hosted
    from vq.query.ui.context import UiContext
    from vq.query.ui.serve import new_token

    hosted.forget(settings.index_dir)
    if not settings.serve.ui:
        return None
    root = ctx.find_root().obj or {}
    overrides = {k: v for k, v in (root.get("overrides") or {}).items() if v is not None}
    config = root.get("config")  # as given (a project config found upwards stays one)
    config = os.path.abspath(os.path.expanduser(config)) if config else None
    context = UiContext(config, new_token(), overrides, settings.serve.ui_read_only,
                        hosted.ServiceHost(service))
    try:
        dashboard = hosted.start(context, settings.index_dir, settings.serve.ui_port)
    except VqError as exc:
        say(f"not serving the dashboard: {exc.message}" + (f" ({exc.fix})" if exc.fix else ""))
        return None
    mode = "read-only" if context.read_only else "editable"
    say(f"dashboard ({mode}) on http://127.0.0.1:{dashboard.port}/: `vq ui` prints its URL "
        "with the token")
    return dashboard
