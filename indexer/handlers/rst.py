"""reStructuredText: one chunk per section, with the title path as breadcrumb, as Markdown.

Sphinx projects (Flask, Requests, Django, NumPy) write their docs in RST; read as
plain text, a page was paragraphs under its file path, with no heading to name a
hit and no section to keep whole. Section titles are found by their adornment, as
docutils defines it: a title line under a line of one repeated punctuation
character (and over one, for an overlined style) at least as long as the title.
Levels follow the order in which each style first appears in the file, which is
how docutils assigns them. The rest (sections, breadcrumbs, heading-only sections
merging into the next, splitting) is the Markdown chunker's. A leading field list
(``:orphan:``, Sphinx page metadata) is left out, as Markdown frontmatter is.

Why not docutils: a Sphinx page is full of roles and directives docutils does not
know (``:ref:``, ``.. autofunction::``), each an error node, and its line numbers
for titles are not reliable; vq needs only the titles and the file's own lines.
Literal blocks (after ``::``, or a ``code-block`` directive's indented body) are
kept whole where they fit, and a title look-alike inside one is text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vq.core.attr_list import ADORNMENT
from vq.core.rst_markup import REFERENCE, ROLE, indent
from vq.indexer.handlers.base import Document, Limits, Span, file_stem, is_blank, split_lines
from vq.indexer.handlers.markdown import Heading, heading_sections, section_chunks

_FIELD = re.compile(r"^:[\w-]+:([ \t].*)?$")  # :orphan:, :tocdepth: 2 (Sphinx page metadata)
# A hyperlink target (``.. _install:``, ``.. _pip: https://...``): rendered as nothing, so
# a section holding only its child's target is heading-only (docs/decisions.md#anchor-sections)
_TARGET = re.compile(r"^\.\.[ \t]+_[^:]*:")
_LITERAL_OPENER = re.compile(r"(::[ \t]*$)|^[ \t]*\.\.[ \t]+(code-block|code|sourcecode)::")


def rst_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk an RST page by its sections; see the module docstring."""
    lines = split_lines(text)
    literal = literal_blocks(lines)
    headings, adornments = titles(lines, literal)
    title = next((h.text for h in headings if h.level == 1 and h.text), "") or file_stem(relpath)
    # An adornment line is not body, nor is a target: a title right above a subtitle (and
    # the subtitle's target) is heading-only.
    bare = [("" if i in adornments or _TARGET.match(line) else line)
            for i, line in enumerate(lines)]
    sections = heading_sections(bare, _metadata_end(lines), headings, title)
    return Document(chunks=tuple(section_chunks(lines, sections, literal, limits)), title=title)


def _metadata_end(lines: Sequence[str]) -> int:
    """The line after a page's leading field list (Sphinx metadata, never shown)."""
    end = 0
    while end < len(lines) and (_FIELD.match(lines[end]) or is_blank(lines[end])):
        end += 1
    return end if any(_FIELD.match(line) for line in lines[:end]) else 0


def titles(lines: Sequence[str], literal: Sequence[Span] = ()) -> tuple[list[Heading], set[int]]:
    """The section titles (their first line: the overline where there is one) with their
    levels, and the indexes of every adornment line."""
    inside = {i for a, b in literal for i in range(a, b)}
    styles: list[tuple[str, bool]] = []
    headings: list[Heading] = []
    adornments: set[int] = set()
    i = 0
    while i + 1 < len(lines):
        found = _title_at(lines, i) if i not in inside else None
        if found is None:
            i += 1
            continue
        start, end, text, style = found
        if style not in styles:
            styles.append(style)
        headings.append(Heading(start, min(styles.index(style) + 1, 6), text))
        adornments.update(k for k in range(start, end) if ADORNMENT.match(lines[k]))
        i = end
    return headings, adornments


def _title_at(lines: Sequence[str], i: int) -> tuple[int, int, str, tuple[str, bool]] | None:
    """A title starting at line ``i``: (first line, line after it, text, style)."""
    over = ADORNMENT.match(lines[i])
    if over and i + 2 < len(lines):  # overline, title (may be inset), underline
        text, under = lines[i + 1].strip(), ADORNMENT.match(lines[i + 2])
        if (text and not ADORNMENT.match(lines[i + 1]) and under
                and under.group(1) == over.group(1)
                and len(lines[i + 2].rstrip()) >= len(text)):
            return i, i + 3, plain(text), (over.group(1), True)
    line = lines[i]
    under = ADORNMENT.match(lines[i + 1])
    if (under is None or is_blank(line) or line[0] in " \t" or ADORNMENT.match(line)
            or (i > 0 and not (is_blank(lines[i - 1]) or ADORNMENT.match(lines[i - 1])))
            or len(lines[i + 1].rstrip()) < max(len(line.rstrip()), 2)):
        return None
    return i, i + 2, plain(line.strip()), (under.group(1), False)


def plain(title: str) -> str:
    """A title as it reads rendered: ``Using ``async`` `` -> ``Using async``; roles and
    references keep their text (the breadcrumb is shown and embedded)."""
    title = REFERENCE.sub(r"\1", ROLE.sub(r"\1", title))
    return title.replace("``", "").strip()


def literal_blocks(lines: Sequence[str]) -> list[Span]:
    """Spans of literal blocks: the indented lines after a line ending in ``::`` or a
    ``code-block`` directive, up to the first line indented no deeper than its opener."""
    spans: list[Span] = []
    i = 0
    while i < len(lines):
        if not _LITERAL_OPENER.search(lines[i]):
            i += 1
            continue
        depth = indent(lines[i])
        end = i + 1
        while end < len(lines) and (is_blank(lines[end]) or indent(lines[end]) > depth):
            end += 1
        while end > i + 1 and is_blank(lines[end - 1]):
            end -= 1
        if end > i + 1:
            spans.append((i, end))
        i = max(end, i + 1)
    return spans

