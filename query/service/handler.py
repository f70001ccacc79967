"""What the user's resident service does with each request: whole searches, encodes,
reranks, for any index a request names.

``vq.query.service.server`` (the transport) calls ``Ops.answer``. A search loads the
client's settings, takes the slot of their index (``vq.query.service.slots``: the
index kept open and a snapshot of its rows and, below the ANN threshold, its
vectors in memory), runs ``vq.query.search.search`` with the query model loaded
once for every index that uses it (``vq.query.encoders``), and renders the output
with the very functions the in-process command uses.

Why the service returns rendered text, not the ``Result`` as data: the thin
client then prints it without importing rich, pyarrow or the search code (a
warm `vq search` costs one interpreter start and one socket round trip), and the
output is byte-equal to the in-process command's by construction (a test
compares them). Library callers that want data (MCP, the UI) search in-process.

The service answers only for settings equal to the client's (a fingerprint of
the effective settings): another ``VQ_*`` environment or an edited config that
it cannot reproduce gets "settings differ", and the client searches itself.
"""

from __future__ import annotations

import io
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vq.core.errors import VqError
from vq.core.settings import Settings, load_settings
from vq.core.watching import SHOWN_PATHS, read_state
from vq.query.encoders import cross_encoder, loaded, model_lock, query_encoder
from vq.query.search import models_for, search
from vq.query.search_output import OutputOptions, emit, exit_code, query_from, talk
from vq.query.service import client
from vq.query.service.slots import Slot

# what the CLI layer does when a slot first opens (start watching its vaults): it gets
# the slot's settings, a way to read them afresh, and a function to call after each
# committed watch batch; it answers what became of watching ("watching", "off", ...)
OnOpen = Callable[[Settings, Callable[[], Settings], Callable[..., None]], str]

MAX_TEXTS = 256
SETTINGS_CACHED = 64  # client settings kept (one per config, overrides and cwd), LRU


