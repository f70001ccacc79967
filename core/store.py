"""The one place that opens LanceDB: read side and write side share it.

Readers connect with ``read_consistency_interval=0`` so every query sees the
latest committed version (a plain connection stays on the version it opened).
Readers never take the build lock.

``location`` may be an object-store URI (``s3://bucket/prefix``). Credentials
and endpoint come from ``storage_options`` (the config key of that name) or
from the variables LanceDB reads itself (``AWS_ENDPOINT``, ``AWS_REGION``,
``AWS_ACCESS_KEY_ID``...); the options win where both are given. LanceDB's
commit protocol guards the tables there; the build lock stays on local disk.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from vq.core import lazy_rest, paths
from vq.core.errors import IndexMismatch, IndexMissing
from vq.core.schema import (
    BUILDS,
    BUILDS_SCHEMA,
    CHUNKS,
    FILES,
    FILES_SCHEMA,
    IndexMeta,
    chunks_schema,
)


@dataclass
class Index:
    """Open handles on the three tables plus the metadata they were built with."""

    location: str
    db: Any
    chunks: Any
    files: Any
    builds: Any
    meta: IndexMeta


def connect(location: str, storage_options: Mapping[str, str] | None = None) -> Any:
    """A LanceDB connection; ``storage_options`` ({} or None: the environment decides)."""
    lazy_rest.defer_rest_client()  # a no-op once lancedb (and so the package) is imported
    import lancedb  # lancedb pulls in pyarrow and friends: only when an index is opened

    return lancedb.connect(location, read_consistency_interval=timedelta(0),
                           storage_options=dict(storage_options) if storage_options else None)


def table_names(db: Any) -> list[str]:
    return list(db.list_tables().tables)


def exists(location: str, storage_options: Mapping[str, str] | None = None) -> bool:
    """True when ``location`` holds both vq tables (a build killed while creating them
    leaves only one, which the next build recreates)."""
    if not paths.is_uri(location) and not os.path.isdir(os.path.join(location, CHUNKS + ".lance")):
        return False
    return {CHUNKS, FILES} <= set(table_names(connect(location, storage_options)))


def open_index(location: str, storage_options: Mapping[str, str] | None = None) -> Index:
    """Open an existing index for reading (or incremental writing)."""
    if not paths.is_uri(location) and not os.path.isdir(location):
        raise IndexMissing(location)
    db = connect(location, storage_options)
    names = table_names(db)
    if CHUNKS not in names or FILES not in names:
        raise IndexMissing(location)
    chunks = db.open_table(CHUNKS)
    meta = IndexMeta.from_metadata(chunks.schema.metadata)
    if meta is None:
        raise IndexMismatch(location, "an unknown writer", "no vq metadata", "a vq index")
    builds = db.open_table(BUILDS) if BUILDS in names else None
    return Index(location, db, chunks, db.open_table(FILES), builds, meta)


def create_index(location: str, meta: IndexMeta,
                 storage_options: Mapping[str, str] | None = None) -> Index:
    """Create (or replace) the three tables for a fresh build with ``meta``.

    An object-store prefix needs no folder: it exists once the first table does.
    """
    if not paths.is_uri(location):
        os.makedirs(location, exist_ok=True)
    db = connect(location, storage_options)
    chunks = db.create_table(CHUNKS, schema=chunks_schema(meta), mode="overwrite")
    files = db.create_table(FILES, schema=FILES_SCHEMA, mode="overwrite")
    names = table_names(db)
    builds = (db.open_table(BUILDS) if BUILDS in names
              else db.create_table(BUILDS, schema=BUILDS_SCHEMA))
    return Index(location, db, chunks, files, builds, meta)


def sql_str(value: str) -> str:
    """A SQL string literal for LanceDB filters."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: list[str] | tuple[str, ...] | set[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in sorted(values))})"


IN_BATCH = 500


def path_filter(keys: Iterable[tuple[str, str]], batch: int = IN_BATCH) -> list[str]:
    """SQL predicates selecting (vault, path) pairs, one bounded IN list each."""
    by_vault: dict[str, list[str]] = defaultdict(list)
    for vault, path in keys:
        by_vault[vault].append(path)
    out = []
    for vault, names in sorted(by_vault.items()):
        for i in range(0, len(names), batch):
            out.append(f"vault = {sql_str(vault)} AND {sql_in('path', names[i:i + batch])}")
    return out


def open_for(settings: Any) -> Index:
    """Open the index a Settings object points at, with its storage options."""
    return open_index(settings.index_dir, settings.storage_options or None)


def exists_for(settings: Any) -> bool:
    return exists(settings.index_dir, settings.storage_options or None)
