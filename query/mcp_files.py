"""What the MCP ``get`` tool may read, and how: only indexed files, only inside the
vault's real root, capped in lines and bytes.

Source files (Markdown, code, text) are read from disk, numbered as the indexer
numbers them; extracted documents (PDF, HTML, hook output) are rebuilt from their
indexed chunks, since their hit line numbers refer to the extracted text.
"""

from __future__ import annotations

import io
import os
import re
import stat
from typing import Any

from vq.core import store
from vq.core.errors import VqError
from vq.core.settings import Vault

MAX_LINES = 400
MAX_BYTES = 64 * 1024
BINARY_SNIFF = 8192


def no_parent(path: str) -> list[str]:
    """The path's parts; any '..' is refused outright rather than normalised away."""
    parts = re.split(r"[\\/]+", path)
    if ".." in parts:
        raise VqError(f"{path!r}: '..' is not allowed",
                      'give the path as search hits show it: "vault:relative/path"')
    return parts


def only_vault(index: store.Index, rel: str) -> str:
    rows = (index.files.search().where(f"path = {store.sql_str(rel)}").select(["vault"])
            .limit(None).to_list())
    vaults = sorted({r["vault"] for r in rows})
    if not vaults:
        raise VqError(f"{rel} is not in the index",
                      'get reads only indexed files: use "vault:path" from a search hit')
    if len(vaults) > 1:
        raise VqError(f"{rel} is in several vaults: {', '.join(vaults)}",
                      f'say which, e.g. "{vaults[0]}:{rel}"')
    return vaults[0]


def manifest_row(index: store.Index, vault: str, rel: str) -> dict[str, Any] | None:
    where = f"vault = {store.sql_str(vault)} AND path = {store.sql_str(rel)}"
    rows = (index.files.search().where(where).select(["size", "mtime_ns", "handler"])
            .limit(1).to_list())
    return rows[0] if rows else None


def open_confined(vault: Vault, rel: str) -> tuple[int, os.stat_result]:
    """Open the file only if its real path is a regular file inside the vault's real root.

    The realpath check catches symlinks (of the file or a folder above it) that lead
    out; opening the resolved path with O_NOFOLLOW and comparing inodes afterwards
    closes the window in which the file could be swapped for a link.
    """
    where = f"{vault.id}:{rel}"
    root = os.path.realpath(vault.path)
    real = os.path.realpath(os.path.join(vault.path, *rel.split("/")))
    if os.path.commonpath([root, real]) != root:
        raise VqError(f"{where} resolves outside the vault root (a symlink); refusing to read it",
                      "get reads only files inside the vault")
    try:
        before = os.stat(real)
        if not stat.S_ISREG(before.st_mode):
            raise VqError(f"{where} is not a regular file", "use a path from a search hit")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise VqError(f"{where} is in the index but no longer on disk",
                      "the next `vq build` drops it; search again") from None
    except PermissionError:
        raise VqError(f"{where}: permission denied", "make the file readable") from None
    after = os.fstat(fd)
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise VqError(f"{where} changed while it was opened", "try again")
    return fd, after


SOURCE_HANDLERS = ("markdown", "code", "text")


def indexed_lines(index: store.Index, vault: str, rel: str, start: int, end: int | None
                   ) -> dict[str, Any]:
    """Lines of a document's extracted text, rebuilt from its indexed chunks."""
    where = f"vault = {store.sql_str(vault)} AND path = {store.sql_str(rel)}"
    rows = (index.chunks.search().where(where).select(["start_line", "text", "body_start"])
            .limit(None).to_list())
    lines: dict[int, str] = {}
    for r in rows:
        for offset, line in enumerate(r["text"][r["body_start"]:].split("\n")):
            lines[r["start_line"] + offset] = line
    total = max(lines, default=0)
    if start > max(total, 1):
        raise VqError(f"start_line {start} is past the end of {vault}:{rel} ({total} lines)",
                      f"give a start_line between 1 and {total}")
    last = min(start + MAX_LINES - 1, end or total, total)
    text = "\n".join(lines.get(n, "") for n in range(start, last + 1))
    return {"start_line": start, "end_line": last, "total_lines": total,
            "truncated": last < (end or total), "truncated_by": None if last >= (end or total)
            else f"line cap ({MAX_LINES})", "text": text[:MAX_BYTES],
            "source": "indexed text extracted from the document"}


def read_lines(fd: int, start: int, end: int | None, where: str) -> dict[str, Any]:
    """Lines start..end numbered as the indexer numbers them (\\n, \\r\\n, \\r), capped."""
    last = start + MAX_LINES - 1 if end is None else min(end, start + MAX_LINES - 1)
    why: str | None = None
    lines: list[str] = []
    size = total = 0
    full = False
    with os.fdopen(fd, "rb") as raw:
        if b"\x00" in raw.read(BINARY_SNIFF):
            raise VqError(f"{where} is binary", "search returns its indexed text instead")
        raw.seek(0)
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline=None)
        for total, line in enumerate(text, 1):
            if full or not start <= total <= last:
                continue
            line = line.rstrip("\n")
            cost = len(line.encode("utf-8")) + 1
            if size + cost > MAX_BYTES:
                if not lines:  # one huge line: its first MAX_BYTES bytes
                    lines.append(line.encode("utf-8")[:MAX_BYTES].decode("utf-8", "ignore"))
                why, full = f"size cap ({MAX_BYTES // 1024} KB)", True
                continue
            lines.append(line)
            size += cost
    if start > max(total, 1):
        raise VqError(f"start_line {start} is past the end of {where} ({total} lines)",
                      f"give a start_line between 1 and {total}")
    got_end = start + len(lines) - 1
    if why is None and total > got_end and (end is None or end > got_end):
        why = f"line cap ({MAX_LINES})"
    return {"start_line": start, "end_line": got_end, "total_lines": total,
            "truncated": why is not None, "truncated_by": why, "text": "\n".join(lines)}
