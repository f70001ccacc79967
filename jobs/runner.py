"""One build under the index's file lock: shared by `vq build`, the scheduler, cron and CI.

The lock is an OS-level ``filelock`` (released by the kernel when its holder
dies, so a killed build never leaves a stale lock). A held lock means skip,
which is a success: the other build is doing the work. ``wait`` queues instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from filelock import FileLock, Timeout

from vq.core import paths
from vq.core.errors import LockTimeout
from vq.core.lock import clear_holder, describe_holder, write_holder
from vq.core.settings import Settings


@dataclass(frozen=True)
class Skipped:
    """The lock was held by another build; ``holder`` says who, for the log line."""

    holder: str

    def line(self) -> str:
        return f"skipped: another build holds the lock ({self.holder})"


def locked_build(settings: Settings, vault_ids: tuple[str, ...] = (), rebuild: bool = False,
                 wait: float = 0, progress: Any = None,
                 should_stop: Callable[[], bool] | None = None, encoder: Any = None) -> Any:
    """Run one build under the lock; returns its BuildSummary, or Skipped.
    Everything the build writes is owner-only (``paths.owner_only``)."""
    with paths.owner_only():
        return _locked_build(settings, vault_ids, rebuild, wait, progress, should_stop,
                             encoder)


def _locked_build(settings: Settings, vault_ids: tuple[str, ...], rebuild: bool, wait: float,
                  progress: Any, should_stop: Callable[[], bool] | None, encoder: Any) -> Any:
    lock_path = settings.build_lock
    paths.make_private_dir(lock_path.parent)
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

        return build(settings, vault_ids, rebuild, progress, should_stop, encoder)
    finally:
        clear_holder(lock_path)
        lock.release()
