"""Markdown: one chunk per heading section, with the heading path as breadcrumb.

Sections follow ATX headings only (setext headings are plain text here). Code
fences are tracked so that ``# comment`` in a shell snippet is never a heading,
and a fence is never cut in half unless it alone exceeds ``max_chars``.
Frontmatter feeds title, tags, date and aliases; it is never part of a chunk,
and malformed frontmatter is ignored rather than failing the file. Aliases are
embed-only context on the note's first chunk, so a search by any of a note's names
finds it. A note without a frontmatter date is dated by its file name when that
starts with one (``2024-01-15.md``, a daily note; ``2024-01-15-launch.md``, a Jekyll
post). A heading in a list item is a section nested by its bullet's depth, as an
outliner (Logseq) writes every heading, and a fence may open in a list item. What
notes apps add (Obsidian's aliases and ``#tags``, Logseq's properties, Excalidraw
drawings) is read by ``vq.indexer.handlers.note_dialects``. A heading's
attribute list (``## Install { #install }``, MkDocs ``attr_list``) is left out of
breadcrumbs and titles; the chunk text keeps the line as written. HTML
comments outside fences (``<!-- YAML added: v10.2.0 -->``, lint switches) are
blanked in the chunk text, line numbers kept: a rendered page does not show
them, and their words would only dilute BM25 and use up the model's window. So
are ``<script>`` and ``<style>`` blocks (VitePress' ``<script setup>``), and an MDX
page's ``import``/``export`` statements and JSX comments.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import yaml

from vq.core import filetypes, yaml_bounds
from vq.core.attr_list import renders_nothing, strip_attr_list
from vq.core.inline_markup import LINK_DEFINITION
from vq.indexer.handlers.base import (
    Chunk,
    Document,
    Limits,
    Span,
    blank_lines,
    fence_lines,
    file_stem,
    is_blank,
    make_chunk,
    split_lines,
    split_span,
)
from vq.indexer.handlers.note_dialects import (
    hide_drawing,
    hide_properties,
    inline_tags,
    meta_aliases,
    page_properties,
    record_metadata,
    stem_title,
)

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
# A heading inside a list item (CommonMark reads ``- ## Setup`` so): how an outliner
# (Logseq) writes every heading, bullets nested by tabs.
_LIST_HEADING = re.compile(r"^([ \t]*)[-*+][ \t]+(#{1,6})[ \t]+(\S.*)$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_OPEN = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(`{3,}|~{3,})(.*)$")  # also in a list item
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_DATE = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_DATE_KEYS = ("date", "updated", "created")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_JSX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
# CommonMark's HTML blocks of type 1 that a page runs or applies and never shows: a
# <script> (VitePress' <script setup>) or <style> block, at a line's start, to its end tag
_RUN_BLOCKS = {tag: re.compile(rf"^ {{0,3}}<{tag}(?=[\s>]|$).*?</{tag}>",
                               re.DOTALL | re.IGNORECASE | re.MULTILINE)
               for tag in ("script", "style")}
_ESM = re.compile(r"^(?:import|export)(?:[ \t{*]|$)")


@dataclass(frozen=True)
class Heading:
    line: int  # 0-based
    level: int
    text: str
    listed: bool = False  # inside a list item: a section, never the page's title


@dataclass(frozen=True)
class _Section:
    span: Span
    breadcrumb: str
    heading_only: bool  # nothing but its heading line (and anchors): merges into the next one


def markdown_handler(text: str, relpath: str, limits: Limits, title: str = "") -> Document:
    """Chunk a markdown note by heading sections; see the module docstring. ``title``:
    the page's title whatever its text says (a canvas: its file name)."""
    lines = split_lines(text)
    body_start, meta = _frontmatter(lines)
    meta = meta or page_properties(lines, body_start)
    meta = {**record_metadata(lines, body_start), **meta}
    if "excalidraw-plugin" in meta:
        lines = hide_drawing(lines, body_start)
    headings, fences = _scan(lines, body_start)
    visible = hide_properties(hide_comments(lines, fences, body_start), fences, body_start)
    visible = hide_definitions(visible, fences, body_start)
    for tag, block in _RUN_BLOCKS.items():
        visible = hide_comments(visible, fences, body_start, block, f"</{tag}>")
    if filetypes.suffix(relpath) == ".mdx":
        visible = hide_mdx(visible, fences, body_start)
    if visible != lines:
        lines = visible
        headings, fences = _scan(lines, body_start)
    title = title or _title(meta, headings) or stem_title(relpath)
    sections = heading_sections(lines, body_start, headings, title)
    chunks = section_chunks(lines, sections, fences, limits)
    aliases = meta_aliases(meta)
    if chunks and aliases:
        chunks[0] = replace(chunks[0], context="aliases: " + "; ".join(aliases))
    return Document(
        chunks=tuple(chunks),
        title=title,
        tags=meta_tags([*meta_tags(meta.get("tags")), *inline_tags(lines, body_start, fences)]),
        date=meta_date(meta) or file_date(relpath),
    )


