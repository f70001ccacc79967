"""What notes apps write into Markdown, read as they mean it.

* Obsidian: frontmatter ``aliases:`` (the note's other names; Hugo's old URL paths are
  not names) and ``#tags`` in the text; an Excalidraw drawing (``*.excalidraw.md``) is
  its text elements, without the scene data only the plugin reads.
* Logseq: the ``key:: value`` lines that open a page are its properties, its hidden
  built-in block properties (``id:: <uuid>``) are blanked, and a namespaced file name
  (``a___b.md``) reads ``a/b``.
* Decision records keep their date and tags in the lines under the title, not in
  frontmatter: adr-tools' ``Date: 2018-03-01``, MADR's ``* Date: 2017-12-14`` list, NATS'
  ``|Date|2020-04-30|`` and ``|Tags|jetstream, client|`` table. They feed ``--since``
  and ``--tag`` as frontmatter would (frontmatter wins where both say).

The Markdown reader (``vq.indexer.handlers.markdown``) calls these; every pattern here
is linear in its line (a hostile page is one long line as often as many).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from vq.core.inline_markup import LINK_DEFINITION, without_code
from vq.indexer.handlers.base import Span, blank_lines, fence_lines, file_stem, is_blank

# Logseq properties (``key:: value``): page properties open a page; the built-in block
# properties Logseq never shows (ids, fold state, flashcard scheduling) are blanked.
_PROPERTY = re.compile(r"^[ \t]*(?:-[ \t]+)?([A-Za-z][\w.-]*)::(?:[ \t]+(.*?))?[ \t]*$")
_HIDDEN_PROPERTY = re.compile(r"^[ \t]*(?:id|collapsed|heading|background-color|ls-type"
                              r"|hl-[\w-]+|card-[\w-]+|logseq\.[\w.-]+)::(?:[ \t].*)?$")
_ALIAS_KEYS = ("aliases", "alias")
MAX_ALIASES, MAX_ALIAS_CHARS = 20, 100  # frontmatter is user text: bounded like the rest
MAX_INLINE_TAGS = 100
# After a space or at the start; holds a letter; not a link's target (``(#anchor)``):
# possessive, so a tag is never cut short to dodge the closing bracket.
_INLINE_TAG = re.compile(r"(?:^|(?<=\s))#((?:[^\W\d_]|[\d_/-]++[^\W\d_])[\w/-]*+)(?![)\]])")
_DRAWING = re.compile(r"^#{1,6}[ \t]+(?:Drawing|Embedded Files)[ \t]*$")
_PLUGIN_HEADING = re.compile(r"^#{1,6}[ \t]+(?:Excalidraw Data|Text Elements|Element Links)"
                             r"[ \t]*$")
_EXCALIDRAW_BANNER = re.compile(r"^==⚠.*EXCALIDRAW VIEW")
# A record's header: ``Date: 2018-03-01``, ``* **Tags:** a, b``, ``| Date | 2020-04-30 |``
_RECORD_FIELD = re.compile(r"^[ \t]*(?:[*+-][ \t]+)?(?:\|[ \t]*)?(?:\*\*)?(date|tags)(?:\*\*)?"
                           r"[ \t]*(?::|\|)(?:\*\*)?[ \t]*(.{1,500}?)[ \t|]*$", re.IGNORECASE)
_SECTION_HEADING = re.compile(r"^[ \t]{0,3}#{2,6}[ \t]")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*\|")  # |---|---|: the row above heads it
RECORD_HEADER_LINES = 40
_ELEMENT_ID = re.compile(r"(?<![ \t])[ \t]+\^[A-Za-z0-9_-]{6,}[ \t]*$")  # a run tried once


def hide_drawing(lines: Sequence[str], start: int) -> list[str]:
    """An Excalidraw drawing (Obsidian's ``*.excalidraw.md``) less what only the plugin
    reads: from ``## Embedded Files`` or ``## Drawing`` to the end (file hashes, and the
    scene as JSON or compressed to base64: 95% of the file), the "Switch to EXCALIDRAW
    VIEW" banner, the plugin's own headings, ``%%`` markers and each text element's
    ``^id``. Its text elements stay, under the drawing's name: what the drawing says."""
    out = list(lines)
    for i in range(start, len(out)):
        if _DRAWING.match(out[i]):
            out[i:] = [""] * (len(out) - i)
            break
        if _EXCALIDRAW_BANNER.match(out[i]) or _PLUGIN_HEADING.match(out[i]) or \
                out[i].strip() == "%%":
            out[i] = ""
        else:
            out[i] = _ELEMENT_ID.sub("", out[i])
    return out


