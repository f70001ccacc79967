"""The search indexes' names and options, and how long old table versions stay.

The build creates and checks the indexes (``vq.indexer.maintain``); `vq doctor`
reports on them. Both read the names and the FTS options here, so a doctor
never imports the write side to learn what the write side would do.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from vq.core.settings import Settings

FTS_COLUMN = "text"
# LanceDB's defaults (English stemming, ASCII folding, lower case) but stop words kept:
# BM25's IDF already weighs common words down, and in technical notes words on the list
# ("no", "not", "off", "up", "all", "can") carry meaning. See
# docs/decisions.md#fts-stop-words.
FTS_OPTIONS: dict[str, Any] = {"remove_stop_words": False}
FTS_INDEX, VECTOR_INDEX = f"{FTS_COLUMN}_idx", "vector_idx"
SECTION_VECTOR_INDEX = "section_vector_idx"  # the same ANN index over each section's vector
# The heading path (title > H1 > H2, or a code chunk's file > symbol) as its own BM25 field,
# which search adds to the body's score with `search.heading_boost` (BM25F in spirit).
HEADING_COLUMN = "breadcrumb"
HEADING_INDEX = f"{HEADING_COLUMN}_idx"


def vector_columns(index: Any) -> list[tuple[str, str]]:
    """(column, ANN index name) of each vector column the index holds: the pieces'
    vectors, and from chunker 4 on each piece's section vector. The build indexes,
    the service loads and `vq doctor` checks exactly these."""
    from vq.core.schema import SECTION_VECTOR
    from vq.core.store import has_sections

    return [("vector", VECTOR_INDEX)] + (
        [(SECTION_VECTOR, SECTION_VECTOR_INDEX)] if has_sections(index) else [])


def indices(table: Any) -> dict[str, Any]:
    """The table's indexes by name, with what LanceDB records about each (one read)."""
    return {getattr(i, "name", ""): i for i in table.list_indices()}


def fts_options_differ(info: Any) -> bool:
    """One ``list_indices()`` entry against ``FTS_OPTIONS``; options it does not record
    (an older LanceDB) count as equal, so nothing is rebuilt on a guess."""
    details = getattr(info, "index_details", None) or {}
    return any(k in details and details[k] != v for k, v in FTS_OPTIONS.items())


def grace(settings: Settings) -> timedelta:
    """How long old versions stay for readers that may still hold them."""
    return timedelta(minutes=settings.maintenance.cleanup_grace_minutes)
