"""AsciiDoc: one chunk per section, with the title path as breadcrumb, as Markdown.

Antora sites and Asciidoctor projects (Spring, Asciidoctor itself, Git's manual)
write their docs in AsciiDoc; read as plain text, a page was paragraphs under its
file path, with no heading to name a hit and no section to keep whole. A section
title is a line of 1-6 ``=`` (or Markdown-style ``#``) and a space, or the older
two-line form: a title over a line of one ``= - ~ ^ +`` character within one of its
length; levels as Asciidoctor reads them (``= Page`` is the page title). As there, a
title starts a block: after a blank line, a block attribute line (``[#id]``) or
another title, never inside a delimited block (``----`` listing, ``....`` literal,
``====`` example, ``|===`` table, a backtick fence, ...), and never at the start of a
comment. Delimited blocks are kept whole where they fit; comments (``//`` lines and
``////`` blocks) are blanked in the chunk text, line numbers kept, as Markdown's HTML
comments are. The rest (sections, breadcrumbs, heading-only sections merging into
the next, splitting) is the Markdown chunker's.

Why not a parser: the Python ports of AsciiDoc are unmaintained or partial, and vq
needs only the titles, the blocks and the file's own line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vq.core.inline_markup import asciidoc_text
from vq.indexer.handlers.base import Document, Limits, Span, file_stem, is_blank, split_lines
from vq.indexer.handlers.markdown import Heading, heading_sections, section_chunks

_ANCHOR = re.compile(r"^(?:\[\[[^\[\]]+\]\]|\[#[^\[\]]+\])[ \t]*$")
_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
# Opening delimiters; the same line closes the block. ``--`` is an open block.
_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|[|!,:]={3,})[ \t]*$")
_FENCE = re.compile(r"^(`{3,})")
_BLOCK_ATTRIBUTES = re.compile(r"^\[[^\]]*\]\]?[ \t]*$")  # [source,ruby], [#id], [[id]]
_SETEXT_LEVEL = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_COMMENT_BLOCK = "////"


def asciidoc_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk an AsciiDoc page by its sections; see the module docstring."""
    lines = split_lines(text)
    page = scan(lines)
    visible = [("" if i in page.comments else line) for i, line in enumerate(lines)]
    title = next((h.text for h in page.headings if h.level == 1 and h.text), "")
    title = title or file_stem(relpath)
    # an underline is no body, nor is an anchor (``[[id]]``, ``[#id]``): a section holding
    # only its child's anchor is heading-only (docs/decisions.md#anchor-sections)
    bare = [("" if i in page.underlines or _ANCHOR.match(line) else line)
            for i, line in enumerate(visible)]
    sections = heading_sections(bare, 0, page.headings, title)
    return Document(chunks=tuple(section_chunks(visible, sections, page.blocks, limits)),
                    title=title)


@dataclass
class Page:
    headings: list[Heading] = field(default_factory=list)
    underlines: set[int] = field(default_factory=set)  # two-line titles' second lines
    blocks: list[Span] = field(default_factory=list)    # delimited blocks, delimiters included
    comments: set[int] = field(default_factory=set)     # ``//`` lines and ``////`` blocks


def scan(lines: Sequence[str]) -> Page:
    """One pass, top to bottom, as Asciidoctor reads blocks: a title where a block may
    start (it wins over a delimiter look-alike under it), else a delimited block (an
    unclosed one runs to the end), else a comment line."""
    page = Page()
    boundary = True  # a block may start on the next line
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if boundary and (found := _TITLE.match(line)):
            page.headings.append(Heading(i, len(found.group(1)), plain(found.group(2))))
            i += 1
            continue
        if boundary and i + 1 < len(lines) and (level := _setext(line, lines[i + 1])):
            page.headings.append(Heading(i, level, plain(line.strip())))
            page.underlines.add(i + 1)
            i += 2
            continue
        opener = _opener(line)
        if opener is not None:
            end = next((k for k in range(i + 1, len(lines)) if lines[k].rstrip() == opener),
                       len(lines) - 1)
            page.blocks.append((i, end + 1))
            if opener == _COMMENT_BLOCK:
                page.comments.update(range(i, end + 1))
            i, boundary = end + 1, True
            continue
        if line.startswith("//") and not line.startswith("///"):
            page.comments.add(i)
        elif not _BLOCK_ATTRIBUTES.match(line):  # attribute lines keep the boundary
            boundary = is_blank(line)
        i += 1
    return page


def _opener(line: str) -> str | None:
    """The line that closes a block this line opens, or None."""
    fence = _FENCE.match(line)
    if fence:
        return fence.group(1)
    return line if _DELIMITER.match(line) else None


def _setext(line: str, under: str) -> int:
    """The level of a two-line title (``Title`` over ``-----``), else 0."""
    under = under.rstrip()
    text = line.rstrip()
    if (len(under) < 2 or under[0] not in _SETEXT_LEVEL or under != under[0] * len(under)
            or abs(len(text) - len(under)) > 1 or text.startswith((".", "[", "/", " ", "\t"))
            or not any(c.isalnum() for c in text)):
        return 0
    return _SETEXT_LEVEL[under[0]]


def plain(title: str) -> str:
    """A title as it reads rendered: no anchors, macros' text (``xref:a.adoc[Options]``
    -> ``Options``), no ``*bold*``/```code``` markers."""
    return " ".join(asciidoc_text(title).split())
