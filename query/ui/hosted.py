"""The dashboard served by the resident service (`vq serve --ui`, ``serve.ui: true``).

The same app, guard and rules as `vq ui` (``vq.query.ui.app.create_app`` through
``vq.query.ui.serve.server``), bound to 127.0.0.1 only, run on a thread of the
service's process: its searches use the index the service holds open and the model
it has loaded (``Ops.result``), and its health page shows that process.

`vq ui` finds it through a file the service writes into its private runtime folder
(``runtime.dashboard_file``): the URL with its token, 0600, read back only through
``runtime.read_private`` (the socket's rules: our folder, our file, no link, nobody
else may read it), and believed only while the process that wrote it still holds
the user's service lock (a file left by a killed service names a port that may be
anyone's by now).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vq.core import runtime
from vq.core.settings import Settings
from vq.query.ui.context import UiContext

STOP_WAIT_SECONDS = 10.0


class ServiceHost:
    """``UiContext.host`` for a dashboard inside ``service`` (a ``service.server.Service``)."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def result(self, settings: Settings, query: Any) -> Any:
        self.touch()
        return self.service.ops.result(settings, query)

    def info(self) -> dict[str, Any]:
        return self.service.answer({"op": "info"})

    def touch(self) -> None:
        self.service.last_used = time.monotonic()


@dataclass
class Hosted:
    """A dashboard running on a thread of this process; ``stop()`` ends it and its file."""

    url: str
    port: int
    file: Path
    server: Any
    thread: threading.Thread

    def stop(self, wait: float = STOP_WAIT_SECONDS) -> None:
        self.server.should_exit = True
        self.thread.join(wait)
        with contextlib.suppress(OSError):
            self.file.unlink()


def start(ctx: UiContext, index_dir: str, port: int = 0) -> Hosted:
    """Bind 127.0.0.1:``port`` (VqError when taken), serve on a daemon thread, then tell
    `vq ui` where. The socket listens from the bind on, so the URL works at once."""
    from vq.query.ui.serve import LOOPBACK, bind, server

    bound = bind(LOOPBACK, port)
    srv = server(ctx, bound)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [bound.sock]},
                              name="vq-ui", daemon=True)
    thread.start()
    url = bound.url(ctx.token)
    path = runtime.dashboard_file(index_dir)
    runtime.write_private(path, json.dumps({"url": url, "port": bound.port, "pid": os.getpid(),
                                            "read_only": ctx.read_only,
                                            "index_dir": index_dir}))
    return Hosted(url, bound.port, path, srv, thread)


def forget(index_dir: str) -> None:
    """Remove a dashboard file left by an earlier service; call only while holding the
    user's service lock (nobody else can be serving it then)."""
    with contextlib.suppress(OSError, runtime.ServiceDirUnsafe):
        runtime.dashboard_file(index_dir, create=False).unlink()


def find(index_dir: str) -> dict[str, Any] | None:
    """The dashboard the running service for ``index_dir`` serves: {url, port, pid,
    read_only}, or None. An unsafe file or folder raises (ServiceFileUnsafe,
    ServiceDirUnsafe) rather than being trusted or silently passed over."""
    text = runtime.read_private(runtime.dashboard_file(index_dir, create=False))
    if text is None:
        return None
    try:
        found = json.loads(text)
        url, pid = str(found["url"]), int(found["pid"])
    except (ValueError, KeyError, TypeError):
        return None
    if not url.startswith("http://127.0.0.1:"):
        return None
    if not runtime.is_running() or runtime.lock_holder() != pid:
        return None  # written by a service that has since died
    return {**found, "url": url, "pid": pid, "read_only": bool(found.get("read_only"))}
