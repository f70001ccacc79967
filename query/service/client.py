"""Client of the user's resident service: ask it instead of opening the index and loading a
model. One service per user answers for every index; each request names its own.

Newline-delimited JSON over a Unix socket. Standard library only (numpy is
imported for an encode reply, after the answer came), so the `vq search` thin
client can try the service before it imports anything heavy.

Everything fails soft: no socket, a stale one, a busy or wedged service, an
answer for other settings: ``None``, and the caller does the work in-process.
A service that does not answer (stopped with SIGSTOP, wedged) costs one
deadline, not one per request or per process: the client that timed out notes the
service's pid in ``serve.silent`` and every process of the user leaves that service
alone for ``SILENT_SECONDS`` (a reply, or another service, ends it early); none when
its process is seen stopped. A search used to wait two 20 s deadlines.
A full listen queue (EAGAIN) or a refused connect while the service is alive
(it holds its lock) is retried until the deadline; a refused connect with
nobody holding the lock means the socket is stale, and it is removed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import time
from pathlib import Path
from typing import Any

from vq.core import runtime
from vq.core.code_id import code_id

CONNECT_RETRY = (0.005, 0.1)  # first and longest pause between connect attempts, seconds
DEADLINE = 20.0               # a search never waits longer than this for the service
INFO_DEADLINE = 2.0
CODE_CHECK_SECONDS = 10.0     # a `vq serve` looks this often whether vq's files changed
SILENT_SECONDS = 60.0         # after a timeout, this process leaves the service alone this long
_silent: dict[str, float] = {}  # socket path -> when its service last timed out here


def request(message: dict[str, Any], deadline: float = DEADLINE) -> dict[str, Any] | None:
    """The user's service's ``ok`` reply, or None (no service, busy past the deadline, an
    error). One service answers for every index: a message names its index itself.

    Raises ServiceDirUnsafe when the socket folder could be another user's.
    """
    path = runtime.service_socket(create=False)
    quiet = _silent.get(str(path))
    if (quiet is not None and time.monotonic() - quiet < SILENT_SECONDS) or not path.exists():
        return None
    message = {**message, "code": code_id()}  # a service of other code refuses to answer
    patient = deadline >= DEADLINE  # a search's wait; a 2 s info ask neither notes nor skips
    holder = runtime.lock_holder()
    if stopped(holder) or (patient and _marked_silent(holder)):
        return None
    end = time.monotonic() + deadline
    pause = CONNECT_RETRY[0]
    while True:
        reply = _attempt(path, message, end)
        if reply != "retry" or time.monotonic() + pause > end:
            break
        time.sleep(pause)  # backoff between attempts on a busy service, not a test wait
        pause = min(pause * 2, CONNECT_RETRY[1])
    if reply == "timeout":
        _silent[str(path)] = time.monotonic()  # this process works without it for a while
        if patient and holder is not None:
            _mark_silent(holder)  # and so do the user's other processes
    elif isinstance(reply, dict):
        with contextlib.suppress(OSError):  # it answers again: nobody need skip it
            runtime.silent_file(create=False).unlink()
    return reply if isinstance(reply, dict) and reply.get("ok") else None


def _mark_silent(pid: int) -> None:
    with contextlib.suppress(OSError):
        runtime.write_private(runtime.silent_file(), json.dumps({"pid": pid, "at": time.time()}))


def _marked_silent(holder: int | None) -> bool:
    """Another process of this user timed out on the service that holds the lock now
    (``holder``), less than ``SILENT_SECONDS`` ago. A note for another pid (a new
    service) is ignored."""
    from vq.core.errors import ServiceFileUnsafe

    try:
        text = runtime.read_private(runtime.silent_file(create=False), 256)
        note = json.loads(text) if text else None
    except (OSError, ValueError, ServiceFileUnsafe):
        return False  # none, unreadable, or not only ours: ask the service as usual
    if holder is None or not isinstance(note, dict) or note.get("pid") != holder:
        return False
    age = time.time() - float(note.get("at", 0))
    return 0 <= age < SILENT_SECONDS


def stopped(holder: int | None = None) -> int | None:
    """The service's pid when its process is stopped (SIGSTOP, ^Z): it cannot answer.
    ``holder``: the lock holder's pid, when the caller has read it already."""
    pid = holder if holder is not None else runtime.lock_holder()
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None  # gone, or no /proc (macOS): the deadline decides
    return pid if state in (b"T", b"t") else None


