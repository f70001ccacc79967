"""Vim help files (``doc/*.txt`` of every Vim and Neovim plugin): cut at their sections
and tagged entries.

A help file is plain text with a structure ``:help help-writing`` fixes: a first line
``*name.txt*  description``, sections under a line of ``=`` (subsections under ``-``)
whose first line names them, and entries introduced by a line ending in a right-aligned
``*tag*`` (``telescope.setup({opts})    *telescope.setup()*``), which is what
``:help tag`` jumps to. Read as paragraphs, a 4,000-line help file gave hits with no
section at all; read so, a hit's breadcrumb is ``telescope > PICKERS >
builtin.live_grep()``. Recognised by that first line or by a ``ft=help`` modeline at the
end, so other ``.txt`` files are untouched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vq.indexer.handlers.base import Document, Limits, file_stem
from vq.indexer.handlers.markdown import Heading, heading_sections, section_chunks

_FIRST_LINE = re.compile(r"^\*[\w.+-]+\.txt\*")
_MODELINE = re.compile(r"\bvim?:.*\b(?:ft|filetype)=help\b")
_SEPARATORS = {"=": 1, "-": 2}
_TAGS = re.compile(r"(?:^|\s)\*([^\s*|]+)\*(?=\s|$)")
_TRAILING_TAGS = re.compile(r"(?:\s+\*[^\s*|]+\*)+\s*$")


def is_vimdoc(lines: Sequence[str]) -> bool:
    """The required first line, or a ``ft=help`` modeline in the last lines."""
    return bool(lines) and (bool(_FIRST_LINE.match(lines[0]))
                            or any(_MODELINE.search(line) for line in lines[-5:]))


def vimdoc_handler(lines: Sequence[str], relpath: str, limits: Limits) -> Document:
    """Sections and entries as headings (level 1, 2, 3), chunked as Markdown's are."""
    title = file_stem(relpath)
    headings, separators = _headings(lines)
    bare = ["" if i in separators else line for i, line in enumerate(lines)]
    sections = heading_sections(bare, 0, headings, title)
    return Document(chunks=tuple(section_chunks(lines, sections, (), limits)), title=title)


def _headings(lines: Sequence[str]) -> tuple[list[Heading], set[int]]:
    """(headings, separator line indexes): a section's first line below its separator,
    and every other line whose end holds tags (an entry, named by its first tag)."""
    headings: list[Heading] = []
    separators: set[int] = set()
    level = 0  # the level of the separator just above, until its title line is read
    for i, line in enumerate(lines[1:], start=1):
        stripped = line.strip()
        if len(stripped) >= 10 and stripped[0] in _SEPARATORS and len(set(stripped)) == 1:
            separators.add(i)
            level = _SEPARATORS[stripped[0]]
        elif level and stripped:
            text = _TRAILING_TAGS.sub("", stripped).strip() or _first_tag(stripped)
            headings.append(Heading(i, level, text))
            level = 0
        elif _TRAILING_TAGS.search(line) and (not line[:1].isspace() or _tags_only(line)):
            headings.append(Heading(i, 3, _first_tag(line)))
    return headings, separators


def _tags_only(line: str) -> bool:
    """A line of nothing but tags (right-aligned above the entry they name)."""
    return not _TRAILING_TAGS.sub("", line).strip()


def _first_tag(line: str) -> str:
    found = _TAGS.search(line)
    return found.group(1) if found else line.strip()
