"""Client of the warm encode service: ask a resident process instead of loading torch.

Newline-delimited JSON over a Unix socket. Everything fails soft: no socket,
a stale one, another model, a slow or broken answer — ``None``, and the
caller encodes in-process exactly as before. Imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import json
import socket
from pathlib import Path
from typing import Any

from vq.core.paths import service_socket
from vq.core.service import MAX_MESSAGE

CONNECT_TIMEOUT = 0.2
READ_TIMEOUT = 5.0


def request(index_dir: str, message: dict[str, Any], timeout: float = READ_TIMEOUT
            ) -> dict[str, Any] | None:
    path = service_socket(index_dir)
    if not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(str(path))
            sock.settimeout(timeout)
            sock.sendall(json.dumps(message).encode() + b"\n")
            reply = _read_line(sock)
    except ConnectionRefusedError:
        _remove_stale(path)
        return None
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) and reply.get("ok") else None


def _read_line(sock: socket.socket) -> Any:
    chunks, size = [], 0
    while True:
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
        size += len(data)
        if data.endswith(b"\n") or size > MAX_MESSAGE:
            break
    return json.loads(b"".join(chunks))


def _remove_stale(path: Path) -> None:
    """Nobody listens: a killed service left its socket behind."""
    with contextlib.suppress(OSError):
        path.unlink()


def encode(index_dir: str, model: str, texts: list[str]) -> tuple[Any, dict] | None:
    """(float32 array, service info) from the warm service, or None."""
    reply = request(index_dir, {"op": "encode", "model": model, "texts": texts})
    if reply is None or reply.get("model") != model:
        return None
    import numpy as np

    return np.asarray(reply["vectors"], dtype=np.float32), {
        "pid": reply.get("pid"), "device": reply.get("device")}


def rerank(index_dir: str, model: str, pairs: list[list[str]]) -> list[float] | None:
    reply = request(index_dir, {"op": "rerank", "model": model, "pairs": pairs}, timeout=30)
    return None if reply is None else [float(s) for s in reply["scores"]]


def info(index_dir: str) -> dict[str, Any] | None:
    """pid, models loaded and device of the running service, or None when none runs."""
    return request(index_dir, {"op": "info"}, timeout=1.0)
