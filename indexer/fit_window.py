"""Fit every chunk, breadcrumb header included, into the model's input window.

Handlers cut by characters (``chunk.max_chars``); the model reads a fixed
number of word pieces and drops the rest silently. This pass runs on any
handler's ``Document``: a chunk whose embed text (header + source lines) is
longer than the window is cut again at paragraphs, then lines, into pieces
that fit, keeping its breadcrumb, symbol and context. A Markdown fence stays
whole where it fits. What cannot be made to fit is a single line longer than
the window (chunks hold whole lines only): it is kept, and counted as
truncated by the bench and ``vq doctor``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from vq.core.filetypes import MARKDOWN_TEXT_HANDLERS
from vq.core.token_window import Window, load_window
from vq.core.walk import FileEntry
from vq.indexer.handlers.base import Chunk, Document, Span, split_lines, split_span
from vq.indexer.handlers.markdown import fences
from vq.indexer.rows import chunk_header

MIN_BODY_TOKENS = 32  # a header that eats the window still leaves the body this much
_RETRIES = 4          # re-cuts of a piece the per-line estimate let through too long


Fit = Callable[[Document, FileEntry, str], Document]


def fitter(model: str) -> Fit:
    """The pass every engine runs on each handler's output, for ``model``'s window
    (a tokenizer only, no torch); a model without a known window leaves chunks as cut."""
    window = load_window(model)
    if window is None:
        return lambda doc, entry, handler: doc

    def fit(doc: Document, entry: FileEntry, handler: str) -> Document:
        return fit_document(doc, window, lambda c: chunk_header(entry.vault, entry.path, c),
                            fenced=handler in MARKDOWN_TEXT_HANDLERS or handler.startswith("hook:"))
    return fit


def fit_document(doc: Document, window: Window, header_of: Callable[[Chunk], str],
                 fenced: bool = False) -> Document:
    """``doc`` with every over-long chunk split; chunks that fit are left untouched."""
    if not doc.chunks:
        return doc
    headers = [header_of(c) for c in doc.chunks]
    sizes = window.counts([h + c.text for h, c in zip(headers, doc.chunks, strict=True)])
    if max(sizes) <= window.tokens:
        return doc
    out: list[Chunk] = []
    for chunk, header, size in zip(doc.chunks, headers, sizes, strict=True):
        out.extend([chunk] if size <= window.tokens else
                   split_chunk(chunk, header, window, fenced))
    return replace(doc, chunks=tuple(out))


def split_chunk(chunk: Chunk, header: str, window: Window, fenced: bool) -> list[Chunk]:
    """Pieces of ``chunk`` whose ``header + text`` fits the window (see the module doc)."""
    lines = split_lines(chunk.text)
    cost = window.counts(lines, specials=False)
    budget = max(MIN_BODY_TOKENS, window.tokens - window.count(header))
    atomic = fences(lines) if fenced else []
    pending = split_span(lines, (0, len(lines)), budget, atomic, cost)
    done: list[Span] = []
    for _ in range(_RETRIES):
        texts = [header + "\n".join(lines[a:b]) for a, b in pending]
        over = [n - window.tokens for n in window.counts(texts)]
        retry = [(s, o) for s, o in zip(pending, over, strict=True) if o > 0 and s[1] - s[0] > 1]
        done += [s for s, o in zip(pending, over, strict=True) if o <= 0 or s[1] - s[0] == 1]
        if not retry:
            break
        pending = [p for s, o in retry for p in split_span(lines, s, max(1, budget - o), (), cost)]
    else:
        done += pending
    offset = chunk.start_line - 1
    return [replace(chunk, text="\n".join(lines[a:b]), start_line=offset + a + 1,
                    end_line=offset + b) for a, b in sorted(done)]
