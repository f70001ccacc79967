"""Is the index current? The build's own plan, computed without reading a file or a model.

`vq status --check`, MCP ``status`` and `vq doctor` call this; it is ``plan_for``
(``vq.core.manifest``), the walk and reconcile a build runs, so "stale" means
"the next build would change something" and nothing else. A file whose last read
failed is not stale while it stays as it was: the build already tried it, and
`vq status` lists the error.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from vq.core.manifest import StaleFile, plan_for
from vq.core.settings import Settings
from vq.core.store import Index

__all__ = ["Freshness", "StaleFile", "check_freshness"]


@dataclass
class Freshness:
    """The verdict and its evidence; ``fresh`` is what the exit code says."""

    fresh: bool
    files: int
    stale: list[StaleFile] = field(default_factory=list)
    last_build: dict[str, Any] | None = None
    max_age_seconds: float | None = None
    too_old: bool = False
    missing_roots: list[str] = field(default_factory=list)
    errors: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_freshness(settings: Settings, index: Index, last_build: dict[str, Any] | None,
                    max_age_seconds: float | None = None, now: float | None = None
                    ) -> Freshness:
    """Fresh = nothing stale and, when ``max_age_seconds`` is given, a build that finished
    no longer ago than that. ``last_build`` is a builds-log row (``vq.core.builds``)."""
    plan, found, manifest = plan_for(settings, index)
    build = None
    too_old = max_age_seconds is not None
    if last_build is not None:
        finished = last_build["started_at"] + (last_build.get("seconds") or 0.0)
        age = max(0.0, (time.time() if now is None else now) - finished)
        build = {"started_at": last_build["started_at"], "finished_at": finished,
                 "age_seconds": round(age, 3), "outcome": last_build.get("outcome")}
        too_old = max_age_seconds is not None and age > max_age_seconds
    return Freshness(fresh=not plan.stale and not too_old,
                     files=len(found.files) + len(found.problems), stale=plan.stale,
                     last_build=build, max_age_seconds=max_age_seconds, too_old=too_old,
                     missing_roots=list(found.missing_roots),
                     errors=sum(1 for row in manifest.values() if row.error))
