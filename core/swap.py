"""The `vq build --rebuild` swap: journaled, so a kill in the middle is finished later.

A rebuild writes its tables in ``STAGE_DIR`` and, once done, moves them over
the old ones, one rename per table. A kill between two renames used to leave
no index at all (the old table moved aside, the new one not yet in place), and
a search in that window got "no index". Now:

1. the swapper takes ``SWAP_LOCK`` (an ``flock``: the kernel drops it if the
   swapper dies) and writes ``JOURNAL`` before the first rename;
2. each table: the old one into ``RETIRED_DIR``, the new one into place;
3. the journal is removed, then the retired and staged folders.

Whoever opens the index next (a reader or a build) and finds the journal takes
the lock (so it waits for a swap in progress, a few milliseconds) and, if the
journal is still there, its swapper died: it finishes the swap forward (the
staged tables are complete: the journal is written only after the build). The
steps are idempotent, so finishing twice, or after a kill in ``finish`` itself,
converges.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator, Sequence

STAGE_DIR = "rebuild.tmp"
RETIRED_DIR = "rebuild.old"
JOURNAL = "rebuild.swapping"
SWAP_LOCK = "rebuild.lock"
WAIT_SECONDS = 30.0  # a reader waits at most this long for a swap in progress


def swap_in(target: str, tables: Sequence[str]) -> None:
    """Move ``target/STAGE_DIR``'s ``tables`` over ``target``'s, recoverably."""
    with _locked(target, wait=WAIT_SECONDS):
        _write_journal(target)
        finish(target, tables)


def recover(target: str, tables: Sequence[str]) -> None:
    """Finish a swap whose swapper died (or wait for one in progress); cheap when none."""
    if not os.path.exists(os.path.join(target, JOURNAL)):
        return
    with contextlib.suppress(OSError), _locked(target, wait=WAIT_SECONDS):
        if os.path.exists(os.path.join(target, JOURNAL)):
            finish(target, tables)


def finish(target: str, tables: Sequence[str]) -> None:
    """Every staged table into place (its old one retired first), then clean up."""
    stage, retired = os.path.join(target, STAGE_DIR), os.path.join(target, RETIRED_DIR)
    os.makedirs(retired, exist_ok=True)
    for name in tables:
        old, new = os.path.join(target, name), os.path.join(stage, name)
        if not os.path.exists(new):
            continue  # moved already (or the staged build had no such table)
        if os.path.exists(old):
            aside = os.path.join(retired, name)
            shutil.rmtree(aside, ignore_errors=True)
            os.rename(old, aside)
        os.rename(new, old)
    _fsync_dir(target)
    os.unlink(os.path.join(target, JOURNAL))
    shutil.rmtree(retired, ignore_errors=True)
    shutil.rmtree(stage, ignore_errors=True)


def _write_journal(target: str) -> None:
    path = os.path.join(target, JOURNAL)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()} {time.time()}\n")
        fh.flush()
        os.fsync(fh.fileno())
    _fsync_dir(target)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _locked(target: str, wait: float) -> Iterator[None]:
    """Hold ``SWAP_LOCK`` (polling up to ``wait`` seconds); ``OSError`` past that."""
    fd = os.open(os.path.join(target, SWAP_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError("a rebuild's swap holds the index") from None
                time.sleep(0.01)  # a swap is a few renames: poll until it is done
        yield
    finally:
        os.close(fd)