def _attempt(path: Path, message: dict[str, Any], end: float) -> Any:
    """One connection: a reply, "retry" (busy or full queue) or None."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(max(0.001, end - time.monotonic()))
            sock.connect(str(path))
            if not runtime.peer_is_me(sock):
                return None  # not our service: never send it a query
            sock.sendall(json.dumps(message).encode() + b"\n")
            reply = _read_line(sock, end)
    except (BlockingIOError, InterruptedError):
        return "retry"  # the listen queue is full
    except TimeoutError:
        return "timeout"  # connected (the kernel queues it) but no answer in time
    except (ConnectionRefusedError, FileNotFoundError):
        if runtime.is_running():
            return "retry"  # alive but between accept calls, or still binding
        _remove_stale(path)
        return None
    except (OSError, ValueError):
        return None  # timed out, reset, or garbage: the caller works in-process
    if isinstance(reply, dict) and reply.get("error") == "busy":
        return "retry"
    return reply


def _read_line(sock: socket.socket, end: float) -> Any:
    chunks, size = [], 0
    while True:
        sock.settimeout(max(0.001, end - time.monotonic()))
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
        size += len(data)
        if data.endswith(b"\n") or size > runtime.MAX_MESSAGE:
            break
    return json.loads(b"".join(chunks))


def _remove_stale(path: Path) -> None:
    """Nobody listens: a killed service left its socket behind."""
    with contextlib.suppress(OSError):
        path.unlink()


def fingerprint(settings: Any) -> str:
    """Equal for settings that search alike: the service answers only for the same ones.

    The sections no search reads (schedule, serve, search.autostart, watch) are
    left out, so a `vq schedule` started by systemd serves a shell that set them.
    """
    import os

    config = settings.config_file and Path(os.path.abspath(settings.config_file))
    same = dataclasses.replace(
        settings, sources={}, config_file=config, schedule=type(settings.schedule)(),
        watch=True, watch_debounce_seconds=1.0,
        serve=type(settings.serve)(), search=dataclasses.replace(settings.search,
                                                                 autostart=True))
    return runtime.digest(repr(same), 16)


def search(settings: Any, root: dict[str, Any], query: dict[str, Any],
           output: dict[str, Any]) -> dict[str, Any] | None:
    """A whole search by the service: {"stdout", "stderr", "exit"}, or None.

    ``root`` is what the CLI root was given (config file, overrides), so the
    service loads the same settings (and with them the index: one slot per
    index_dir); it answers only when their fingerprint matches this process's,
    else the caller searches in-process.
    """
    import os

    config = os.path.abspath(settings.config_file) if settings.config_file else None
    message = {"op": "search", "config": config, "index_dir": settings.index_dir,
               "overrides": root, "cwd": os.getcwd(), "fingerprint": fingerprint(settings),
               "query": query, "output": output}
    reply = request(message)
    return reply if reply is not None and "exit" in reply else None


def encode(model: str, texts: list[str], location: str | None = None, device: str = "auto",
           deadline: float = DEADLINE) -> tuple[Any, dict] | None:
    """(float32 array, service info) from the service, or None. ``location``: the index
    folder whose ONNX export of ``model`` the service may load (once for all indexes)."""
    reply = _soft({"op": "encode", "model": model, "texts": texts, "location": location,
                   "device": device}, deadline)
    if reply is None or reply.get("model") != model:
        return None
    import numpy as np

    return np.asarray(reply["vectors"], dtype=np.float32), {
        "pid": reply.get("pid"), "device": reply.get("device")}


def rerank(model: str, pairs: list[list[str]], device: str = "auto") -> list[float] | None:
    reply = _soft({"op": "rerank", "model": model, "pairs": pairs, "device": device}, 60.0)
    return None if reply is None else [float(s) for s in reply["scores"]]


def info() -> dict[str, Any] | None:
    """pid, idle limit, models and the indexes the user's service holds, or None."""
    return _soft({"op": "info"}, INFO_DEADLINE)


