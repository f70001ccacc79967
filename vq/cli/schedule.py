"""`vq schedule`: the APScheduler daemon, composed here with the resident search service.

The CLI layer is the one place that sees both sides: the write side's scheduler
(``vq.jobs.scheduler``) and the read side's service (``vq.query.service``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import click

from vq.cli.shared import settings_from
from vq.cli.watch import Watchers, start_watching
from vq.core.settings import Settings
from vq.jobs.runlog import RunLog

SCHEDULE_CODES = """\b
Exit codes:
  0  stopped cleanly by SIGTERM/SIGINT (a running build finished its batch)
  1  a running build did not stop within schedule.stop_timeout_seconds
  2  error at start (bad config or cron expression)
  128+N  aborted by a second signal N (the next build repairs the index)"""


def _log_path(settings: Settings, flag: str | None) -> str | None:
    """``--log-file`` is relative to the cwd; ``schedule.log_file`` to its config file."""
    if flag:
        return str(Path(flag).expanduser().absolute())
    value = settings.schedule.log_file
    if not value:
        return None
    path = Path(os.path.expandvars(value)).expanduser()
    config = settings.config_file
    return str(path if path.is_absolute() or config is None else config.parent / path)


@click.command(epilog=SCHEDULE_CODES)
@click.option("--cron", metavar="EXPR",
              help='Crontab schedule, e.g. "*/5 * * * *" (a sixth, leading field is seconds). '
                   "Default: schedule.cron from the config, re-read at every tick.")
@click.option("--log-file", metavar="FILE",
              help="Also log to FILE, rotated (default: schedule.log_file).")
@click.option("--json-logs", is_flag=True,
              help="Log one JSON object per line (journald, log shippers).")
@click.option("--serve/--no-serve", default=True, show_default=True,
              help="Also host your resident search service (like `vq serve`, no idle "
                   "exit), unless it already runs elsewhere.")
@click.pass_context
def schedule(ctx: click.Context, cron: str | None, log_file: str | None,
             json_logs: bool, serve: bool) -> None:
    """Run an incremental build on every cron tick until SIGTERM or Ctrl-C.

    Each tick re-reads the config (vaults added or removed apply at the next
    tick) and runs the same locked build as `vq build`; a tick that finds the
    lock held logs "skipped". One log line per run on stderr. The first
    SIGTERM/SIGINT stops scheduling and lets a running build finish its
    current write batch; a second one aborts.
    """
    from vq.jobs.scheduler import Daemon

    settings = settings_from(ctx)
    s = settings.schedule
    log = RunLog(json_logs, _log_path(settings, log_file), s.log_max_bytes, s.log_backups)
    service = dashboard = None
    watchers = Watchers(log, sweep=None)
    try:
        daemon = Daemon(lambda: settings_from(ctx), log, cron=cron)
        service = _watch_and_serve(ctx, settings, log, watchers, serve)
        if service is not None:  # serve.ui: the dashboard too, as `vq serve` does
            from vq.cli.ui import host_dashboard

            dashboard = host_dashboard(ctx, settings, service, lambda t: log.event("serve", t))
        code = daemon.run()
    finally:
        watchers.halt_all(s.stop_timeout_seconds)
        if dashboard is not None:
            dashboard.stop()
        if service is not None:
            from vq.query.service.server import stop

            stop(service)
        log.close()
    if code:
        os._exit(code)  # a build thread is still running: do not wait for it at exit


def _watch_and_serve(ctx: click.Context, settings: Settings, log: RunLog, watchers: Watchers,
                     serve: bool) -> Any:
    """Watch this index (the cron ticks are its full sweeps: the watcher indexes only what
    changed), then host the user's service when asked and none runs; returns it or None.
    The watcher starts first, so the service's own slot finds it and starts no other."""
    hosted: list[Any] = []

    def committed(*_: Any) -> None:  # a batch of this index: the hosted service reloads
        for service in hosted:
            service.ops.committed()

    watchers.adopt(settings.index_dir, start_watching(
        lambda: settings_from(ctx), log, sweep=0, on_batch=committed))
    service = host_service(settings, log, watchers, lambda: settings_from(ctx)) if serve \
        else None
    hosted += [service] if service is not None else []
    return service


def host_service(settings: Settings, log: RunLog, watchers: Watchers, reload: Any) -> Any:
    """The user's resident search service inside the scheduler (no idle exit), or None.

    It serves every index a search names, as `vq serve` does, and watches the other
    indexes it opens (its own is watched by the scheduler already). The service
    keeps its own query encoder: the builds of this process and the queries never
    share one mutable model object. When the user's service already runs (`vq
    serve`, an autostarted one) the scheduler starts no second one: that one
    answers this index's searches too (it is logged).
    """
    from vq.core.errors import ServiceDirUnsafe, ServiceRunning
    from vq.query.service.server import start

    try:
        service = start(settings, idle_minutes=0, on_open=watchers.start, reload=reload)
    except (ServiceRunning, ServiceDirUnsafe) as exc:
        log.event("serve", f"not serving searches: {exc.message}", logging.WARNING)
        return None
    log.event("serve", f"serving searches on {service.path}", socket=str(service.path))
    return service
