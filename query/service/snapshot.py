"""The service's snapshot of the chunks table: rows and vectors in memory, one version.

A search through LanceDB pays twice for every candidate: once to find it (BM25
or the vector scan) and again to read its columns (a ``take`` costs ~10 ms for
100 rows at 100k chunks, most of it per column, not per row). The service
therefore holds one table version as a ``Snapshot``:

* **rows**: every chunk's result columns (``COLUMNS``, no vectors) as one Arrow
  table, when they fit ``MAX_BYTES``. FTS and ANN queries then ask LanceDB for
  ids and scores only and take the rest from memory.
* **vectors**: below the ANN threshold (``maintenance.vector_index_min_rows``,
  and only while the table has no vector index), every vector as one float32
  matrix, each row unit length. A dense query is one matrix-vector product: at
  100k chunks ~9 ms, where LanceDB's flat scan reads and converts the whole
  vector column on every query. From ``int8_screen.MIN_ROWS`` rows an int8 copy
  screens them first (``vq.query.service.int8_screen``, ~2-3 ms at 100k) and only the rows
  that can reach the top k are scored in float32: the same exact result.

Every query of a snapshot runs on a handle pinned to its version, so an id
found by BM25 always has its row; the service loads a new snapshot when a
build commits another version (``vq.query.service.handler``).

``SnapshotSources`` answers the three questions a search asks
(``vq.query.sources.Sources``) from it. Distances are LanceDB's to float noise
(~1e-7): 1 - a·b / (|a| |b|) over the stored vectors, the query first cast to
their dtype (float16) as LanceDB does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from vq.query.sources import COLUMNS, LanceSources, fts_query, vector_query

CHUNK_ROWS = 65_536  # rows converted per step while loading: bounded extra memory
MAX_BYTES = 4 << 30  # vectors and rows together never above this (1M x 384 float32: 1.5 GiB)
SCORES = ("_score", "_distance")


@dataclasses.dataclass
class Snapshot:
    version: Any
    pinned: Any                 # the chunks table checked out at ``version``
    ids: np.ndarray             # chunk id per row (object array of str)
    row_ids: np.ndarray         # LanceDB _rowid per row, valid in ``pinned``
    position: dict[str, int]    # chunk id -> row
    rows: Any = None            # pyarrow.Table of the result columns, or None (too big)
    # vector column -> (float32 (rows, dim) unit rows, int8_screen.Screen of them or
    # None: flat scans only); a column not held is answered by LanceDB
    matrices: dict[str, tuple[np.ndarray, Any]] = dataclasses.field(default_factory=dict)
    stored: Any = np.float32    # the vector column's dtype: LanceDB casts the query to it
    flat: bool = True           # the matrix answers the scan; False: it refines ANN hits
    rowid_order: np.ndarray = dataclasses.field(  # argsort of ``row_ids``
        default_factory=lambda: np.empty(0, dtype=np.int64))

    def matrix(self, column: str) -> tuple[np.ndarray | None, Any]:
        """(unit rows, int8 screen) of a vector column; (None, None): not held."""
        return self.matrices.get(column, (None, None))

    @property
    def vectors(self) -> np.ndarray | None:
        return self.matrix("vector")[0]

    @property
    def screen(self) -> Any:
        return self.matrix("vector")[1]


def eligible(index: Any, settings: Any) -> bool:
    """Vectors in memory are what LanceDB would do, a flat scan: no vector index, not
    above the threshold (``vector_index_min_rows: 0`` never builds one), and they fit."""
    threshold = settings.maintenance.vector_index_min_rows
    if (threshold and index.chunks.count_rows() > threshold) or not fits(index):
        return False
    return not any("vector" in (getattr(i, "columns", None) or [])
                   for i in index.chunks.list_indices())


def fits(index: Any) -> bool:
    """The vector matrices (pieces', and sections' where the index has them) fit
    ``MAX_BYTES``."""
    return index.chunks.count_rows() * index.meta.dim * 4 * len(_vector_columns(index)) \
        <= MAX_BYTES


def _vector_columns(index: Any) -> list[str]:
    from vq.core.search_indexes import vector_columns

    return [column for column, _ in vector_columns(index)]


def load(index: Any, columns: list[str], vectors: bool = True, flat: bool = True
         ) -> Snapshot:
    """The table's current version: ids, the result ``columns`` while they fit beside the
    vectors, and (``vectors``) the vector matrix, which answers the scan itself (``flat``)
    or re-ranks the ANN index's candidates exactly from memory."""
    version = index.chunks.version
    pinned = index.db.open_table(index.chunks.name)
    pinned.checkout(version)
    matrices = _vector_columns(index) if vectors else []
    wanted = list(dict.fromkeys(["id", *columns, *matrices]))
    data = pinned.search().select(wanted).with_row_id(True).limit(None).to_arrow()
    ids = np.asarray(data["id"].to_pylist(), dtype=object)
    snap = Snapshot(version, pinned, ids, data["_rowid"].to_numpy(),
                    {i: n for n, i in enumerate(ids)},
                    stored=np.float16 if index.meta.vector_dtype == "float16" else np.float32,
                    flat=flat)
    snap.rowid_order = np.argsort(snap.row_ids, kind="stable")
    matrix_bytes = 0
    for column in matrices:
        if data[column].null_count:
            continue  # a build is still embedding: LanceDB's scan skips rows without vectors
        unit = _unit_rows(data[column], index.meta.dim)
        matrix_bytes += unit.nbytes
        built = None
        if flat:
            from vq.core.onnx_encoder import intra_threads
            from vq.query.service import int8_screen

            built = int8_screen.build(unit, intra_threads())
        snap.matrices[column] = (unit, built)
    rows = data.select(list(dict.fromkeys(["id", *columns])))
    if matrix_bytes + rows.nbytes <= MAX_BYTES:
        snap.rows = rows.combine_chunks()
    return snap


