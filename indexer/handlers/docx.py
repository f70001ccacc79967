"""Word documents (``.docx``): the body rendered as Markdown, so headings become breadcrumbs.

Read with python-docx (lxml underneath, entities never resolved). The body is walked in
order: a paragraph styled ``Title``, or with an outline level (``Heading N`` sets one, in
any language), becomes a heading of that level, a list paragraph a ``- `` item, other
paragraphs text (a line that would read as Markdown syntax, ``# 1`` or ``---``, is
escaped, as HTML's are), and a table one ``|``-joined line per row. Headers, footers,
comments and tracked deletions are left out. The Markdown handler then chunks the
result; line numbers are those of the rendered Markdown, as for a PDF's text. The title
is the document's own (File > Properties), else the first ``Title``/H1 paragraph, else
the file stem. A publisher's house styles that set no outline level (No Starch's
``HeadA``) read as text.

A ``.docx`` is a zip: before anything is parsed, the sizes its entries declare are
added up and a file that would unpack past ``MAX_UNPACKED`` is refused (a zip bomb of a
few kilobytes unpacks to gigabytes), with the one-line error every bad file gets.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from vq.indexer.handlers.base import Document, HandlerError, Limits, as_text, join_blocks
from vq.indexer.handlers.html import markdown_document

MAX_UNPACKED = 200_000_000  # bytes a .docx may unpack to (its XML parts and media)
_HEADING_STYLE = re.compile(r"^heading\s*([1-6])$", re.IGNORECASE)
FIX = "save it again from Word or LibreOffice, or exclude it"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_OUTLINE, _VAL = f"{_W}outlineLvl", f"{_W}val"  # outline level 0 is a first-level heading


def docx_handler(data: bytes, relpath: str, limits: Limits) -> Document:
    """Chunk a Word document's bytes (the registry marks this handler as binary)."""
    title, text = extract_docx(data)
    return markdown_document(text, relpath, limits, title)


def extract_docx(data: bytes) -> tuple[str, str]:
    """(the document's title or "", its body as one Markdown text)."""
    _check_unpacked(data)
    import docx  # lxml and python-docx: only a build that meets a .docx pays for them
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise HandlerError(f"not a Word document ({str(exc)[:80]}); {FIX}") from None
    except Exception as exc:  # noqa: BLE001 - lxml's XMLSyntaxError and friends
        raise HandlerError(f"unreadable Word document ({type(exc).__name__}); {FIX}") from None
    items = list(document.iter_inner_content())
    titled = any(_style(item) == "title" for item in items)  # then Heading 1 sits below it
    blocks = [_block(item, titled) for item in items]
    title = (document.core_properties.title or "").strip()
    return title, join_blocks(blocks)


def _check_unpacked(data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise HandlerError(f"not a Word document (not a zip: {str(exc)[:60]}); {FIX}") from None
    if unpacked > MAX_UNPACKED:
        raise HandlerError(f"unpacks to {unpacked:,} bytes, over {MAX_UNPACKED:,} (a zip "
                           "bomb, or a document of embedded media); exclude it")


def _style(item: Any) -> str:
    """A paragraph's style name, lower case ("" for a table or no style)."""
    style = getattr(item, "style", None)
    return ((style.name if style is not None else "") or "").strip().lower() \
        if not hasattr(item, "rows") else ""


def _block(item: Any, titled: bool) -> str:
    """A paragraph or a table as Markdown; ``titled``: the document has a ``Title``
    paragraph, so ``Heading 1`` is its second level."""
    if hasattr(item, "rows"):
        return "\n".join(filter(None, (_row(row) for row in item.rows)))
    text = " ".join(item.text.split())
    if not text:
        return ""
    style = _style(item)
    if style == "title":
        return f"# {text}"
    level = _outline_level(item)
    if level:
        return f"{'#' * min(6, level + titled)} {text}"
    if style.startswith("list"):
        return f"- {text}"
    return as_text(text)


def _outline_level(paragraph: Any) -> int:
    """A heading's level, 1 to 6, as Word's navigation pane reads it: the outline level
    the paragraph or its style (or a style it is based on) sets, which a localised
    "Überschrift 1" keeps; else a style named ``Heading N``; 0 for body text."""
    found = paragraph._p.pPr
    style = paragraph.style
    for _ in range(10):  # a style's base chain, bounded (a loop in a hostile file)
        level = found.find(_OUTLINE) if found is not None else None
        if level is not None:
            value = level.get(_VAL, "")
            return int(value) + 1 if value.isdigit() and int(value) < 6 else 0
        if style is None:
            break
        found, style = style.element.pPr, style.base_style
    heading = _HEADING_STYLE.match(_style(paragraph))
    return int(heading.group(1)) if heading else 0


def _row(row: Any) -> str:
    """A table row's cells on one line; a cell merged across columns is said once."""
    cells: list[str] = []
    for cell in row.cells:
        text = " ".join(cell.text.split())
        if not cells or text != cells[-1]:
            cells.append(text)
    return "| " + " | ".join(cells) + " |" if any(cells) else ""
