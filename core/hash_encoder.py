"""``vq-test/hash-<dim>``: a deterministic encoder for tests that need vectors, not meaning.

Subprocess tests of crash safety, object storage and scheduling start many
``vq build`` processes; each would spend seconds importing torch and loading
MiniLM before its first write. This encoder hashes words into ``dim`` buckets
(so texts sharing words still lie close), imports only numpy, and is allowed
only when ``VQ_TEST_MODELS=1`` (the way llm registers its mock model only in
its tests), so a typo in a user's ``model`` can never select it. Ranking and
end-to-end tests keep the real model.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from vq.core.errors import ModelLoadError

PREFIX = "vq-test/"
ENV = "VQ_TEST_MODELS"
_WORD = re.compile(r"\w+")


def is_test_model(name: str) -> bool:
    return name.startswith(PREFIX)


class _Device:
    name = "cpu"
    reason = "test encoder (no model, no torch)"


class HashEncoder:
    """The ``Encoder`` interface (``dim``, ``device``, ``encode``, ``close``) on word hashes."""

    backend = "test hash"  # what the service's info and `vq serve --list` call it

    def __init__(self, name: str, batch_size: int = 64) -> None:
        if os.environ.get(ENV) != "1":
            raise ModelLoadError(name, f"test encoders are only allowed with {ENV}=1")
        kind, _, dim = name[len(PREFIX):].partition("-")
        if kind != "hash" or not dim.isdigit() or not 8 <= int(dim) <= 4096:
            raise ModelLoadError(name, f"the test encoder is spelled {PREFIX}hash-<dim>, "
                                 "e.g. vq-test/hash-384")
        self.model_name, self.batch_size, self.dim = name, batch_size, int(dim)
        self.device = _Device()
        self.pool_devices: tuple[str, ...] = ()

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()) or [""]:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else 1.0 / np.sqrt(self.dim)
        if progress:
            progress(len(texts))
        return out

    def start_pool(self) -> None:
        return None

    def close(self) -> None:
        return None
