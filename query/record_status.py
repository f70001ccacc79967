"""A decision record's closed status on its hits: "Superseded by ADR-0020" by the date.

A record a later one replaced still answers the questions it answered, and ranks as
well as it did: Home Assistant's ADR 0002 ("Minimum supported Python version",
superseded by 0020) came second for "minimum supported python version policy", its
Context section fourth, and neither said that the decision no longer holds. adr-tools'
and MADR's own listings show the status; so does each hit now, when it is one a reader
must not act on (superseded, deprecated, rejected, reverted, ...): "Accepted" is the
norm and goes unsaid.

The status is read when a hit is shown, not indexed: a record's status changes without
its sections changing. From the first ``HEAD_BYTES`` of the hit's file, beneath its
vault's root with no link followed (``vq.core.confined``), once per file per search:
frontmatter ``status:``, a header field (``* Status: superseded by ...``) or the first
line under a ``## Status`` heading, within the first ``HEAD_LINES`` lines.
"""

from __future__ import annotations

import re
from typing import Any

from vq.core import confined
from vq.core.filetypes import MARKDOWN_EXTENSIONS, suffix
from vq.core.inline_markup import is_fence, markdown_text
from vq.core.settings import Settings

HEAD_BYTES = 4096
HEAD_LINES = 40
STATUS_CHARS = 100
_HEADING = re.compile(r"^#{1,6}[ \t]+(?:\*\*)?status(?:\*\*)?[ \t]*:?[ \t]*$", re.IGNORECASE)
_FIELD = re.compile(r"^[ \t]*(?:[*+-][ \t]+)?(?:\*\*)?status(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*"
                    r"(\S.{0,300})$", re.IGNORECASE)
_ANY_HEADING = re.compile(r"^#{1,6}[ \t]")
_CLOSED = re.compile(r"\b(?:superseded|deprecated|rejected|reverted|replaced|obsolete|"
                     r"obsoleted|withdrawn|retired|abandoned)\b", re.IGNORECASE)


def closed_status(text: str) -> str:
    """The record's status line as rendered when it says the decision no longer holds;
    "" otherwise (no status, or an open one: accepted, proposed)."""
    lines = text.splitlines()[:HEAD_LINES]
    fenced = False
    for n, line in enumerate(lines):
        if is_fence(line.strip()):
            fenced = not fenced  # a YAML example's ``status: deprecated`` is not the page's
        if fenced or is_fence(line.strip()):
            continue
        found = _FIELD.match(line)
        status = found.group(1) if found else _under_heading(lines, n)
        if status is not None:
            shown = markdown_text(status.strip().strip("\"'")).strip()[:STATUS_CHARS]
            return shown if _CLOSED.search(shown) else ""
    return ""


def _under_heading(lines: list[str], n: int) -> str | None:
    """The first line under a ``## Status`` heading at ``n``; None when ``n`` is not one."""
    if not _HEADING.match(lines[n]):
        return None
    for line in lines[n + 1:]:
        if _ANY_HEADING.match(line):
            return ""
        if line.strip():
            return line
    return ""


def fill(hits: list[Any], settings: Settings) -> None:
    """Set ``status`` on each Markdown hit whose record is closed (a vault no longer
    configured is not read)."""
    seen: dict[tuple[str, str], str] = {}
    for hit in hits:
        if suffix(hit.path) not in MARKDOWN_EXTENSIONS or hit.page:
            continue
        key = (hit.vault, hit.path)
        if key not in seen:
            vault = settings.vault(hit.vault)
            seen[key] = _status_of(str(vault.path), hit.path) if vault else ""
        hit.status = seen[key]


def _status_of(root: str, path: str) -> str:
    try:
        head = confined.read_head(confined.open_beneath(root, path.split("/")), HEAD_BYTES)
    except (OSError, ValueError):  # ValueError: no plain relative path
        return ""  # gone or unreadable: the staleness check says so
    return closed_status(head.decode("utf-8", errors="replace"))
