"""A text is cut to what the model can read before it is tokenized: the same first
word pieces, a bounded size, whatever the text (``vq.core.model_input``)."""

from __future__ import annotations

import random

import pytest

from vq.core.model_input import RUN, Reader
from vq.core.token_window import load_window

ALPHABET = "abcdef0123456789+/=_-.,:; \n\t\u00e9\u6771\uac00\u3042\u00a9\u2014\U0001f600\u0301"


def texts(seed: int) -> list[str]:
    """Long texts made of the parts that break a naive cut: giant words, giant
    whitespace, punctuation between runs, CJK, accents."""
    rng = random.Random(seed)
    out = []
    for _ in range(12):
        parts = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.3:
                parts.append(rng.choice("ab0f") * rng.randint(1, 200_000))  # a giant word
            elif kind < 0.45:
                parts.append(rng.choice(" \n\t") * rng.randint(1, 200_000))
            else:
                parts.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 3000))))
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_first_word_pieces_are_the_same_after_the_cut(seed):
    window = load_window("all-MiniLM-L6-v2")
    assert window is not None and window.reader.wordpiece
    for text in texts(seed):
        cut = window.reader.readable(text)
        assert len(cut) <= (window.tokens + 2) * 2 * RUN
        whole = window.tokenizer.encode(text, add_special_tokens=False).ids
        seen = window.tokenizer.encode(cut, add_special_tokens=False).ids
        assert seen[:window.tokens] == whole[:window.tokens]


def test_short_texts_are_untouched_and_other_vocabularies_are_only_cut():
    reader = Reader(tokens=8, wordpiece=True)
    assert reader.readable("short") == "short"
    giant = "x" * 100_000 + " then words"
    assert reader.readable(giant) == "x" * RUN + " then words"
    plain = Reader(tokens=8, wordpiece=False)
    assert plain.readable(giant) == giant[:10 * 2 * RUN]