def _frontmatter(lines: Sequence[str]) -> tuple[int, dict[str, Any]]:
    """(first body line, metadata). An unclosed ``---`` is body text, not frontmatter."""
    start = body_start(lines)
    return (start, _load_yaml("\n".join(lines[1:start - 1]))) if start else (0, {})


def body_start(lines: Sequence[str]) -> int:
    """The first line below a page's frontmatter (0: it has none; an unclosed ``---`` is
    body text)."""
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


class _MetaLoader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as text.

    PyYAML raises on an impossible date (``updated: 2021-02-30``), which would
    throw away the title and tags too; ``_iso_date`` validates dates instead.
    """


_MetaLoader.add_constructor("tag:yaml.org,2002:timestamp", _MetaLoader.construct_yaml_str)


def _load_yaml(source: str) -> dict[str, Any]:
    """Parsed mapping, or {} for anything else: notes are user text, never fatal."""
    try:
        yaml_bounds.check(source)  # a YAML bomb in a note's frontmatter: ignored, not expanded
        data = yaml.load(source, Loader=_MetaLoader)  # safe: a SafeLoader subclass
    except Exception:  # noqa: BLE001 - YAMLError, RecursionError on absurd nesting, ...
        return {}
    return data if isinstance(data, dict) else {}


def _scan(lines: Sequence[str], start: int) -> tuple[list[Heading], list[Span]]:
    """Headings outside fences, and the fences themselves (an unclosed one runs to EOF)."""
    headings: list[Heading] = []
    fences: list[Span] = []
    fence: tuple[str, int] | None = None  # (marker char, marker length)
    fence_start = 0
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                fences.append((fence_start, i + 1))
                fence = None
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence, fence_start = (opening.group(1)[0], len(opening.group(1))), i
            continue
        heading = _heading(i, line)
        if heading is not None:
            headings.append(heading)
    if fence is not None:
        fences.append((fence_start, len(lines)))
    return headings, fences


def _heading(i: int, line: str) -> Heading | None:
    """An ATX heading line, also one in a list item. A listed heading nests by its
    bullet's depth, as an outline does (Logseq's ``- ## Usage`` beside ``- # About`` is
    a sibling, whatever its hashes say)."""
    found = _HEADING.match(line)
    if found is not None:
        level, words = len(found.group(1)), found.group(2)
    elif (found := _LIST_HEADING.match(line)) is not None:
        indent = found.group(1)
        level, words = min(6, 1 + indent.count("\t") + indent.count(" ") // 2), found.group(3)
    else:
        return None
    text = strip_attr_list(_CLOSING_HASHES.sub("", (words or "").strip()).strip()).strip()
    return Heading(i, level, text, found.re is _LIST_HEADING)


def hide_mdx(lines: Sequence[str], fences: Sequence[Span], start: int = 0) -> list[str]:
    """An MDX page's ESM (``import Tabs from '@theme/Tabs';``, ``export const meta``: an
    ``import``/``export`` at the start of a line outside a fence, running to the next
    blank line, as MDX parses it) and JSX comments (``{/* ... */}``) blanked, line
    numbers kept: the rendered page shows neither."""
    inside = fence_lines(fences)
    out = list(lines)
    i = start
    while i < len(out):
        if i in inside or not _ESM.match(out[i]):
            i += 1
            continue
        while i < len(out) and out[i].strip():
            out[i] = ""
            i += 1
    return hide_comments(out, fences, start, _JSX_COMMENT, "*/}")


def hide_comments(lines: Sequence[str], fences: Sequence[Span], start: int = 0,
                  comment: re.Pattern[str] | None = None, close: str = "-->") -> list[str]:
    """``lines`` with each closed HTML comment (or ``comment``, ending in ``close``)
    that starts outside a fence blanked, the line count unchanged (a line left with only
    blanks becomes empty). An unclosed ``<!--`` stays text, as a fence's contents do.
    The search stops at the last ``close``: past it every opener is unclosed, and
    trying each against the rest of the file was quadratic (4,000 lines of ``<!--``)."""
    comment = comment or _COMMENT
    text = "\n".join(lines[start:])
    end = text.rfind(close) + len(close)
    if end < len(close) or comment.search(text, 0, end) is None:
        return list(lines)
    inner = sorted((a - start, b - start) for a, b in fences if a >= start)
    starts = [a for a, _ in inner]
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines[start:]), initial=0))
    parts, cursor, pos = [], 0, 0
    while (found := comment.search(text, pos, end)) is not None:
        row = bisect.bisect_right(offsets, found.start()) - 1
        k = bisect.bisect_right(starts, row) - 1  # the last fence starting at or above row
        fence = inner[k][1] if k >= 0 and row < inner[k][1] else None
        if fence is not None:  # a comment look-alike inside a fence: search past it
            pos = offsets[min(fence, len(offsets) - 1)]
            continue
        parts += [text[cursor:found.start()], "\n" * found.group(0).count("\n")]
        cursor = pos = found.end()
    if not parts:
        return list(lines)
    shown = "".join([*parts, text[cursor:]]).split("\n")
    return [*lines[:start], *(new if new == old or new.strip() else ""
                              for new, old in zip(shown, lines[start:], strict=True))]


def hide_definitions(lines: Sequence[str], fences: Sequence[Span], start: int) -> list[str]:
    """``lines`` with link reference definitions outside fences blanked: Node.js' docs end
    every file with dozens, whose labels and URLs a reader never sees
    (docs/decisions.md#link-definitions)."""
    return blank_lines(lines, fences, start, LINK_DEFINITION, "]:")


def fences(lines: Sequence[str]) -> list[Span]:
    """The fenced code blocks of ``lines``: spans a later split should keep whole."""
    return _scan(lines, 0)[1]


def _title(meta: dict[str, Any], headings: Sequence[Heading]) -> str:
    """Frontmatter title, else the first non-empty H1, else "" (caller uses the stem)."""
    value = meta.get("title")
    scalar = isinstance(value, (str, int, float)) and not isinstance(value, bool)
    if scalar and str(value).strip():
        return str(value).strip()
    return next((h.text for h in headings if h.level == 1 and h.text and not h.listed), "")


def heading_sections(
    lines: Sequence[str], body_start: int, headings: Sequence[Heading], title: str
) -> list[_Section]:
    """Preamble plus one section per heading, each with its breadcrumb."""
    bounds = [h.line for h in headings] + [len(lines)]
    preamble = lines[body_start : bounds[0]]
    anchors_only = any(preamble) and _shows_nothing(preamble)  # merges into the first section
    sections = [_Section((body_start, bounds[0]), title, anchors_only)]
    stack: list[Heading] = []
    for heading, end in zip(headings, bounds[1:], strict=True):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        only = _shows_nothing(lines[heading.line + 1 : end])
        sections.append(_Section((heading.line, end), _breadcrumb(title, stack), only))
    return sections


def _shows_nothing(lines: Sequence[str]) -> bool:
    """Blank lines and anchors only (a heading's ``<a name>`` above it): no text of its own."""
    return all(is_blank(line) or renders_nothing(line) for line in lines)


def _breadcrumb(title: str, stack: Sequence[Heading]) -> str:
    path = [h.text for h in stack if h.text]
    if stack and stack[0].level == 1 and stack[0].text == title:
        path = path[1:]
    return " > ".join([title, *path])


def section_chunks(
    lines: Sequence[str], sections: Sequence[_Section], fences: Sequence[Span], limits: Limits
) -> list[Chunk]:
    """Split each section; a heading-only section is prepended to the next one."""
    chunks: list[Chunk] = []
    pending: int | None = None
    for index, section in enumerate(sections):
        start = section.span[0] if pending is None else pending
        if section.heading_only and index + 1 < len(sections):
            pending = start
            continue
        pending = None
        span = (start, section.span[1])
        for piece in split_span(lines, span, limits.max_chars, fences):
            chunks.append(make_chunk(lines, piece, section.breadcrumb))
    return chunks


def meta_tags(value: object) -> tuple[str, ...]:
    """Tags from a YAML list or a comma/space-separated string; lowercased, no '#'."""
    if isinstance(value, str):
        items: list[object] = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return ()
    tags: dict[str, None] = {}  # ordered set: keeps the author's order
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            tag = str(item).strip().lstrip("#").strip().lower()
            if tag:
                tags[tag] = None
    return tuple(tags)


def meta_date(meta: dict[str, Any]) -> str | None:
    """The first of date/updated/created that reads as a calendar date, as YYYY-MM-DD."""
    for key in _DATE_KEYS:
        parsed = _iso_date(meta.get(key))
        if parsed is not None:
            return parsed
    return None


def _number_date(value: int) -> str | None:
    if 19000101 <= value <= 29991231:  # 20240305
        return _iso_date(f"{value // 10000}-{value // 100 % 100}-{value % 100}")
    seconds = value / 1000 if value >= 10**11 else value
    if not 10**9 <= seconds < 10**11:  # 2001 to 5138: smaller numbers are not times
        return None
    try:
        return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).date().isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def file_date(relpath: str) -> str | None:
    """The date a file's name starts with (``2024-01-15.md``: a daily note or journal;
    ``2024-01-15-launch.md``: a Jekyll post), for a note whose frontmatter has none."""
    return _iso_date(file_stem(relpath).replace("_", "-"))  # Logseq: 2024_01_15.md


def _iso_date(value: object) -> str | None:
    """``2024-3-5``, ``2024/03/05`` or an ISO timestamp -> ``2024-03-05``; a number of
    seconds or milliseconds since 1970 (Dendron's ``created: 1636492098000``), or an
    8-digit ``20240305``, too; else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _number_date(value)
    if not isinstance(value, str):
        return None
    match = _DATE.match(value)
    if match is None:
        return None
    try:
        return dt.date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:
        return None
