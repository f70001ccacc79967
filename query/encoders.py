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
from dataclasses import dataclass
from typing import Any

from vq.core.encoder import new_encoder, shared_model

QUERY_BATCH = 16
_QUERY: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def query_encoder(model: str, device: str, location: str | None = None) -> Any:
    """An object with ``encode(texts) -> float32 rows`` and ``device.name``, cached."""
    key = (model, device, location)
    with _LOCK:
        if key not in _QUERY:
            _QUERY[key] = _load(model, device, location)
        return _QUERY[key]


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

    ``service``: the index folder whose resident service to ask first (the thin CLI
    and MCP pass it, so a running service spares them loading the model), or None to
    encode in this process only (the service itself, whose search must not ask itself).
    """

    model: str                   # the index's model: a query is encoded as its chunks were
    device: str
    location: str | None = None  # the index folder, where the build's ONNX export lives
    service: str | None = None

    def encode(self, text: str) -> tuple[Any, str, str]:
        """(vector, device name, "service pid N" | "in-process"); raises when the model
        cannot load (the search then answers lexically and says why)."""
        if self.service:
            from vq.query.service import client

            served = client.encode(self.service, self.model, [text])
            if served is not None:
                vectors, info = served
                return vectors[0], info["device"] or "", f"service pid {info['pid']}"
        enc = query_encoder(self.model, self.device, self.location)
        return enc.encode([text])[0], enc.device.name, "in-process"

    def rerank(self, name: str, pairs: list[tuple[str, str]]) -> list[float]:
        """Cross-encoder scores for (query, text) pairs; raises when it cannot load."""
        if self.service:
            from vq.query.service import client

            scores = client.rerank(self.service, name, [list(p) for p in pairs])
            if scores is not None:
                return scores
        model = cross_encoder(name, self.device)
        return [float(s) for s in model.predict(pairs, show_progress_bar=False)]
