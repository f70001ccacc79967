"""`vq ui`: parse, bind, print the one-time URL, serve the dashboard (``vq.query.ui``)."""

from __future__ import annotations

import click


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
    under another host name are refused. Ctrl-C stops it.
    """
    from vq.query.http_guard import is_loopback
    from vq.query.ui.context import UiContext
    from vq.query.ui.serve import bind, new_token, serve

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
