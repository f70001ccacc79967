"""`vq schedule` (the daemon) and `vq jobs systemd|cron` (units for the system's schedulers)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from vq.core.cli import echo_json, settings_from
from vq.core.settings import Settings

if TYPE_CHECKING:
    from vq.jobs.units import UnitNames

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
    from vq.jobs.runlog import RunLog
    from vq.jobs.scheduler import Daemon, host_service

    settings = settings_from(ctx)
    s = settings.schedule
    log = RunLog(json_logs, _log_path(settings, log_file), s.log_max_bytes, s.log_backups)
    service = None
    try:
        daemon = Daemon(lambda: settings_from(ctx), log, cron=cron)
        if serve:
            service = host_service(settings, log)
        code = daemon.run()
    finally:
        if service is not None:
            from vq.core.service import stop

            stop(service)
        log.close()
    if code:
        os._exit(code)  # a build thread is still running: do not wait for it at exit


@click.group()
def jobs() -> None:
    """Print or install cron and systemd units that run `vq build` on a schedule."""


@jobs.command()
@click.option("--user", is_flag=True,
              help="User units (~/.config/systemd/user) that run as you, without root.")
@click.option("--interval", default="5min", show_default=True, metavar="DURATION",
              help="How often the timer fires; must divide a minute, an hour or a day. "
                   "Given explicitly, it also pins the daemon's --cron (otherwise the "
                   "daemon follows schedule.cron).")
@click.option("--write", is_flag=True,
              help="Write the units into the systemd folder instead of printing them.")
@click.option("--force", is_flag=True,
              help="With --write: replace units of these names that run another config.")
@click.pass_context
def systemd(ctx: click.Context, user: bool, interval: str, write: bool, force: bool) -> None:
    """Print (or --write) systemd units: a build timer, or the schedule daemon.

    vq-build-ID.service + vq-build-ID.timer run `vq build` with this config and
    environment (Persistent=true catches up after downtime; RandomizedDelaySec
    is schedule.jitter_seconds); vq-schedule-ID.service runs `vq schedule` instead.
    Enable either the timer or the daemon, not both. ID is the project folder's
    name and a hash of the config's path, so each project has its own units;
    --write refuses to replace a unit that runs another config.
    """
    from vq.jobs.timespec import interval_to_cron
    from vq.jobs.units import systemd_dir, systemd_units, unit_names, write_units

    settings = settings_from(ctx)
    pinned = ctx.get_parameter_source("interval") != ParameterSource.DEFAULT
    units = systemd_units(settings, user, interval,
                          daemon_cron=interval_to_cron(interval) if pinned else None)
    folder = systemd_dir(user)
    if write:
        try:
            paths = write_units(units, folder, force)
        except OSError as exc:
            from vq.core.errors import VqError

            raise VqError(f"cannot write units into {folder}: {exc.strerror}",
                          "run it with sudo, or use --user") from None
        for path in paths:
            click.echo(f"wrote {path}", err=True)
    else:
        for unit in units:
            click.echo(f"### {folder / unit.name}\n{unit.text}")
    _systemd_next_steps(unit_names(settings), user, write)


def _systemd_next_steps(names: UnitNames, user: bool, written: bool) -> None:
    ctl = "systemctl --user" if user else "sudo systemctl"
    journal = "journalctl --user" if user else "journalctl"
    steps = [] if written else ["save each unit above to the path in its ### line, or rerun "
                                "with --write"]
    steps += [f"{ctl} daemon-reload && {ctl} enable --now {names.timer}",
              f"  (or the daemon instead: {ctl} enable --now {names.daemon})",
              f"check: {ctl} list-timers {names.timer}; {journal} -u {names.build}; "
              "vq status"]
    if user:
        steps.append("to run while you are logged out: loginctl enable-linger $USER")
    click.echo("next: " + "\n      ".join(steps), err=True)


@jobs.command()
@click.option("--cron", "expr", metavar="EXPR",
              help='Five-field crontab schedule (default: schedule.cron, "*/5 * * * *").')
@click.option("--log", "log_file", metavar="FILE",
              help="Append each run's output here (default: ~/.local/share/vq/logs/build.log).")
@click.option("--json", "as_json", is_flag=True, help="Print the line and its parts as JSON.")
@click.pass_context
def cron(ctx: click.Context, expr: str | None, log_file: str | None, as_json: bool) -> None:
    """Print the crontab line that runs `vq build` (no flock needed: vq locks itself)."""
    from vq.core.errors import VqError
    from vq.jobs.cron import cron_trigger, is_crontab
    from vq.jobs.units import cron_line, default_cron_log

    settings = settings_from(ctx)
    expr = expr or settings.schedule.cron
    if not is_crontab(expr):
        raise VqError(f"cron {expr!r}: a crontab line takes exactly five fields",
                      'pass --cron "minute hour day month weekday"')
    cron_trigger(expr)  # fails with the fix on a bad expression
    log = Path(log_file).expanduser().absolute() if log_file else default_cron_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    line = cron_line(settings, expr, log)
    if as_json:
        echo_json({"line": line, "schedule": expr, "log": str(log)})
        return
    click.echo("# vq: incremental build; vq takes its own lock, so an overlapping run "
               "exits 0 and logs \"skipped\"")
    click.echo(line)
    click.echo("next: (crontab -l 2>/dev/null; vq jobs cron) | crontab -\n"
               f"check: tail {log}; vq status", err=True)
