"""The resident service: one process per user answers whole searches on a Unix socket.

Run by `vq serve` (by hand, or started detached by a search: ``search.autostart``)
and inside `vq schedule`. This module is the transport and its guarantees; what
each request does lives in ``vq.query.service.handler``.

What a client can rely on:
- the socket is 0600 inside a private folder (``vq.core.runtime``) and a peer
  of another uid is refused (``SO_PEERCRED``);
- a listen backlog of 128, at most ``MAX_CONNECTIONS`` served at once (the
  rest are told "busy" and retry), an idle connection is dropped after
  ``IDLE_CONNECTION_SECONDS``;
- exactly one service per user, for every index a request names (one slot per
  index, ``vq.query.service.slots``): it holds an flock on ``runtime.start_lock``
  for its whole life, so a search that finds the lock held never starts another;
- without requests for ``idle_minutes`` (0: never) the service exits by itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socketserver
import threading
import time
from typing import Any

from vq.core import runtime
from vq.core.code_id import code_id, current
from vq.core.errors import ServiceRunning
from vq.query.service.client import CODE_CHECK_SECONDS

MAX_CONNECTIONS = 64
IDLE_CONNECTION_SECONDS = 10.0
REFRESH_SECONDS = 2.0  # how often the ops look for a build's new version (a watch batch: at once)


class _Handler(socketserver.StreamRequestHandler):
    """One request per connection; a client that leaves mid-request only ends its thread."""

    timeout = IDLE_CONNECTION_SECONDS  # a connection that sends nothing is dropped

    def handle(self) -> None:
        try:
            line = self.rfile.readline(runtime.MAX_MESSAGE + 1)
            if len(line) > runtime.MAX_MESSAGE:
                self._discard_line()
                reply: dict[str, Any] = {"ok": False, "error": "request too large"}
            elif not line.endswith(b"\n"):
                return  # the client left (or timed out) before finishing its request
            else:
                reply = self.server.answer(json.loads(line))  # type: ignore[attr-defined]
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"ok": False, "error": f"bad request: {exc}"}
        except OSError:
            return  # timed out or disconnected mid-request
        except Exception as exc:  # noqa: BLE001 - one bad request never kills the service
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(OSError):  # the client may have disconnected
            self.wfile.write(json.dumps(reply).encode() + b"\n")

    def _discard_line(self) -> None:
        """Read the rest of an oversized request so the client can read our refusal."""
        while not line_end(self.rfile.readline(1 << 20)):
            pass


def line_end(chunk: bytes) -> bool:
    return not chunk or chunk.endswith(b"\n")


class Service(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = runtime.BACKLOG

    def __init__(self, ops: Any, idle_minutes: float = 0.0, lock_fd: int | None = None
                 ) -> None:
        self.path = runtime.service_socket()
        self.ops = ops
        self.idle_seconds = idle_minutes * 60
        self.started = time.time()
        self.last_used = time.monotonic()
        self.stopped = threading.Event()  # set on idle exit; `vq serve` waits on it
        self.exit_reason = ""  # why it stopped by itself, when not idle or a signal
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._active = 0
        self._count = threading.Lock()
        self.lock_fd = claim(lock_fd)
        self.code = code_id()  # the code this process loaded (``vq.core.code_id``)
        self.preloading: threading.Thread | None = None  # the model load, begun by start()
        self.path.unlink(missing_ok=True)  # we hold the lock: any socket here is stale
        old = os.umask(0o177)  # the socket is born 0600: only this user may connect
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        return runtime.peer_is_me(request)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(b'{"ok": false, "error": "busy"}\n')
            self.shutdown_request(request)
            return
        with self._count:
            self._active += 1
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count:
                self._active -= 1
                self.last_used = time.monotonic()
            self._slots.release()

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.last_used = time.monotonic()
        if msg["op"] == "info":
            return {"ok": True, "pid": os.getpid(), "started": self.started,
                    "idle_minutes": self.idle_seconds / 60, "socket": str(self.path),
                    "code": self.code, **self.ops.info()}
        if msg.get("code") != self.code:  # a client of other (newer, older) vq code
            return {"ok": False, "error": "other code"}
        return self.ops.answer(msg)

    def idle(self) -> bool:
        """True once nothing has been asked for ``idle_minutes`` (never when 0)."""
        with self._count:
            quiet = self._active == 0 and time.monotonic() - self.last_used > self.idle_seconds
        return bool(self.idle_seconds) and quiet

    def watch_idle(self) -> None:
        step = min(30.0, max(0.05, self.idle_seconds / 20))
        while not self.stopped.wait(step):
            if self.idle():
                self.stopped.set()

    def watch_code(self) -> None:
        """Exit once vq's files on disk are no longer the code this process runs (an
        upgrade, a pull in an editable checkout): every client of the new code is
        refused, so the service would only cost memory; the next search starts one
        of the new code. Run by `vq serve` only: `vq schedule` keeps its cron builds."""
        while not self.stopped.wait(CODE_CHECK_SECONDS):
            if current() != self.code:
                self.exit_reason = ("vq's code changed on disk since this service started; "
                                    "the next search starts one of the new code")
                self.stopped.set()

    def watch_versions(self) -> None:
        """Between queries, let the ops load what a build committed (``Ops.refresh``), so
        the first search after a build does not wait for the new snapshot: every
        ``REFRESH_SECONDS`` (a cron build in another process), and at once when a
        watcher of this process says it committed (``ops.wake``)."""
        refresh = getattr(self.ops, "refresh", None)
        wake = getattr(self.ops, "wake", None) or threading.Event()
        while refresh is not None and not self.stopped.is_set():
            wake.wait(REFRESH_SECONDS)
            wake.clear()
            if not self.stopped.is_set():
                refresh()

    def server_close(self) -> None:
        super().server_close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self.lock_fd)  # the lock goes with it: a later search may start one


def claim(inherited: int | None = None) -> int:
    """Hold the user's service lock for this process's life, or raise ServiceRunning.

    ``inherited``: the fd an autostarting search locked and passed down; a lock
    on the same open file is ours already.
    """
    fd = inherited if inherited is not None else os.open(
        runtime.start_lock(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ServiceRunning(runtime.lock_holder()) from None
    os.set_inheritable(fd, False)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def start(settings: Any, idle_minutes: float = 0.0, lock_fd: int | None = None,
          on_open: Any = None, reload: Any = None) -> Service:
    """Bind now, open ``settings``' index and load its model in the background, serve
    from daemon threads.

    Clients that arrive while the model loads wait for it (within their deadline).
    ``on_open(settings, reload, committed)``: called once per index when its slot first
    opens (the CLI starts watching it; ``handler.OnOpen``). ``reload``: ``settings``
    read afresh (for the watcher of the service's own index).
    """
    from vq.query.service.handler import Ops  # the model stack loads only in a service

    ops = Ops(settings, on_open, reload)
    service = Service(ops, idle_minutes, lock_fd)
    service.preloading = threading.Thread(target=ops.preload, name="vq-preload", daemon=True)
    service.preloading.start()
    threading.Thread(target=service.serve_forever, name="vq-serve", daemon=True).start()
    threading.Thread(target=service.watch_idle, name="vq-idle", daemon=True).start()
    threading.Thread(target=service.watch_versions, name="vq-refresh", daemon=True).start()
    return service


def stop(service: Service, preload_wait: float = 120.0) -> None:
    """Stop serving, remove the socket, release the lock; wait for a model still loading
    (an interpreter that exits while a thread imports torch may crash on the way out)."""
    service.stopped.set()
    wake = getattr(service.ops, "wake", None)
    if wake is not None:
        wake.set()  # the refresh thread sees ``stopped`` now
    service.shutdown()
    service.server_close()
    preloading = getattr(service, "preloading", None)
    if preloading is not None:
        preloading.join(preload_wait)
