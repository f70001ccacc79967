"""`vq watch`: the watcher (``vq.jobs.watch``) in the foreground, until Ctrl-C or SIGTERM
(docs/live.md)."""

from __future__ import annotations

import signal
import threading
from typing import Any

import click

from vq.cli.shared import settings_from

WATCH_CODES = """\b
Exit codes:
  0  stopped by SIGTERM/SIGINT (a running batch finished its write first)
  2  error at start (bad config, no vaults)"""


@click.command(epilog=WATCH_CODES)
@click.option("--debounce", type=click.FloatRange(min=0.01), default=None, metavar="SECONDS",
              help="Index a batch once no change came for this long "
                   "(default: watch_debounce_seconds, 1).")
@click.option("--sweep", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="Seconds between full sweeps, which catch what the OS did not report "
                   "(default: the schedule.cron interval; 0: never).")
@click.option("--json-logs", is_flag=True, help="Log one JSON object per line.")
@click.pass_context
def watch(ctx: click.Context, debounce: float | None, sweep: float | None,
          json_logs: bool) -> None:
    """Index changed files about a second after they are saved.

    Watches each vault root (not excluded trees) and runs the changed paths
    through the same locked build as `vq build`, without a walk; a periodic
    full sweep catches anything the OS did not report. One log line per batch
    on stderr. `vq serve` and `vq schedule` do the same unless `watch: false`.
    """
    from vq.core.errors import VqError
    from vq.jobs.runlog import RunLog
    from vq.jobs.watch import Watcher

    overrides: dict[str, Any] = {}
    if debounce is not None:
        overrides["watch_debounce_seconds"] = debounce

    def load() -> Any:
        return settings_from(ctx, **overrides)

    settings = load()
    if not settings.vaults:
        raise VqError("no vaults configured", "add one with `vq vault add ID PATH`")
    log = RunLog(json_logs)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        Watcher(load, log, stop=stop, sweep=sweep).run()
    finally:
        log.close()


def start_watching(load: Any, log: Any, sweep: float | None) -> Any:
    """The watcher on a daemon thread beside `vq serve` or `vq schedule` when ``watch``
    is on (the default); returns a function that stops it and waits, or None."""
    import threading

    from vq.jobs.watch import Watcher

    settings = load()
    if not settings.watch or not settings.vaults:
        return None
    stop = threading.Event()
    watcher = Watcher(load, log, stop=stop, sweep=sweep)
    thread = threading.Thread(target=watcher.run, name="vq-watch", daemon=True)
    thread.start()

    def halt(timeout: float = 60.0) -> None:
        stop.set()
        thread.join(timeout)

    return halt
