"""The one duration grammar: ``90s``, ``15m``, ``2h``, ``1d``, ``2w``, ``6mo``, ``1y``.

Every flag that takes a length of time reads it here (`vq status --max-age`,
`vq search --since`, `vq jobs --interval`, MCP ``since``), so a unit means the
same thing everywhere: ``m`` is minutes (as in systemd and Go), months are
``mo``. There used to be two grammars, and ``6m`` was six minutes in one and
six months in the other.
"""

from __future__ import annotations

import re

from vq.core.errors import VqError

MINUTE, HOUR, DAY = 60, 3600, 86400
UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
         "m": MINUTE, "min": MINUTE, "mins": MINUTE, "minute": MINUTE, "minutes": MINUTE,
         "h": HOUR, "hr": HOUR, "hrs": HOUR, "hour": HOUR, "hours": HOUR,
         "d": DAY, "day": DAY, "days": DAY,
         "w": 7 * DAY, "wk": 7 * DAY, "week": 7 * DAY, "weeks": 7 * DAY,
         "mo": 30 * DAY, "month": 30 * DAY, "months": 30 * DAY,
         "y": 365 * DAY, "yr": 365 * DAY, "year": 365 * DAY, "years": 365 * DAY}
HINT = "write a number with a unit: 90s, 15m (minutes), 2h, 1d, 2w, 6mo (months), 1y"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")


def is_duration(text: str) -> bool:
    """True when ``text`` reads as a duration (a bare number counts: seconds)."""
    match = _DURATION.match(text.lower())
    return match is not None and match.group(2) in ("", *UNITS)


def parse_duration(text: str, option: str = "duration") -> float:
    """Seconds in ``"15m"``, ``"90s"``, ``"2h"``, ``"1d"``, ``"6mo"`` or a bare number."""
    match = _DURATION.match(text.lower())
    if not match or match.group(2) not in ("", *UNITS):
        raise VqError(f"{option}: cannot read {text!r} as a duration", HINT)
    return float(match.group(1)) * UNITS.get(match.group(2), 1)
