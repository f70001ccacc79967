"""Durations and schedules as people write them: ``15m``, ``5min``, ``*/5 * * * *``.

The duration grammar itself is ``vq.core.durations`` (one for every flag); here are
the conversions from an interval to a systemd ``OnCalendar``
value and a crontab schedule. Intervals must divide a minute, an hour or a day
so that the calendar forms fire on the same wall-clock marks as the interval
promises (``Persistent=true`` only works with ``OnCalendar``, not with the
monotonic ``OnUnitActiveSec``).
"""

from __future__ import annotations

from vq.core.durations import parse_duration
from vq.core.errors import VqError

_SCHEDULE_HINT = "use an interval that divides a minute, an hour or a day: 30s, 5min, 1h, 1d"


def _split(text: str, option: str) -> tuple[int, str]:
    """Whole seconds of an interval, and the unit it fits: "s", "min", "h" or "d"."""
    seconds = parse_duration(text, option)
    whole = int(seconds)
    if whole != seconds or whole <= 0:
        raise VqError(f"{option}: {text!r} is not a whole, positive number of seconds",
                      _SCHEDULE_HINT)
    if whole < 60 and 60 % whole == 0:
        return whole, "s"
    if whole % 60 == 0 and whole < 3600 and 3600 % whole == 0:
        return whole // 60, "min"
    if whole % 3600 == 0 and whole < 86400 and 86400 % whole == 0:
        return whole // 3600, "h"
    if whole == 86400:
        return 1, "d"
    raise VqError(f"{option}: {text!r} does not divide a minute, an hour or a day",
                  _SCHEDULE_HINT)


def interval_to_oncalendar(text: str, option: str = "--interval") -> str:
    """``5min`` → ``*:0/5`` (systemd.time(7)): fires at :00, :05, … like cron does."""
    n, unit = _split(text, option)
    if unit == "s":
        return f"*:*:0/{n}"
    if unit == "min":
        return "*:*:00" if n == 1 else f"*:0/{n}:00"
    if unit == "h":
        return "*:00:00" if n == 1 else f"0/{n}:00:00"
    return "*-*-* 00:00:00"


def interval_to_cron(text: str, option: str = "--interval") -> str:
    """``5min`` → ``*/5 * * * *``; cron has no seconds, so sub-minute intervals fail."""
    n, unit = _split(text, option)
    if unit == "s":
        raise VqError(f"{option}: cron cannot run more often than once a minute",
                      "use 1min or more")
    if unit == "min":
        return "* * * * *" if n == 1 else f"*/{n} * * * *"
    if unit == "h":
        return "0 * * * *" if n == 1 else f"0 */{n} * * *"
    return "0 0 * * *"
