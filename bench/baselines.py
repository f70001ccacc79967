"""The designs vq is measured against, over exactly vq's chunks.

Each baseline indexes the ``text`` column of vq's ``chunks`` table (the
breadcrumb header plus the chunk's source lines: the same string vq feeds to
BM25 and to the encoder), so only the retrieval method differs:

- ``bm25s``: a plain in-memory BM25 (Lucene variant, k1=1.5, b=0.75, English
  stop words), what a "just use BM25" design would ship.
- ``fts5``: SQLite FTS5 ranked by ``bm25()``, the store a simpler design
  would use; the query is an OR of its words (FTS5's default AND finds
  nothing for most sentence-length queries). ``fts5-porter`` adds stemming.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class ChunkRow:
    path: str
    start_line: int
    end_line: int
    text: str


def load_chunks(index_dir: str, prefix: dict[str, str] | None = None) -> list[ChunkRow]:
    """Every chunk of a vq index, in a stable order (path, then line). ``prefix`` maps a
    vault id to its folder under a shared corpus root (several vaults, one judged set)."""
    from vq.core.store import open_index

    index = open_index(index_dir)
    cols = ["path", "start_line", "end_line", "text"]
    data = index.chunks.search().select([*cols, "vault"]).limit(None).to_arrow().to_pydict()
    if prefix:
        data["path"] = [f"{prefix[v]}/{p}" if prefix.get(v) else p
                        for v, p in zip(data["vault"], data["path"], strict=True)]
    rows = [ChunkRow(*vals) for vals in zip(*(data[c] for c in cols), strict=True)]
    return sorted(rows, key=lambda r: (r.path, r.start_line, r.end_line))


class Bm25Baseline:
    """bm25s over the chunk texts; ``search`` returns row indexes, best first."""

    def __init__(self, rows: list[ChunkRow], name: str = "bm25s") -> None:
        import bm25s

        self.name, self._bm25s, self._n = name, bm25s, len(rows)
        corpus = bm25s.tokenize([r.text for r in rows], stopwords="en", show_progress=False)
        self.model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self.model.index(corpus, show_progress=False)

    def search(self, query: str, k: int = 10) -> list[int]:
        tokens = self._bm25s.tokenize([query], stopwords="en", return_ids=False,
                                      show_progress=False)
        vocab = self.model.vocab_dict
        known = [[t for t in tokens[0] if t in vocab]]
        if not known[0] or not self._n:
            return []
        docs, scores = self.model.retrieve(known, k=min(k, self._n), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


class Fts5Baseline:
    """SQLite FTS5 with ``ORDER BY bm25()``; an in-memory database of the same chunks."""

    def __init__(self, rows: list[ChunkRow], tokenizer: str = "unicode61",
                 name: str = "fts5") -> None:
        self.name = name
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE c USING fts5(text, tokenize='{tokenizer}')")
        self.db.executemany("INSERT INTO c(rowid, text) VALUES (?, ?)",
                            ((i, r.text) for i, r in enumerate(rows)))
        self.db.commit()

    def search(self, query: str, k: int = 10) -> list[int]:
        words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        cur = self.db.execute("SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT ?",
                              (match, k))
        return [int(r[0]) for r in cur]


def all_baselines(rows: list[ChunkRow]) -> list[Any]:
    return [Bm25Baseline(rows), Fts5Baseline(rows),
            Fts5Baseline(rows, "porter unicode61", "fts5-porter")]


def hits_json(rows: list[ChunkRow], found: list[int]) -> list[dict]:
    """Row indexes as the scorer's hit objects."""
    return [{"path": rows[i].path, "start_line": rows[i].start_line,
             "end_line": rows[i].end_line} for i in found]
