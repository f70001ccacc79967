"""The read side's name for the ONNX encoder, which lives in ``vq.core.onnx_encoder``
because the build encodes with it too (one encoder for build and query)."""

from __future__ import annotations

from vq.core.onnx_encoder import (
    FOLDER,
    FORMAT,
    INTRA_THREADS,
    MARKER,
    OnnxDevice,
    OnnxEncoder,
    intra_threads,
    load_exported,
)

__all__ = ["FOLDER", "FORMAT", "INTRA_THREADS", "MARKER", "OnnxDevice", "OnnxEncoder",
           "intra_threads", "load_exported"]
