"""Table writes for one build batch, in the order that makes a crash harmless.

Chunks first (delete the file's old rows, add the new), then the manifest rows
that vouch for them. A build killed between the two leaves a manifest that
still describes the old file, so the next build re-chunks it and converges.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from vq.core.schema import FILES_SCHEMA, IndexMeta, chunks_schema
from vq.core.store import IN_BATCH, Index, has_sections, path_filter, sql_in


def stored_vectors(index: Index, hashes: set[str], hash_column: str = "text_hash",
                   vector_column: str = "vector") -> dict[str, np.ndarray]:
    """Vectors already in the table for these hashes (a piece's text, or with
    ``section_hash``/``section_vector`` a section's): edits re-encode only what changed."""
    found: dict[str, np.ndarray] = {}
    wanted = sorted(hashes)
    if vector_column != "vector" and not has_sections(index):
        return found  # an index from before section vectors (it is being rebuilt)
    for i in range(0, len(wanted), IN_BATCH):
        part = wanted[i:i + IN_BATCH]
        where = f"{sql_in(hash_column, part)} AND {vector_column} IS NOT NULL"
        table = (index.chunks.search().where(where)
                 .select([hash_column, vector_column]).limit(None).to_arrow())
        if not table.num_rows:
            continue
        vectors = np.asarray(table[vector_column].combine_chunks().flatten().to_numpy(
            zero_copy_only=False)).reshape(table.num_rows, -1)
        for h, vec in zip(table[hash_column].to_pylist(), vectors, strict=True):
            found.setdefault(h, vec.astype(np.float32))
    return found


def delete_chunks(index: Index, keys: Iterable[tuple[str, str]]) -> int:
    deleted = 0
    for predicate in path_filter(keys):
        deleted += index.chunks.count_rows(predicate)
        index.chunks.delete(predicate)
    return deleted


def chunk_table(meta: IndexMeta, rows: list[dict], vectors: np.ndarray,
                section_vectors: np.ndarray | None = None, known: np.ndarray | None = None
                ) -> pa.Table:
    """Chunk rows plus their vectors (and their sections' vectors; None: each piece is
    its section) as an Arrow table in the index's schema and dtype. With ``known``,
    rows where it is False get both vectors null: text now, vectors later
    (``vq.indexer.embed``)."""
    schema = chunks_schema(meta)
    vector_columns = ("vector", "section_vector")
    columns = {f.name: [r[f.name] for r in rows] for f in schema if f.name not in vector_columns}
    sections = vectors if section_vectors is None else section_vectors
    for name, matrix in zip(vector_columns, (vectors, sections), strict=True):
        columns[name] = vector_array(matrix, meta, known)
    return pa.Table.from_pydict(columns, schema=schema)


def vector_array(matrix: np.ndarray, meta: IndexMeta, known: np.ndarray | None = None
                 ) -> pa.Array:
    """Rows of ``matrix`` as a vector column in the index's dtype; null where not ``known``."""
    dtype = np.float16 if meta.vector_dtype == "float16" else np.float32
    flat = pa.array(matrix.astype(dtype).reshape(-1))
    if known is None or known.all():
        return pa.FixedSizeListArray.from_arrays(flat, meta.dim)
    return pa.FixedSizeListArray.from_arrays(flat, meta.dim, mask=pa.array(~known))


def fill_vectors(index: Index, ids: list[str], vectors: np.ndarray, sections: np.ndarray
                 ) -> None:
    """Give rows committed without vectors their vectors, by id, in one commit: a
    reader sees each row either without vectors or with both. An id given twice (two
    builders that ignored the lock both wrote a file's rows; the next build repairs the
    duplicates) is written once: LanceDB refuses a merge whose source repeats a key."""
    first = {i: n for n, i in reversed(list(enumerate(ids)))}
    if len(first) < len(ids):
        keep = sorted(first.values())
        ids, vectors, sections = [ids[n] for n in keep], vectors[keep], sections[keep]
    table = pa.table({"id": pa.array(ids, pa.string()),
                      "vector": vector_array(vectors, index.meta),
                      "section_vector": vector_array(sections, index.meta)})
    index.chunks.merge_insert("id").when_matched_update_all().execute(table)


def mark_pending(index: Index, keys: list[tuple[str, str]]) -> None:
    """Blank the hash of files about to be rewritten, before their chunks change.

    If the build dies before the final manifest rows land, the blank hash
    matches no content, so the next build re-chunks these files even if they
    were meanwhile reverted to the content the old manifest row described.
    """
    for predicate in path_filter(keys):
        index.files.update(where=predicate, values={"hash": ""})


def upsert_manifest(index: Index, rows: list[dict]) -> None:
    if not rows:
        return
    table = pa.Table.from_pylist(rows, schema=FILES_SCHEMA)
    (index.files.merge_insert(["vault", "path"]).when_matched_update_all()
     .when_not_matched_insert_all().execute(table))


def delete_manifest(index: Index, keys: Iterable[tuple[str, str]]) -> None:
    for predicate in path_filter(keys):
        index.files.delete(predicate)


def delete_vaults(index: Index, vault_ids: Iterable[str]) -> int:
    """Prune vaults removed from config: their chunks first, then their manifest."""
    ids = sorted(vault_ids)
    if not ids:
        return 0
    predicate = sql_in("vault", ids)
    deleted = index.chunks.count_rows(predicate)
    index.chunks.delete(predicate)
    index.files.delete(predicate)
    return deleted


def write_fragments(uri: str, storage_version: str, table: pa.Table,
                    storage_options: dict[str, str] | None) -> list:
    """Write rows as Lance data files beside the ``chunks`` table, in no version yet.

    Until ``append_fragments`` commits them readers never see them; a worker
    killed before that leaves only unreferenced files, which cleanup removes.
    """
    from lance.fragment import write_fragments as lance_write

    return lance_write(table, uri, schema=table.schema, data_storage_version=storage_version,
                       storage_options=storage_options or None)


def append_fragments(index: Index, fragments: list) -> None:
    """One commit for a whole batch of fragments, however many workers wrote them."""
    import lance

    dataset = index.chunks.to_lance()
    lance.LanceDataset.commit(dataset, lance.LanceOperation.Append(fragments),
                              read_version=dataset.version)


def fragment_target(index: Index) -> tuple[str, str]:
    """(URI, data storage version) of the ``chunks`` dataset, for ``write_fragments``."""
    dataset = index.chunks.to_lance()
    return dataset.uri, dataset.data_storage_version
