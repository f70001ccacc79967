"""The build's progress record beside its lock: what a running build is doing, and
whether the index holds chunks still waiting for their vectors.

A build writes it (atomically) when it starts work and as it goes; `vq status`
shows it while the lock is held, and a search that finds it says how much of the
index is embedded (``notice``). It outlives a killed or stopped build on purpose:
its presence is what tells the next build to look for rows without vectors (a
build that finds none skips that scan), so it is written before the first such
row is committed and removed only once none is left.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def record_path(lock_path: Path) -> Path:
    return lock_path.with_name(lock_path.name + ".progress")


def write_record(lock_path: Path, record: dict[str, Any]) -> None:
    path = record_path(lock_path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)


def read_record(lock_path: Path) -> dict[str, Any] | None:
    """The record, or None when there is none (or it cannot be read: best effort)."""
    try:
        data = json.loads(record_path(lock_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def clear_record(lock_path: Path) -> None:
    record_path(lock_path).unlink(missing_ok=True)


def chunks_of(done: int, total: int, exact: bool) -> str:
    """"12,400 of ~15,348 chunks": the ``~`` says the total is still an estimate (files
    are left to read), for the build's progress line and `vq status` alike."""
    return f"{done:,} of {'' if exact else '~'}{total:,} chunks"


def rows_pending(record: dict[str, Any] | None) -> int:
    """How many chunk rows of the searched tables wait for their vectors, as a build's
    ``record`` says (0: none, no record, or it is about a rebuild's staged tables)."""
    return 0 if not record or record.get("staged") else max(0, int(record.get("table_pending", 0)))


def embedded_line(record: dict[str, Any]) -> str | None:
    """"12,400 of 15,348 chunks embedded", or None when every chunk has its vectors
    (or the record is about a rebuild's staged tables, not the ones searched)."""
    pending = rows_pending(record)
    if not pending:
        return None
    rows = int(record.get("table_rows", 0))
    return f"{max(0, rows - pending):,} of {rows:,} chunks embedded"


def embedding_notices(lock_path: Path, record: dict[str, Any] | None) -> list[str]:
    """A search's notice while rows wait for their vectors (a build is embedding them,
    or one was stopped): ``record`` is the build's (``read_record``), read once by the
    search, which also scores those rows by their words (``rows_pending``)."""
    from vq.core.lock import lock_state

    line = embedded_line(record) if record else None
    if line is None:
        return []
    running = lock_state(lock_path) is not None
    rest = "a build is embedding the rest" if running else "run `vq build` to embed the rest"
    return [f"{line}; the others match by text only ({rest})"]
