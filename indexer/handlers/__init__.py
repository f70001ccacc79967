"""Which chunker reads which file: the handler name from ``vq.core.filetypes``, the
function here.

The walker claims files by name with the core table (so `vq status --check` and
`vq doctor` agree with the build without importing a chunker); this module only
maps each handler name to its function. Adding a format means an entry in the
core table and, for a new handler name, one here. Handlers named in
``BINARY_HANDLERS`` (PDF, HTML, notebooks, canvases, Word) take the file's bytes, not decoded
text.
"""

from __future__ import annotations

from collections.abc import Callable

from vq.core.filetypes import BINARY_HANDLERS, HANDLED_EXTENSIONS, handler_name
from vq.indexer.handlers.asciidoc import asciidoc_handler
from vq.indexer.handlers.base import Chunk, Document, Handler, HandlerError, Limits
from vq.indexer.handlers.canvas import canvas_handler
from vq.indexer.handlers.code import code_handler
from vq.indexer.handlers.docx import docx_handler
from vq.indexer.handlers.html import html_handler
from vq.indexer.handlers.latex import latex_handler
from vq.indexer.handlers.markdown import markdown_handler
from vq.indexer.handlers.notebook import notebook_handler
from vq.indexer.handlers.org import org_handler
from vq.indexer.handlers.pdf import pdf_handler
from vq.indexer.handlers.rst import rst_handler
from vq.indexer.handlers.text import text_handler

__all__ = [
    "BINARY_HANDLERS",
    "BinaryHandler",
    "HANDLED_EXTENSIONS",
    "HANDLERS",
    "Chunk",
    "Document",
    "Handler",
    "HandlerError",
    "Limits",
    "handler_for",
]

BinaryHandler = Callable[[bytes, str, Limits], Document]
# Text handlers take decoded text first, binary ones (BINARY_HANDLERS) the file's bytes:
# callers check the name before calling, so the table says both, not Any.
HANDLERS: dict[str, Handler | BinaryHandler] = {
    "text": text_handler,
    "code": code_handler,
    "markdown": markdown_handler,
    "rst": rst_handler,
    "asciidoc": asciidoc_handler,
    "org": org_handler,
    "latex": latex_handler,
    "pdf": pdf_handler,
    "html": html_handler,
    "notebook": notebook_handler,
    "canvas": canvas_handler,
    "docx": docx_handler,
}


def handler_for(relpath: str) -> tuple[str, Handler | BinaryHandler] | None:
    """(handler name, handler) for a file, None for unclaimed names (see the core table)."""
    name = handler_name(relpath)
    return None if name is None else (name, HANDLERS[name])
