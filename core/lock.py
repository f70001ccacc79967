"""The build lock's identity: who holds it, for status lines and skip messages.

Builds take the lock in ``vq.jobs.runner``; readers never do. The holder writes a
small sidecar (pid, since) beside the lock file so others can say who it is,
and removes it when it releases the lock.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def holder_file(lock_path: Path) -> Path:
    return lock_path.with_name(lock_path.name + ".holder")


def write_holder(lock_path: Path) -> None:
    holder_file(lock_path).write_text(json.dumps({"pid": os.getpid(), "since": time.time()}))


def describe_holder(lock_path: Path) -> str:
    """"pid 123 since 2026-12-02 12:00:01" from the holder's sidecar, best effort."""
    try:
        info = json.loads(holder_file(lock_path).read_text())
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"]))
        return f"pid {info['pid']} since {since}"
    except (OSError, ValueError, KeyError):
        return "pid unknown"


OVERDUE_FACTOR = 10      # held this many times longer than the last build took ...
OVERDUE_FLOOR = 3600.0   # ... and at least this long (a first build may take an hour)


def overdue(lock_path: Path, usual_seconds: float | None, max_seconds: float | None,
            now: float | None = None) -> str:
    """A warning when the lock's holder has held it far longer than a build should
    ("" otherwise): ``max_seconds`` (``build_max_seconds``) when set, else
    ``OVERDUE_FACTOR`` times the last build's duration, at least ``OVERDUE_FLOOR``.

    A hung build (a stuck hook, a read that never returns) keeps the lock, and
    every later scheduled build "skips" with exit 0, so nothing else says so.
    """
    try:
        info = json.loads(holder_file(lock_path).read_text())
        held, pid = (now or time.time()) - float(info["since"]), int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    limit = max_seconds or max(OVERDUE_FLOOR, OVERDUE_FACTOR * (usual_seconds or 0.0))
    if held <= limit:
        return ""
    return (f"the build holding the lock (pid {pid}) has run {held / 60:.0f} min, longer "
            f"than {limit / 60:.0f} min: it may be hung, and every scheduled build skips "
            f"until it ends; look at it (`ps -p {pid} -o args`) and stop it (`kill {pid}`)")


def clear_holder(lock_path: Path) -> None:
    holder_file(lock_path).unlink(missing_ok=True)


def lock_state(lock_path: Path) -> str | None:
    """None when free, else who holds it, from the holder's sidecar.

    Never takes the lock itself: a probe that held it for an instant would
    make a cron build starting at that moment skip its run.
    """
    try:
        info = json.loads(holder_file(lock_path).read_text())
        os.kill(int(info["pid"]), 0)
    except ProcessLookupError:
        return None  # the holder died (SIGKILL): the kernel released its lock
    except PermissionError:
        pass  # alive, owned by another user
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return describe_holder(lock_path)
