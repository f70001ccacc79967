"""Crontab expressions for ``vq schedule``, read the way cron reads them.

APScheduler 3.x counts weekdays from Monday = 0, while cron (and ``vq jobs
cron``) counts from Sunday = 0; its own ``from_crontab`` keeps that mismatch
for compatibility. So ``schedule.cron: "0 3 * * 0"`` would build on Mondays
under the daemon and on Sundays under cron. The weekday field is therefore
expanded here into weekday names, which both agree on.

A sixth, leading field is seconds (as in Quartz and Spring): cron itself has
no seconds, but tests and impatient users want a tick every few seconds.
Cron fires when *either* a restricted day of month or a restricted weekday
matches, APScheduler only when both do; rather than pick one, vq refuses an
expression that restricts both.
"""

from __future__ import annotations

from typing import Any

from vq.core.errors import VqError

WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIX = 'write five fields "minute hour day month weekday" (e.g. "*/5 * * * *"), or six ' \
       "with a leading seconds field"


def cron_fields(expr: str) -> dict[str, str]:
    """The APScheduler ``CronTrigger`` keyword arguments for a 5- or 6-field expression."""
    parts = expr.split()
    if len(parts) == 5:
        parts = ["0", *parts]
    if len(parts) != 6:
        raise VqError(f"cron {expr!r}: expected 5 or 6 fields, got {len(parts)}", _FIX)
    second, minute, hour, day, month, weekday = parts
    if day != "*" and weekday != "*":
        raise VqError(f"cron {expr!r}: restricts both the day of month and the weekday, "
                      "which cron and APScheduler combine differently",
                      "restrict one of them and leave the other as *")
    return {"second": second, "minute": minute, "hour": hour, "day": day,
            "month": month.lower(), "day_of_week": crontab_weekdays(weekday, expr)}


def crontab_weekdays(field: str, expr: str = "") -> str:
    """Cron's weekday field (0 or 7 = Sunday, names, ranges, steps) as a list of names."""
    if field == "*":
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        span, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if span == "*":
                low, high = 0, 6
            elif "-" in span:
                first, last = span.split("-", 1)
                low, high = _weekday(first), _weekday(last)
            else:
                low = _weekday(span)
                high = 6 if step_text else low
        except ValueError:
            raise VqError(f"cron {expr or field!r}: cannot read the weekday field {field!r}",
                          "use 0-7 (0 and 7 are Sunday), sun-sat, ranges, lists and steps"
                          ) from None
        if step < 1 or high < low:
            raise VqError(f"cron {expr or field!r}: empty weekday range {part!r}",
                          "write ranges low-high, e.g. 1-5 or mon-fri")
        days.update(d % 7 for d in range(low, high + 1, step))
    if len(days) == 7:
        return "*"
    return ",".join(WEEKDAYS[d] for d in sorted(days))


def _weekday(token: str) -> int:
    """0..7 from Sunday; 7 is Sunday again so that ``5-7`` means Friday to Sunday."""
    if token in WEEKDAYS:
        return WEEKDAYS.index(token)
    number = int(token)
    if not 0 <= number <= 7:
        raise ValueError(token)
    return number


def cron_trigger(expr: str, jitter_seconds: int = 0, timezone: Any = None) -> Any:
    """A ``CronTrigger`` firing when cron would; a bad expression is a VqError with the fix."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        return CronTrigger(**cron_fields(expr), jitter=jitter_seconds or None, timezone=timezone)
    except ValueError as exc:
        raise VqError(f"cron {expr!r}: {exc}", _FIX) from None


def is_crontab(expr: str) -> bool:
    """True for the 5-field form that a crontab line can carry."""
    return len(expr.split()) == 5
