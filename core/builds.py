"""The builds log: one row per build (start, seconds, outcome, model, device, summary).

The build appends to it; `vq status`, `vq status --check --max-age`, MCP
``status`` and `vq doctor` read the newest row. It is trimmed here too, because
every build adds one row, one fragment and one version: every five minutes for
months, unless someone keeps it small.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from vq.core.search_indexes import grace
from vq.core.settings import Settings
from vq.core.store import Index

BUILD_HISTORY = 2000    # build records kept: a week of five-minute builds
BUILDS_COMPACT_AT = 64  # fragments in the builds log (one per build) that trigger a trim


def last_build(index: Index) -> dict[str, Any] | None:
    """The newest row with its summary parsed, None before the first build."""
    if index.builds is None or not index.builds.count_rows():
        return None
    started = index.builds.search().select(["started_at"]).limit(None).to_arrow()["started_at"]
    newest = max(started.to_pylist())  # one column: the summaries stay on disk
    rows = index.builds.search().where(f"started_at >= {newest!r}").limit(None).to_arrow()
    row = max(rows.to_pylist(), key=lambda r: r["started_at"])
    row["summary"] = json.loads(row["summary"] or "{}")
    return row


def finished_at(build: Mapping[str, Any]) -> float:
    """When a builds-log row's build ended (the log keeps its start and its seconds)."""
    if build.get("finished_at") is not None:
        return float(build["finished_at"])
    return float(build["started_at"]) + float(build.get("seconds") or 0.0)


def when_built(build: Mapping[str, Any], now: float | None = None) -> str:
    """``started 2026-12-02 17:00:31 (54m ago), finished 2026-12-02 17:48:55 (6m ago),
    took 48m 24s``: the words `vq status`, `status --check` and `vq doctor` all use, so a
    long build's start is never read as its finish."""
    now = time.time() if now is None else now
    started, finished = float(build["started_at"]), finished_at(build)
    return (f"started {_stamp(started)} ({ago(now - started)} ago), "
            f"finished {_stamp(finished)} ({ago(now - finished)} ago), "
            f"took {took(finished - started)}")


def ago(seconds: float) -> str:
    """``54m``, ``3h``, ``2d``: how long ago, to the largest whole unit."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def took(seconds: float) -> str:
    """``4.2s``, ``48m 24s``, ``2h 5m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def record_build(index: Index, settings: Settings, started: float, seconds: float,
                 outcome: str, model: str, device: str, summary: dict[str, Any]) -> None:
    """Append one build's row, then trim the log if it has grown."""
    if index.builds is None:
        return
    index.builds.add([{"started_at": started, "seconds": seconds, "outcome": outcome,
                       "model": model, "device": device, "summary": json.dumps(summary)}])
    trim_builds(index, settings)


def trim_builds(index: Index, settings: Settings) -> bool:
    """Past ``BUILDS_COMPACT_AT`` fragments, drop all but the newest ``BUILD_HISTORY``
    rows and compact (old versions go after the same grace period as the other
    tables). True when it trimmed."""
    table = index.builds
    if table is None or table.stats()["fragment_stats"]["num_fragments"] < BUILDS_COMPACT_AT:
        return False
    started = table.search().select(["started_at"]).limit(None).to_arrow()["started_at"]
    if len(started) > BUILD_HISTORY:
        cutoff = float(np.sort(started.to_numpy())[-BUILD_HISTORY])
        table.delete(f"started_at < {cutoff!r}")
    table.optimize(cleanup_older_than=grace(settings))
    return True
