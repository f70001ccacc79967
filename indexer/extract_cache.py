"""From a file's bytes to a Document, extracting each document's text once per content.

``FileChunker`` is the build's single doorway: a configured hook wins for its
extension, PDF and HTML get their bytes, everything else is decoded and
handed to its text handler. Code that nobody reads (minified bundles,
files marked generated) is skipped and counted rather than indexed.

Extraction (pypdf, an HTML parse, an external hook) is the slow part of a
document and depends only on its bytes and the extractor, so the result is
kept in ``index_dir/extract-cache/`` under (content hash, extractor). A
rebuild, a chunker upgrade, a renamed or restored file reuse it; chunking
always reruns, as it depends on settings. Changing a hook's command changes
the key. Entries unused for ``PRUNE_AFTER_DAYS`` are removed. An index in
object storage keeps no cache: extraction reruns.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vq.core import paths
from vq.core.filetypes import suffix
from vq.core.settings import Settings
from vq.core.test_paths import is_secondary
from vq.core.trust import require_trusted
from vq.core.walk import FileEntry, marked_generated
from vq.indexer.handlers import BINARY_HANDLERS, Document, HandlerError, Limits, handler_for
from vq.indexer.handlers.base import file_stem
from vq.indexer.handlers.canvas import canvas_document, extract_canvas
from vq.indexer.handlers.docx import extract_docx
from vq.indexer.handlers.html import extract_html, markdown_document
from vq.indexer.handlers.notebook import extract_notebook
from vq.indexer.handlers.pdf import extract_pdf, pdf_document
from vq.indexer.hooks import hook_name, hook_text_of
from vq.indexer.reading import Unreadable, decode

# Binary readers whose extraction is one Markdown text without a title of its own.
_TO_MARKDOWN: dict[str, Callable[[bytes], str]] = {"notebook": extract_notebook,
                                                   "canvas": extract_canvas}
_TITLED_MARKDOWN: dict[str, Callable[[bytes], tuple[str, str]]] = {"html": extract_html,
                                                                   "docx": extract_docx}
EXTRACTOR_VERSION = 1  # bump when PDF, HTML, notebook or canvas extraction output changes
CACHE_DIR = "extract-cache"
PRUNE_AFTER_DAYS = 90
MINIFIED_AVERAGE_LINE = 200  # characters per non-blank line


@dataclass(frozen=True)
class Extracted:
    """A document's text: one entry per page, or a single Markdown text."""

    title: str
    pages: tuple[str, ...]
    sections: tuple[str, ...] = ()  # per page: the outline section in force
    paged: bool = False