def _unit_rows(column: Any, dim: int) -> np.ndarray:
    """The vector column as float32 rows scaled to unit length, converted in steps."""
    column = column.combine_chunks()
    out = np.empty((len(column), dim), dtype=np.float32)
    for start in range(0, len(column), CHUNK_ROWS):
        part = column.slice(start, CHUNK_ROWS).flatten().to_numpy(zero_copy_only=False)
        block = part.reshape(-1, dim).astype(np.float32)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        out[start:start + len(block)] = block / np.maximum(norms, 1e-12)
    return out


def positions(snap: Snapshot, row_ids: Any) -> np.ndarray:
    """Snapshot rows of LanceDB ``_rowid`` values from ``snap.pinned``. Asking a query for
    row ids instead of chunk ids spares LanceDB reading the id column of every hit
    (~4 ms of a 100-hit BM25 query at 100k chunks)."""
    order = snap.rowid_order
    wanted = np.asarray(row_ids, dtype=snap.row_ids.dtype)
    at = np.minimum(np.searchsorted(snap.row_ids, wanted, sorter=order), len(order) - 1)
    found = order[at] if len(order) else at
    if len(wanted) and not np.array_equal(snap.row_ids[found], wanted):
        raise LookupError("a row id the snapshot does not hold: its version changed")
    return found


def rows_of(snap: Snapshot, positions: np.ndarray, columns: list[str]) -> Any:
    """``columns`` of the rows at ``positions`` (snapshot rows), in that order."""
    import pyarrow as pa

    if snap.rows is not None:
        return snap.rows.take(pa.array(positions, type=pa.int64())).select(columns)
    schema = snap.pinned.schema
    if not len(positions):
        return pa.table({c: pa.array([], type=schema.field(c).type) for c in columns})
    fetched = (snap.pinned.take_row_ids([int(r) for r in snap.row_ids[positions]])
               .select(list(dict.fromkeys([*columns, "id"]))).to_arrow())
    where = {i: n for n, i in enumerate(fetched["id"].to_pylist())}
    return fetched.take([where[i] for i in snap.ids[positions]]).select(columns)


