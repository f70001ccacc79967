"""The model's input window: how many word pieces it reads, and a counter for them.

A sentence-transformers model silently drops every token past
``max_seq_length``; a chunk longer than that is embedded by its head only.
The indexer sizes chunks with this counter so the whole chunk (breadcrumb
header included) is embedded, and the bench and ``vq doctor`` use it to
report the share of chunks the model truncates.

Only the ``tokenizers`` package is loaded (a Rust tokenizer, no torch), from
the model's own ``tokenizer.json``; a model without one (or not on disk)
yields ``None`` and chunks are sized by characters alone, as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from vq.core.encoder import model_location
from vq.core.model_input import Reader, reader_for

DEFAULT_WINDOW = 512  # BERT's position limit, when the model says nothing else


@dataclass(frozen=True)
class Window:
    """``tokens``: the model's ``max_seq_length``, special tokens included."""

    tokens: int
    tokenizer: Any = field(repr=False, compare=False)
    specials: int = 2  # [CLS] ... [SEP]: counted once per text

    @cached_property
    def reader(self) -> Reader:
        return reader_for(self.tokenizer, self.tokens)

    def count(self, text: str) -> int:
        """Word pieces the model sees for ``text``, special tokens included; exact up to
        the window, a lower bound still above it past ``vq.core.model_input``'s cut."""
        return len(self.tokenizer.encode(self.reader.readable(text)).ids)

    def counts(self, texts: Sequence[str], specials: bool = True) -> list[int]:
        """``count`` for many texts at once (batched in Rust, threads included)."""
        encoded = self.tokenizer.encode_batch(self.reader.readable_all(texts),
                                              add_special_tokens=specials)
        return [len(e.ids) for e in encoded]

    def truncated(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` the model would cut short."""
        return sum(n > self.tokens for n in self.counts(texts))


def load_window(model: str) -> Window | None:
    """The window of ``model`` (bundled name, local path or cached hub name), or None."""
    folder = _model_folder(model)
    return _load(str(folder)) if folder is not None else None


@lru_cache(maxsize=4)
def _load(folder: str) -> Window | None:
    path = Path(folder)
    if not (path / "tokenizer.json").is_file():
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    specials = len(tokenizer.encode("").ids)
    return Window(_max_seq_length(path), tokenizer, specials)


def _max_seq_length(path: Path) -> int:
    """sentence-transformers' own setting first, then the tokenizer's limit."""
    for name, key in (("sentence_bert_config.json", "max_seq_length"),
                      ("tokenizer_config.json", "model_max_length")):
        try:
            value = json.loads((path / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError):
            continue
        if isinstance(value, int) and 0 < value < 1_000_000:
            return value
    return DEFAULT_WINDOW


def _model_folder(model: str) -> Path | None:
    try:
        location = model_location(model)
    except Exception:  # noqa: BLE001 - no tokenizer means character sizing, not a failure
        return None
    path = Path(location).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(location, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached: the build still runs
        return None