class ExtractCache:
    """JSON files under ``root``; every failure to read or write only costs time."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._pruned = False

    def get(self, digest: str, extractor: str) -> Extracted | None:
        if self.root is None:
            return None
        path = self._path(digest, extractor)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            value = Extracted(str(data["title"]), tuple(data["pages"]),
                              tuple(data["sections"]), bool(data["paged"]))
            os.utime(path)  # recently used entries survive pruning
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return value

    def put(self, digest: str, extractor: str, value: Extracted) -> None:
        if self.root is None:
            return
        path = self._path(digest, extractor)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        data = {"extractor": extractor, "title": value.title, "pages": list(value.pages),
                "sections": list(value.sections), "paged": value.paged}
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._prune()
            tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)  # readers never see half a file
        except OSError:
            tmp.unlink(missing_ok=True)

    def _path(self, digest: str, extractor: str) -> Path:
        assert self.root is not None
        tag = hashlib.blake2b(extractor.encode(), digest_size=6).hexdigest()
        return self.root / f"{digest}-{tag}.json"

    def _prune(self) -> None:
        """Once per build: drop entries (and stray temp files) nobody used for months."""
        if self._pruned or self.root is None:
            return
        self._pruned = True
        cutoff = time.time() - PRUNE_AFTER_DAYS * 86400
        for entry in os.scandir(self.root):
            if entry.stat().st_mtime < cutoff:
                Path(entry.path).unlink(missing_ok=True)


class FileChunker:
    """The build's one way from a file's bytes to a ``Document`` (see the module docstring)."""

    def __init__(self, settings: Settings, limits: Limits, cached: bool = True) -> None:
        """``cached``: False for `vq init`'s sample, which must not create the index folder."""
        require_trusted(settings)  # before any hook could run
        self.limits = limits
        self.hooks = dict(settings.hooks)
        self.timeout = settings.hook_timeout_seconds
        self.hook_max_bytes = settings.hook_max_bytes
        self.extract_bounds = (settings.extract_max_page_chars, settings.extract_max_chars)
        local = cached and not paths.is_uri(settings.index_dir)
        self.cache = ExtractCache(Path(settings.index_dir) / CACHE_DIR if local else None)
        self.skipped: Counter[str] = Counter()  # files read but not indexed, by reason
        self.extractions = 0  # documents actually extracted (cache misses)

    def claim(self, relpath: str) -> tuple[str, Any] | None:
        """(handler name, handler): a configured hook first, then the handler registry."""
        command = self.hooks.get(suffix(relpath))
        if command is not None:
            return hook_name(command), command
        return handler_for(relpath)

    def chunk(self, name: str, handler: Any, data: bytes, digest: str,
              entry: FileEntry) -> Document:
        """The file's Document; ``Unreadable`` (with the reason) when it cannot be indexed."""
        try:
            if isinstance(handler, str) or name in BINARY_HANDLERS:
                return self._document(self._extract(name, handler, data, digest, entry),
                                      entry.path, name)
            try:
                text = decode(data)
            except Unreadable:
                if not is_secondary(entry.path):
                    raise
                # a test's fixture that is no UTF-8 text (a JSON parser's suite of invalid
                # encodings) is test data on purpose: counted, not an error every build
                self.skipped["fixture not text"] += 1
                return Document(chunks=(), title=file_stem(entry.path))
            reason = skip_reason(text) if name == "code" else ""
            if reason:
                self.skipped[reason] += 1
                return Document(chunks=(), title=file_stem(entry.path))
            return handler(without_private_keys(text), entry.path, self.limits)
        except HandlerError as exc:
            raise Unreadable(f"{name}: {exc}") from None

    def _extract(self, name: str, handler: Any, data: bytes, digest: str,
                 entry: FileEntry) -> Extracted:
        key, run = self._extractor(name, handler, data, entry.path)
        value = self.cache.get(digest, key)
        if value is None:
            value = run()
            self.extractions += 1
            self.cache.put(digest, key, value)
        return value

    def _extractor(self, name: str, handler: Any, data: bytes, relpath: str
                   ) -> tuple[str, Callable[[], Extracted]]:
        """(cache key naming the extractor, the extraction to run on a miss)."""
        if isinstance(handler, str):
            return f"hook/{handler}", lambda: Extracted(
                "", (hook_text_of(handler, data, relpath, self.timeout, self.hook_max_bytes),))
        if name == "pdf":
            return f"pdf/{EXTRACTOR_VERSION}", lambda: _pdf(data, *self.extract_bounds)
        max_chars = self.extract_bounds[1]
        extract = _TO_MARKDOWN.get(name)
        if extract is not None:
            return f"{name}/{EXTRACTOR_VERSION}", lambda: Extracted(
                "", (bounded(extract(data), max_chars),))
        titled = _TITLED_MARKDOWN[name]  # HTML, Word: a title of their own beside the text
        return f"{name}/{EXTRACTOR_VERSION}", lambda: Extracted(
            *_one_page(titled(data), max_chars))

    def _document(self, value: Extracted, relpath: str, name: str) -> Document:
        """The chunks of extracted text; a canvas is titled by its file name here, not in
        the cache (files of equal content share an entry)."""
        if value.paged:
            return pdf_document(value.title, value.pages, relpath, self.limits, value.sections)
        text = value.pages[0] if value.pages else ""
        if name == "canvas":
            return canvas_document(text, relpath, self.limits)
        return markdown_document(text, relpath, self.limits, value.title)


def skip_reason(text: str) -> str:
    """"generated" or "minified" for code nobody reads (it would crowd out real hits)."""
    if marked_generated(text):
        return "generated"
    lengths = [len(line) for line in text.split("\n") if line.strip()]
    if lengths and sum(lengths) / len(lengths) > MINIFIED_AVERAGE_LINE:
        return "minified"
    return ""


# A PEM private key (RSA, EC, OpenSSH, PGP, ...): its BEGIN line, its body, its END line
_KEY_LINE = r"-----{} (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PRIVATE_KEY = re.compile(f"({_KEY_LINE.format('BEGIN')})([\\s\\S]{{0,20000}}?)"
                          f"({_KEY_LINE.format('END')})")


def without_private_keys(text: str) -> str:
    """``text`` with each private key's body blanked, its lines kept: a key committed in a
    config file or a test's fixture (go-plugin's, Jest's) is no words to search, and the
    index, the dashboard and MCP clients would show it. The file's other lines stay."""
    if "PRIVATE KEY" not in text:
        return text
    return _PRIVATE_KEY.sub(lambda m: m[1] + "\n" * m[2].count("\n") + m[3], text)


def _pdf(data: bytes, max_page_chars: int, max_chars: int) -> Extracted:
    title, pages, sections = extract_pdf(data, max_page_chars, max_chars)
    return Extracted(title, tuple(pages), tuple(sections), paged=True)


def _one_page(extracted: tuple[str, str], max_chars: int) -> tuple[str, tuple[str, ...]]:
    title, text = extracted
    return title, (bounded(text, max_chars),)


def bounded(text: str, max_chars: int) -> str:
    """``text``, or the error a document with more text than ``extract_max_chars`` gets
    (as a PDF does): what a 50 MB notebook or page holds is text to chunk and embed."""
    if len(text) > max_chars:
        raise HandlerError(f"more than extract_max_chars ({max_chars}) characters of text; "
                           "raise extract_max_chars to index it, or exclude it")
    return text
