"""PDF: text per page via pypdf, chunked within pages, every chunk tagged with its page.

A PDF has no source lines, so line numbers are those of the extracted text:
the pages' text joined with a form-feed line (``\\f``) between pages, as
``pdftotext`` writes it. A chunk never spans two pages; its ``page`` is
1-based, so a hit can point at ``file.pdf#page=12``. The breadcrumb is the
document title plus the outline (bookmark) section the page falls in, when
the PDF has an outline.

Extraction is bounded: a 150 KB PDF whose pages share one
compressed stream used to expand to 60 M characters a page, a minute and a GB
each. A page whose content stream is larger than ``CONTENT_PER_CHAR`` times
``max_page_chars``, or whose text is longer than ``max_page_chars``, and a file
whose pages add up to more than ``max_chars``, raise ``HandlerError`` naming the
setting: an error for that file only.

Encrypted PDFs open only when the user password is empty; any PDF that
cannot be read raises ``HandlerError`` with a reason, and the build records
it for that file and goes on.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from vq.indexer.handlers.base import (
    Chunk,
    Document,
    HandlerError,
    Limits,
    file_stem,
    make_chunk,
    split_lines,
    split_span,
)

PAGE_BREAK = "\f"
MAX_PAGE_CHARS = 250_000      # the extract_max_page_chars default (a dense page: ~5,000)
MAX_CHARS = 10_000_000        # the extract_max_chars default
CONTENT_PER_CHAR = 32         # content-stream bytes a page may spend per character allowed
# pypdf logs every repair it makes to a damaged file; a build over many PDFs
# would drown stderr, and real failures still raise.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def pdf_handler(data: bytes, relpath: str, limits: Limits) -> Document:
    """Chunk a PDF's bytes (the registry marks this handler as binary)."""
    title, pages, sections = extract_pdf(data)
    return pdf_document(title, pages, relpath, limits, sections)


def extract_pdf(data: bytes, max_page_chars: int = MAX_PAGE_CHARS, max_chars: int = MAX_CHARS
                ) -> tuple[str, list[str], list[str]]:
    """(title, text of each page, outline section of each page); raises HandlerError."""
    from pypdf import PdfReader

    with _reading():
        reader = PdfReader(io.BytesIO(data))
        _unlock(reader)
        pages: list[str] = []
        budget = [CONTENT_PER_CHAR * max_chars, max_chars]  # content bytes, characters
        for number, page in enumerate(reader.pages, 1):
            pages.append(_bounded_page_text(page, number, max_page_chars, budget))
    if not any(text.strip() for text in pages):
        raise HandlerError("no extractable text (a drawing or a scanned PDF?); exclude it, "
                           "or configure an OCR hook for .pdf to index a scan")
    return _title(reader), pages, _sections(reader, len(pages))


def has_text(data: bytes, pages: int) -> bool:
    """Whether any of the first ``pages`` pages holds text, within the extraction's bounds
    (``vq init`` asks, to leave out drawings and scans); raises HandlerError as
    ``extract_pdf`` does for a file it cannot read."""
    from pypdf import PdfReader

    with _reading():
        reader = PdfReader(io.BytesIO(data))
        _unlock(reader)
        budget = [CONTENT_PER_CHAR * MAX_CHARS, MAX_CHARS]
        return any(_bounded_page_text(page, number, MAX_PAGE_CHARS, budget).strip()
                   for number, page in enumerate(reader.pages[:pages], 1))


@contextlib.contextmanager
def _reading() -> Iterator[None]:
    """Any failure of pypdf on a damaged file (it raises many types) is this file's
    HandlerError."""
    try:
        yield
    except HandlerError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise HandlerError(f"cannot read PDF: {type(exc).__name__}: {exc}"[:300]) from None


def pdf_document(title: str, pages: Sequence[str], relpath: str, limits: Limits,
                 sections: Sequence[str] = ()) -> Document:
    """Chunk extracted pages: split within each page, never across pages."""
    lines: list[str] = []
    chunks: list[Chunk] = []
    name = title or file_stem(relpath)
    for number, text in enumerate(pages, 1):
        if number > 1:
            lines.append(PAGE_BREAK)
        start = len(lines)
        lines.extend(split_lines(text.rstrip("\n")))
        section = sections[number - 1] if number <= len(sections) else ""
        breadcrumb = " > ".join(part for part in (name, section) if part)
        for span in split_span(lines, (start, len(lines)), limits.max_chars):
            chunks.append(replace(make_chunk(lines, span, breadcrumb), page=number))
    return Document(chunks=tuple(chunks), title=name)


def _unlock(reader: Any) -> None:
    if not reader.is_encrypted:
        return
    try:
        unlocked = reader.decrypt("")
    except Exception as exc:  # noqa: BLE001 - e.g. an AES file without a crypto backend
        raise HandlerError(f"encrypted PDF that cannot be decrypted here: {exc}") from None
    if not unlocked:
        raise HandlerError("encrypted PDF (a password is required to read it); "
                           "exclude it or index a decrypted copy")


def _bounded_page_text(page: Any, number: int, max_page_chars: int, budget: list[int]
                       ) -> str:
    """The page's text, refusing the file before (content size) and after (text size)
    an extraction that would go past a bound; ``budget`` is what the file has left."""
    contents = page.get_contents()
    size = len(contents.get_data()) if contents is not None else 0
    budget[0] -= size
    if size > CONTENT_PER_CHAR * max_page_chars or budget[0] < 0:
        raise HandlerError(f"page {number} holds {size} bytes of drawing instructions, more "
                           "than the extraction bounds allow (a PDF bomb?); raise "
                           "extract_max_page_chars / extract_max_chars to index it")
    text = _page_text(page, number)
    budget[1] -= len(text)
    if len(text) > max_page_chars:
        raise HandlerError(f"page {number} has {len(text)} characters of text, more than "
                           f"extract_max_page_chars ({max_page_chars}); raise it to index it")
    if budget[1] < 0:
        raise HandlerError(f"the text passes extract_max_chars at page {number}; "
                           "raise extract_max_chars to index it")
    return text


def _page_text(page: Any, number: int) -> str:
    try:
        return page.extract_text() or ""
    except Exception as exc:  # noqa: BLE001 - a damaged content stream
        raise HandlerError(f"cannot extract text of page {number}: {exc}"[:300]) from None


def _title(reader: Any) -> str:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # noqa: BLE001 - malformed metadata is not worth failing the file
        return ""
    return " ".join(str(title).split()) if title else ""


def _sections(reader: Any, count: int) -> list[str]:
    """Per page, the outline path (``Chapter 2 > Section 2.1``) in force on that page."""
    marks: list[tuple[int, str]] = []
    try:
        _walk_outline(reader, reader.outline, (), marks)
    except Exception:  # noqa: BLE001 - a broken outline only costs the breadcrumb
        return []
    marks.sort(key=lambda mark: mark[0])
    out, current, i = [], "", 0
    for page in range(count):
        while i < len(marks) and marks[i][0] <= page:
            current = marks[i][1]
            i += 1
        out.append(current)
    return out


def _walk_outline(reader: Any, items: list, parents: tuple[str, ...],
                  marks: list[tuple[int, str]]) -> None:
    """Outline entries in document order; a nested list holds the previous entry's children."""
    last = parents
    for item in items:
        if isinstance(item, list):
            _walk_outline(reader, item, last, marks)
            continue
        title = " ".join(str(item.title or "").split())
        last = (*parents, title)
        page = reader.get_destination_page_number(item)
        if page is not None and page >= 0:
            marks.append((page, " > ".join(p for p in last if p)))
