"""Org mode: one chunk per heading section, with the heading path as breadcrumb, as Markdown.

Emacs users keep their notes in Org (org-roam vaults, journals, literate configs);
read as plain text, a note was paragraphs under its file path, with no heading to
name a hit and its metadata indexed as words. A heading is a line of stars and a
space at the start of a line (``** Section``), its level the number of stars; as
Org reads it, a heading ends any block it appears in, so no block hides one. The
breadcrumb leaves out a heading's TODO keyword, priority cookie (``[#A]``),
progress cookie (``[2/5]``) and tags (``:work:urgent:``), as a reader scanning
headings skips them. The file's ``#+title:`` is the title (else the file name: an
Org file has many top-level headings, none of them the page's), ``#+filetags:`` its
tags and ``#+date:`` its date, like Markdown frontmatter. What a reader of the
rendered note never sees is blanked in the chunk text, line numbers kept: keyword
lines (``#+title:``, ``#+startup:``), comment lines (``# note``), comment blocks
and property drawers (org-roam's ``:ID:`` UUIDs). ``#+begin_src`` ...
``#+end_src`` blocks are kept whole where they fit. The rest (sections, heading-only
sections merging into the next, splitting) is the Markdown chunker's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vq.core.inline_markup import org_text
from vq.indexer.handlers.base import Document, Limits, Span, file_stem, split_lines
from vq.indexer.handlers.markdown import (
    Heading,
    file_date,
    heading_sections,
    meta_date,
    meta_tags,
    section_chunks,
)

_HEADING = re.compile(r"^(\*+)[ \t]+(.*?)[ \t]*$")
_KEYWORD = re.compile(r"^[ \t]*#\+(\w[\w-]*):[ \t]*(.*?)[ \t]*$")
_COMMENT = re.compile(r"^[ \t]*#(?:[ \t]|$)")
_BEGIN = re.compile(r"^[ \t]*#\+begin_(\S+)", re.IGNORECASE)
_DRAWER = re.compile(r"^[ \t]*:([\w-]+):[ \t]*$")
_DRAWER_END = re.compile(r"^[ \t]*:end:[ \t]*$", re.IGNORECASE)
_TODO = re.compile(r"^(?:TODO|DONE)[ \t]+")  # Org's default keywords
_PRIORITY = re.compile(r"^\[#[A-Za-z0-9]\][ \t]*")
_COOKIE = re.compile(r"[ \t]*\[\d*(?:%|/\d*)\]")
_TAGS = re.compile(r"[ \t]+(:[\w@#%:]+:)$")


@dataclass
class Page:
    headings: list[Heading] = field(default_factory=list)
    blocks: list[Span] = field(default_factory=list)  # #+begin_x ... #+end_x, both lines in
    hidden: set[int] = field(default_factory=set)     # keyword, comment and drawer lines
    keywords: dict[str, str] = field(default_factory=dict)  # the first of each, lowercased


def org_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk an Org note by its headings; see the module docstring."""
    lines = split_lines(text)
    page = scan(lines)
    shown = [("" if i in page.hidden else line) for i, line in enumerate(lines)]
    title = plain(page.keywords.get("title", "")) or file_stem(relpath)
    sections = heading_sections(shown, 0, page.headings, title)
    meta = {"date": page.keywords.get("date", "").strip("<>[] ")}
    return Document(chunks=tuple(section_chunks(shown, sections, page.blocks, limits)),
                    title=title, tags=meta_tags(page.keywords.get("filetags", "")
                                                .replace(":", " ")),
                    date=meta_date(meta) or file_date(relpath))


def scan(lines: Sequence[str]) -> Page:
    """Headings, blocks and the lines to hide, top to bottom; a heading ends a block or
    a drawer that is still open, as in Org."""
    page = Page()
    # looked up, not searched: a file of unclosed drawers would cost a scan per line
    ends, heads = _next_match(lines, _DRAWER_END), _next_match(lines, _HEADING)
    i = 0
    while i < len(lines):
        line = lines[i]
        if found := _HEADING.match(line):
            page.headings.append(Heading(i, len(found.group(1)), plain(found.group(2))))
        elif begin := _BEGIN.match(line):
            end = _close(lines, i, re.compile(rf"^[ \t]*#\+end_{re.escape(begin.group(1))}\b",
                                              re.IGNORECASE))
            page.blocks.append((i, end + 1))
            if begin.group(1).lower() == "comment":
                page.hidden.update(range(i, end + 1))
            i = end + 1
            continue
        elif _DRAWER.match(line) and not _DRAWER_END.match(line):
            end = ends[i + 1]
            if end < heads[i + 1]:  # closed before the next heading; an unclosed one is text
                page.hidden.update(range(i, end + 1))
                i = end + 1
                continue
        elif keyword := _KEYWORD.match(line):
            page.keywords.setdefault(keyword.group(1).lower(), keyword.group(2))
            page.hidden.add(i)
        elif _COMMENT.match(line):
            page.hidden.add(i)
        i += 1
    return page


def _next_match(lines: Sequence[str], pattern: re.Pattern[str]) -> list[int]:
    """For each line, the index of the first line from it on that matches ``pattern``
    (``len(lines)`` when none does)."""
    out = [len(lines)] * (len(lines) + 1)
    for k in range(len(lines) - 1, -1, -1):
        out[k] = k if pattern.match(lines[k]) else out[k + 1]
    return out


def _close(lines: Sequence[str], start: int, end: re.Pattern[str]) -> int:
    """The line matching ``end`` after ``start``; the line before the next heading (or
    the last line) when none does first."""
    for k in range(start + 1, len(lines)):
        if end.match(lines[k]):
            return k
        if _HEADING.match(lines[k]):
            return k - 1
    return len(lines) - 1


def plain(heading: str) -> str:
    """A heading as a reader scans it: no TODO keyword, priority, cookie or tags; a
    link's description (or target) for the link, verbatim text without its markers."""
    heading = _TAGS.sub("", _PRIORITY.sub("", _TODO.sub("", heading)))
    heading = org_text(_COOKIE.sub("", heading))
    return " ".join(heading.split())
