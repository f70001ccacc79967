"""Knowing a build has nothing to do without reading the manifest.

Why: cron runs `vq build` every five minutes on a tree that has usually not
changed, and the watcher's sweep does the same walk; reading 100k manifest
rows, counting chunks and checking indexes cost as much as the walk. A build
whose reconcile came out empty records the tables' versions (``clean_state``)
in the walk cache with the walk it did (``vq.core.walk_cache``). The next build
whose walk finds exactly that walk again (``Discovery.same_as_cache``), with the
tables at those versions and the same settings, would reconcile to the same
empty plan: reconcile is a function of the manifest, the walk and the
configured vaults, and nothing else. Anything else takes the full path.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from vq.core import paths
from vq.core.filetypes import READERS_ID
from vq.core.manifest import Plan
from vq.core.settings import Settings
from vq.core.store import Index


def clean_state(index: Index, settings: Settings) -> list[Any] | None:
    """What must not have moved for a recorded empty plan to still hold: each table's
    folder (a rebuild swaps in new ones) and version, the settings the plan and the
    maintenance step read, and which reader reads which file (``READERS_ID``). None
    where it cannot be told (object storage)."""
    if paths.is_uri(index.location) or index.staged_for is not None:
        return None
    state: list[Any] = [READERS_ID, sorted(v.id for v in settings.vaults), settings.model,
                        settings.search.heading_boost > 0,
                        settings.maintenance.vector_index_min_rows]
    for name, table in (("chunks", index.chunks), ("files", index.files)):
        try:
            state += [os.stat(os.path.join(index.location, f"{name}.lance")).st_ino,
                      int(table.version)]
        except (OSError, AttributeError):
            return None
    return state


def is_empty(plan: Plan) -> bool:
    """Nothing to read (retries included), record or drop."""
    return not (plan.to_read or plan.problems or plan.deleted or plan.pruned_vaults)


def clean_record(index: Index, settings: Settings) -> dict[str, Any] | None:
    """What a build that found nothing to do saves with its walk: the state, and the
    tables' data files then on disk (a no-op checks they are still there instead of
    reading every row, as the full probe does)."""
    state = clean_state(index, settings)
    if state is None:
        return None
    return {"state": state, "data_files": _data_files(index.location)}


def remembered_clean(recorded: Any, index: Index, settings: Settings) -> bool:
    """The saved record still holds and its data files are all there. A missing one
    sends the build down the full path, whose probe says what is wrong."""
    state = None
    with contextlib.suppress(Exception):  # a table we cannot ask: take the full path
        state = clean_state(index, settings)
    if state is None or not isinstance(recorded, dict) or recorded.get("state") != state:
        return False
    return all(os.path.exists(os.path.join(index.location, name))
               for name in recorded.get("data_files") or ())


def _data_files(location: str) -> list[str]:
    out = []
    for table in ("chunks.lance", "files.lance", "builds.lance"):
        with contextlib.suppress(OSError):
            out += [f"{table}/data/{e.name}" for e in os.scandir(
                os.path.join(location, table, "data"))]
    return out