def stem_title(relpath: str) -> str:
    """The title a file's name gives: Logseq's ``a___b.md`` reads ``a/b``, an Excalidraw
    drawing's ``plan.excalidraw.md`` reads ``plan``."""
    stem = file_stem(relpath).replace("___", "/")
    return stem.removesuffix(".excalidraw") or stem


def page_properties(lines: Sequence[str], start: int) -> dict[str, Any]:
    """A Logseq page's properties (``title:: Query sprint``, ``alias:: GTD, [[Getting
    Things Done]]``, ``tags:: a, b``): the ``key:: value`` lines that open the page,
    read as frontmatter is. A list value is split at commas, link brackets dropped."""
    meta: dict[str, Any] = {}
    for line in lines[start:start + 50]:
        if is_blank(line):
            continue
        found = _PROPERTY.match(line)
        if found is None:
            break
        key, value = found.group(1).lower(), found.group(2) or ""
        if key in ("alias", "aliases", "tags"):
            meta[key] = [v.strip().strip("[]#").strip() for v in value.split(",")]
        else:
            meta.setdefault(key, value)
    return meta


def record_metadata(lines: Sequence[str], start: int) -> dict[str, Any]:
    """A decision record's date and tags from the lines between its start and its first
    section (at most ``RECORD_HEADER_LINES``), as frontmatter keys."""
    meta: dict[str, Any] = {}
    header = lines[start:start + RECORD_HEADER_LINES]
    for n, line in enumerate(header):
        if _SECTION_HEADING.match(line):
            break
        found = _RECORD_FIELD.match(line)
        if found is None or (n + 1 < len(header) and _TABLE_RULE.match(header[n + 1])):
            continue  # not a field, or a table's column names (| Tags | Description |)
        key, value = found.group(1).lower(), found.group(2).strip()
        if key == "tags":
            parts = re.findall(r"#([\w/-]+)", value) if "#" in value else value.split(",")
            meta.setdefault("tags", [p.strip().strip("`") for p in parts if p.strip()])
        else:
            meta.setdefault("date", value)
    return meta


def hide_properties(lines: Sequence[str], fences: Sequence[Span], start: int) -> list[str]:
    """``lines`` with Logseq's hidden built-in properties (``id:: 6018cc98-…``,
    ``collapsed:: true``, ``card-ease-factor:: 2.6``) blanked outside fences: the page
    never shows them, and a UUID is only noise to BM25 and the model."""
    return blank_lines(lines, fences, start, _HIDDEN_PROPERTY, "::")


def inline_tags(lines: Sequence[str], start: int, fences: Sequence[Span]) -> list[str]:
    """``#tags`` in the text outside fences and code spans, as Obsidian reads them: a
    tag holds a letter (``#1984`` is no tag), follows a space or starts the line (so
    ``C#``, ``page#anchor`` and a heading's ``# `` are not tags)."""
    inside = fence_lines(fences)
    found: list[str] = []
    for i in range(start, len(lines)):
        if i in inside or "#" not in lines[i] or LINK_DEFINITION.match(lines[i]):
            continue
        for tag in _INLINE_TAG.findall(without_code(lines[i])):
            found.append(tag.rstrip("/-"))
            if len(found) >= MAX_INLINE_TAGS:
                return found
    return found


def meta_aliases(meta: dict[str, Any]) -> tuple[str, ...]:
    """The note's other names (``aliases: [GTD, Getting Things Done]``, or one string);
    entries that are URL paths (Hugo's redirects) or not text are left out."""
    value = next((meta[k] for k in _ALIAS_KEYS if k in meta), None)
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names: dict[str, None] = {}
    for item in items[:MAX_ALIASES]:
        name = " ".join(item.split())[:MAX_ALIAS_CHARS] if isinstance(item, str) else ""
        if name and not name.startswith("/") and "://" not in name:
            names[name] = None
    return tuple(names)
