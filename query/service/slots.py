"""One slot per index the user's service holds: its settings, the open index, a snapshot.

The service answers for every index a search names; each index_dir gets a
``Slot``, opened on its first search (or preloaded for `vq serve`'s own config).
What is per index lives here: the open tables, the snapshot of one version
(``vq.query.service.snapshot``) and a lock, so one search of an index runs at a
time while another index's search runs beside it. What is shared (the query
models) lives in ``vq.query.encoders``, loaded once per model.

A slot idle for ``serve.slot_idle_minutes`` drops its snapshot and tables (the
memory); its settings and its watcher stay, and the next search reopens it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from vq.core import store
from vq.core.settings import Settings
from vq.query.service import snapshot
from vq.query.sources import COLUMNS, LanceSources, Sources


class Slot:
    """An index held by the service. ``lock`` guards everything below it: a search holds
    it for its whole run; a refresh or an eviction only tries it (a busy slot reloads at
    its next search, and is not idle)."""

    def __init__(self, settings: Settings, reload: Callable[[], Settings]) -> None:
        self.index_dir = settings.index_dir
        self.settings = settings          # the settings it was opened with
        self.reload = reload              # the same settings read afresh (the watcher's)
        self.lock = threading.Lock()
        self.opened_at = time.time()
        self.last_used = time.time()
        self._idle_since = time.monotonic()
        self.opens = 0                    # times its tables were opened (1 + reopens)
        self.searches = 0
        self.model: str | None = None     # last known, kept after an eviction
        self.rows: int | None = None
        self.watch = ""                   # what became of watching it (the CLI's answer)
        self.announced = False            # the service was told it opened (to watch it)
        self._index: store.Index | None = None
        self._version: Any = None
        self._sources: Sources | None = None
        self._snapshot: snapshot.Snapshot | None = None

    @property
    def loaded(self) -> bool:
        return self._index is not None

    def sources(self) -> Sources:
        """The open index (opened again after an eviction, reopened when a build committed
        a new version or replaced it), answering from a snapshot of that version in memory.
        The caller holds ``lock``."""
        if self._index is None:
            self._index = store.open_for(self.settings)
            self.opens += 1
        version = self._index.chunks.version
        if version != self._version:
            index = store.open_for(self.settings)
            flat = snapshot.eligible(index, self.settings)
            snap = snapshot.load(index, COLUMNS, vectors=flat or snapshot.fits(index),
                                 flat=flat)
            self._index, self._version, self._snapshot = index, index.chunks.version, snap
            self._sources = snapshot.SnapshotSources(index, snap)
            self.model, self.rows = index.meta.model, len(snap.ids)
        return self._sources or LanceSources(self._index)

    def used(self) -> None:
        self.searches += 1
        self.last_used = time.time()
        self._idle_since = time.monotonic()

    def refresh(self) -> None:
        """Load what a build committed since the last search, unless a search runs now (it
        reloads itself) or the slot is evicted (its next search opens it)."""
        if self._index is None or not self.lock.acquire(blocking=False):
            return
        try:
            self.sources()
        except Exception:  # noqa: BLE001 - the next search reports what is wrong
            pass
        finally:
            self.lock.release()

    def evict_if_idle(self, idle_seconds: float) -> bool:
        """Drop the snapshot and tables after ``idle_seconds`` without a search (0: never);
        True when it did."""
        if not idle_seconds or self._index is None or \
                time.monotonic() - self._idle_since < idle_seconds:
            return False
        if not self.lock.acquire(blocking=False):
            return False  # a search runs: not idle
        try:
            self._index = self._version = self._sources = self._snapshot = None
            return True
        finally:
            self.lock.release()

    def info(self) -> dict[str, Any]:
        snap = self._snapshot
        return {"index_dir": self.index_dir, "model": self.model, "rows": self.rows,
                "loaded": self.loaded, "opens": self.opens, "searches": self.searches,
                "opened_at": self.opened_at, "last_used": self.last_used,
                "config": str(self.settings.config_file or "") or None,
                "resident_vectors": bool(snap and snap.vectors is not None),
                "resident_rows": bool(snap and snap.rows is not None)}
