"""LaTeX: one chunk per sectioning command, with the title path as breadcrumb, as Markdown.

Papers, theses and lecture notes are written in LaTeX; unclaimed before, a folder
of them was not searchable. A heading is a sectioning command at the start of a
line (``\\part``, ``\\chapter``, ``\\section``, ``\\subsection``,
``\\subsubsection``, ``\\paragraph``; starred or with a short title), its level
fixed by the command, its title the braced argument with markup dropped
(``\\emph{real}`` reads ``real``). The title is ``\\title{...}``, else the file
name. What a reader of the typeset document never sees is blanked in the chunk
text, line numbers kept: the preamble (``\\documentclass`` to
``\\begin{document}``: packages and macros), what follows ``\\end{document}``,
comment lines (``%``) and lines holding one bare command (``\\maketitle``).
Verbatim environments (``verbatim``, ``lstlisting``, ``minted``, ...) are kept
whole where they fit, and a sectioning command inside one is text. The rest is
the Markdown chunker's.

Why not a parser: pylatexenc and TexSoup build a node tree of the whole document
and fail or guess on user macros; vq needs the sectioning lines and the file's own
line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vq.indexer.handlers.base import Document, Limits, Span, file_stem, split_lines
from vq.indexer.handlers.markdown import Heading, heading_sections, section_chunks

_LEVELS = {"part": 1, "chapter": 2, "section": 3, "subsection": 4, "subsubsection": 5,
           "paragraph": 6}
_HEADING = re.compile(r"^[ \t]*\\(part|chapter|section|subsection|subsubsection|paragraph)"
                      r"\*?[ \t]*(?:\[[^\]]*\])?[ \t]*\{")
_TITLE = re.compile(r"^[ \t]*\\title[ \t]*(?:\[[^\]]*\])?[ \t]*\{")
_COMMENT = re.compile(r"^[ \t]*%")
_BEGIN_DOCUMENT = re.compile(r"^[ \t]*\\begin\{document\}")
_END_DOCUMENT = re.compile(r"^[ \t]*\\end\{document\}")
_LAYOUT = re.compile(r"^[ \t]*\\[A-Za-z]+\*?[ \t]*$")  # \maketitle, \newpage: no words
_VERBATIM = re.compile(r"^[ \t]*\\begin\{(verbatim\*?|lstlisting|minted|Verbatim|alltt|"
                       r"comment)\}")
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?(?:\[[^\]]*\])?")


def latex_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk a LaTeX file by its sectioning commands; see the module docstring."""
    lines = split_lines(text)
    start = _body_start(lines)
    blocks = _verbatim_blocks(lines, start)
    inside = {i for a, b in blocks for i in range(a, b)}
    end = _body_end(lines, start)
    hidden = set(range(start)) | set(range(end, len(lines))) | {
        i for i in range(start, end) if i not in inside
        and (_COMMENT.match(lines[i]) or _LAYOUT.match(lines[i]))}
    shown = [("" if i in hidden else line) for i, line in enumerate(lines)]
    headings = [Heading(i, _LEVELS[m.group(1)], plain(_argument(lines[i], m.end())))
                for i in range(start, len(lines)) if i not in inside
                and (m := _HEADING.match(lines[i]))]
    title = next((plain(_argument(line, m.end())) for line in lines[:start] or lines
                  if (m := _TITLE.match(line))), "") or file_stem(relpath)
    sections = heading_sections(shown, start, headings, title)
    return Document(chunks=tuple(section_chunks(shown, sections, blocks, limits)), title=title)


def _body_end(lines: Sequence[str], start: int) -> int:
    """The ``\\end{document}`` line (it and what follows are not typeset), else the end."""
    return next((i for i in range(start, len(lines)) if _END_DOCUMENT.match(lines[i])),
                len(lines))


def _body_start(lines: Sequence[str]) -> int:
    """The line after ``\\begin{document}``; 0 for a file without one (an included
    chapter is all body)."""
    return next((i + 1 for i, line in enumerate(lines) if _BEGIN_DOCUMENT.match(line)), 0)


def _verbatim_blocks(lines: Sequence[str], start: int) -> list[Span]:
    """Verbatim environments from ``start``, ``\\begin`` and ``\\end`` lines included; an
    unclosed one runs to the end of the file."""
    blocks: list[Span] = []
    i = start
    while i < len(lines):
        found = _VERBATIM.match(lines[i])
        if found is None:
            i += 1
            continue
        end_tag = f"\\end{{{found.group(1)}}}"
        end = next((k for k in range(i + 1, len(lines)) if end_tag in lines[k]), len(lines) - 1)
        blocks.append((i, end + 1))
        i = end + 1
    return blocks


def _argument(line: str, opened: int) -> str:
    """The text of the brace group opened just before ``opened``, nested groups included;
    to the end of the line when it does not close there."""
    depth = 1
    for k in range(opened, len(line)):
        depth += {"{": 1, "}": -1}.get(line[k], 0) if line[k - 1] != "\\" else 0
        if depth == 0:
            return line[opened:k]
    return line[opened:]


def plain(title: str) -> str:
    """A title as it reads typeset: commands dropped, their arguments kept
    (``The \\emph{real} deal`` -> ``The real deal``), ``~`` a space."""
    title = _COMMAND.sub("", title.replace("\\\\", " ")).replace("~", " ")
    title = re.sub(r"\\(.)", r"\1", title)  # \% \& \_ -> the character
    return " ".join(title.replace("{", "").replace("}", "").split())
