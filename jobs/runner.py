"""One build under the index's file lock: shared by `vq build`, the scheduler, cron and CI.

The lock is an OS-level ``filelock`` (released by the kernel when its holder
dies, so a killed build never leaves a stale lock). A held lock means skip,
which is a success: the other build is doing the work. ``wait`` queues instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from filelock import FileLock, Timeout

from vq.core.errors import LockTimeout
from vq.core.lock import clear_holder, describe_holder, write_holder
from vq.core.paths import make_private_dir, owner_only
from vq.core.settings import Settings


@dataclass(frozen=True)
class Skipped:
    """The lock was held by another build; ``holder`` says who, for the log line."""

    holder: str

    def line(self) -> str:
        return f"skipped: another build holds the lock ({self.holder})"


def locked_build(settings: Settings, vault_ids: tuple[str, ...] = (), rebuild: bool = False,
                 wait: float = 0, progress: Any = None,
                 should_stop: Callable[[], bool] | None = None, encoder: Any = None,
                 paths: Mapping[str, Iterable[str]] | None = None) -> Any:
    """Run one build under the lock; returns its BuildSummary, or Skipped.
    Everything the build writes is owner-only (``owner_only``). ``paths``: only these
    changed paths (vault id -> paths in it), the watcher's build."""
    with owner_only():
        return _locked_build(settings, vault_ids, rebuild, wait, progress, should_stop,
                             encoder, paths)


def _locked_build(settings: Settings, vault_ids: tuple[str, ...], rebuild: bool, wait: float,
                  progress: Any, should_stop: Callable[[], bool] | None, encoder: Any,
                  paths: Mapping[str, Iterable[str]] | None) -> Any:
    lock_path = settings.build_lock
    make_private_dir(lock_path.parent)
    lock = FileLock(str(lock_path), timeout=wait if wait else 0)
    try:
        lock.acquire()
    except Timeout:
        holder = describe_holder(lock_path)
        if wait:
            raise LockTimeout(str(lock_path), wait, holder) from None
        return Skipped(holder)
    try:
        write_holder(lock_path)
        from vq.indexer.build import build  # the write side loads only once the lock is ours

        return build(settings, vault_ids, rebuild, progress, should_stop, encoder, paths)
    finally:
        clear_holder(lock_path)
        lock.release()
