"""Vectors after text: give the chunk rows a build committed without vectors their vectors.

Text lands first (``engine.LocalEngine``): chunk rows whose vectors the table does
not already hold are committed with both vector columns null, together with the
manifest rows that vouch for their files, so a search finds them lexically within
seconds. This step then reads the rows still without vectors back from the table,
a few files at a time, encodes them and writes their vectors by id (one
``merge_insert`` per batch: a reader sees a row without vectors or with both).

Working from the table, not from memory, is what lets a killed or stopped build's
successor continue where it stopped: a row that got its vectors is never encoded
again, and every row still without them is found. Batches are sized to take about
``BATCH_SECONDS`` at the measured rate, so a stop request waits seconds and the
table gains few versions; maintenance compacts them at the end of the build.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from vq.core import store
from vq.core.build_progress import clear_record, read_record, write_record
from vq.core.encoder import resolve_device
from vq.core.hash_encoder import is_test_model
from vq.indexer import write
from vq.indexer.engine import Chunked, vectors_for
from vq.indexer.rows import PendingChunk, with_sections

PENDING = "vector IS NULL"   # a row without vectors (both vector columns are null together)
BATCH_SECONDS = 5.0
FIRST_BATCH, MIN_BATCH, MAX_BATCH = 64, 32, 8192  # rows; the first batch measures the rate

Key = tuple[str, str]


def start_record(tracker: Any, index: store.Index, lock_path: Path, fresh: bool
                 ) -> tuple[int, bool]:
    """(rows an earlier build left without vectors, whether to look for them): counted
    only when the record that build left says there may be some, or in a stopped
    rebuild's stage this build continues (the record speaks of the tables searches
    read, never of a stage). The record is on disk, saying rows may lack vectors,
    before this build commits any."""
    earlier = read_record(lock_path) or {}
    maybe = bool(earlier.get("pending_possible"))
    staged = tracker.staged = index.staged_for is not None
    owed = (maybe and not staged) or (staged and not fresh)  # a new stage starts empty
    pending = count_pending(index) if owed and not fresh else 0
    tracker.table_rows, tracker.table_pending = index.chunks.count_rows(), pending
    tracker.pending_possible = maybe or not tracker.staged
    write_record(lock_path, tracker.record())
    return pending, owed


def final_record(tracker: Any, lock_path: Path, ok: bool) -> None:
    """Gone when every row has its vectors (or a rebuild replaced the tables); else
    kept, so the next build looks for the rows still without vectors."""
    if ok:
        tracker.pending_possible, tracker.table_pending = False, 0
        clear_record(lock_path)
    else:
        tracker.phase("stopped")
        write_record(lock_path, tracker.record())


def onnx_bulk_encoder(settings: Any) -> Any:
    """On a CPU, the ONNX export beside the tables with every core this process may use;
    None where sentence-transformers encodes (CUDA, MPS, a configured multi-process pool
    or device list, test models) or no export exists."""
    s = settings
    if s.devices or s.encode_processes > 1 or s.device not in ("auto", "cpu") \
            or is_test_model(s.model):
        return None
    if s.device == "auto" and resolve_device("auto").name != "cpu":
        return None
    from vq.core.onnx_encoder import cpu_count, load_exported

    return load_exported(s.index_dir, s.model, cpu_count())


def pending_files(index: store.Index) -> list[tuple[Key, int]]:
    """Files with rows still without vectors, and how many, in path order."""
    data = index.chunks.search().where(PENDING).select(["vault", "path"]).limit(None).to_arrow()
    counts = Counter(zip(data["vault"].to_pylist(), data["path"].to_pylist(), strict=True))
    return sorted(counts.items())


def count_pending(index: store.Index) -> int:
    return int(index.chunks.count_rows(PENDING))


@dataclass
class Embedder:
    """Fills the vectors of every pending row; ``should_stop`` is asked between batches."""

    index: store.Index
    encode: Callable[[list[str]], np.ndarray]
    should_stop: Callable[[], bool] = lambda: False
    batch_seconds: float = BATCH_SECONDS

    def run(self, files: list[tuple[Key, int]]) -> Iterator[tuple[Chunked, int]]:
        """(counters, rows given vectors) per committed batch, until done or stopped."""
        size, start = FIRST_BATCH, 0
        while start < len(files) and not self.should_stop():
            group: list[Key] = []
            rows = 0
            while start < len(files) and (not group or rows + files[start][1] <= size):
                group.append(files[start][0])
                rows += files[start][1]
                start += 1
            began = time.monotonic()
            out, filled = self.batch(group)
            took = time.monotonic() - began
            if filled and took > 0:
                size = int(min(MAX_BATCH, max(MIN_BATCH, filled / took * self.batch_seconds)))
            yield out, filled

    def batch(self, keys: list[Key]) -> tuple[Chunked, int]:
        out = Chunked()
        pending = pending_chunks(self.index, keys)
        if not pending:
            return out, 0
        vectors, sections = vectors_for(self.index, pending, self.encode, False, out)
        write.fill_vectors(self.index, [p.row["id"] for p in pending], vectors, sections)
        return out, len(pending)


def pending_chunks(index: store.Index, keys: list[Key]) -> list[PendingChunk]:
    """These files' rows without vectors, each with its section's text rebuilt from all
    the file's rows exactly as the chunker made it (``rows.with_sections``)."""
    out: list[PendingChunk] = []
    for predicate in store.path_filter(keys):
        table = index.chunks.search().where(predicate).limit(None).to_arrow()
        without = pc.is_null(table["vector"]).to_pylist()
        rows = table.drop_columns(["vector", "section_vector"]).to_pylist()
        waiting = {r["id"] for r, null in zip(rows, without, strict=True) if null}
        by_file: dict[Key, list[dict]] = {}
        for row in rows:
            by_file.setdefault((row["vault"], row["path"]), []).append(row)
        for key in sorted(by_file):
            file_rows = sorted(by_file[key], key=lambda r: (r["start_line"], r["id"]))
            pieces = [PendingChunk(r, r["text_hash"]) for r in file_rows]
            out += [p for p in with_sections(pieces, file_rows[0]["kind"])
                    if p.row["id"] in waiting]
    return out
