"""`vq serve`: the user's one resident service for every index; `--stop`, `--list`."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import click

from vq.cli.shared import echo_json, settings_from

STOP_WAIT_SECONDS = 30.0


@click.command()
@click.option("--stop", is_flag=True, help="Stop your running vq service.")
@click.option("--list", "list_", is_flag=True,
              help="List the indexes the running service holds: model, rows, last use, "
                   "watch state and files not yet indexed.")
@click.option("--json", "as_json", is_flag=True, help="With --list: print JSON.")
@click.option("--lock-fd", type=int, default=None, hidden=True,
              help="The service lock an autostarting search took and handed down.")
@click.option("--ui/--no-ui", "ui", default=None,
              help="Also serve the dashboard (`vq ui`'s) from this process on 127.0.0.1; "
                   "`vq ui` then prints its URL (default: serve.ui, off).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="The dashboard's port (default: serve.ui_port; 0 picks a free one).")
@click.option("--read-only", is_flag=True, default=None,
              help="The dashboard changes nothing (default: serve.ui_read_only).")
@click.pass_context
def serve(ctx: click.Context, stop: bool, list_: bool, as_json: bool, lock_fd: int | None,
          ui: bool | None, port: int | None, read_only: bool | None) -> None:
    """Answer `vq search` (and MCP encodes) for all your indexes from one process.

    One service per user: a search names its index, and the service opens it on
    first use (this command's own config's index at once), keeps it open with a
    snapshot of its rows and vectors in memory, and drops that snapshot after
    serve.slot_idle_minutes without a search of it. Each model is loaded once
    (the ONNX export when the build wrote one), however many indexes use it. It
    watches the vaults of each index it opens (`watch: false` turns it off),
    so a saved file is searchable without a build. A search answered by it
    prints the same as in-process (`--explain`: encoder=service pid N). It
    exits after serve.idle_minutes without requests (0: never) or on SIGTERM.
    A search starts one by itself when search.autostart is on (not under CI);
    `vq schedule` hosts it when none runs.

    With --ui (or serve.ui: true) it also serves the dashboard of this
    command's own index on 127.0.0.1, sharing the service's open index and
    loaded model; `vq ui` prints its URL.
    """
    if stop:
        _stop()
        return
    if list_:
        _list(as_json)
        return
    overrides = {"serve.ui": ui, "serve.ui_port": port, "serve.ui_read_only": read_only or None}
    _run(ctx, lambda: settings_from(ctx, **overrides), lock_fd)


def _run(ctx: click.Context, load: Any, lock_fd: int | None) -> None:
    """Serve until SIGTERM/SIGINT or the idle exit; then stop the watchers, the
    dashboard and the service, in that order."""
    from vq.cli.ui import host_dashboard
    from vq.cli.watch import Watchers
    from vq.jobs.runlog import RunLog
    from vq.query.service.server import start
    from vq.query.service.server import stop as shut

    settings = load()
    watchers = Watchers(RunLog(), sweep=None)
    service = start(settings, settings.serve.idle_minutes, lock_fd, on_open=watchers.start,
                    reload=load)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: service.stopped.set())
    threading.Thread(target=service.watch_code, name="vq-code", daemon=True).start()
    idle = settings.serve.idle_minutes
    click.echo(f"serving every index on {service.path} (pid {os.getpid()}; "
               f"{f'exits after {idle:g} idle minutes' if idle else 'no idle exit'})", err=True)
    dashboard = host_dashboard(ctx, settings, service, lambda text: click.echo(text, err=True))
    try:
        service.stopped.wait()
    finally:
        watchers.halt_all()
        if dashboard is not None:
            dashboard.stop()
        shut(service)
    if service.exit_reason:
        click.echo(f"exiting: {service.exit_reason}", err=True)
    click.echo("stopped; socket removed", err=True)


def _stop() -> None:
    from vq.core import runtime
    from vq.query.service import client

    info = client.info()
    pid = info["pid"] if info else (runtime.lock_holder() if runtime.is_running() else None)
    if pid is None:
        click.echo("no vq service runs for this user", err=True)
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while runtime.is_running():
        if time.monotonic() > deadline:
            raise click.ClickException(f"pid {pid} did not stop within {STOP_WAIT_SECONDS:g}s")
        time.sleep(0.05)  # polling for the process to release its lock
    click.echo(f"stopped the vq service (pid {pid})", err=True)


def _list(as_json: bool) -> None:
    """What the running service holds; with none running, says so (exit 0)."""
    from vq.query.service import client

    info = client.info()
    if as_json:
        echo_json({"running": info is not None, **(info or {"indexes": []})})
        return
    if info is None:
        click.echo("no vq service runs for this user", err=True)
        return
    for line in list_lines(info):
        click.echo(line)


def list_lines(info: dict[str, Any]) -> list[str]:
    """`vq serve --list` as text: the service, its models, then one block per index."""
    from vq.core.display import shown
    from vq.query.service.client import watch_text

    idle = info.get("idle_minutes") or 0
    lines = [f"vq service pid {info['pid']} on {info.get('socket')} "
             f"({f'exits after {idle:g} idle minutes' if idle else 'no idle exit'})"]
    for m in info.get("models") or []:
        lines.append(f"model {m['model']}: {m['encoder']} on {m['device']}, "
                     f"loaded {m['loads']}x")
    if not info.get("indexes"):
        lines.append("no index opened yet (a search opens its own)")
    for slot in info.get("indexes") or []:
        lines += [shown(slot["index_dir"]), "  " + shown(_slot_line(slot)),
                  "  watch: " + shown(watch_text(slot["watch"], info["pid"]))]
    return lines


def _slot_line(slot: dict[str, Any]) -> str:
    held = "in memory" if slot["loaded"] else "evicted (reopens on the next search)"
    used = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(slot["last_used"]))
    return (f"{slot['model'] or '?'}, {slot['rows'] if slot['rows'] is not None else '?'} "
            f"rows, {held}, {slot['searches']} searches, last used {used}")
