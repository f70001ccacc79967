"""`vq serve`: keep the index open and the model loaded, answer whole searches; `--stop`."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import click

from vq.cli.shared import settings_from

STOP_WAIT_SECONDS = 30.0


@click.command()
@click.option("--stop", is_flag=True, help="Stop the service running for this index.")
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
def serve(ctx: click.Context, stop: bool, lock_fd: int | None, ui: bool | None,
          port: int | None, read_only: bool | None) -> None:
    """Answer `vq search` (and MCP encodes) from a resident process for this index.

    It holds the index open, the index's model loaded (the ONNX export when the
    build wrote one) and a snapshot of its rows and vectors in memory; a
    search answered by it prints the same as in-process (see `--explain`:
    encoder=service pid N). It exits after serve.idle_minutes without requests
    (0: never) or on SIGTERM. A search starts one by itself when
    search.autostart is on (not under CI). `vq schedule` serves too.

    With --ui (or serve.ui: true) it also serves the dashboard on 127.0.0.1,
    sharing the open index and the loaded model; `vq ui` prints its URL.
    """
    settings = settings_from(ctx, **{"serve.ui": ui, "serve.ui_port": port,
                                     "serve.ui_read_only": read_only or None})
    if stop:
        _stop(settings.index_dir)
        return
    from vq.cli.ui import host_dashboard
    from vq.query.service.server import start
    from vq.query.service.server import stop as shut

    service = start(settings, settings.serve.idle_minutes, lock_fd)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: service.stopped.set())
    idle = settings.serve.idle_minutes
    click.echo(f"serving {settings.index_dir} on {service.path} (pid {os.getpid()}; "
               f"{f'exits after {idle:g} idle minutes' if idle else 'no idle exit'})", err=True)
    dashboard = host_dashboard(ctx, settings, service, lambda text: click.echo(text, err=True))
    halt_watch = _watch(ctx)
    try:
        service.stopped.wait()
    finally:
        if halt_watch is not None:
            halt_watch()
        if dashboard is not None:
            dashboard.stop()
        shut(service)
    click.echo("stopped; socket removed", err=True)


def _watch(ctx: click.Context) -> Any:
    """The service watches the vaults of the index it serves (``watch: false`` turns it
    off), with a full sweep on the cron interval; its log lines go to stderr."""
    from vq.cli.watch import start_watching
    from vq.jobs.runlog import RunLog

    return start_watching(lambda: settings_from(ctx), RunLog(), sweep=None)


def _stop(index_dir: str) -> None:
    from vq.core import runtime
    from vq.query.service import client

    info = client.info(index_dir)
    pid = info["pid"] if info else (runtime.lock_holder(index_dir)
                                    if runtime.is_running(index_dir) else None)
    if pid is None:
        click.echo(f"no vq service runs for {index_dir}", err=True)
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while runtime.is_running(index_dir):
        if time.monotonic() > deadline:
            raise click.ClickException(f"pid {pid} did not stop within {STOP_WAIT_SECONDS:g}s")
        time.sleep(0.05)  # polling for the process to release its lock
    click.echo(f"stopped the vq service (pid {pid})", err=True)
