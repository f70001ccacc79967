"""The chunk model every handler returns, and the line-range splitting they share.

A handler turns decoded text into a ``Document`` of ``Chunk``s. Every chunk is a
contiguous run of whole source lines, so a hit can always be shown, highlighted
and opened at its exact line numbers. What callers can rely on, for any input
string (the fuzz tests check it):

* lines are ``text`` with ``"\\r\\n"`` and ``"\\r"`` normalised to ``"\\n"``, then
  ``split("\\n")`` (see ``split_lines``);
* chunks are sorted, non-overlapping, start and end on non-blank lines, and
  ``chunk.text == "\\n".join(lines[start_line - 1:end_line])``;
* every non-blank line (outside markdown frontmatter) is in exactly one chunk.

Internally ranges are 0-based half-open ``(start, end)`` spans; only ``Chunk``
uses 1-based inclusive line numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

Span = tuple[int, int]


@dataclass(frozen=True)
class Limits:
    """How big a chunk may grow; one instance is shared by every handler."""

    max_chars: int = 1500  # a chunk's text longer than this is split
    min_chars: int = 200  # symbol-less code blocks smaller than this may merge

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.min_chars < 0:
            raise ValueError(f"invalid chunk limits: {self!r}")


@dataclass(frozen=True)
class Chunk:
    """Whole source lines ``start_line..end_line`` (1-based, inclusive), unaltered."""

    text: str
    start_line: int
    end_line: int
    breadcrumb: str
    symbol: str = ""
    symbol_kind: str = ""  # "function" | "class" | "method" | ""
    page: int | None = None
    # Embed-only lines about the chunk (code: kind, symbol, signature, docstring): the
    # embed text and BM25 see them, ``text`` stays exactly the source lines.
    context: str = ""


@dataclass(frozen=True)
class Document:
    """A file's chunks plus the metadata the index stores beside them."""

    chunks: tuple[Chunk, ...]
    title: str
    tags: tuple[str, ...] = ()
    date: str | None = None
    language: str = ""


class HandlerError(Exception):
    """The file's content cannot be chunked (malformed frontmatter is NOT this)."""


Handler = Callable[[str, str, Limits], Document]


def load_json(data: bytes, what: str, fix: str) -> Any:
    """``data`` parsed, or the one-line error a broken ``what`` (a notebook, a canvas)
    gets, saying ``fix``; nesting deep enough to overflow the parser is broken too."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise HandlerError(f"not {what} (invalid JSON: {str(exc)[:80]}); {fix}") from None


def fence_lines(fences: Iterable[Span]) -> set[int]:
    """The line numbers inside ``fences`` (spans of code a reader keeps as written)."""
    return {i for a, b in fences for i in range(a, b)}


def blank_lines(lines: Sequence[str], fences: Sequence[Span], start: int,
                pattern: re.Pattern[str], hint: str) -> list[str]:
    """``lines`` with each line from ``start`` on, outside ``fences``, that ``pattern``
    matches blanked, the line count kept: markup a reader never sees. ``hint`` is in
    every such line, so a page without it costs one scan."""
    if not any(hint in line for line in lines[start:]):
        return list(lines)
    inside = fence_lines(fences)
    return [("" if i >= start and i not in inside and pattern.match(line) else line)
            for i, line in enumerate(lines)]


# A line of extracted text that Markdown would read as syntax: a heading, a fence, a
# thematic break or frontmatter (a paragraph "# 1 reason" in a Word file or a web page)
_MARKDOWN_SYNTAX = re.compile(r"^(?:#|```|~~~|---|\+\+\+)")


def as_text(line: str) -> str:
    """``line`` of another format's text, escaped where Markdown would take it for syntax:
    the Markdown handler then keeps it a line of text."""
    return "\\" + line if _MARKDOWN_SYNTAX.match(line) else line


def join_blocks(blocks: Iterable[str]) -> str:
    """Markdown blocks extracted from another format, blank ones left out, a blank line
    between the others."""
    return "\n\n".join(b for b in blocks if b.strip()) + "\n"


def split_lines(text: str) -> list[str]:
    """Lines as every handler numbers them: only \\n, \\r\\n and \\r end a line.

    ``str.splitlines`` would also break at form feeds and U+2028, which editors
    and ``grep -n`` do not, so line numbers would drift from what users see.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def is_blank(line: str) -> bool:
    return not line.strip()


def trim(lines: Sequence[str], start: int, end: int) -> Span | None:
    """Shrink ``[start, end)`` to its first and last non-blank lines; None if all blank."""
    while start < end and is_blank(lines[start]):
        start += 1
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    return (start, end) if start < end else None


