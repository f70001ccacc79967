"""What the MCP ``get`` tool may read, and how: only indexed files, only inside the
vault's real root, capped in lines and bytes.

Source files (Markdown, code, text) are read from disk, numbered as the indexer
numbers them; extracted documents (PDF, HTML, hook output) are rebuilt from their
indexed chunks, since their hit line numbers refer to the extracted text.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

from vq.core import store
from vq.core.confined import LINK_ERRORS, open_beneath
from vq.core.errors import VqError
from vq.core.filetypes import FILE_LINE_HANDLERS, reader_of
from vq.core.settings import Settings, Vault

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


def open_confined(vault: Vault, rel: str, use_openat2: bool = True
                  ) -> tuple[int, os.stat_result]:
    """Open the file only if it is a regular file beneath the vault's real root,
    reached without following a symlink at any step (see ``vq.core.confined``).

    The realpath check only words the common refusal well (a link that leads
    out); the guarantee is the open itself, and what is checked is the opened fd.
    """
    where = f"{vault.id}:{rel}"
    root = os.path.realpath(vault.path)
    try:
        real = os.path.realpath(os.path.join(root, *rel.split("/")))
    except OSError:  # a link vanished while realpath read it: leave the verdict to the open
        real = root
    if os.path.commonpath([root, real]) != root:
        raise VqError(f"{where} resolves outside the vault root (a symlink); refusing to read it",
                      "get reads only files inside the vault")
    try:
        fd = open_beneath(root, rel.split("/"), use_openat2)
    except FileNotFoundError:
        raise VqError(f"{where} is in the index but no longer on disk",
                      "the next `vq build` drops it; search again") from None
    except PermissionError:
        raise VqError(f"{where}: permission denied", "make the file readable") from None
    except OSError as exc:
        if exc.errno in LINK_ERRORS:
            raise VqError(f"{where} is or passes through a symlink (or a file where a folder "
                          "should be); get follows no links, so it cannot lead out of the vault",
                          "read the link's target path instead") from None
        raise VqError(f"{where}: cannot open: {exc.strerror}", "check the file") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise VqError(f"{where} is not a regular file", "use a path from a search hit")
    return fd, st


def read_indexed(settings: Settings, index: store.Index, vault_id: str, rel: str, start: int,
                 end: int | None) -> dict[str, Any]:
    """Lines of one indexed file, confined to its vault's root and capped: what MCP ``get``
    and the dashboard's preview return. ``rel`` is already checked by ``no_parent``."""
    row = manifest_row(index, vault_id, rel)
    if row is None:
        raise VqError(f"{vault_id}:{rel} is not in the index",
                      "get reads only indexed files: use a path from a search hit")
    root = settings.vault(vault_id)
    if root is None:
        raise VqError(f"vault {vault_id!r} is in the index but not in the config",
                      "its files cannot be read until it is configured again")
    fd, st = open_confined(root, rel)
    if reader_of(row["handler"]) in FILE_LINE_HANDLERS:
        out = read_lines(fd, start, end, f"{vault_id}:{rel}")
    else:  # PDF, HTML, hook output: hit lines number the extracted text
        os.close(fd)
        out = indexed_lines(index, vault_id, rel, start, end)
    return {"vault": vault_id, "path": rel, "abs_path": str(root.path / rel), **out,
            "changed_since_indexed": (st.st_size, st.st_mtime_ns)
            != (row["size"], row["mtime_ns"])}


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
    """Lines start..end numbered as the indexer numbers them (\\n, \\r\\n, \\r), capped.

    The file is read in fixed blocks and only the lines asked for are kept (at most
    MAX_BYTES of them), so lines 1-3 of a 400 MB one-line file cost one block of
    memory, not the file; counting the total still reads to the end.
    """
    last = start + MAX_LINES - 1 if end is None else min(end, start + MAX_LINES - 1)
    with os.fdopen(fd, "rb", buffering=0) as raw:
        if b"\x00" in raw.read(BINARY_SNIFF):
            raise VqError(f"{where} is binary", "search returns its indexed text instead")
        raw.seek(0)
        picker = _LinePicker(start, last)
        picker.feed_all(raw)
    lines, total, why = picker.lines, picker.total, picker.why
    if start > max(total, 1):
        raise VqError(f"start_line {start} is past the end of {where} ({total} lines)",
                      f"give a start_line between 1 and {total}")
    got_end = start + len(lines) - 1
    if why is None and total > got_end and (end is None or end > got_end):
        why = f"line cap ({MAX_LINES})"
    return {"start_line": start, "end_line": got_end, "total_lines": total,
            "truncated": why is not None, "truncated_by": why, "text": "\n".join(lines)}


BLOCK = 1 << 20
_EOL = re.compile(rb"\r\n|\r|\n")


def _eols(data: bytes) -> int:
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


class _LinePicker:
    """Keeps lines ``start..last`` (within MAX_BYTES) of a stream fed in blocks; counts all.

    A block never ends inside ``\\r\\n``: a trailing ``\\r`` waits for the next block.
    """

    def __init__(self, start: int, last: int) -> None:
        self.start, self.last = start, last
        self.lines: list[str] = []
        self.why: str | None = None
        self.lineno = 1          # the line now open
        self.open_bytes = 0      # bytes of it seen so far
        self.current = bytearray()
        self.size = 0

    @property
    def total(self) -> int:
        return self.lineno if self.open_bytes else self.lineno - 1

    def feed_all(self, raw: Any) -> None:
        carry = b""
        first = True
        while True:
            block = raw.read(max(BLOCK, 3) if first else BLOCK)  # a whole BOM, if any
            data = carry + block
            if first and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            first = False
            if block and data.endswith(b"\r"):
                data, carry = data[:-1], b"\r"
            else:
                carry = b""
            self._feed(data)
            if not block:
                break
        if self.open_bytes:
            self._finish_line()

    def _wanted(self) -> bool:
        return self.why is None and self.start <= self.lineno <= self.last

    def _feed(self, data: bytes) -> None:
        ends = _eols(data)
        if not ends or self.lineno + ends < self.start or self.lineno > self.last \
                or self.why is not None:
            if ends:  # nothing here is kept: count and move on
                self.lineno += ends
                self.open_bytes = len(data) - (max(data.rfind(b"\n"), data.rfind(b"\r")) + 1)
            else:
                self._take(data)
            return
        pos = 0
        for match in _EOL.finditer(data):
            self._take(data[pos:match.start()])
            self._finish_line()
            pos = match.end()
            if self.lineno > self.last or self.why is not None:
                self._feed(data[pos:])
                return
        self._take(data[pos:])

    def _take(self, piece: bytes) -> None:
        self.open_bytes += len(piece)
        if self._wanted() and len(self.current) <= MAX_BYTES:
            self.current += piece[:MAX_BYTES + 1 - len(self.current)]

    def _finish_line(self) -> None:
        if self._wanted():
            line = bytes(self.current).decode("utf-8", "replace")
            cost = len(line.encode("utf-8")) + 1
            if self.size + cost > MAX_BYTES:
                if not self.lines:  # one huge line: its first MAX_BYTES bytes
                    self.lines.append(bytes(self.current[:MAX_BYTES]).decode("utf-8", "ignore"))
                self.why = f"size cap ({MAX_BYTES // 1024} KB)"
            else:
                self.lines.append(line)
                self.size += cost
        self.current.clear()
        self.lineno += 1
        self.open_bytes = 0