class SnapshotSources:
    """``vq.query.sources.Sources`` answered from a snapshot: BM25 and ANN ask LanceDB
    (pinned to the snapshot's version) for row ids and scores only, the rows come from
    memory; a vector column held in memory is scanned exactly (flat) or re-ranks the
    ANN candidates exactly (``refine``), as LanceDB's refine would from disk."""

    def __init__(self, index: Any, snap: Snapshot) -> None:
        self.index, self.snap = index, snap
        self._disk = LanceSources(dataclasses.replace(index, chunks=snap.pinned))

    def lexical(self, text: str, where: str | None, k: int, heading_boost: float) -> Any:
        if self.snap.rows is None:
            return self._disk.lexical(text, where, k, heading_boost)
        query = self.snap.pinned.search(fts_query(self.index, text, heading_boost),
                                        query_type="fts")
        if where:
            query = query.where(where, prefilter=True)
        found = query.select(["_score"]).with_row_id(True).limit(k).to_arrow()
        return self._joined(found, "_score")

    def nearest(self, vector: Any, column: str, where: str | None, k: int, refine: int
                ) -> Any:
        snap = self.snap
        if snap.matrix(column)[0] is not None:
            if snap.flat:
                return self._scan(vector, column, where, k)
            return self._refined(vector, column, where, k, refine)
        if snap.rows is None:
            return self._disk.nearest(vector, column, where, k, refine)
        found = (vector_query(snap.pinned, vector, column, where, refine)
                 .select(["_distance"]).with_row_id(True).limit(k).to_arrow())
        return self._joined(found, "_distance")

    def rows(self, where: str, k: int) -> Any:
        return self._disk.rows(where, k)

    def without_vectors(self, ids: list[str]) -> set[str]:
        return self._disk.without_vectors(ids)

    def _joined(self, found: Any, score: str) -> Any:
        """Rows for LanceDB's hits (row ids and a score), in its order."""
        rows = positions(self.snap, found["_rowid"].to_numpy())
        return rows_of(self.snap, rows, COLUMNS).append_column(score, found[score])

    def _refined(self, vector: Any, column: str, where: str | None, k: int, refine: int
                 ) -> Any:
        """LanceDB's refine reads each candidate's full vector from disk (~140 ms for 500
        candidates at 1M chunks, against ~11 ms for the quantised search alone); here the
        index is asked for ``refine x k`` ids and their exact cosines come from memory."""
        vectors = self.snap.matrix(column)[0]
        assert vectors is not None
        found = (vector_query(self.snap.pinned, vector, column, where, refine=None)
                 .select(["_distance"]).with_row_id(True).limit(k * max(1, refine))
                 .to_arrow())
        rows = positions(self.snap, found["_rowid"].to_numpy())
        scores = vectors[rows] @ _unit_query(vector, self.snap.stored)
        best = np.lexsort((rows, -scores))[:k]  # best first; ties by row
        return _with_distance(rows_of(self.snap, rows[best], COLUMNS), scores[best])

    def _scan(self, vector: Any, column: str, where: str | None, k: int) -> Any:
        """The exact cosine top ``k`` of a matrix held in memory, prefiltered."""
        from vq.query.service import int8_screen

        vectors, screened = self.snap.matrix(column)
        assert vectors is not None
        q = _unit_query(vector, self.snap.stored)
        allowed = self._allowed(where)
        rows = int8_screen.candidates(screened, q, k, allowed) if screened is not None else None
        if rows is None:
            rows = allowed
        if rows is None:  # all of them, in order: no gather of the whole matrix
            scores, rows = vectors @ q, np.arange(len(vectors))
        else:
            scores = vectors[rows] @ q
        n, k = len(scores), min(k, len(scores))
        top = np.argpartition(scores, n - k)[n - k:] if k else np.empty(0, dtype=np.int64)
        order = np.lexsort((rows[top], -scores[top]))  # best first; ties by row
        return _with_distance(rows_of(self.snap, rows[top][order], COLUMNS),
                              scores[top][order])

    def _allowed(self, where: str | None) -> np.ndarray | None:
        """Matrix rows that pass the prefilter (None: all), found by a scalar-only scan."""
        if not where:
            return None
        found = (self.snap.pinned.search().where(where).select(["id"]).limit(None)
                 .to_arrow()["id"].to_pylist())
        position = self.snap.position
        return np.fromiter((position[i] for i in found if i in position), dtype=np.int64)


def _with_distance(table: Any, scores: np.ndarray) -> Any:
    import pyarrow as pa

    return table.append_column("_distance", pa.array((1.0 - scores).astype(np.float32)))


def _unit_query(vector: Any, stored: Any) -> np.ndarray:
    """The query as LanceDB compares it: cast to the column's dtype, then unit length."""
    q = np.asarray(vector, dtype=stored).reshape(-1).astype(np.float32)
    return q / max(float(np.linalg.norm(q)), 1e-12)
