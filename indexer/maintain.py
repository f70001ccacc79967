"""Keep the tables fast after writes: compact, fold new rows into indexes, drop old versions.

Rows added after the FTS index was built are still searched (unindexed, more
slowly); ``optimize()`` folds them in. Old versions are removed only past a
grace period, because a reader may still be reading one.
"""

from __future__ import annotations

from datetime import timedelta

from core.settings import Settings
from core.store import Index

FTS_COLUMN = "text"


def index_names(table) -> set[str]:
    return {getattr(i, "name", "") for i in table.list_indices()}


def ensure_indexes(index: Index, settings: Settings) -> list[str]:
    """Create the FTS index (never on an empty table) and, past a size, the vector index."""
    from lancedb.index import FTS

    created = []
    rows = index.chunks.count_rows()
    names = index_names(index.chunks)
    if rows and f"{FTS_COLUMN}_idx" not in names:
        index.chunks.create_index(FTS_COLUMN, config=FTS(), replace=True)
        created.append("fts")
    min_rows = settings.maintenance.vector_index_min_rows
    if min_rows and rows >= min_rows and "vector_idx" not in names:
        index.chunks.create_index(metric="cosine", vector_column_name="vector",
                                  index_type="IVF_HNSW_SQ", replace=True)
        created.append("vector")
    return created


def optimize(index: Index, settings: Settings) -> None:
    grace = timedelta(minutes=settings.maintenance.cleanup_grace_minutes)
    for table in (index.chunks, index.files):
        table.optimize(cleanup_older_than=grace)


def unindexed_rows(table) -> int:
    try:
        return int(table.index_stats(f"{FTS_COLUMN}_idx").num_unindexed_rows)
    except Exception:  # noqa: BLE001 - no index yet, or stats unsupported: nothing to fold
        return 0


def run(index: Index, settings: Settings, wrote: bool) -> None:
    """Indexes are checked every build, so one killed mid-optimize is finished next time."""
    ensure_indexes(index, settings)
    if wrote or unindexed_rows(index.chunks):
        optimize(index, settings)
