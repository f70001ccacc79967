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
from vq.cli.watch import start_watching
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
              help="Also answer `vq search` from this process (like `vq serve`, no idle exit).")
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
    service = halt_watch = dashboard = None
    try:
        daemon = Daemon(lambda: settings_from(ctx), log, cron=cron)
        if serve:
            service = host_service(settings, log)
        if service is not None:  # serve.ui: the dashboard too, as `vq serve` does
            from vq.cli.ui import host_dashboard

            dashboard = host_dashboard(ctx, settings, service, lambda t: log.event("serve", t))
        # the cron ticks are the full sweeps: the watcher only indexes what changed
        halt_watch = start_watching(lambda: settings_from(ctx), log, sweep=0)
        code = daemon.run()
    finally:
        if halt_watch is not None:
            halt_watch(s.stop_timeout_seconds)
        if dashboard is not None:
            dashboard.stop()
        if service is not None:
            from vq.query.service.server import stop

            stop(service)
        log.close()
    if code:
        os._exit(code)  # a build thread is still running: do not wait for it at exit


def host_service(settings: Settings, log: RunLog) -> Any:
    """The resident search service inside the scheduler (no idle exit), or None.

    The service keeps its own query encoder: the builds of this process and the
    queries never share one mutable model object. A service already running for
    the index (`vq serve`, an autostarted one) is left to answer; it is logged.
    """
    from vq.core.errors import ServiceDirUnsafe, ServiceRunning
    from vq.query.service.server import start

    try:
        service = start(settings, idle_minutes=0)
    except (ServiceRunning, ServiceDirUnsafe) as exc:
        log.event("serve", f"not serving searches: {exc.message}", logging.WARNING)
        return None
    log.event("serve", f"serving searches on {service.path}", socket=str(service.path))
    return service
