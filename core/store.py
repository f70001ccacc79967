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
import shutil
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from vq.core import lazy_rest, paths, swap
from vq.core.errors import IndexCorrupt, IndexMismatch, IndexMissing
from vq.core.lock import lock_state
from vq.core.schema import (
    BUILDS,
    BUILDS_SCHEMA,
    CHUNKS,
    FILES,
    FILES_SCHEMA,
    SECTIONS_SINCE,
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
    staged_for: str | None = None  # a rebuild's tables, to be swapped in at this location


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
    if not paths.is_uri(location):
        if os.path.isdir(location):
            swap.recover(location, TABLE_DIRS)  # a rebuild killed between two renames
        if not os.path.isdir(os.path.join(location, CHUNKS + ".lance")):
            return False
    return {CHUNKS, FILES} <= set(table_names(connect(location, storage_options)))


def open_index(location: str, storage_options: Mapping[str, str] | None = None) -> Index:
    """Open an existing index for reading (or incremental writing).

    A table that LanceDB cannot open (a truncated manifest) is ``IndexCorrupt``,
    whose fix is ``vq build --rebuild``; so is one whose data files are gone, but
    only a read finds that: see ``probe``.
    """
    if not paths.is_uri(location):
        if not os.path.isdir(location):
            raise IndexMissing(location)
        swap.recover(location, TABLE_DIRS)  # a rebuild's swap in progress, or killed midway
    db = connect(location, storage_options)
    names = table_names(db)
    if CHUNKS not in names or FILES not in names:
        raise IndexMissing(location)
    chunks = _open_table(db, location, CHUNKS)
    try:
        meta = IndexMeta.from_metadata(chunks.schema.metadata)
    except Exception as exc:  # noqa: BLE001 - mapped below, or re-raised as it came
        raise _corrupt(exc, location, CHUNKS) from exc
    if meta is None:
        raise IndexMismatch(location, "an unknown writer", "no vq metadata", "a vq index")
    builds = _open_table(db, location, BUILDS) if BUILDS in names else None
    return Index(location, db, chunks, _open_table(db, location, FILES), builds, meta)


def _open_table(db: Any, location: str, name: str) -> Any:
    """A listed table LanceDB then says "was not found" has lost its ``_versions``
    folder: damaged, like a truncated manifest, not a traceback."""
    try:
        return db.open_table(name)
    except ValueError as exc:
        if "was not found" in str(exc):
            raise IndexCorrupt(location, "its version history (_versions) is missing",
                               name) from exc
        raise _corrupt(exc, location, name) from exc
    except Exception as exc:  # noqa: BLE001 - mapped below, or re-raised as it came
        raise _corrupt(exc, location, name) from exc


def _corrupt(exc: Exception, location: str, table: str) -> Exception:
    from vq.core.error_mapping import first_line, is_storage_error

    return IndexCorrupt(location, first_line(exc), table) if is_storage_error(exc) else exc


PROBE_COLUMNS = {CHUNKS: "start_line", FILES: "size", BUILDS: "started_at"}


def probe(index: Index) -> dict[str, int]:
    """Read one small column of every row of every table: each data file is opened,
    so a deleted or truncated one is found (``IndexCorrupt``). Returns rows per table."""
    out = {}
    for name, table in ((CHUNKS, index.chunks), (FILES, index.files), (BUILDS, index.builds)):
        if table is None:
            continue
        try:
            out[name] = table.search().select([PROBE_COLUMNS[name]]).limit(None).to_arrow(
                ).num_rows
        except Exception as exc:  # noqa: BLE001 - mapped below, or re-raised as it came
            raise _corrupt(exc, index.location, name) from exc
    return out


STAGE_DIR = swap.STAGE_DIR
RETIRED_DIR = swap.RETIRED_DIR
TABLE_DIRS = tuple(name + ".lance" for name in (CHUNKS, FILES, BUILDS))


def _has_tables(location: str) -> bool:
    return any(os.path.exists(os.path.join(location, d)) for d in TABLE_DIRS)


def create_index(location: str, meta: IndexMeta,
                 storage_options: Mapping[str, str] | None = None) -> Index:
    """Create the tables for a fresh build with ``meta``.

    A local folder that already holds readable tables keeps them: the new ones are
    built in ``STAGE_DIR`` inside it and ``swap_in`` replaces the old ones only once
    the build is done, so a failed or stopped rebuild leaves the old index searchable
    and its stage for the next build to continue (``open_stage``); one not to be
    continued is replaced here. Tables no search can read (damaged, or half
    created) are replaced in place instead: with nothing to keep searchable, the
    rebuild is text first like a first build, and a stopped one's successor continues
    it (docs/decisions.md#rebuild-text-first). An object-store prefix is overwritten
    in place (it has no rename).
    """
    if not paths.is_uri(location) and os.path.isdir(location):
        swap.recover(location, TABLE_DIRS)  # a finished rebuild's tables, not a new stage
    if paths.is_uri(location) or not _has_tables(location):
        return _create(location, meta, storage_options)
    if not _readable(location):
        return _replace_unreadable(location, meta, storage_options)
    stage = os.path.join(location, STAGE_DIR)
    shutil.rmtree(stage, ignore_errors=True)  # a stage the caller chose not to continue
    index = _create(stage, meta, storage_options)
    index.staged_for = location
    _carry_builds(location, index)
    return index


def _readable(location: str) -> bool:
    """Whether a search can read the tables at ``location`` (every data file opens)."""
    try:
        probe(open_index(location))
    except (IndexCorrupt, IndexMissing):
        return False
    return True


def _replace_unreadable(location: str, meta: IndexMeta,
                        storage_options: Mapping[str, str] | None) -> Index:
    """New tables in place of unreadable ones, keeping the build history if it reads.
    A kill here leaves no tables or new ones: either is what a first build repairs."""
    history = _old_builds(location)
    for name in TABLE_DIRS:
        shutil.rmtree(os.path.join(location, name), ignore_errors=True)
    index = _create(location, meta, storage_options)
    if history is not None and history.num_rows:
        index.builds.add(history)
    return index


def _create(location: str, meta: IndexMeta, storage_options: Mapping[str, str] | None
            ) -> Index:
    if not paths.is_uri(location):
        paths.make_private_dir(location)
    db = connect(location, storage_options)
    chunks = db.create_table(CHUNKS, schema=chunks_schema(meta), mode="overwrite")
    files = db.create_table(FILES, schema=FILES_SCHEMA, mode="overwrite")
    names = table_names(db)
    builds = (db.open_table(BUILDS) if BUILDS in names
              else db.create_table(BUILDS, schema=BUILDS_SCHEMA))
    return Index(location, db, chunks, files, builds, meta)


def _carry_builds(location: str, index: Index) -> None:
    """The build history survives a rebuild when the old table can still be read."""
    old = _old_builds(location)
    if old is not None and old.num_rows:
        index.builds.add(old)


def _old_builds(location: str) -> Any:
    """The ``builds`` table at ``location`` as Arrow, or None when it cannot be read."""
    try:
        return connect(location).open_table(BUILDS).to_arrow()
    except Exception:  # noqa: BLE001 - damaged or absent: the new history starts empty
        return None


def swap_in(index: Index) -> None:
    """Move a staged index's tables over the old ones, journaled so that a kill between
    two renames is finished by whoever opens the index next (``vq.core.swap``).
    Readers see the new tables at their next query."""
    if index.staged_for is not None:
        swap.swap_in(index.staged_for, TABLE_DIRS)


def has_stage(location: str) -> bool:
    """Whether a stopped or killed rebuild left staged tables at ``location`` (a finished
    one's swap, if its swapper died, is completed first: those tables are no stage)."""
    if paths.is_uri(location) or not os.path.isdir(location):
        return False
    swap.recover(location, TABLE_DIRS)
    return os.path.isdir(os.path.join(location, STAGE_DIR))


def staged_files(location: str) -> int | None:
    """Files a stopped or killed rebuild has staged at ``location`` (read only, for
    `vq status`; -1 when the stage does not read), or None when there is no stage."""
    stage = os.path.join(location, STAGE_DIR)
    if paths.is_uri(location) or not os.path.isdir(stage):
        return None
    try:
        return int(connect(stage).open_table(FILES).count_rows())
    except Exception:  # noqa: BLE001 - a stage that does not read: the next build drops it
        return -1


def open_stage(location: str, meta: IndexMeta,
               storage_options: Mapping[str, str] | None = None) -> Index | None:
    """The staged tables a stopped or killed rebuild left, to be continued and then
    swapped in over ``location``'s: only when they open, every data file reads and they
    were made for ``meta`` (schema, model, dimension, vector type, window, chunker).
    Any other stage is removed (None): the rebuild starts over. Only a build calls it,
    holding the build lock, so no other rebuild is writing the stage."""
    if not has_stage(location):
        return None
    stage = os.path.join(location, STAGE_DIR)
    try:
        index = open_index(stage, storage_options)
        probe(index)
        usable = index.meta == meta and index.builds is not None
    except Exception:  # noqa: BLE001 - a stage that does not read is only lost work
        usable = False
    if not usable:
        shutil.rmtree(stage, ignore_errors=True)
        return None
    index.staged_for = location
    if not index.builds.count_rows():  # killed before its history was carried over
        _carry_builds(location, index)
    return index


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


def has_sections(index: Index) -> bool:
    """Whether the index holds section vectors (``SECTION_VECTOR``): chunker 4 on.
    Read from the metadata already in hand, so a query asks LanceDB for nothing."""
    return index.meta.chunker_version >= SECTIONS_SINCE


def open_for(settings: Any) -> Index:
    """Open the index a Settings object points at, with its storage options. Without a
    config file the missing index says how to create one, not only "run `vq build`"."""
    try:
        return open_index(settings.index_dir, settings.storage_options or None)
    except IndexMissing:
        if settings.config_file is None:
            raise IndexMissing(settings.index_dir, configured=False) from None
        if building := lock_state(settings.build_lock):
            raise IndexMissing(settings.index_dir, building=building) from None
        raise


def exists_for(settings: Any) -> bool:
    return exists(settings.index_dir, settings.storage_options or None)
