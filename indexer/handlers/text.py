"""Plain text and config files: paragraphs packed up to ``max_chars``.

These formats have no structure vq understands yet, so the only signal used is
the blank line; a paragraph too long alone is cut between lines. A Vim help file
(``vimdoc``) is the exception: it is cut at its sections and entries.
"""

from __future__ import annotations

from vq.core import filetypes
from vq.indexer.handlers.base import (
    Document,
    Limits,
    file_stem,
    make_chunk,
    split_lines,
    split_span,
)
from vq.indexer.handlers.vimdoc import is_vimdoc, vimdoc_handler


def text_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk by paragraphs; breadcrumb is the path, title the file stem."""
    lines = split_lines(text)
    if filetypes.suffix(relpath) == ".txt" and is_vimdoc(lines):
        return vimdoc_handler(lines, relpath, limits)
    spans = split_span(lines, (0, len(lines)), limits.max_chars)
    return Document(
        chunks=tuple(make_chunk(lines, span, relpath) for span in spans),
        title=file_stem(relpath),
    )
