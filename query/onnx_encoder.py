"""Encode queries with the build's ONNX export: onnxruntime + tokenizers, no torch.

Loads in a fraction of a second where sentence-transformers needs seconds
(importing torch alone is ~4 s on two cores). The graph already mean-pools
and normalises (``vq.indexer.onnx_export``); the rows are normalised once
more here, which changes nothing but float noise.

Threads: one query is a few hundred tokens at most, so onnxruntime runs with
``INTRA_THREADS`` intra-op threads (at most 2, never more than the cores this
process may use) and no spinning: a spinning pool burns the cores a parallel
build or another search needs, for no gain at this size.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOLDER = "query-encoder"   # vq.indexer.onnx_export.FOLDER (the read side never imports it)
MARKER = "vq-onnx.json"
FORMAT = 1
INTRA_THREADS = 2


@dataclass(frozen=True)
class OnnxDevice:
    name: str = "cpu"
    reason: str = "onnxruntime CPU"


def load_exported(location: str, model: str) -> OnnxEncoder | None:
    """The export beside the tables when it is ``model``'s and onnxruntime is installed."""
    if "://" in location:
        return None
    folder = Path(location) / FOLDER
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if marker.get("model") != model or marker.get("format") != FORMAT:
        return None
    try:
        return OnnxEncoder(folder, marker)
    except ImportError:
        return None  # onnxruntime or tokenizers missing: sentence-transformers it is


class OnnxEncoder:
    """``encode(texts) -> float32 (n, dim)``, L2-normalised, like ``vq.core.encoder.Encoder``."""

    backend = "onnx"

    def __init__(self, folder: Path, marker: dict[str, Any]) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_name = marker["model"]
        self.dim = int(marker["dim"])
        self.inputs = list(marker["inputs"])
        self.device = OnnxDevice()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # padded here, per batch, to the longest text
        self.tokenizer.enable_truncation(max_length=int(marker["max_seq_length"]))
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_threads()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts))
        width = max((len(e.ids) for e in encodings), default=0)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64)
                 for name in self.inputs}
        for row, e in enumerate(encodings):
            n = len(e.ids)
            values = {"input_ids": e.ids, "attention_mask": e.attention_mask,
                      "token_type_ids": e.type_ids}
            for name in self.inputs:
                feeds[name][row, :n] = values[name]
        out = self.session.run(None, feeds)[0].astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if progress:
            progress(len(texts))
        return out / np.maximum(norms, 1e-12)


def intra_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(INTRA_THREADS, cores))
