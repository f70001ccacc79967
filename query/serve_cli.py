"""`vq serve`: keep the query encoder warm for this index until SIGTERM."""

from __future__ import annotations

import signal
import threading

import click

from vq.core.cli import settings_from


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Hold the index's model loaded and answer `vq search` encodes on a local socket.

    `vq search` uses it when it is up (see `--explain`: encoder=service pid N)
    and encodes in-process when it is not. `vq schedule` serves too.
    """
    from vq.core.service import model_for, start

    settings = settings_from(ctx)
    service = start(settings.index_dir, model_for(settings), settings.device)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    click.echo(f"serving {service.model} for {settings.index_dir} on {service.path}", err=True)
    try:
        stop.wait()
    finally:
        service.shutdown()
        service.server_close()
    click.echo("stopped; socket removed", err=True)
