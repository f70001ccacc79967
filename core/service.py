"""The warm encode service: hold the query encoder (and reranker) loaded, answer on a socket.

Run by `vq serve` and inside `vq schedule`. One service per index, a Unix
socket with 0600 permissions in the user's runtime dir. Requests name the
model they need (the index's), so a model change just loads the new one.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any

from vq.core.encoder import shared_model
from vq.core.paths import service_socket

MAX_MESSAGE = 8 * 1024 * 1024
MAX_TEXTS = 256


class _Handler(socketserver.StreamRequestHandler):
    """One request per connection; a client that leaves mid-request only ends its thread."""

    def handle(self) -> None:
        try:
            line = self.rfile.readline(MAX_MESSAGE + 1)
            if len(line) > MAX_MESSAGE:
                self._discard_line()
                reply: dict[str, Any] = {"ok": False, "error": "request too large"}
            else:
                reply = self.server.answer(json.loads(line))  # type: ignore[attr-defined]
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"ok": False, "error": f"bad request: {exc}"}
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

    def __init__(self, index_dir: str, model: str, device: str) -> None:
        self.path = service_socket(index_dir)
        self.model, self.device = model, device
        self._lock = threading.Lock()
        _claim(self.path)
        old = os.umask(0o177)  # the socket is born 0600: only this user may connect
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        if op == "info":
            return {"ok": True, "pid": os.getpid(), "model": self.model, "device": self.device}
        if op == "encode":
            texts = [str(t) for t in msg["texts"]][:MAX_TEXTS]
            with self._lock:  # torch inference from one thread at a time
                enc = shared_model("encoder", msg["model"], self.device, 16)
                self.model = msg["model"]
                vectors = enc.encode(texts)
            return {"ok": True, "model": msg["model"], "pid": os.getpid(),
                    "device": enc.device.name, "vectors": vectors.tolist()}
        if op == "rerank":
            with self._lock:
                model = shared_model("cross", msg["model"], self.device)
                scores = model.predict([tuple(p) for p in msg["pairs"]],
                                       show_progress_bar=False)
            return {"ok": True, "scores": [float(s) for s in scores]}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def server_close(self) -> None:
        super().server_close()
        with contextlib.suppress(OSError):
            self.path.unlink()


def _claim(path: Path) -> None:
    """Remove a stale socket; refuse to start if a live service already answers."""
    if not path.exists():
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink(missing_ok=True)
            return
    from vq.core.errors import VqError

    raise VqError(f"a vq service already listens on {path}", "stop it first, or use it")


def start(index_dir: str, model: str, device: str) -> Service:
    """Bind now, load the encoder in the background, serve from a daemon thread.

    Clients that arrive while the model loads wait on the service's lock
    (within their read timeout) or fall back to encoding in-process.
    """
    service = Service(index_dir, model, device)

    def preload() -> None:
        with service._lock, contextlib.suppress(Exception):
            shared_model("encoder", model, device, 16)

    threading.Thread(target=preload, name="vq-preload", daemon=True).start()
    threading.Thread(target=service.serve_forever, name="vq-serve", daemon=True).start()
    return service


def model_for(settings: Any) -> str:
    """The index's model when there is an index (queries must match it), else config's."""
    from vq.core import store

    try:
        return store.open_for(settings).meta.model
    except Exception:  # noqa: BLE001 - no index yet: serve the configured model
        return settings.model
