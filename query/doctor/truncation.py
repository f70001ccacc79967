"""`vq doctor`'s model-window check: the share of chunks the model truncates.

A chunk whose embed text is longer than the model's ``max_seq_length`` is
embedded by its head only. Chunker v3 sizes chunks to the window, so the
share should be ~0 (only single lines longer than the window remain); an
index from an older vq, or one built when the tokenizer was unreadable, says
so here. Reads every chunk's text and tokenizes it (a Rust tokenizer, no torch).
"""

from __future__ import annotations

from typing import Any

from vq.core.token_window import load_window
from vq.query.doctor.checks import FAIL, OK, SKIP, WARN, Check

BATCH = 4096
WARN_SHARE = 0.01  # more than 1% of chunks cut short: the index needs the new chunker


def truncation(index: Any, window: Any) -> tuple[int, int]:
    """(chunks the model would truncate, chunks) over the whole table."""
    truncated = total = 0
    reader = index.chunks.search().select(["text"]).limit(None).to_batches(BATCH)
    for batch in reader:
        texts = batch.column("text").to_pylist()
        truncated += window.truncated(texts)
        total += len(texts)
    return truncated, total


def window_check(index: Any) -> Check:
    window = load_window(index.meta.model)
    if window is None:
        return Check("model window", SKIP, f"no tokenizer on disk for {index.meta.model!r}: "
                     "chunks are sized by characters only")
    cut, total = truncation(index, window)
    share = cut / total if total else 0.0
    detail = (f"{window.tokens} word pieces; {cut} of {total} chunks ({share:.1%}) longer, "
              "their tails not embedded")
    if index.meta.window and index.meta.window != window.tokens:
        return Check("model window", FAIL, f"the index was sized for {index.meta.window}, "
                     f"the model reads {window.tokens}", "run `vq build --rebuild`")
    if share > WARN_SHARE:
        return Check("model window", WARN, detail, "run `vq build` (an index from an older "
                     "chunker is rebuilt, sized to the window)")
    return Check("model window", OK, detail)