def _soft(message: dict[str, Any], deadline: float) -> dict[str, Any] | None:
    """``request`` for callers that only want an answer: an unsafe folder is just None."""
    from vq.core.errors import ServiceDirUnsafe

    try:
        return request(message, deadline)
    except ServiceDirUnsafe:
        return None


def held(reply: dict[str, Any], index_dir: str) -> dict[str, Any] | None:
    """The service's slot for ``index_dir`` in an info reply, or None (not held)."""
    return next((s for s in reply.get("indexes") or [] if s.get("index_dir") == index_dir),
                None)


def service_state(settings: Any) -> dict[str, Any]:
    """For `vq status` and `vq doctor`: {"state": running | stopped | refused, ...}; when
    running, ``slot`` is what it holds of this index (None: not opened yet)."""
    import os

    from vq.core.errors import ServiceDirUnsafe

    try:
        reply = request({"op": "info"}, INFO_DEADLINE)
    except ServiceDirUnsafe as exc:
        return {"state": "refused", "reason": exc.message, "fix": exc.fix}
    if reply is not None and reply.get("code") != code_id():
        return {"state": "other code", "pid": reply.get("pid"),
                "reason": "it runs other vq code than this command (it started before vq "
                          "was upgraded or edited), so it answers no search of this code; "
                          "they run in-process",
                "fix": "`vq serve --stop`; the next search starts one of this code (a "
                       "service `vq serve` runs exits by itself within "
                       f"{CODE_CHECK_SECONDS:g}s of the change)"}
    if reply is not None:
        return {"state": "running", "slot": held(reply, settings.index_dir),
                "index_count": len(reply.get("indexes") or []),
                **{k: v for k, v in reply.items() if k not in ("ok", "indexes")}}
    if runtime.is_running():  # holds its lock, yet did not answer
        pid = runtime.lock_holder()
        why = "stopped (SIGSTOP)" if stopped() else f"no answer within {INFO_DEADLINE:g}s"
        return {"state": "not answering", "pid": pid, "reason": why,
                "fix": f"resume it (`kill -CONT {pid}`) or stop it (`kill {pid}`); searches "
                       "run in-process meanwhile"}
    if not settings.search.autostart:
        why = "search.autostart is off; `vq serve` or `vq schedule` starts one"
    elif os.environ.get("CI"):
        why = "CI is set, so searches start none; `vq serve` does"
    else:
        why = "the next search starts one (search.autostart)"
    return {"state": "stopped", "reason": why}


def running_summary(state: dict[str, Any]) -> str:
    """A running service as `vq status` and `vq doctor` say it: whether it holds this
    index and watches it, what else it holds, its models, its idle exit."""
    slot, pid = state.get("slot"), state["pid"]
    if slot is None:
        held = "does not hold this index yet (its next search opens it)"
    else:
        rows = slot["rows"] if slot.get("rows") is not None else "?"
        memory = "in memory" if slot.get("loaded") else "evicted until its next search"
        held = (f"holds this index ({slot.get('model')}, {rows} rows, {memory}; watch: "
                f"{watch_text(slot['watch'], pid)})")
    models = ", ".join(f"{m['model']} ({m['encoder']} on {m['device']})"
                       for m in state.get("models") or []) or "no model loaded yet"
    idle = state.get("idle_minutes") or 0
    count = state.get("index_count", 0)
    return (f"pid {pid}, {held}; {count} index(es) held in all; models: {models}; "
            f"{f'exits after {idle:g} idle minutes' if idle else 'no idle exit'}")


def watch_text(watch: dict[str, Any], service_pid: int | None = None) -> str:
    """A slot's watch state in words: watching / sweep-only (why) / off, and what waits."""
    text = watch["state"]
    if watch.get("pid") and watch["pid"] != service_pid:
        text += f" (by pid {watch['pid']})"
    if watch.get("reason"):
        text += f": {watch['reason']}"
    if watch.get("pending_count"):
        shown_paths = ", ".join(watch.get("pending") or [])
        text += f"; {watch['pending_count']} changed file(s) not yet indexed: {shown_paths}"
    if watch.get("building"):
        text += "; indexing a batch"
    return text
