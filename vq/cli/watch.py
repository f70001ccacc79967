"""`vq watch`: the watcher (``vq.jobs.watch``) in the foreground, until Ctrl-C or SIGTERM
(docs/live.md)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
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


def start_watching(load: Any, log: Any, sweep: float | None,
                   on_batch: Callable[..., None] | None = None) -> Any:
    """The watcher on a daemon thread beside `vq serve` or `vq schedule` when ``watch``
    is on (the default); returns a function that stops it and waits, or None.
    ``on_batch(result)``: after each batch or sweep (the service reloads its snapshot)."""
    from vq.jobs.watch import Watcher

    settings = load()
    if not settings.watch or not settings.vaults:
        return None
    stop = threading.Event()
    watcher = Watcher(load, log, stop=stop, sweep=sweep, on_batch=on_batch)
    thread = threading.Thread(target=watcher.run, name="vq-watch", daemon=True)
    thread.start()

    def halt(timeout: float = 60.0) -> None:
        stop.set()
        thread.join(timeout)

    return halt


class Watchers:
    """The watchers of the user's service, one per index it holds (docs/live.md).

    ``start`` is the service's ``on_open``: the query side may not import the write
    side, so the CLI layer hands it this. An index another live process already
    watches (`vq watch`, `vq schedule`) is left to it: two watchers would only race
    for the build lock. ``sweep``: as ``start_watching``."""

    def __init__(self, log: Any, sweep: float | None = None) -> None:
        self.log, self.sweep = log, sweep
        self.halts: dict[str, Callable[..., None]] = {}
        self._lock = threading.Lock()

    def adopt(self, index_dir: str, halt: Callable[..., None] | None) -> None:
        """A watcher this process started itself (`vq schedule`'s own index)."""
        if halt is not None:
            self.halts[index_dir] = halt

    def start(self, settings: Any, reload: Callable[[], Any],
              committed: Callable[..., None]) -> str:
        """Watch ``settings``' vaults unless off or watched; says which it was."""
        import os

        from vq.core.watching import read_state

        if not settings.watch:
            return "off"
        with self._lock:
            if settings.index_dir in self.halts:
                return "watching"
            other = read_state(settings.index_dir)
            if other is not None and other.pid != os.getpid():
                return f"watched by pid {other.pid}"
            halt = start_watching(reload, self.log, self.sweep, on_batch=committed)
            if halt is None:
                return "off (no vaults)"
            self.halts[settings.index_dir] = halt
        return "watching"

    def halt_all(self, timeout: float = 60.0) -> None:
        for halt in list(self.halts.values()):
            halt(timeout)
