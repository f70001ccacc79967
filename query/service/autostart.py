"""Start `vq serve` detached from a search that found no service (``search.autostart``).

Exactly one service per user, however many searches race, from however many
projects: the starter takes the user's service lock (``vq.core.runtime.start_lock``,
an flock) without waiting and hands the locked file to the child, which keeps it
for its life. A search that cannot take the lock knows a service runs or is
starting, and starts nothing. Standard library only; the search that starts the
service answers its own query in-process, later ones (from any project) use the
service, which opens each project's index on its first search.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from typing import Any

from vq.core import runtime


def spawn(settings: Any, overrides: dict[str, Any]) -> int | None:
    """The pid of the service started now, or None (one runs or is starting, or no socket dir)."""
    try:
        lock = runtime.start_lock()
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except (OSError, runtime.ServiceDirUnsafe):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        with open(runtime.service_log(), "ab") as log:
            proc = subprocess.Popen(serve_command(settings, overrides, fd), pass_fds=(fd,),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=log, start_new_session=True)
        return proc.pid
    except OSError:
        return None
    finally:
        os.close(fd)  # the child's copy of the open file keeps the lock


def serve_command(settings: Any, overrides: dict[str, Any], lock_fd: int) -> list[str]:
    args = [sys.executable, "-m", "vq"]
    if settings.config_file:
        args += ["--config", os.path.abspath(settings.config_file)]
    if overrides.get("index_dir"):
        args += ["--index-dir", str(overrides["index_dir"])]
    return [*args, "serve", "--lock-fd", str(lock_fd)]
