"""`vq jobs systemd|cron`: units that make the system's schedulers run `vq build`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from vq.cli.shared import echo_json, settings_from

if TYPE_CHECKING:
    from vq.jobs.units import UnitNames


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
