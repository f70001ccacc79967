"""The on-disk contract: table names, Arrow schemas and the index's self-description.

The ``chunks`` table carries the index metadata (schema version, model,
dimension, normalisation, chunker version, vector dtype) in its Arrow schema
metadata, so a reader takes the model from the index, never from config.
Bump ``SCHEMA_VERSION`` when a column changes and ``CHUNKER_VERSION`` when
chunk boundaries or embed text change: either forces a full re-chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

SCHEMA_VERSION = 1
CHUNKER_VERSION = 4  # 2: tree-sitter code chunks, code context in the embed text
#                     3: chunks sized to the model window in word pieces (core/token_window.py)
#                     4: a section vector beside each piece's (section_hash, section_vector)
# Not bumped for heading attribute lists leaving breadcrumbs (core/attr_list.py): a
# re-encode of every index would buy one brace group less in old rows' embed headers,
# search cleans old breadcrumbs when it shows them, and an edited file is re-chunked whole.
# Nor for HTML comments leaving Markdown chunk text (docs/decisions.md#html-comments): old
# rows keep them until their file changes; `vq build --rebuild` applies it at once.
# Nor for what notes' Markdown gained later (frontmatter aliases, #tags in the text,
# dates from file names, Logseq outlines and properties): no judged set's chunk changed,
# so a reader revision (core/filetypes.py READER_REVISIONS) re-reads those files once
# instead, and every chunk whose text did not change keeps its vectors.
CHUNKS, FILES, BUILDS = "chunks", "files", "builds"
SECTION_VECTOR = "section_vector"  # each piece's section embedded whole
SECTIONS_SINCE = 4  # the chunker version that added section_hash and section_vector
META_PREFIX = "vq."


@dataclass(frozen=True)
class IndexMeta:
    model: str
    dim: int
    vector_dtype: str = "float16"
    normalized: bool = True
    schema_version: int = SCHEMA_VERSION
    chunker_version: int = CHUNKER_VERSION
    window: int = 0  # the model's max_seq_length the chunks were sized to; 0: characters only

    def to_metadata(self) -> dict[bytes, bytes]:
        return {(META_PREFIX + k).encode(): str(v).encode() for k, v in self.__dict__.items()}

    @classmethod
    def from_metadata(cls, meta: dict[bytes, bytes] | None) -> IndexMeta | None:
        """None when the table was not written by vq (or by a vq too old to say)."""
        raw = {k.decode()[len(META_PREFIX):]: v.decode() for k, v in (meta or {}).items()
               if k.decode().startswith(META_PREFIX)}
        if "model" not in raw or "dim" not in raw:
            return None
        return cls(model=raw["model"], dim=int(raw["dim"]),
                   vector_dtype=raw.get("vector_dtype", "float32"),
                   normalized=raw.get("normalized", "True") == "True",
                   schema_version=int(raw.get("schema_version", 0)),
                   chunker_version=int(raw.get("chunker_version", 0)),
                   window=int(raw.get("window", 0)))


def vector_type(meta: IndexMeta) -> pa.DataType:
    item = pa.float16() if meta.vector_dtype == "float16" else pa.float32()
    return pa.list_(item, meta.dim)


def chunks_schema(meta: IndexMeta) -> pa.Schema:
    return pa.schema([
        pa.field("id", pa.string()),
        pa.field("vault", pa.string()),
        pa.field("path", pa.string()),          # posix, relative to the vault root
        pa.field("kind", pa.string()),          # notes | code | docs (filetypes.content_kind)
        pa.field("handler", pa.string()),       # markdown | code | text | ...
        pa.field("language", pa.string()),
        pa.field("title", pa.string()),
        pa.field("breadcrumb", pa.string()),
        pa.field("symbol", pa.string()),
        pa.field("symbol_kind", pa.string()),
        pa.field("start_line", pa.int32()),
        pa.field("end_line", pa.int32()),
        pa.field("page", pa.int32()),
        pa.field("text", pa.string()),          # embed/search text: breadcrumb header + body
        pa.field("body_start", pa.int32()),     # text[body_start:] is exactly the source lines
        pa.field("text_hash", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("doc_date", pa.string()),      # frontmatter date, ISO, or null
        pa.field("mtime", pa.float64()),        # file mtime, epoch seconds
        pa.field("vector", vector_type(meta)),
        pa.field("section_hash", pa.string()),  # = text_hash when the piece is the section
        pa.field(SECTION_VECTOR, vector_type(meta)),  # the whole section's embedding
    ], metadata=meta.to_metadata())


FILES_SCHEMA = pa.schema([
    pa.field("vault", pa.string()),
    pa.field("path", pa.string()),
    pa.field("size", pa.int64()),
    pa.field("mtime_ns", pa.int64()),
    pa.field("hash", pa.string()),
    pa.field("chunks", pa.int32()),
    pa.field("handler", pa.string()),
    pa.field("error", pa.string()),
    pa.field("indexed_at", pa.float64()),
])

BUILDS_SCHEMA = pa.schema([
    pa.field("started_at", pa.float64()),
    pa.field("seconds", pa.float64()),
    pa.field("outcome", pa.string()),           # ok | error | interrupted
    pa.field("model", pa.string()),
    pa.field("device", pa.string()),
    pa.field("summary", pa.string()),           # the build summary as JSON
])
