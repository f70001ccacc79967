"""Is the index current? A stat walk compared with the manifest: no file reads, no model.

`vq status --check` runs this (importing it inside the command, so plain `vq
status` stays on the read side). The walk is the build's own ``discover``, so
include/exclude globs, ``.gitignore`` and ``max_file_bytes`` decide exactly
what a build would index, and "stale" means "the next build would change
something". A file whose last read failed is not stale while it stays as it
was: the build already tried it, and `vq status` lists the error.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from vq.core.settings import Settings
from vq.core.store import Index
from vq.indexer.discover import discover_for
from vq.indexer.reconcile import ManifestRow, read_manifest

Key = tuple[str, str]


@dataclass(frozen=True)
class StaleFile:
    vault: str
    path: str          # "" for a whole vault
    reason: str        # new | changed | unfinished | deleted | vault removed


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


def stale_files(settings: Settings, manifest: dict[Key, ManifestRow]
                ) -> tuple[list[StaleFile], int, list[str]]:
    """What the next build would touch: (stale files, files walked, missing vault roots)."""
    found = discover_for(settings)
    stale: list[StaleFile] = []
    seen: set[Key] = set()
    for entry in found.files:
        key = (entry.vault, entry.path)
        seen.add(key)
        old = manifest.get(key)
        if old is None:
            stale.append(StaleFile(*key, "new"))
        elif (old.size, old.mtime_ns) != (entry.size, entry.mtime_ns):
            stale.append(StaleFile(*key, "changed"))
        elif not old.hash and not old.error:  # blanked by a build that died rewriting it
            stale.append(StaleFile(*key, "unfinished"))
    for problem in found.problems:  # too large, broken symlink: recorded by the next build
        key = (problem.vault, problem.path)
        seen.add(key)
        if key not in manifest:
            stale.append(StaleFile(*key, "new"))
    configured = {v.id for v in settings.vaults}
    walked = set(found.walked_vaults)
    removed = sorted({vault for vault, _ in manifest} - configured)
    stale += [StaleFile(vault, "", "vault removed") for vault in removed]
    stale += [StaleFile(*key, "deleted") for key in sorted(manifest)
              if key[0] in walked and key not in seen]
    return stale, len(found.files) + len(found.problems), list(found.missing_roots)


def check_freshness(settings: Settings, index: Index, last_build: dict[str, Any] | None,
                    max_age_seconds: float | None = None, now: float | None = None
                    ) -> Freshness:
    """Fresh = nothing stale and, when ``max_age_seconds`` is given, a build that finished
    no longer ago than that. ``last_build`` is a ``builds`` row (see ``vq.query.status``)."""
    manifest = read_manifest(index)
    stale, files, missing = stale_files(settings, manifest)
    build = None
    too_old = max_age_seconds is not None
    if last_build is not None:
        finished = last_build["started_at"] + (last_build.get("seconds") or 0.0)
        age = max(0.0, (time.time() if now is None else now) - finished)
        build = {"started_at": last_build["started_at"], "finished_at": finished,
                 "age_seconds": round(age, 3), "outcome": last_build.get("outcome")}
        too_old = max_age_seconds is not None and age > max_age_seconds
    return Freshness(fresh=not stale and not too_old, files=files, stale=stale,
                     last_build=build, max_age_seconds=max_age_seconds, too_old=too_old,
                     missing_roots=missing,
                     errors=sum(1 for row in manifest.values() if row.error))
