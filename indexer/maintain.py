"""Keep the tables fast after writes: compact, fold new rows into indexes, drop old versions.

Rows added after the FTS index was built are still searched (unindexed, more
slowly); ``optimize()`` folds them in. Old versions are removed only past a
grace period, because a reader may still be reading one.
"""

from __future__ import annotations

import contextlib
from typing import Any

from vq.core.search_indexes import (
    FTS_COLUMN,
    FTS_INDEX,
    FTS_OPTIONS,
    HEADING_COLUMN,
    HEADING_INDEX,
    fts_options_differ,
    grace,
    indices,
    vector_columns,
)
from vq.core.settings import Settings
from vq.core.store import Index


def ensure_indexes(index: Index, settings: Settings) -> list[str]:
    """Create the FTS index (never on an empty table), rebuild it when an older vq made it
    with other tokenizer options, and past a size create the vector index."""
    from lancedb.index import FTS, HnswSq

    created = []
    rows = index.chunks.count_rows()
    found = indices(index.chunks)
    wanted = [(FTS_COLUMN, FTS_INDEX)]
    if settings.search.heading_boost > 0:  # only searched then: no cost by default
        wanted.append((HEADING_COLUMN, HEADING_INDEX))
    for column, name in wanted:
        fts = found.get(name)
        if rows and (fts is None or fts_options_differ(fts)):
            index.chunks.create_index(column, config=FTS(**FTS_OPTIONS), replace=True)
            created.append("fts" if column == FTS_COLUMN else "fts:" + column)
    min_rows = settings.maintenance.vector_index_min_rows
    for column, name in vector_columns(index):
        if min_rows and rows >= min_rows and name not in found:
            index.chunks.create_index(column, config=HnswSq(distance_type="cosine"),
                                      replace=True, name=name)  # IVF_HNSW_SQ
            created.append(column)
    return created


def ensure_fts(index: Index, settings: Settings) -> None:
    """The full-text index(es) as soon as the first text batch is committed, so a
    search during the build finds text lexically (later rows are searched unindexed
    until ``optimize`` folds them in); vector indexes wait for the end of the build."""
    from lancedb.index import FTS

    found = indices(index.chunks)
    columns = [(FTS_COLUMN, FTS_INDEX)]
    if settings.search.heading_boost > 0:
        columns.append((HEADING_COLUMN, HEADING_INDEX))
    for column, name in columns:
        if name not in found:
            index.chunks.create_index(column, config=FTS(**FTS_OPTIONS), replace=True)


def fts_outdated(table: Any) -> bool:
    """True when the full-text index was built with other tokenizer options than
    ``FTS_OPTIONS`` (an index from an older vq): only it is rebuilt, no vector is."""
    fts = indices(table).get(FTS_INDEX)
    return fts is not None and fts_options_differ(fts)


def optimize(index: Index, settings: Settings) -> None:
    for table in (index.chunks, index.files):
        table.optimize(cleanup_older_than=grace(settings))


def unindexed_rows(table: Any) -> int:
    total = 0
    for name in (FTS_INDEX, HEADING_INDEX):
        # no index yet, or stats unsupported: nothing to fold
        with contextlib.suppress(Exception):
            total += int(table.index_stats(name).num_unindexed_rows)
    return total


def run(index: Index, settings: Settings, wrote: bool) -> None:
    """Indexes are checked every build, so one killed mid-optimize is finished next time."""
    ensure_indexes(index, settings)
    if wrote or unindexed_rows(index.chunks):
        optimize(index, settings)
