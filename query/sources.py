"""Where a search reads its candidates: three questions, asked of LanceDB or of a snapshot.

``vq.query.search.search`` is given a ``Sources`` and never builds LanceDB queries
itself, so the resident service can answer the same three questions from memory
(``vq.query.service.snapshot.SnapshotSources``) without imitating LanceDB's query
builder. Each answer is an Arrow table of the result ``COLUMNS`` plus the signal's
raw score (``_score`` for BM25, ``_distance`` for cosine), best first as the source
ranks it; the search re-sorts with its own tie order.

What a caller can rely on: a filter (``where``) is applied before ranking, never
after the top k; ``refine`` is the ANN re-ranking factor (ignored by an exact scan).
"""

from __future__ import annotations

from typing import Any, Protocol

from vq.core import store
from vq.core.search_indexes import HEADING_COLUMN

COLUMNS = ["id", "vault", "path", "kind", "language", "title", "breadcrumb", "symbol",
           "start_line", "end_line", "page", "text", "body_start", "doc_date", "mtime"]
ANN_NPROBES = 20  # IVF partitions probed when the table has a vector index


class Sources(Protocol):
    """The read side's view of one index version."""

    index: store.Index  # metadata (model, chunker version, location) and the files table

    def lexical(self, text: str, where: str | None, k: int, heading_boost: float) -> Any:
        """The ``k`` best chunks by BM25 (``_score``)."""

    def nearest(self, vector: Any, column: str, where: str | None, k: int, refine: int
                ) -> Any:
        """The ``k`` nearest chunks by cosine on a vector ``column`` (``_distance``)."""

    def rows(self, where: str, k: int) -> Any:
        """Up to ``k`` chunks matching a filter, unranked (symbol definitions)."""

    def without_vectors(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` whose vectors a build has not written yet."""


class LanceSources:
    """Answers from the LanceDB tables on disk (the in-process search)."""

    def __init__(self, index: store.Index) -> None:
        self.index = index

    def lexical(self, text: str, where: str | None, k: int, heading_boost: float) -> Any:
        query = self.index.chunks.search(fts_query(self.index, text, heading_boost),
                                         query_type="fts")
        if where:
            query = query.where(where, prefilter=True)
        return query.select([*COLUMNS, "_score"]).limit(k).to_arrow()

    def nearest(self, vector: Any, column: str, where: str | None, k: int, refine: int
                ) -> Any:
        return vector_query(self.index.chunks, vector, column, where, refine) \
            .select([*COLUMNS, "_distance"]).limit(k).to_arrow()

    def rows(self, where: str, k: int) -> Any:
        return self.index.chunks.search().where(where).select(COLUMNS).limit(k).to_arrow()

    def without_vectors(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        found = (self.index.chunks.search().where(f"vector IS NULL AND {store.sql_in('id', ids)}")
                 .select(["id"]).limit(len(ids)).to_arrow())
        return set(found["id"].to_pylist())


def vector_query(table: Any, vector: Any, column: str, where: str | None,
                 refine: int | None) -> Any:
    """LanceDB's cosine search on ``column``, prefiltered; the caller selects and limits.
    ``refine`` None: no re-ranking from disk (the service re-ranks from memory)."""
    query = (table.search(vector, vector_column_name=column)
             .distance_type("cosine").nprobes(ANN_NPROBES))
    if refine is not None:
        query = query.refine_factor(refine)
    return query.where(where, prefilter=True) if where else query


def fts_query(index: store.Index, text: str, heading_boost: float) -> Any:
    """BM25 over the body text, plus (BM25F in spirit) the breadcrumb field weighted by
    ``heading_boost`` when the index has one: a term in a heading counts more. Built from
    query objects, so no user text is ever parsed as query syntax."""
    from lancedb.query import BooleanQuery, MatchQuery, Occur

    if heading_boost > 0 and HEADING_COLUMN in fts_columns(index):
        # SHOULD clauses add their scores; MultiMatchQuery would take the larger one only
        return BooleanQuery([(Occur.SHOULD, MatchQuery(text, "text")),
                             (Occur.SHOULD, MatchQuery(text, HEADING_COLUMN,
                                                       boost=heading_boost))])
    return MatchQuery(text, "text")


def fts_columns(index: store.Index) -> set[str]:
    """Columns with a full-text index; read once per opened index (older ones lack some)."""
    cached = getattr(index, "_vq_fts_columns", None)
    if cached is None:
        cached = {col for i in index.chunks.list_indices()
                  if str(getattr(i, "index_type", "")).upper() == "FTS"
                  for col in getattr(i, "columns", [])}
        index._vq_fts_columns = cached  # type: ignore[attr-defined]
    return cached
