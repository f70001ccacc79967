"""The service's vectors in memory: exact cosine top-k from a matrix instead of a table scan.

Below the ANN threshold (``maintenance.vector_index_min_rows``, and only while
the table has no vector index) the service holds every chunk's vector as one
float32 matrix, loaded from one table version and reloaded when a build
commits another. A dense query is then one matrix-vector product: at 100k
chunks a few milliseconds where LanceDB's flat scan reads and converts the
whole vector column on every query.

``wrap`` returns an ``Index`` whose ``chunks`` answers exactly the vector query
``vq.query.search`` makes (cosine, optional prefilter, select, limit) and
hands every other call to the real table, so ``search`` itself is unchanged.
Distances are LanceDB's to float noise (~1e-7): 1 - a·b / (|a| |b|) over the
stored vectors, the query first cast to their dtype (float16) as LanceDB does.
Rows are fetched by row id from a handle pinned to the matrix's version.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

CHUNK_ROWS = 65_536  # rows converted per step while loading: bounded extra memory
MAX_BYTES = 4 << 30  # never hold more than this (1M x 384 float32 is 1.5 GiB)


@dataclasses.dataclass
class Matrix:
    version: Any
    ids: np.ndarray           # chunk id per row (object array of str)
    row_ids: np.ndarray       # LanceDB _rowid per row, valid in ``pinned``
    vectors: np.ndarray       # float32 (rows, dim), each row scaled to unit length
    pinned: Any               # the chunks table checked out at ``version``
    position: dict[str, int]  # chunk id -> row
    stored: Any = np.float32  # the column's dtype: LanceDB casts the query to it first


def eligible(index: Any, settings: Any) -> bool:
    """A flat scan is what LanceDB would do: no vector index, not above the threshold
    (``vector_index_min_rows: 0`` never builds one), and the matrix fits ``MAX_BYTES``."""
    rows = index.chunks.count_rows()
    threshold = settings.maintenance.vector_index_min_rows
    if (threshold and rows > threshold) or rows * index.meta.dim * 4 > MAX_BYTES:
        return False
    return not any("vector" in (getattr(i, "columns", None) or [])
                   for i in index.chunks.list_indices())


def load(index: Any) -> Matrix:
    """Every vector of the table's current version, with the ids to find their rows."""
    version = index.chunks.version
    pinned = index.db.open_table(index.chunks.name)
    pinned.checkout(version)
    data = (pinned.search().select(["id", "vector"]).with_row_id(True).limit(None)
            .to_arrow())
    dim = index.meta.dim
    vectors = np.empty((data.num_rows, dim), dtype=np.float32)
    column = data["vector"].combine_chunks()
    for start in range(0, data.num_rows, CHUNK_ROWS):
        part = column.slice(start, CHUNK_ROWS).flatten().to_numpy(zero_copy_only=False)
        block = part.reshape(-1, dim).astype(np.float32)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        vectors[start:start + len(block)] = block / np.maximum(norms, 1e-12)
    ids = np.asarray(data["id"].to_pylist(), dtype=object)
    stored = np.float16 if index.meta.vector_dtype == "float16" else np.float32
    return Matrix(version, ids, data["_rowid"].to_numpy(), vectors, pinned,
                  {i: n for n, i in enumerate(ids)}, stored)


def wrap(index: Any, matrix: Matrix) -> Any:
    """``index`` with its chunks table answering vector queries from ``matrix``."""
    return dataclasses.replace(index, chunks=_Chunks(index.chunks, matrix))


class _Chunks:
    def __init__(self, table: Any, matrix: Matrix) -> None:
        self._table, self._matrix = table, matrix

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("vector_column_name") == "vector" and args:
            return _VectorQuery(self._table, self._matrix, args[0])
        return self._table.search(*args, **kwargs)


class _VectorQuery:
    """The builder calls ``search._dense`` makes, answered from the matrix."""

    def __init__(self, table: Any, matrix: Matrix, vector: Any) -> None:
        self.table, self.matrix = table, matrix
        q = np.asarray(vector, dtype=matrix.stored).reshape(-1).astype(np.float32)
        self.q = q / max(float(np.linalg.norm(q)), 1e-12)
        self.filter: str | None = None
        self.columns: list[str] | None = None
        self.k = 10

    def distance_type(self, kind: str) -> _VectorQuery:
        if kind != "cosine":
            raise ValueError(f"the resident matrix answers cosine only, not {kind}")
        return self

    def nprobes(self, n: int) -> _VectorQuery:
        return self  # ANN tuning: the matrix is an exact scan

    def refine_factor(self, n: int) -> _VectorQuery:
        return self

    def where(self, predicate: str, prefilter: bool = True) -> _VectorQuery:
        self.filter = predicate
        return self

    def select(self, columns: list[str]) -> _VectorQuery:
        self.columns = [c for c in columns if c != "_distance"]
        return self

    def limit(self, k: int) -> _VectorQuery:
        self.k = int(k)
        return self

    def to_arrow(self) -> Any:
        import pyarrow as pa

        m = self.matrix
        rows = self._allowed()
        scores = m.vectors[rows] @ self.q if rows is not None else m.vectors @ self.q
        n, k = len(scores), min(self.k, len(scores))
        top = np.argpartition(scores, n - k)[n - k:] if k else np.empty(0, dtype=np.int64)
        top = top[np.lexsort((top, -scores[top]))]  # best first; ties by row
        chosen = rows[top] if rows is not None else top
        table = self._fetch(chosen)
        distance = pa.array((1.0 - scores[top]).astype(np.float32))
        return table.append_column("_distance", distance)

    def _allowed(self) -> np.ndarray | None:
        """Matrix rows that pass the prefilter (None: all), found by a scalar-only scan."""
        if not self.filter:
            return None
        found = (self.matrix.pinned.search().where(self.filter).select(["id"]).limit(None)
                 .to_arrow()["id"].to_pylist())
        position = self.matrix.position
        return np.fromiter((position[i] for i in found if i in position), dtype=np.int64)

    def _fetch(self, chosen: np.ndarray) -> Any:
        """The selected columns of ``chosen`` rows, in that order."""
        m = self.matrix
        columns = list(self.columns or [f.name for f in m.pinned.schema])
        if not len(chosen):
            schema = m.pinned.schema
            import pyarrow as pa

            return pa.table({c: pa.array([], type=schema.field(c).type) for c in columns})
        fetched = (m.pinned.take_row_ids([int(r) for r in m.row_ids[chosen]])
                   .select(list(dict.fromkeys([*columns, "id"]))).to_arrow())
        where = {i: n for n, i in enumerate(fetched["id"].to_pylist())}
        order = [where[i] for i in m.ids[chosen]]
        return fetched.take(order).select(columns)
