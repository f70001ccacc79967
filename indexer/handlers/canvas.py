"""JSON Canvas (``.canvas``: Obsidian's canvases, jsoncanvas.org): the cards as Markdown.

A canvas is JSON: cards placed on a plane, each a text card (Markdown), a file card
(a note or attachment of the vault), a link card (a URL) or a group (a labelled box
around other cards). Left unclaimed, a vault's canvases were not searchable at all.
The cards are read top to bottom, then left to right, as a reader scans a board; a
group's label is a top-level heading, which comes before the cards inside it because
a group's top edge is above theirs (a card's own ``# Heading`` is its sibling). File
cards read as the note they show (``[[Plan]]``), link cards as their URL; edges and
positions are left out. The title is the file's name (a card's heading is a card's).
The Markdown handler chunks the result, so line numbers are those of the rendered
text, as for notebooks.
"""

from __future__ import annotations

from typing import Any

from vq.indexer.handlers.base import (
    Document,
    HandlerError,
    Limits,
    file_stem,
    join_blocks,
    load_json,
)
from vq.indexer.handlers.markdown import markdown_handler


def canvas_handler(data: bytes, relpath: str, limits: Limits) -> Document:
    """Chunk a canvas's bytes (the registry marks this handler as binary)."""
    return canvas_document(extract_canvas(data), relpath, limits)


def canvas_document(text: str, relpath: str, limits: Limits) -> Document:
    """The extracted cards chunked under the file's name: a card's ``# Heading`` is a
    section of the board, not its title."""
    return markdown_handler(text, relpath, limits, title=file_stem(relpath))


def extract_canvas(data: bytes) -> str:
    """The canvas's cards as one Markdown text, in reading order."""
    canvas = load_json(data, "a JSON Canvas", "open and save it again in Obsidian, or exclude it")
    nodes = canvas.get("nodes") if isinstance(canvas, dict) else None
    if not isinstance(nodes, list):
        raise HandlerError("not a JSON Canvas (no node list); exclude it")
    cards = sorted((n for n in nodes if isinstance(n, dict)), key=_position)
    blocks = [_render(card) for card in cards]
    return join_blocks(blocks)


def _position(card: dict) -> tuple[float, float]:
    """(y, x): rows first, as a board is read; a card without a place goes first."""
    def number(key: str) -> float:
        value = card.get(key)
        return float(value) if isinstance(value, (int, float)) else 0.0
    return number("y"), number("x")


def _render(card: dict[str, Any]) -> str:
    kind = card.get("type")
    if kind == "text":
        return _text(card.get("text"))
    if kind == "group":
        label = " ".join(_text(card.get("label")).split())
        return f"# {label}" if label else ""
    if kind == "file":
        name = _text(card.get("file"))
        return f"[[{name}{_text(card.get('subpath'))}]]" if name else ""
    if kind == "link":
        return _text(card.get("url"))
    return ""


def _text(value: object) -> str:
    return value.strip("\n") if isinstance(value, str) else ""
