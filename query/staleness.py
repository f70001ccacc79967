"""May this answer be stale? Said on every search surface, cheaply.

Three reasons, each costing a stat or a small read, never a walk:
- files changed and not yet indexed: the running watcher's list
  (``vq.core.watching``), and, watcher or not, a stat of each hit's file against
  the mtime its chunks were indexed with (confirmed against the manifest only
  when they differ, since a re-stamp leaves the chunks' mtime behind);
- a build or a watch batch in progress (the lock's holder file, the watcher);
- the last build older than the schedule allows (the builds table's newest
  version file against ``schedule.cron``, for the simple cron forms), unless a
  watcher is running: it builds when files change, so an old build means a quiet
  vault (one sweeping instead of watching is judged by its sweep interval).
The note goes in ``Result.notices`` (stderr on a terminal, the JSON's explain,
MCP's answer) and each stale hit carries ``stale`` in its JSON.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from vq.core import paths, store
from vq.core.lock import lock_state
from vq.core.settings import Settings
from vq.core.watching import SHOWN_PATHS, read_state

EVERY_N = re.compile(r"^\*/(\d+)$")
MTIME_SLACK = 1e-3  # chunks keep the mtime as float seconds


@dataclass
class Staleness:
    """Why an answer may be stale; empty when nothing says so."""

    changed: list[str] = field(default_factory=list)  # vault/path, changed and not indexed
    changed_count: int = 0
    building: str = ""
    last_build_age_seconds: float | None = None
    schedule_seconds: float | None = None
    swept: bool = False  # the interval is a sweeping watcher's, not schedule.cron's
    hits: dict[str, str] = field(default_factory=dict)  # hit id -> why it may be stale

    @property
    def too_old(self) -> bool:
        age, every = self.last_build_age_seconds, self.schedule_seconds
        return age is not None and every is not None and age > 2 * every + 120

    def note(self) -> str:
        parts = []
        if self.changed_count:
            shown = ", ".join(self.changed[:SHOWN_PATHS])
            more = self.changed_count - min(self.changed_count, SHOWN_PATHS)
            parts.append(f"{self.changed_count} changed file(s) not yet indexed ({shown}"
                         f"{f', and {more} more' if more else ''})")
        if self.building:
            parts.append(self.building)
        if self.too_old:  # what to do about it: a search at the terminal may be all there is
            age, every = _age(self.last_build_age_seconds or 0.0), \
                _age(self.schedule_seconds or 0.0)
            parts.append(f"the last build finished {age} ago and the watcher sweeps every "
                         f"{every}: see `vq status`" if self.swept else
                         f"the last build finished {age} ago and schedule.cron asks for one "
                         f"every {every}: is a scheduler running? (`vq schedule`, or `vq "
                         f"jobs cron` for crontab)")
        return "results may be stale: " + "; ".join(parts) if parts else ""

    def to_json(self) -> dict[str, Any] | None:
        if not self.note():
            return None
        return {"note": self.note(), "changed": self.changed[:SHOWN_PATHS],
                "changed_count": self.changed_count, "building": self.building or None,
                "last_build_age_seconds": self.last_build_age_seconds,
                "too_old": self.too_old}


def _files_read(record: dict[str, Any] | None) -> str:
    """"; 40 of 88 files read" while the running build reads (``record``: its progress,
    as the search read it once): a first build's results come from the files written so
    far, and this says how many that is."""
    done, total = (record or {}).get("files_done"), (record or {}).get("files_total")
    if not isinstance(done, int) or not isinstance(total, int) or not 0 <= done < total:
        return ""
    return f"; {done:,} of {total:,} files read"


def staleness(settings: Settings, index: store.Index, hits: list[Any],
              record: dict[str, Any] | None = None) -> Staleness:
    """What may be stale about ``hits``; ``record``: the running build's progress
    (``build_progress.read_record``), which the search has read already."""
    out = Staleness(schedule_seconds=cron_seconds(settings.schedule.cron))
    watch = read_state(settings.index_dir)
    changed = set(watch.pending) if watch else set()
    if watch:
        out.changed_count = watch.pending_count
        if watch.building:
            out.building = "a watch batch is being indexed"
        # a watcher indexes each change as it comes: no build for an hour is a quiet hour;
        # one that fell back to sweeping builds on its own interval
        out.swept = watch.mode == "sweeping"
        out.schedule_seconds = watch.sweep_seconds if out.swept else None
    if not out.building and (held := lock_state(settings.build_lock)):
        out.building = f"a build is running ({held}{_files_read(record)})"
    out.hits = _stale_hits(index, hits)
    extra = sorted({f"{h.vault}/{h.path}" for h in hits if h.id in out.hits} - changed)
    out.changed = sorted(changed) + extra
    out.changed_count += len(extra)
    out.last_build_age_seconds = _last_build_age(index.location)
    return out


def _age(seconds: float) -> str:
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def _stale_hits(index: store.Index, hits: list[Any]) -> dict[str, str]:
    """Each hit whose file differs from what was indexed: a stat each; a differing mtime
    is confirmed against the manifest (one small read, only then)."""
    suspects: dict[tuple[str, str], list[Any]] = {}
    gone: dict[str, str] = {}
    for hit in hits:
        try:
            mtime = os.stat(hit.abs_path).st_mtime
        except OSError:
            gone[hit.id] = "deleted since it was indexed"
            continue
        if abs(mtime - hit.mtime) > MTIME_SLACK:
            suspects.setdefault((hit.vault, hit.path), []).append(hit)
    if not suspects:
        return gone
    rows = index.files.search().where(store.path_filter(suspects)[0]).select(
        ["vault", "path", "mtime_ns", "size"]).limit(None).to_arrow().to_pylist()
    known = {(r["vault"], r["path"]): (r["mtime_ns"], r["size"]) for r in rows}
    for key, group in suspects.items():
        st = os.stat(group[0].abs_path)
        if known.get(key) != (st.st_mtime_ns, st.st_size):
            gone.update({h.id: "changed since it was indexed" for h in group})
    return gone


def _last_build_age(location: str) -> float | None:
    """Seconds since the builds log last changed (each build appends one version)."""
    if paths.is_uri(location):
        return None
    try:
        mtime = os.stat(os.path.join(location, "builds.lance", "_versions")).st_mtime
    except OSError:
        return None
    return max(0.0, time.time() - mtime)


def cron_seconds(expr: str) -> float | None:
    """The interval of the simple cron forms ("*/5 * * * *", "* * * * *", "0 * * * *");
    None for any other (then age is not judged)."""
    fields = expr.split()
    if len(fields) != 5 or any(f != "*" for f in fields[2:]):
        return None
    minute, hour = fields[0], fields[1]
    if hour == "*":
        if minute == "*":
            return 60.0
        if m := EVERY_N.match(minute):
            return 60.0 * max(1, int(m.group(1)))
        if minute.isdigit():
            return 3600.0
    return None
