"""Plain text and config files: paragraphs packed up to ``max_chars``.

These formats have no structure vq understands yet, so the only signal used is
the blank line; a paragraph too long alone is cut between lines.
"""

from __future__ import annotations

from vq.indexer.handlers.base import (
    Document,
    Limits,
    file_stem,
    make_chunk,
    split_lines,
    split_span,
)


def text_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk by paragraphs; breadcrumb is the path, title the file stem."""
    lines = split_lines(text)
    spans = split_span(lines, (0, len(lines)), limits.max_chars)
    return Document(
        chunks=tuple(make_chunk(lines, span, relpath) for span in spans),
        title=file_stem(relpath),
    )
