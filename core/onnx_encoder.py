"""Encode with the build's ONNX export: onnxruntime + tokenizers, no torch.

One encoder for both sides: the read side encodes queries with it (it loads in a
fraction of a second where sentence-transformers needs seconds: importing torch
alone is ~4 s on two cores), and a CPU build bulk-encodes its chunks with it
(``bench/encoders.py`` compares it with sentence-transformers). The graph already
mean-pools and normalises (``vq.indexer.onnx_export``); the rows are normalised
once more here, which changes nothing but float noise.

Threads: one query is a few hundred tokens at most, so a query encoder runs with
``INTRA_THREADS`` intra-op threads (at most 2, never more than the cores this
process may use) and no spinning: a spinning pool burns the cores a parallel
build or another search needs, for no gain at this size. A build's encoder asks
for every core it may use (``threads=cpu_count()``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vq.core.model_input import reader_for

FOLDER = "query-encoder"   # vq.indexer.onnx_export.FOLDER (the read side never imports it)
MARKER = "vq-onnx.json"
FORMAT = 1
INTRA_THREADS = 2
VARIANTS = {"fp32": "model.onnx", "int8": "model.int8.onnx"}  # int8: dynamic quantisation
BULK_BATCH = 32  # texts per run in a bulk encode, sorted by length so padding stays small


@dataclass(frozen=True)
class OnnxDevice:
    name: str = "cpu"
    reason: str = "onnxruntime CPU"


def read_marker(location: str, model: str) -> dict[str, Any] | None:
    """The export's marker when the folder beside the tables holds ``model``'s export."""
    if "://" in location:
        return None
    try:
        marker = json.loads((Path(location) / FOLDER / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if marker.get("model") != model or marker.get("format") != FORMAT:
        return None
    return marker


def load_exported(location: str, model: str, threads: int | None = None,
                  variant: str | None = None) -> OnnxEncoder | None:
    """The export beside the tables when it is ``model``'s and onnxruntime is installed;
    ``variant`` None: the one the marker names (what the build encoded with)."""
    marker = read_marker(location, model)
    folder = Path(location) / FOLDER
    if marker is None:
        return None
    variant = variant or marker.get("variant", "fp32")
    if variant not in VARIANTS or not (folder / VARIANTS[variant]).is_file():
        return None
    try:
        return OnnxEncoder(folder, marker, threads, variant)
    except ImportError:
        return None  # onnxruntime or tokenizers missing: sentence-transformers it is


class OnnxEncoder:
    """``encode(texts) -> float32 (n, dim)``, L2-normalised, like ``vq.core.encoder.Encoder``."""

    backend = "onnx"

    def __init__(self, folder: Path, marker: dict[str, Any], threads: int | None = None,
                 variant: str = "fp32") -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_name = marker["model"]
        self.dim = int(marker["dim"])
        self.inputs = list(marker["inputs"])
        self.variant = variant
        self.device = OnnxDevice(reason=f"onnxruntime CPU ({variant})")
        self.batch_size = BULK_BATCH
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # padded here, per batch, to the longest text
        self.tokenizer.enable_truncation(max_length=int(marker["max_seq_length"]))
        self.reader = reader_for(self.tokenizer, int(marker["max_seq_length"]))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or intra_threads()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(folder / VARIANTS[variant]), options,
                                            providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        """Rows in input order; many texts run in length-sorted batches (less padding)."""
        import numpy as np

        encodings = self.tokenizer.encode_batch(self.reader.readable_all(texts))
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids), reverse=True)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            out[idx] = self._run([encodings[i] for i in idx])
            if progress:
                progress(len(idx))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _run(self, encodings: list[Any]) -> Any:
        import numpy as np

        width = max((len(e.ids) for e in encodings), default=0)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64)
                 for name in self.inputs}
        for row, e in enumerate(encodings):
            n = len(e.ids)
            values = {"input_ids": e.ids, "attention_mask": e.attention_mask,
                      "token_type_ids": e.type_ids}
            for name in self.inputs:
                feeds[name][row, :n] = values[name]
        return self.session.run(None, feeds)[0].astype(np.float32)

    def close(self) -> None:
        pass  # nothing to stop: the session lives as long as the encoder


def intra_threads() -> int:
    return max(1, min(INTRA_THREADS, cpu_count()))


def cpu_count() -> int:
    """The cores this process may use (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
