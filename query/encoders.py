"""Query-side models, loaded once per process and reused (MCP, benchmarks, tests).

The model comes from the index's metadata, never from config: a query must be
encoded by the model that encoded the chunks.
"""

from __future__ import annotations

from typing import Any

_CACHE: dict[tuple[str, str, str], Any] = {}


def query_encoder(model: str, device: str) -> Any:
    """The cached ``core.encoder.Encoder`` (loads torch on first call)."""
    key = ("bi", model, device)
    if key not in _CACHE:
        from core.encoder import Encoder

        _CACHE[key] = Encoder(model, device, batch_size=16)
    return _CACHE[key]


def cross_encoder(model: str, device: str) -> Any:
    """A sentence-transformers CrossEncoder for reranking, cached like the encoder."""
    key = ("cross", model, device)
    if key not in _CACHE:
        from core.encoder import load_sentence_transformer, resolve_device

        _CACHE[key] = load_sentence_transformer(model, resolve_device(device), "CrossEncoder")
    return _CACHE[key]
