"""Keep the tables fast after writes: compact, fold new rows into indexes, drop old versions.

Rows added after the FTS index was built are still searched (unindexed, more
slowly); ``optimize()`` folds them in. Old versions are removed only past a
grace period, because a reader may still be reading one.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

import numpy as np

from vq.core.settings import Settings
from vq.core.store import Index

FTS_COLUMN = "text"
# LanceDB's defaults (English stemming, ASCII folding, lower case) but stop words kept:
# BM25's IDF already weighs common words down, and in technical notes words on the list
# ("no", "not", "off", "up", "all", "can") carry meaning. Measured on the Docker eval,
# all four stem/stop-word variants reported: docs/performance.md, bench/fts_variants.py.
FTS_OPTIONS = {"remove_stop_words": False}
BUILD_HISTORY = 2000    # build records kept: a week of five-minute builds
BUILDS_COMPACT_AT = 64  # fragments in the builds log (one per build) that trigger a trim


# The heading path (title > H1 > H2, or a code chunk's file > symbol) as its own BM25 field,
# which search adds to the body's score with `search.heading_boost` (BM25F in spirit).
HEADING_COLUMN = "breadcrumb"
FTS_INDEX, VECTOR_INDEX = f"{FTS_COLUMN}_idx", "vector_idx"
HEADING_INDEX = f"{HEADING_COLUMN}_idx"


def indices(table) -> dict[str, Any]:
    """The table's indexes by name, with what LanceDB records about each (one read)."""
    return {getattr(i, "name", ""): i for i in table.list_indices()}


def ensure_indexes(index: Index, settings: Settings) -> list[str]:
    """Create the FTS index (never on an empty table), rebuild it when an older vq made it
    with other tokenizer options, and past a size create the vector index."""
    from lancedb.index import FTS

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
    if min_rows and rows >= min_rows and VECTOR_INDEX not in found:
        index.chunks.create_index(metric="cosine", vector_column_name="vector",
                                  index_type="IVF_HNSW_SQ", replace=True)
        created.append("vector")
    return created


def fts_outdated(table) -> bool:
    """True when the full-text index was built with other tokenizer options than
    ``FTS_OPTIONS`` (an index from an older vq): only it is rebuilt, no vector is."""
    fts = indices(table).get(FTS_INDEX)
    return fts is not None and fts_options_differ(fts)


def fts_options_differ(info: Any) -> bool:
    """One ``list_indices()`` entry against ``FTS_OPTIONS``; options it does not record
    (an older LanceDB) count as equal, so nothing is rebuilt on a guess."""
    details = getattr(info, "index_details", None) or {}
    return any(k in details and details[k] != v for k, v in FTS_OPTIONS.items())


def grace(settings: Settings) -> timedelta:
    """How long old versions stay for readers that may still hold them."""
    return timedelta(minutes=settings.maintenance.cleanup_grace_minutes)


def optimize(index: Index, settings: Settings) -> None:
    for table in (index.chunks, index.files):
        table.optimize(cleanup_older_than=grace(settings))


def unindexed_rows(table) -> int:
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


def trim_builds(index: Index, settings: Settings) -> bool:
    """Keep the builds log small: every build appends one row, and with it one fragment
    and one version, every five minutes for months. Past ``BUILDS_COMPACT_AT``
    fragments, drop all but the newest ``BUILD_HISTORY`` rows and compact (old versions
    go after the same grace period as the other tables). True when it trimmed."""
    table = index.builds
    if table is None or table.stats()["fragment_stats"]["num_fragments"] < BUILDS_COMPACT_AT:
        return False
    started = table.search().select(["started_at"]).limit(None).to_arrow()["started_at"]
    if len(started) > BUILD_HISTORY:
        cutoff = float(np.sort(started.to_numpy())[-BUILD_HISTORY])
        table.delete(f"started_at < {cutoff!r}")
    table.optimize(cleanup_older_than=grace(settings))
    return True
