"""Query-side models: the encoder recorded in the index, and the optional reranker.

The model comes from the index's metadata, never from config: a query must be
encoded by the model that encoded the chunks. Both are loaded once per process.
"""

from __future__ import annotations

from typing import Any

from vq.core.encoder import shared_model


def query_encoder(model: str, device: str) -> Any:
    return shared_model("encoder", model, device, batch_size=16)


def cross_encoder(model: str, device: str) -> Any:
    return shared_model("cross", model, device)
