"""Query-side models: the encoder recorded in the index, and the optional reranker.

The model comes from the index's metadata, never from config: a query must be
encoded by the model that encoded the chunks. Each is loaded once per process.

The query encoder is the read side's own object, never the build's (in
`vq schedule` both live in one process, and a query used to reset the build's
batch size). With ``location`` (the index folder) and a CPU device it is the
ONNX export the build wrote beside the tables (``vq.core.onnx_encoder``: no
torch); without an export, or without onnxruntime, sentence-transformers.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from vq.core.encoder import new_encoder, shared_model

QUERY_BATCH = 16
_QUERY: dict[tuple, Any] = {}
_KEYS: dict[tuple, tuple] = {}       # (model, device, location) -> its load's key
_LOCKS: dict[tuple, threading.Lock] = {}
LOADS: Counter[tuple] = Counter()   # load key -> times loaded (the service's info shows it)
_LOCK = threading.Lock()  # held while a model loads (seconds)
_META = threading.Lock()  # never held long: `info` must answer while a model loads


def query_encoder(model: str, device: str, location: str | None = None) -> Any:
    """An object with ``encode(texts) -> float32 rows`` and ``device.name``, cached.

    Cached per model, not per index: every index folder holds its own ONNX export,
    but the export of one model name (and variant) is the same model, so the user's
    service loads it once however many indexes use it (``load_key``)."""
    known = _KEYS.get((model, device, location))
    if known is not None and known in _QUERY:
        return _QUERY[known]  # loaded: no wait behind another model's load
    with _LOCK:
        key = _KEYS.get((model, device, location))
        if key is None:
            key = _KEYS[(model, device, location)] = load_key(model, device, location)
        if key not in _QUERY:
            loaded_now = _load(model, device, location)
            with _META:
                _QUERY[key] = loaded_now
                LOADS[key] += 1
        return _QUERY[key]


def load_key(model: str, device: str, location: str | None) -> tuple:
    """What makes two loads one: the model, the device and which backend would load it
    (the export's variant, or None for sentence-transformers), never the folder."""
    from vq.core.hash_encoder import is_test_model

    if is_test_model(model) or not location or device not in ("auto", "cpu"):
        return (model, device, None)
    from vq.core.onnx_encoder import read_marker

    marker = read_marker(location, model)
    return (model, device, marker.get("variant", "fp32") if marker else None)


def model_lock(model: str, device: str) -> threading.Lock:
    """One inference at a time per model and device: searches of two indexes in the
    service share the loaded model (and its threads), so they take turns on it."""
    with _META:
        return _LOCKS.setdefault((model, device), threading.Lock())


def loaded() -> list[dict[str, Any]]:
    """The query models this process holds: name, device, backend, times loaded."""
    with _META:
        items = list(_QUERY.items())
    return [{"model": key[0], "device": enc.device.name, "encoder": backend(enc),
             "loads": LOADS[key]} for key, enc in items]


def _load(model: str, device: str, location: str | None) -> Any:
    from vq.core.hash_encoder import is_test_model

    if is_test_model(model):  # vq-test/hash-384 (VQ_TEST_MODELS=1): queries too, no torch
        return shared_model("encoder", model, device, QUERY_BATCH)
    if location and device in ("auto", "cpu"):
        from vq.core.onnx_encoder import load_exported

        exported = load_exported(location, model)
        if exported is not None:
            return exported
    return new_encoder(model, device, batch_size=QUERY_BATCH)


def backend(encoder: Any) -> str:
    """"onnx" or "sentence-transformers": shown by the service's info and `vq doctor`."""
    return getattr(encoder, "backend", "sentence-transformers")


def cross_encoder(model: str, device: str) -> Any:
    return shared_model("cross", model, device)


@dataclass(frozen=True)
class QueryModels:
    """How one search gets its query vector and rerank scores, decided by the caller.

    ``service``: ask the user's resident service first (the thin CLI and MCP do, so a
    running service spares them loading the model), or False to encode in this process
    only (the service itself, whose search must not ask itself). Either way one
    inference at a time per model (``model_lock``).
    """

    model: str                   # the index's model: a query is encoded as its chunks were
    device: str
    location: str | None = None  # the index folder, where the build's ONNX export lives
    service: bool = False

    def encode(self, text: str) -> tuple[Any, str, str]:
        """(vector, device name, "service pid N" | "in-process"); raises when the model
        cannot load (the search then answers lexically and says why)."""
        if self.service:
            from vq.query.service import client

            served = client.encode(self.model, [text], self.location, self.device)
            if served is not None:
                vectors, info = served
                return vectors[0], info["device"] or "", f"service pid {info['pid']}"
        enc = query_encoder(self.model, self.device, self.location)
        with model_lock(self.model, self.device):
            vector = enc.encode([text])[0]
        return vector, enc.device.name, "in-process"

    def rerank(self, name: str, pairs: list[tuple[str, str]]) -> list[float]:
        """Cross-encoder scores for (query, text) pairs; raises when it cannot load."""
        if self.service:
            from vq.query.service import client

            scores = client.rerank(name, [list(p) for p in pairs], self.device)
            if scores is not None:
                return scores
        model = cross_encoder(name, self.device)
        with model_lock(name, self.device):
            return [float(s) for s in model.predict(pairs, show_progress_bar=False)]
