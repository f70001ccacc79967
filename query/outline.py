"""A class hit that is only its header line gets an outline of its members.

A class too large for one chunk is cut at its methods, and its own chunk keeps only
the lines above the first one: without a docstring that is ``class StaticFiles:``
alone, a hit that tells the reader nothing. A code search tool shows the class's
outline instead, so such a hit carries the first line of each member (its ``def``
line, numbered as in the file), read from the index: the members are the definitions
whose breadcrumb continues the class's (``file :: StaticFiles :: __init__``). Output
only: nothing here changes a score or a rank.
"""

from __future__ import annotations

from typing import Any

from vq.core.store import sql_str
from vq.query.collapse import definition_line, header_only, is_definition, names_definition

MEMBERS = 6             # members shown; the rest are counted
MEMBER_FETCH = 20_000   # chunks of the hits' files read to find the members

Line = tuple[int | None, str]


def outlines(sources: Any, rows: list[dict]) -> dict[str, list[Line]]:
    """Hit id -> its members' first lines (``(None, "+N more")`` last when cut)."""
    bare = [r for r in rows if _bare_definition(r)]
    if not bare:
        return {}
    files = sorted({(r["vault"], r["path"]) for r in bare})
    where = " OR ".join(f"(vault = {sql_str(v)} AND path = {sql_str(p)})" for v, p in files)
    found = sources.rows(where, MEMBER_FETCH).to_pylist()
    out = {}
    for row in bare:
        members = _members(row, found)
        if members:
            out[row["id"]] = members
    return out


def _bare_definition(row: dict) -> bool:
    """A class (struct, interface: the embed context's second line names the kind,
    ``class StaticFiles: class StaticFiles``) whose chunk is its header alone. Short
    functions are not asked about: most searches then cost no extra query."""
    return (is_definition(row) and bool(row.get("language")) and not row.get("page")
            and definition_line(row).startswith("class ") and header_only(row))


def _members(row: dict, found: list[dict]) -> list[Line]:
    """Each direct member's first line (the one naming it), in file order."""
    prefix = row["breadcrumb"] + " :: "
    pieces: dict[str, list[dict]] = {}
    for other in found:
        crumb = other["breadcrumb"]
        if (other["vault"], other["path"]) != (row["vault"], row["path"]) or \
                not crumb.startswith(prefix) or " :: " in crumb[len(prefix):]:
            continue
        pieces.setdefault(crumb, []).append(other)
    for parts in pieces.values():
        parts.sort(key=lambda piece: piece["start_line"])
    lines = [_first_line(parts, crumb[len(prefix):])
             for crumb, parts in sorted(pieces.items(), key=lambda kv: kv[1][0]["start_line"])]
    if len(lines) > MEMBERS:
        return [*lines[:MEMBERS], (None, f"+{len(lines) - MEMBERS} more")]
    return lines


def _first_line(pieces: list[dict], name: str) -> Line:
    """The member's line that names it (below its decorators and comments, which can
    fill its first pieces: a long Rust doc comment), else its first line."""
    for piece in pieces:
        body = piece["text"][piece["body_start"]:].splitlines()
        for offset, line in enumerate(body):
            if names_definition(line, name):
                return piece["start_line"] + offset, line
    body = pieces[0]["text"][pieces[0]["body_start"]:].splitlines()
    return pieces[0]["start_line"], body[0] if body else ""