def make_chunk(
    lines: Sequence[str], span: Span, breadcrumb: str, symbol: str = "", kind: str = ""
) -> Chunk:
    """The one place a span becomes a ``Chunk``, so text and line numbers always agree."""
    start, end = span
    return Chunk(
        text="\n".join(lines[start:end]),
        start_line=start + 1,
        end_line=end,
        breadcrumb=breadcrumb,
        symbol=symbol,
        symbol_kind=kind,
    )


def file_stem(relpath: str) -> str:
    """``notes/a.b.md`` -> ``a.b``; Windows separators are tolerated."""
    return PurePosixPath(relpath.replace("\\", "/")).stem


class _Measure:
    """Size of any sub-span of one span in O(1), via prefix sums.

    Without ``cost`` the size is characters (newlines included); with it,
    ``cost[i]`` is line ``i``'s size (its word pieces) and newlines are free,
    which is how a WordPiece tokenizer counts joined lines.
    """

    def __init__(self, lines: Sequence[str], span: Span,
                 cost: Sequence[int] | None = None) -> None:
        self.origin = span[0]
        self.sep = 1 if cost is None else 0
        self.prefix = [0]
        for i in range(span[0], span[1]):
            size = len(lines[i]) if cost is None else cost[i]
            self.prefix.append(self.prefix[-1] + size + self.sep)

    def __call__(self, span: Span) -> int:
        start, end = span[0] - self.origin, span[1] - self.origin
        return self.prefix[end] - self.prefix[start] - self.sep


def split_span(
    lines: Sequence[str], span: Span, max_chars: int, atomic: Sequence[Span] = (),
    cost: Sequence[int] | None = None,
) -> list[Span]:
    """Cut ``span`` into contiguous trimmed pieces of at most ``max_chars`` characters
    (or, given ``cost``, at most ``max_chars`` word pieces: see ``_Measure``).

    Cuts go at blank-line paragraph boundaries first, then between lines. A span
    in ``atomic`` (a markdown code fence) is never cut unless it alone is too
    long; its blank lines are not paragraph boundaries. A single line longer
    than ``max_chars`` stays one piece, because chunks hold whole lines only.
    """
    trimmed = trim(lines, *span)
    if trimmed is None:
        return []
    size = _Measure(lines, trimmed, cost)
    if size(trimmed) <= max_chars:
        return [trimmed]
    inner = [a for a in atomic if a[0] < trimmed[1] and a[1] > trimmed[0]]
    pieces: list[Span] = []
    for para in _pack(_paragraphs(lines, trimmed, inner), size, max_chars):
        if size(para) <= max_chars:
            pieces.append(para)
            continue
        for group in _pack(_line_units(lines, para, inner), size, max_chars):
            if size(group) <= max_chars:
                pieces.append(group)
            else:
                pieces.extend(_pack(_line_units(lines, group, ()), size, max_chars))
    return pieces


def _pack(units: Iterable[Span], size: _Measure, max_chars: int) -> Iterator[Span]:
    """Greedily join consecutive units while the joined text fits.

    A unit that is too long alone comes out alone, for the caller to cut finer.
    """
    current: Span | None = None
    for unit in units:
        if current is not None and size((current[0], unit[1])) <= max_chars:
            current = (current[0], unit[1])
            continue
        if current is not None:
            yield current
        current = unit
    if current is not None:
        yield current


def _inside(span: Span, atomic: Sequence[Span]) -> list[bool]:
    mask = [False] * (span[1] - span[0])
    for start, end in atomic:
        for i in range(max(start, span[0]), min(end, span[1])):
            mask[i - span[0]] = True
    return mask


def _paragraphs(lines: Sequence[str], span: Span, atomic: Sequence[Span]) -> Iterator[Span]:
    """Maximal runs of non-blank (or atomic) lines, trimmed."""
    mask = _inside(span, atomic)
    run_start: int | None = None
    for i in range(span[0], span[1] + 1):
        joined = i < span[1] and (mask[i - span[0]] or not is_blank(lines[i]))
        if joined and run_start is None:
            run_start = i
        elif not joined and run_start is not None:
            run = trim(lines, run_start, i)
            if run is not None:
                yield run
            run_start = None


def _line_units(lines: Sequence[str], span: Span, atomic: Sequence[Span]) -> Iterator[Span]:
    """Each non-blank line, except that an atomic span stays one unit."""
    blocks = {max(a, span[0]): min(b, span[1]) for a, b in atomic if a < span[1] and b > span[0]}
    i = span[0]
    while i < span[1]:
        end = blocks.get(i)
        if end is not None:
            unit = trim(lines, i, end)
            if unit is not None:
                yield unit
            i = end
            continue
        if not is_blank(lines[i]):
            yield (i, i + 1)
        i += 1
