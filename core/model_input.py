"""The part of a text a model can read, cut down before the tokenizer sees the rest.

A model reads its first ``max_seq_length`` word pieces and drops the others, but a
tokenizer asked for them still splits the whole text first: one 4 MB line (a
minified bundle, a hex dump, an image pasted into a note as base64) cost the build
hundreds of MB and tens of seconds to count and to encode, for the vector its first
few KB give. ``Reader.readable`` returns a text the tokenizer splits into the same
first ``tokens`` pieces, so no vector and no "longer than the window" verdict changes:

- WordPiece (BERT, MiniLM) drops whitespace and turns a word longer than
  ``max_input_chars_per_word`` (100) into one [UNK], however long. A run of
  whitespace, or of letters and digits, longer than ``RUN`` characters is therefore
  shortened to ``RUN`` characters: the same pieces. (A run of letters and digits is
  what the BERT pre-tokenizer keeps as one word; punctuation and CJK ideographs, each
  a word of its own, split words.)
- After that (and for BPE and unigram vocabularies, whose pieces are vocabulary
  entries far shorter than ``RUN``), no piece spans more than ``2 * RUN`` characters,
  so the first ``tokens * 2 * RUN`` characters hold the first ``tokens`` pieces.

The one text read differently: a single WordPiece word longer than the cut made of
long runs glued by symbols or emoji (no space or punctuation between them), which the
cut splits. ``tests/index/test_model_input.py`` checks the first pieces on random
texts of giant words, whitespace, punctuation, CJK, accents, symbols and emoji.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

RUN = 256
# BERT's pre-tokenizer makes each CJK ideograph a word of its own: not part of a run
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_LONG_RUNS = re.compile(rf"\s{{{RUN + 1},}}|[^\W_{_CJK}]{{{RUN + 1},}}")


@dataclass(frozen=True)
class Reader:
    """``tokens``: the model's window; ``wordpiece``: its tokenizer is WordPiece."""

    tokens: int
    wordpiece: bool = False

    def readable(self, text: str) -> str:
        # two pieces of slack: [CLS] and a word the cut may split
        limit = (max(1, self.tokens) + 2) * 2 * RUN
        if len(text) <= limit:
            return text
        return _shorten_runs(text, limit) if self.wordpiece else text[:limit]

    def readable_all(self, texts: Sequence[str]) -> list[str]:
        return [self.readable(t) for t in texts]


def _shorten_runs(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text`` with every long run cut to ``RUN``."""
    out: list[str] = []
    size = end = 0
    for match in _LONG_RUNS.finditer(text):
        out.append(text[end:min(match.start(), end + limit - size)])
        size += len(out[-1])
        if size < limit:
            out.append(text[match.start():match.start() + RUN])
            size += RUN
        if size >= limit:
            return "".join(out)[:limit]
        end = match.end()
    out.append(text[end:end + limit - size])
    return "".join(out)


def reader_for(tokenizer: Any, tokens: int) -> Reader:
    """The reader for a ``tokenizers.Tokenizer`` or a transformers fast tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    model = getattr(backend, "model", None)
    return Reader(tokens, type(model).__name__ == "WordPiece")
