"""One incremental build: discover → reconcile → chunk → encode → write → optimize.

The caller holds the build lock (``vq.jobs.runner``). Work is written in batches
so a long first build makes durable progress and a stop request (SIGTERM) is
honoured between batches. Every bad file is recorded in the manifest with its
reason; nothing already indexed for it is lost.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from vq.core import store
from vq.core.encoder import Encoder, shared_model
from vq.core.errors import IndexMismatch
from vq.core.schema import CHUNKER_VERSION, SCHEMA_VERSION, IndexMeta
from vq.core.settings import Settings
from vq.indexer import maintain, onnx_export, write
from vq.indexer.discover import FileEntry, discover_for
from vq.indexer.extract_cache import FileChunker
from vq.indexer.handlers.base import Limits
from vq.indexer.progress import NullProgress
from vq.indexer.reading import Unreadable, content_hash, read_bytes
from vq.indexer.reconcile import DUPLICATE, ManifestRow, read_manifest, reconcile
from vq.indexer.rows import PendingChunk, document_rows, manifest_row, problem_row


@dataclass
class BuildSummary:
    """What a build did; printed as one line or as JSON, and stored in ``builds``."""

    outcome: str = "ok"
    files_seen: int = 0
    files_unchanged: int = 0
    files_new: int = 0
    files_changed: int = 0
    files_restamped: int = 0
    files_deleted: int = 0
    files_errored: int = 0
    chunks_encoded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0
    chunks_written: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)
    pruned_vaults: list[str] = field(default_factory=list)
    rebuilt: bool = False
    model: str = ""
    device: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    query_onnx: str = ""  # the ONNX query-encoder export: exported | current | skipped: ...

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        parts = [f"{self.outcome}: {self.files_seen} files",
                 f"{self.files_new} new", f"{self.files_changed} changed",
                 f"{self.files_deleted} deleted", f"{self.files_errored} errors",
                 f"{self.chunks_encoded} chunks encoded", f"{self.chunks_reused} reused",
                 f"{self.seconds.get('total', 0):.1f}s"]
        if self.missing_roots:
            parts.append(f"missing roots: {', '.join(self.missing_roots)} (not pruned)")
        return ", ".join(parts)


class _Timer:
    def __init__(self, summary: BuildSummary) -> None:
        self.summary, self.t = summary, time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.summary.seconds[stage] = round(self.summary.seconds.get(stage, 0) + now - self.t, 3)
        self.t = now


class Builder:
    """Holds the state of one build; ``run`` is the whole pipeline."""

    def __init__(self, settings: Settings, rebuild: bool = False, progress: Any = None,
                 should_stop: Callable[[], bool] | None = None,
                 encoder: Encoder | None = None) -> None:
        self.settings = settings
        self.rebuild = rebuild
        self.progress = progress or NullProgress()
        self.should_stop = should_stop or (lambda: False)
        self.summary = BuildSummary(model=settings.model, rebuilt=rebuild)
        self._encoder = encoder
        self.limits = Limits(settings.chunk.max_chars, settings.chunk.min_chars)
        self.chunker = FileChunker(settings, self.limits)
        self.kinds = {v.id: v.kind for v in settings.vaults}
        self.wrote = False

    def encoder(self) -> Encoder:
        if self._encoder is None:
            s = self.settings
            self._encoder = shared_model("encoder", s.model, s.device, s.batch_size,
                                         s.devices, s.encode_processes)
        self.summary.device = self._encoder.device.name
        return self._encoder

    def run(self, vault_ids: tuple[str, ...] = ()) -> BuildSummary:
        started, timer = time.time(), _Timer(self.summary)
        index = self.open_index()
        vaults = [v for v in self.settings.vaults if not vault_ids or v.id in vault_ids]
        self.progress.stage("discover")
        found = discover_for(self.settings, vaults)
        manifest = read_manifest(index)
        self._repair_mismatches(index, manifest)
        configured = {v.id for v in self.settings.vaults}
        plan = reconcile(manifest, found, configured)
        self._count_discovery(found, plan)
        timer.lap("discover")
        problem_rows = self._problem_rows(found, manifest)
        self._process(index, plan.to_read, manifest, timer)
        for reason, count in self.chunker.skipped.items():  # minified, generated
            self.summary.skipped[reason] = self.summary.skipped.get(reason, 0) + count
        if self.summary.outcome == "ok":
            write.upsert_manifest(index, problem_rows)
            self.summary.chunks_deleted += write.delete_chunks(index, plan.deleted)
            write.delete_manifest(index, plan.deleted)
            self.summary.chunks_deleted += write.delete_vaults(index, plan.pruned_vaults)
            self.wrote |= bool(problem_rows or plan.deleted or plan.pruned_vaults)
        timer.lap("write")
        if self.summary.outcome == "ok":  # a stop request should not wait for optimize
            maintain.run(index, self.settings, self.wrote)
            self.summary.query_onnx = onnx_export.after_build(self.settings, self.encoder,
                                                              index.meta.model)
        timer.lap("optimize")
        self.summary.seconds["total"] = round(time.time() - started, 3)
        self._record(index, started)
        return self.summary

    def open_index(self) -> store.Index:
        """Open the index, or create it; refuse one built by another model or schema."""
        location = self.settings.index_dir
        if not self.rebuild and store.exists_for(self.settings):
            index = store.open_for(self.settings)
            meta = index.meta
            if meta.schema_version != SCHEMA_VERSION:
                raise IndexMismatch(location, "schema version", str(meta.schema_version),
                                    str(SCHEMA_VERSION))
            if meta.model != self.settings.model:
                raise IndexMismatch(location, "model", meta.model, self.settings.model)
            if meta.chunker_version == CHUNKER_VERSION:
                return index
            self.summary.rebuilt = True  # new chunk boundaries: new tables, all re-encoded
        enc = self.encoder()
        meta = IndexMeta(model=self.settings.model, dim=enc.dim,
                         vector_dtype=self.settings.vector_dtype)
        self.wrote = True
        return store.create_index(location, meta, self.settings.storage_options or None)

    def _repair_mismatches(self, index: store.Index, manifest: dict) -> None:
        """Repair what two racing builders can leave: files listed twice in the
        manifest, or whose chunk rows disagree with it (doubled or orphaned).

        Costs one count when the tables agree. Bad files lose their chunks, then
        their manifest rows; those still on disk are re-chunked as new.
        """
        bad = {k for k, row in manifest.items() if row is DUPLICATE}
        expected = sum(row.chunks for row in manifest.values() if row is not DUPLICATE)
        if not bad and index.chunks.count_rows() == expected:
            return
        data = index.chunks.search().select(["vault", "path"]).limit(None).to_arrow()
        counts = Counter(zip(data["vault"].to_pylist(), data["path"].to_pylist(), strict=True))
        bad |= {k for k, n in counts.items() if k not in manifest or manifest[k].chunks != n}
        bad |= {k for k, row in manifest.items() if row.chunks and k not in counts}
        if bad:
            self.summary.chunks_deleted += write.delete_chunks(index, bad)
            write.delete_manifest(index, bad)
            for key in bad:
                manifest.pop(key, None)
            self.wrote = True

    def _count_discovery(self, found: Any, plan: Any) -> None:
        s = self.summary
        s.files_seen = len(found.files)
        s.files_unchanged = plan.unchanged
        s.skipped = dict(found.skipped)
        s.missing_roots = found.missing_roots
        s.pruned_vaults = plan.pruned_vaults
        s.files_deleted = len(plan.deleted)

    def _problem_rows(self, found: Any, manifest: dict[tuple[str, str], ManifestRow]
                      ) -> list[dict]:
        rows = []
        for p in found.problems:
            old = manifest.get((p.vault, p.path))
            self._problem(p.vault, p.path, p.reason)
            if old and old.error == p.reason:
                continue  # already recorded: a quiet cron build writes nothing
            rows.append(problem_row(p.vault, p.path, old.hash if old else "",
                                    old.chunks if old else 0, p.reason))
        return rows

    def _problem(self, vault: str, path: str, reason: str) -> None:
        self.summary.files_errored += 1
        self.summary.problems.append({"vault": vault, "path": path, "reason": reason})

    def _process(self, index: store.Index, entries: list[FileEntry],
                 manifest: dict[tuple[str, str], ManifestRow], timer: _Timer) -> None:
        self.progress.stage("index", total=len(entries))
        step = max(1, self.settings.write_batch_files)
        for start in range(0, len(entries), step):
            if self.should_stop():
                self.summary.outcome = "interrupted"
                return
            batch = entries[start:start + step]
            pending, keys, rows = self._chunk_batch(batch, manifest)
            timer.lap("chunk")
            vectors = self._vectors(index, pending)
            timer.lap("encode")
            write.mark_pending(index, keys)
            self.summary.chunks_deleted += write.delete_chunks(index, keys)
            write.add_chunks(index, [p.row for p in pending], vectors)
            write.upsert_manifest(index, rows)
            self.summary.chunks_written += len(pending)
            self.wrote |= bool(keys or rows)
            timer.lap("write")
            self.progress.advance(len(batch))

    def _chunk_batch(self, batch: list[FileEntry], manifest: dict[tuple[str, str], ManifestRow]
                     ) -> tuple[list[PendingChunk], list[tuple[str, str]], list[dict]]:
        """Read, hash and chunk; return new chunks, the keys they replace, manifest rows."""
        pending: list[PendingChunk] = []
        keys: list[tuple[str, str]] = []
        rows: list[dict] = []
        for entry in batch:
            old = manifest.get((entry.vault, entry.path))
            name, handler = self.chunker.claim(entry.path) or ("", None)
            try:
                data = read_bytes(entry.abs_path)
                digest = content_hash(data)
                if old and old.error is None and old.hash == digest:
                    self.summary.files_restamped += 1
                    rows.append(manifest_row(entry, digest, old.chunks, name, None))
                    continue
                doc = self.chunker.chunk(name, handler, data, digest, entry)
            except Unreadable as exc:
                self._keep_old(entry, old, name, str(exc), rows)
                continue
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the build
                reason = f"{name} handler failed: {type(exc).__name__}: {exc}"[:300]
                self._keep_old(entry, old, name, reason, rows)
                continue
            new = document_rows(entry, self.kinds.get(entry.vault, "notes"), name, doc)
            pending.extend(new)
            keys.append((entry.vault, entry.path))
            rows.append(manifest_row(entry, digest, len(new), name, None))
            if old and old.hash:
                self.summary.files_changed += 1
            else:
                self.summary.files_new += 1
        return pending, keys, rows

    def _keep_old(self, entry: FileEntry, old: ManifestRow | None, handler: str, reason: str,
                  rows: list[dict]) -> None:
        """Record the error; the file's previously indexed chunks stay searchable."""
        self._problem(entry.vault, entry.path, reason)
        if old and old.error == reason and (old.size, old.mtime_ns) == (entry.size,
                                                                        entry.mtime_ns):
            return  # the same error on the same file: nothing new to write
        rows.append(manifest_row(entry, old.hash if old else "", old.chunks if old else 0,
                                 handler, reason))

    def _vectors(self, index: store.Index, pending: list[PendingChunk]) -> np.ndarray:
        """Stored vectors for known text hashes; encode only the rest."""
        if not pending:
            return np.zeros((0, index.meta.dim), dtype=np.float32)
        known = {} if self.rebuild else write.stored_vectors(index, {p.text_hash for p in pending})
        out = np.zeros((len(pending), index.meta.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, p in enumerate(pending):
            if p.text_hash in known:
                out[i] = known[p.text_hash]
                self.summary.chunks_reused += 1
            else:
                todo.setdefault(p.text_hash, []).append(i)
        if todo:
            texts = [pending[idx[0]].row["text"] for idx in todo.values()]
            self.progress.stage("encode", total=len(texts))
            vecs = self.encoder().encode(texts, progress=self.progress.advance)
            for vec, idx in zip(vecs, todo.values(), strict=True):
                out[idx] = vec
            self.summary.chunks_encoded += len(texts)
            self.progress.stage("index")
        return out

    def _record(self, index: store.Index, started: float) -> None:
        if index.builds is None:
            return
        s = self.summary
        index.builds.add([{"started_at": started, "seconds": s.seconds.get("total", 0.0),
                           "outcome": s.outcome, "model": s.model, "device": s.device,
                           "summary": json.dumps(s.to_json())}])
        maintain.trim_builds(index, self.settings)


def build(settings: Settings, vault_ids: tuple[str, ...] = (), rebuild: bool = False,
          progress: Any = None, should_stop: Callable[[], bool] | None = None,
          encoder: Encoder | None = None) -> BuildSummary:
    """Run one build; the caller holds the lock (see ``vq.jobs.runner.locked_build``)."""
    return Builder(settings, rebuild, progress, should_stop, encoder).run(vault_ids)
