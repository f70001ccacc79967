"""What a running watcher knows, in a small file beside the index, for every reader.

Why a file: the watcher runs in `vq watch`, `vq serve` or `vq schedule`, while
searches run in other processes (the CLI, MCP). The watcher knows cheaply which
files changed and are not yet indexed; it writes that here (atomically, on each
change of state) and a search reads it (one small read) to say its answer may
be stale. A state whose writer is no longer alive is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from vq.core import paths

STATE_NAME = "watch-state.json"
SHOWN_PATHS = 5  # pending paths a note names; the count says the rest


@dataclass
class WatchState:
    """``mode``: "watching" (events), "sweeping" (no events: the periodic sweep only, see
    ``reason``) or "stopped". ``pending``: changed paths not yet indexed (vault/path)."""

    pid: int = field(default_factory=os.getpid)
    mode: str = "watching"
    reason: str = ""
    vaults: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    pending_count: int = 0
    building: bool = False
    since: float = field(default_factory=time.time)
    last_batch_at: float | None = None
    sweep_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def state_path(index_dir: str) -> str | None:
    return None if paths.is_uri(index_dir) else os.path.join(index_dir, STATE_NAME)


def write_state(index_dir: str, state: WatchState) -> None:
    """Replace the state file; a failure only costs readers the note."""
    where = state_path(index_dir)
    if where is None:
        return
    tmp = f"{where}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        # owner-only, like the index it sits in: it names files being edited
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                       encoding="utf-8") as fh:
            json.dump(state.to_json(), fh)
        os.replace(tmp, where)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def clear_state(index_dir: str, pid: int | None = None) -> None:
    """Remove the state file (only if ``pid`` wrote it, when given)."""
    where = state_path(index_dir)
    if where is None:
        return
    current = read_state(index_dir, alive_only=False)
    if pid is None or (current is not None and current.pid == pid):
        with contextlib.suppress(OSError):
            os.unlink(where)


def read_state(index_dir: str, alive_only: bool = True) -> WatchState | None:
    """The running watcher's state for this index, or None (none, or its writer died)."""
    where = state_path(index_dir)
    if where is None:
        return None
    try:
        with open(where, encoding="utf-8") as fh:
            data = json.load(fh)
        state = WatchState(**{k: v for k, v in data.items()
                              if k in WatchState.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None
    if alive_only and not _alive(state.pid):
        return None
    return state


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
