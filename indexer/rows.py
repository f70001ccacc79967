"""Turn a chunked document into ``chunks`` rows, and a file into its manifest row.

The embed text is a breadcrumb header (plus the chunk's ``context`` lines: a code
chunk's kind, symbol, signature and docstring) and then the chunk's exact source
lines; the same string feeds BM25 and the encoder, so heading words count for both.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from vq.core.filetypes import reader_tag
from vq.core.walk import FileEntry
from vq.indexer.handlers.base import Chunk, Document


@dataclass(frozen=True)
class PendingChunk:
    """A chunk row still waiting for its vectors: its own, and its section's.

    ``section_text`` is the whole section the chunk is a piece of (header once,
    every piece's body in order) when the section was split into two or more
    pieces; None when the chunk is the whole section (its section vector is its
    own vector), and always for code (each code chunk stands alone in search).
    """

    row: dict
    text_hash: str
    section_text: str | None = None

    @property
    def section_hash(self) -> str:
        return self.row["section_hash"]


def chunk_id(vault: str, path: str, ordinal: int, text_hash: str) -> str:
    """Deterministic: the same tree always yields the same ids (crash convergence relies on it)."""
    key = f"{vault}\0{path}\0{ordinal}\0{text_hash}".encode()
    return hashlib.blake2b(key, digest_size=12).hexdigest()


def embed_header(vault: str, path: str, breadcrumb: str) -> str:
    return f"{vault}/{path} > {breadcrumb}" if breadcrumb else f"{vault}/{path}"


def chunk_header(vault: str, path: str, chunk: Chunk) -> str:
    """Everything the embed text carries before the chunk's source lines."""
    header = embed_header(vault, path, chunk.breadcrumb)
    return header + (f"\n{chunk.context}\n\n" if chunk.context else "\n\n")


def text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def document_rows(entry: FileEntry, kind: str, handler: str, doc: Document) -> list[PendingChunk]:
    return with_sections(_piece_rows(entry, kind, handler, doc), kind)


def _piece_rows(entry: FileEntry, kind: str, handler: str, doc: Document) -> list[PendingChunk]:
    out = []
    mtime = entry.mtime_ns / 1e9
    for ordinal, chunk in enumerate(doc.chunks):
        header = chunk_header(entry.vault, entry.path, chunk)
        text = header + chunk.text
        text_hash = text_digest(text)
        out.append(PendingChunk({
            "id": chunk_id(entry.vault, entry.path, ordinal, text_hash),
            "vault": entry.vault, "path": entry.path, "kind": kind, "handler": handler,
            "language": doc.language, "title": doc.title, "breadcrumb": chunk.breadcrumb,
            "symbol": chunk.symbol, "symbol_kind": chunk.symbol_kind,
            "start_line": chunk.start_line, "end_line": chunk.end_line, "page": chunk.page,
            "text": text, "body_start": len(header), "text_hash": text_hash,
            "tags": list(doc.tags), "doc_date": doc.date, "mtime": mtime,
            "section_hash": text_hash,
        }, text_hash))
    return out


def with_sections(pieces: list[PendingChunk], kind: str) -> list[PendingChunk]:
    """Give the pieces of each split section that section's text and hash.

    Pieces with one breadcrumb are one section (search keeps one piece per
    section by the same key); the text is the first piece's (header and body)
    followed by every later piece's body, in line order. Its vector, beside each
    piece's own, lets a piece count with the meaning of its whole section
    (docs/decisions.md#section-vectors). Code chunks are left alone.
    """
    if kind == "code":
        return pieces
    groups: dict[str, list[int]] = {}
    for n, p in enumerate(pieces):
        groups.setdefault(p.row["breadcrumb"], []).append(n)
    out = list(pieces)
    for members in groups.values():
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda n: (pieces[n].row["start_line"], pieces[n].row["id"]))
        first = pieces[ordered[0]].row
        text = first["text"] + "".join("\n" + pieces[n].row["text"][pieces[n].row["body_start"]:]
                                       for n in ordered[1:])
        digest = text_digest(text)
        for n in members:
            p = pieces[n]
            out[n] = PendingChunk({**p.row, "section_hash": digest}, p.text_hash, text)
    return out


def manifest_row(entry: FileEntry, file_hash: str, chunks: int, handler: str,
                 error: str | None) -> dict:
    """``handler`` is recorded with its revision (``reader_tag``), so a later revision
    of the reader re-reads the file once."""
    return {"vault": entry.vault, "path": entry.path, "size": entry.size,
            "mtime_ns": entry.mtime_ns, "hash": file_hash, "chunks": chunks,
            "handler": reader_tag(handler), "error": error, "indexed_at": time.time()}


def problem_row(vault: str, path: str, file_hash: str, chunks: int, reason: str) -> dict:
    """A file discovery could not stat or would not read: no size or mtime to vouch for,
    so zeros make the next build look at it again; the old hash and count stay."""
    return manifest_row(FileEntry(vault, path, "", 0, 0), file_hash, chunks, "", reason)
