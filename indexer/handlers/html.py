"""HTML: the visible text rendered as Markdown, so headings become breadcrumbs.

The page is parsed by selectolax's lexbor engine, an HTML5 parser: unclosed
``<p>``/``<li>``, bad nesting and entities come out as a browser builds them,
and ``<meta charset>`` is honoured. The text is rendered as Markdown
(``#`` headings, ``- `` list items, fenced ``<pre>``, ``|`` between table
cells) and chunked by the Markdown handler. Left out as not visible or not
content: ``<head>``, scripts, styles, templates, ``<nav>``, SVG/MathML,
embedded frames, form controls, and any element that is ``hidden``,
``aria-hidden="true"`` or ``display: none`` inline.

Line numbers are those of the rendered Markdown, like a PDF's extracted text.
The document title is ``<title>``, else the first H1, else the file stem.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from vq.indexer.handlers.base import Document, Limits, as_text
from vq.indexer.handlers.markdown import markdown_handler

_SKIP = frozenset({"head", "script", "style", "noscript", "template", "nav", "svg", "math",
                   "iframe", "object", "embed", "canvas", "button", "select", "textarea",
                   "audio", "video"})
_BLOCKS = frozenset({"html", "body", "p", "div", "section", "article", "main", "header",
                     "footer", "aside", "blockquote", "figure", "figcaption", "form",
                     "fieldset", "legend", "details", "summary", "dl", "dt", "dd", "table",
                     "caption", "thead", "tbody", "tfoot", "ul", "ol", "li", "address",
                     "hr", "center", "menu"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BACKTICKS = re.compile(r"^\s*(`{3,})", re.MULTILINE)


def html_handler(data: bytes, relpath: str, limits: Limits) -> Document:
    """Chunk an HTML page's bytes (the registry marks this handler as binary)."""
    title, text = extract_html(data)
    return markdown_document(text, relpath, limits, title)


def markdown_document(text: str, relpath: str, limits: Limits, title: str = "") -> Document:
    """Markdown extracted from another format: chunked as a note, with its own title."""
    document = markdown_handler(text, relpath, limits)
    return replace(document, title=title or document.title)


def extract_html(data: bytes) -> tuple[str, str]:
    """(``<title>``, the visible text as Markdown)."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(data, encoding=True)
    node = tree.css_first("title")
    title = " ".join(node.text().split()) if node is not None else ""
    root = tree.body or tree.root
    return title, _render(root) if root is not None else ""


class _Writer:
    """Collects Markdown blocks; inline text gathers until a block boundary."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.inline: list[str] = []

    def text(self, value: str) -> None:
        self.inline.append(value)

    def pending(self) -> bool:
        """True when the current line already has text."""
        return bool("".join(self.inline).rsplit("\n", 1)[-1].strip())

    def flush(self) -> None:
        raw, self.inline = "".join(self.inline), []
        lines = (" ".join(line.split()) for line in raw.split("\n"))
        kept = [as_text(line) for line in lines if line]
        if kept:
            self.blocks.append("\n".join(kept))

    def block(self, text: str) -> None:
        self.flush()
        if text:
            self.blocks.append(text)

    def result(self) -> str:
        self.flush()
        return "\n\n".join(self.blocks) + "\n" if self.blocks else ""


def _render(root: Any) -> str:
    """Walk the tree without recursion (deeply nested pages are real)."""
    out = _Writer()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        tag = node.tag or ""
        if leaving:
            if tag in _BLOCKS:
                out.flush()
        elif tag == "-text":
            out.text(node.text_content or "")
        elif not (tag.startswith("-") or tag in _SKIP or _hidden(node)) and _enter(node, tag, out):
            stack.append((node, True))
            children = list(node.iter(include_text=True))
            stack.extend((child, False) for child in reversed(children))
    return out.result()


def _enter(node: Any, tag: str, out: _Writer) -> bool:
    """Emit what opening ``node`` writes; False when its content is already written."""
    if tag in _HEADINGS:
        text = " ".join(node.text(deep=True).split())
        out.block("#" * _HEADINGS[tag] + " " + text if text else "")
        return False
    if tag == "pre":
        out.block(fence(node.text(deep=True)))
        return False
    if tag in ("br", "tr"):  # a table is one block, a row per line
        out.text("\n")
    elif tag in _BLOCKS:
        out.flush()
        if tag == "li":
            out.text("- ")
    elif tag in ("td", "th") and out.pending():
        out.text(" | ")
    return True


def fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside, so the block stays one;
    ``info`` is its language (a notebook's kernel)."""
    body = "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))
    if not body.strip():
        return ""
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=2)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{body}\n{marks}"


def _hidden(node: Any) -> bool:
    attrs = node.attributes
    style = (attrs.get("style") or "").replace(" ", "").lower()
    return "hidden" in attrs or attrs.get("aria-hidden") == "true" or "display:none" in style