class Ops:
    """The service's state: one slot per index, client settings per config, the models
    (loaded once per model, in ``vq.query.encoders``)."""

    def __init__(self, settings: Settings, on_open: OnOpen | None = None,
                 reload: Callable[[], Settings] | None = None) -> None:
        self.settings = settings          # the service's own: idle limits, default device
        self.on_open = on_open
        self.reload = reload or (lambda: settings)  # its own settings read afresh
        self.slots: dict[str, Slot] = {}
        self.wake = threading.Event()     # a watch batch committed: refresh now
        self._lock = threading.Lock()     # the two dicts
        self._settings: OrderedDict[str, Settings] = OrderedDict()  # LRU, SETTINGS_CACHED

    def info(self) -> dict[str, Any]:
        with self._lock:
            slots = list(self.slots.values())
        return {"models": loaded(), "indexes": [_slot_info(s) for s in slots],
                "slot_idle_minutes": self.settings.serve.slot_idle_minutes}

    def preload(self) -> None:
        """Open the service's own index and load its model before the first query asks
        (nothing when its config has no index yet)."""
        slot = self.slot(self.settings, self.reload)
        try:
            with slot.lock:
                index = slot.sources().index
            query_encoder(index.meta.model, self.settings.device, index.location)
        except Exception:  # noqa: BLE001 - the first request reports what is wrong
            pass
        self._opened(slot)

    def refresh(self) -> None:
        """Load the versions builds committed since the last query (the service's refresh
        thread calls this every few seconds, and at once after a watch batch), so that no
        query pays for a new snapshot; drop the snapshots of slots idle too long."""
        idle = self.settings.serve.slot_idle_minutes * 60
        with self._lock:
            slots = list(self.slots.values())
        for slot in slots:
            if not slot.evict_if_idle(idle):
                slot.refresh()

    def committed(self, *_: Any) -> None:
        """A watcher committed a batch: wake the refresh thread now, not at its next poll."""
        self.wake.set()

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        if op == "search":
            return self.search(msg)
        if op == "encode":
            return self.encode(msg)
        if op == "rerank":
            device = msg.get("device") or self.settings.device
            model = cross_encoder(msg["model"], device)
            with model_lock(msg["model"], device):
                scores = model.predict([tuple(p) for p in msg["pairs"]],
                                       show_progress_bar=False)
            return {"ok": True, "scores": [float(s) for s in scores]}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def encode(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Encode for a client that searches in-process; ``location`` (its index folder)
        lets the model load from that index's ONNX export, once for every index."""
        model, device = msg["model"], msg.get("device") or self.settings.device
        enc = query_encoder(model, device, msg.get("location"))
        with model_lock(model, device):
            vectors = enc.encode([str(t) for t in msg["texts"]][:MAX_TEXTS])
        return {"ok": True, "model": model, "pid": os.getpid(), "device": enc.device.name,
                "vectors": vectors.tolist()}

    def search(self, msg: dict[str, Any]) -> dict[str, Any]:
        settings = self.settings_for(msg)
        if settings is None:
            return {"ok": False, "error": "settings differ"}
        q = query_from(msg["query"])
        try:
            res = self.result(settings, q, self._loader(msg))
        except VqError as exc:
            lines = [f"error: {exc.message}"] + ([f"next: {exc.fix}"] if exc.fix else [])
            return {"ok": True, "exit": exc.exit_code, "stdout": "", "stderr": lines}
        return {"ok": True, "exit": exit_code(res), **rendered(res, q.text, msg["output"])}

    def result(self, settings: Settings, q: Any,
               reload: Callable[[], Settings] | None = None) -> Any:
        """One search as data, from the slot of ``settings``' index (opened here on first
        use) and the model loaded here; the dashboard the service serves calls this
        directly. ``reload``: those settings read afresh (for the index's watcher)."""
        slot = self.slot(settings, reload or (lambda: settings))
        try:
            with slot.lock:
                try:
                    sources = slot.sources()
                    res = search(settings, q, sources, models_for(settings, sources.index))
                finally:
                    slot.used()
        finally:
            self._opened(slot)
        if res.encoder == "in-process":
            res.encoder = f"service pid {os.getpid()}"
        return res

    def slot(self, settings: Settings, reload: Callable[[], Settings]) -> Slot:
        """The slot of ``settings.index_dir``, made on first use."""
        with self._lock:
            slot = self.slots.get(settings.index_dir)
            if slot is None:
                slot = self.slots[settings.index_dir] = Slot(settings, reload)
            return slot

    def _opened(self, slot: Slot) -> None:
        """After a slot's first use: forget it when its index never opened (none built
        yet), else tell the CLI layer once (it starts watching the index)."""
        with self._lock:
            if not slot.opens:
                if self.slots.get(slot.index_dir) is slot:
                    del self.slots[slot.index_dir]
                return
            if slot.announced:
                return
            slot.announced = True
        if self.on_open is None:
            slot.watch = "off"
            return
        try:
            slot.watch = self.on_open(slot.settings, slot.reload, self.committed)
        except Exception as exc:  # noqa: BLE001 - searching works without the watcher
            slot.watch = f"failed: {type(exc).__name__}: {exc}"

    def _loader(self, msg: dict[str, Any]) -> Callable[[], Settings]:
        config, overrides, cwd = msg.get("config"), msg.get("overrides") or {}, msg.get("cwd")
        return lambda: load_settings(config, overrides, Path(cwd) if cwd else None)

    def settings_for(self, msg: dict[str, Any]) -> Settings | None:
        """The client's settings, loaded here from its config; None when they differ."""
        key = json.dumps([msg.get("config"), msg.get("overrides"), msg.get("cwd")])
        with self._lock:
            cached = self._settings.get(key)
            if cached is not None:
                self._settings.move_to_end(key)
        if cached is not None and client.fingerprint(cached) == msg["fingerprint"]:
            return cached
        loaded_now = self._loader(msg)()
        if client.fingerprint(loaded_now) != msg["fingerprint"]:
            return None
        with self._lock:  # bounded: a client searching from every folder of a tree
            self._settings[key] = loaded_now  # must not grow the service without end
            self._settings.move_to_end(key)
            while len(self._settings) > SETTINGS_CACHED:
                self._settings.popitem(last=False)
        return loaded_now


def _slot_info(slot: Slot) -> dict[str, Any]:
    """A slot as `vq serve --list` shows it, with its watch state: "watching",
    "sweep-only" (events cannot be trusted: the periodic sweep only), "off", or what
    the watcher's state file says when another process watches it."""
    out = slot.info()
    state = read_state(slot.index_dir)
    if state is None:
        out["watch"] = {"state": slot.watch or "off", "pending_count": 0, "pending": []}
        return out
    mode = {"watching": "watching", "sweeping": "sweep-only"}.get(state.mode, state.mode)
    out["watch"] = {"state": mode, "pid": state.pid, "reason": state.reason,
                    "pending_count": state.pending_count,
                    "pending": state.pending[:SHOWN_PATHS], "building": state.building}
    return out


def rendered(res: Any, text: str, output: dict[str, Any]) -> dict[str, Any]:
    """stdout as one string and stderr as lines, as the client's terminal would show them."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, highlight=False, force_terminal=output.get("tty") or None,
                      width=output.get("width"), _environ=output.get("env") or {})
    opts = OutputOptions(bool(output.get("json")), bool(output.get("files")),
                         bool(output.get("explain")), bool(output.get("tty")))
    emit(res, text, opts, out, console)
    before, after = talk(res)
    return {"stdout": out.getvalue(), "stderr": before, "stderr_after": after}
