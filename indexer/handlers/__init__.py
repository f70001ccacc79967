"""Which handler chunks which file, decided by name alone.

The indexer asks ``handler_for(relpath)`` and skips files it returns None for,
so adding a format means adding its extensions here and nothing else.
Extensions in ``HANDLED_EXTENSIONS`` are lowercase with their leading dot,
like ``PurePath.suffix``; matching is case-insensitive. Handlers named in
``BINARY_HANDLERS`` (PDF, HTML) take the file's bytes instead of decoded text,
because their format says how to decode it.
"""

from __future__ import annotations

from vq.indexer.handlers.base import Chunk, Document, Handler, HandlerError, Limits
from vq.indexer.handlers.code import LANGUAGE_BY_EXTENSION, LANGUAGE_BY_FILENAME, code_handler
from vq.indexer.handlers.html import html_handler
from vq.indexer.handlers.markdown import markdown_handler
from vq.indexer.handlers.pdf import pdf_handler
from vq.indexer.handlers.text import text_handler

__all__ = [
    "BINARY_HANDLERS",
    "HANDLED_EXTENSIONS",
    "Chunk",
    "Document",
    "Handler",
    "HandlerError",
    "Limits",
    "handler_for",
]

_MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdx"})
_TEXT_EXTENSIONS = frozenset(
    {
        ".txt",
        ".rst",
        ".adoc",
        ".org",
        ".csv",
        ".tsv",
        ".log",
        ".toml",
        ".yaml",
        ".yml",
        ".json",
        ".ini",
        ".cfg",
    }
)
_TEXT_FILENAMES = frozenset({"README", "LICENSE"})

BINARY_HANDLERS = frozenset({"pdf", "html"})
_BY_EXTENSION: dict[str, tuple[str, Handler]] = {
    **{ext: ("text", text_handler) for ext in _TEXT_EXTENSIONS},
    **{ext: ("code", code_handler) for ext in LANGUAGE_BY_EXTENSION},
    **{ext: ("markdown", markdown_handler) for ext in _MARKDOWN_EXTENSIONS},
    ".pdf": ("pdf", pdf_handler),  # type: ignore[dict-item] - binary, see BINARY_HANDLERS
    ".html": ("html", html_handler),  # type: ignore[dict-item]
    ".htm": ("html", html_handler),  # type: ignore[dict-item]
}
_BY_FILENAME: dict[str, tuple[str, Handler]] = {
    **{name: ("text", text_handler) for name in _TEXT_FILENAMES},
    **{name: ("code", code_handler) for name in LANGUAGE_BY_FILENAME},
}

HANDLED_EXTENSIONS: frozenset[str] = frozenset(_BY_EXTENSION)


def handler_for(relpath: str) -> tuple[str, Handler] | None:
    """(handler name, handler) by file extension, None for unclaimed extensions.

    Exact file names (``Makefile``, ``Dockerfile``, ``README``, ``LICENSE``)
    are checked first, case-sensitively, as they are conventionally spelled.
    """
    name = relpath.replace("\\", "/").rsplit("/", 1)[-1]
    if name in _BY_FILENAME:
        return _BY_FILENAME[name]
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:  # no extension, or a dotfile such as ".bashrc"
        return None
    return _BY_EXTENSION.get("." + suffix.lower())
