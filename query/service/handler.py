"""What the resident service does with each request: whole searches, encodes, reranks.

``vq.query.service.server`` (the transport) calls ``Ops.answer``. A search runs
``vq.query.search.search`` on an index kept open, with the model loaded and a
snapshot of its rows (and, below the ANN threshold, its vectors) in memory
(``vq.query.service.snapshot``), and renders the output with the very functions
the in-process command uses.

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
from pathlib import Path
from typing import Any

from vq.core import store
from vq.core.errors import VqError
from vq.core.settings import Settings, load_settings
from vq.query.encoders import backend, cross_encoder, query_encoder
from vq.query.search import models_for, search
from vq.query.search_output import OutputOptions, emit, exit_code, query_from, talk
from vq.query.service import client, snapshot
from vq.query.sources import COLUMNS, LanceSources, Sources

MAX_TEXTS = 256


class Ops:
    """The service's state: settings per client config, the open index, the models."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = _model_for(settings)
        self.lock = threading.Lock()  # one search or inference at a time
        self._settings: dict[str, Settings] = {}
        self._index: store.Index | None = None
        self._version: Any = None
        self._sources: Sources | None = None
        self._snapshot: snapshot.Snapshot | None = None
        self._encoder: Any = None

    def info(self) -> dict[str, Any]:
        enc = self._encoder
        return {"model": self.model, "device": enc.device.name if enc else "loading",
                "encoder": backend(enc) if enc else "loading",
                "resident_vectors": bool(self._snapshot and self._snapshot.vectors is not None),
                "resident_rows": bool(self._snapshot and self._snapshot.rows is not None),
                "index_dir": self.settings.index_dir}

    def preload(self) -> None:
        """Open the index and load its encoder before the first query asks."""
        with self.lock:
            try:
                self._encoder = query_encoder(self.model, self.settings.device,
                                              self._location())
                self.sources(self.settings)
            except Exception:  # noqa: BLE001 - the first request reports what is wrong
                pass

    def refresh(self) -> None:
        """Load a version a build committed since the last query (the service's watcher
        calls this every few seconds), so that no query pays for the new snapshot."""
        if self._index is None or not self.lock.acquire(blocking=False):
            return  # nothing served yet, or a query is running: it reloads itself
        try:
            self.sources(self.settings)
        except Exception:  # noqa: BLE001 - the next query reports what is wrong
            pass
        finally:
            self.lock.release()

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        if op == "search":
            return self.search(msg)
        if op == "encode":
            return self.encode(msg["model"], [str(t) for t in msg["texts"]][:MAX_TEXTS])
        if op == "rerank":
            with self.lock:
                model = cross_encoder(msg["model"], self.settings.device)
                scores = model.predict([tuple(p) for p in msg["pairs"]],
                                       show_progress_bar=False)
            return {"ok": True, "scores": [float(s) for s in scores]}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def encode(self, model: str, texts: list[str]) -> dict[str, Any]:
        location = self._location() if model == self.model else None
        with self.lock:
            enc = query_encoder(model, self.settings.device, location)
            vectors = enc.encode(texts)
        self.model, self._encoder = model, enc
        return {"ok": True, "model": model, "pid": os.getpid(), "device": enc.device.name,
                "vectors": vectors.tolist()}

    def search(self, msg: dict[str, Any]) -> dict[str, Any]:
        settings = self.settings_for(msg)
        if settings is None:
            return {"ok": False, "error": "settings differ"}
        q = query_from(msg["query"])
        try:
            res = self.result(settings, q)
        except VqError as exc:
            lines = [f"error: {exc.message}"] + ([f"next: {exc.fix}"] if exc.fix else [])
            return {"ok": True, "exit": exc.exit_code, "stdout": "", "stderr": lines}
        return {"ok": True, "exit": exit_code(res), **rendered(res, q.text, msg["output"])}

    def result(self, settings: Settings, q: Any) -> Any:
        """One search as data, on the index held open here and the model loaded here (the
        dashboard the service serves calls this directly); settings naming another index
        are searched as the library would, never answered from this one."""
        if settings.index_dir != self.settings.index_dir:
            return search(settings, q)
        with self.lock:
            sources = self.sources(settings)
            res = search(settings, q, sources, models_for(settings, sources.index))
        if res.encoder == "in-process":
            res.encoder = f"service pid {os.getpid()}"
        return res

    def settings_for(self, msg: dict[str, Any]) -> Settings | None:
        """The client's settings, loaded here from its config; None when they differ."""
        key = json.dumps([msg.get("config"), msg.get("overrides"), msg.get("cwd")])
        cached = self._settings.get(key)
        if cached is not None and client.fingerprint(cached) == msg["fingerprint"]:
            return cached
        loaded = load_settings(msg.get("config"), msg.get("overrides") or {},
                               Path(msg["cwd"]) if msg.get("cwd") else None)
        if client.fingerprint(loaded) != msg["fingerprint"]:
            return None
        self._settings[key] = loaded
        return loaded

    def sources(self, settings: Settings) -> Sources:
        """The open index, reopened when a build committed a new version (or replaced it),
        answering from a snapshot of that version in memory (``vq.query.service.snapshot``)."""
        if self._index is None:
            self._index = store.open_for(settings)
        version = self._index.chunks.version
        if version != self._version:
            self._index = store.open_for(settings)
            self._version = self._index.chunks.version
            self.model = self._index.meta.model
            flat = snapshot.eligible(self._index, settings)
            self._snapshot = snapshot.load(self._index, COLUMNS,
                                           vectors=flat or snapshot.fits(self._index),
                                           flat=flat)
            self._sources = snapshot.SnapshotSources(self._index, self._snapshot)
        return self._sources or LanceSources(self._index)

    def _location(self) -> str | None:
        return self._index.location if self._index else self.settings.index_dir


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


def _model_for(settings: Settings) -> str:
    """The index's model when there is an index (queries must match it), else config's."""
    try:
        return store.open_for(settings).meta.model
    except Exception:  # noqa: BLE001 - no index yet: serve the configured model
        return settings.model
