"""One incremental build: discover → reconcile → chunk + write text → embed → optimize.

The caller holds the build lock (``vq.jobs.runner``). What to read, record and
drop comes from ``vq.core.manifest.reconcile``, the same plan `vq status --check`
and `vq doctor` report, so a build does exactly what they said was stale. Work
is written in batches so a long first build makes durable progress and a stop
request (SIGTERM) is honoured between batches. Every bad file is recorded in the manifest with its
reason; nothing already indexed for it is lost.

Text first, then vectors: the local engine commits chunk rows every few seconds,
without vectors where the table does not already hold them, so a first build is
searchable (lexically, then hybrid over what has vectors) within seconds of its
start; ``vq.indexer.embed`` then fills the vectors in from the table, which is
how a stopped or killed build's successor continues where it stopped. The
progress record beside the lock (``vq.core.build_progress``) says what the build
is doing and, by existing, that the index may hold rows without vectors.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from vq.core import store
from vq.core.builds import record_build
from vq.core.encoder import Encoder, shared_model
from vq.core.errors import IndexMismatch
from vq.core.manifest import DUPLICATE, ManifestRow, Plan, read_manifest, reconcile
from vq.core.schema import CHUNKER_VERSION, SCHEMA_VERSION, IndexMeta
from vq.core.settings import Settings
from vq.core.token_window import load_window
from vq.core.walk import Discovery, FileEntry, discover_for, walk_cache_for
from vq.core.walk_cache import WalkCache
from vq.core.walk_paths import discover_paths
from vq.indexer import embed, maintain, noop, onnx_export, write
from vq.indexer.engine import SUMMARY_COUNTS, Chunked, Engine, FileWork, make_engine
from vq.indexer.progress import NullProgress, Tracker
from vq.indexer.rows import problem_row


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
    sections_encoded: int = 0  # split sections embedded whole (their pieces' section vector)
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)
    pruned_vaults: list[str] = field(default_factory=list)
    rebuilt: bool = False
    # a stopped or killed rebuild's stage was continued, holding this many files' rows
    continued_rebuild: bool = False
    staged_files: int = 0
    # a build asked for some vaults (--vault) became a rebuild of all (a new chunker, or
    # a stopped rebuild continued)
    all_vaults: bool = False
    # how the plan was made: "walk" (walk + manifest), "walk cache" (the last clean
    # build's walk found again: nothing read), "paths" (only the watcher's paths)
    plan: str = "walk"
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
        if self.skipped.get("secret"):  # said, so a search that misses them is no surprise
            parts.append(f"{self.skipped['secret']} left out as credentials")
        if self.missing_roots:
            parts.append(f"missing roots: {', '.join(self.missing_roots)} (not pruned)")
        if self.pruned_vaults:  # their files are not counted as deleted: say where rows went
            parts.append(f"removed vaults no longer configured: {', '.join(self.pruned_vaults)}")
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
                 encoder: Encoder | None = None,
                 paths: Mapping[str, Iterable[str]] | None = None) -> None:
        self.settings = settings
        self.paths = paths
        self.rebuild = rebuild
        self.progress = progress or NullProgress()
        self.tracker = Tracker(self.progress, settings.build_lock)
        self.should_stop = should_stop or (lambda: False)
        self.summary = BuildSummary(model=settings.model, rebuilt=rebuild)
        self._encoder = encoder
        self._bulk: Any = encoder  # an encoder the caller gives encodes everything
        self.engine: Engine = make_engine(settings, rebuild, self.progress, self.encoder)
        self.wrote = False
        self.probe = False
        self._fts_ready = False
        self._owed = False  # whether the table may hold rows without vectors

    def encoder(self) -> Encoder:
        if self._encoder is None:
            s = self.settings
            self._encoder = shared_model("encoder", s.model, s.device, s.batch_size,
                                         s.devices, s.encode_processes)
        self.summary.device = self._encoder.device.name
        return self._encoder

    def bulk_encoder(self) -> Any:
        """What encodes the chunks: on a CPU, the ONNX export beside the tables
        (``vq.core.onnx_encoder``, every core); else the sentence-transformers encoder
        (CUDA fp16, MPS, a configured multi-process pool, test models)."""
        if self._bulk is None:
            self._bulk = embed.onnx_bulk_encoder(self.settings) or self.encoder()
            self.summary.device = self._bulk.device.name
            if getattr(self._bulk, "backend", "") == "onnx":
                self.summary.device += f" (onnx {self._bulk.variant})"
        return self._bulk

    def run(self, vault_ids: tuple[str, ...] = ()) -> BuildSummary:
        """The whole pipeline. A rebuild writes a staged index that replaces the old
        one only when it finished ``ok``; a failed, stopped or killed one's stage is
        kept, and the next build continues it (``_continue_stage``)."""
        try:
            return self._staged(vault_ids)
        finally:
            self.engine.close()

    def _staged(self, vault_ids: tuple[str, ...]) -> BuildSummary:
        index = self.open_index()
        if self.summary.rebuilt and vault_ids:  # new tables (or a stage continued): one
            vault_ids = ()                      # vault's build would swap in an index
            self.summary.all_vaults = True      # without the others
        summary = self._run(index, vault_ids)  # raising, it keeps the stage as a kill does
        if summary.outcome == "ok":
            store.swap_in(index)
        embed.final_record(self.tracker, self.settings.build_lock, summary.outcome == "ok")
        return summary

    def _run(self, index: store.Index, vault_ids: tuple[str, ...]) -> BuildSummary:
        started, timer = time.time(), _Timer(self.summary)
        fresh = self.wrote  # open_index created the tables: nothing in them yet
        found, manifest, plan, cache = self._discover(index, vault_ids)
        self._count_discovery(found, plan)
        timer.lap("discover")
        problem_rows = self._problem_rows(found, plan, manifest)
        pending, self._owed = embed.start_record(self.tracker, index, self.settings.build_lock,
                                                 fresh)
        self.tracker.planned(len(plan.to_read), sum(e.size for e in plan.to_read), pending)
        if (plan.to_read or pending) and index.staged_for is None:
            # before the first text commit: the first search then never loads torch
            self.summary.query_onnx = onnx_export.after_build(self.settings, self.encoder,
                                                              index.meta.model)
        self._process(index, plan.to_read, manifest, timer)
        self.summary.device = self.summary.device or self.engine.device()
        if self.summary.outcome == "ok":
            write.upsert_manifest(index, problem_rows)
            self.summary.chunks_deleted += write.delete_chunks(index, plan.deleted)
            write.delete_manifest(index, plan.deleted)
            self.summary.chunks_deleted += write.delete_vaults(index, plan.pruned_vaults)
            self.wrote |= bool(problem_rows or plan.deleted or plan.pruned_vaults)
        timer.lap("write")
        if self.summary.outcome == "ok" and self._owed:  # else nothing to scan for
            self._embed(index)
            timer.lap("embed")
        if self.summary.outcome == "ok":  # a stop request should not wait for optimize
            self.tracker.phase("optimize")
            self._finish(index, plan, cache)
            self.tracker.finish()
        timer.lap("optimize")
        self.summary.seconds["total"] = round(time.time() - started, 3)
        self._record(index, started)
        return self.summary

    def _discover(self, index: store.Index, vault_ids: tuple[str, ...]) -> tuple[
            Discovery, dict[tuple[str, str], ManifestRow], Plan, WalkCache | None]:
        """The walk (or the watcher's paths), the manifest rows it is compared with, and
        the plan. A walk the last clean build saw again, with the tables unmoved, is
        known to reconcile to nothing (``vq.indexer.noop``): no row is read."""
        configured = {v.id for v in self.settings.vaults}
        if self.paths is not None and not self.summary.rebuilt:
            self.summary.plan = "paths"
            found, scope = discover_paths(self.settings, self.paths)
            manifest = read_manifest(index, scope)
            return found, manifest, reconcile(manifest, found, configured), None
        vaults = [v for v in self.settings.vaults if not vault_ids or v.id in vault_ids]
        cache = None if vault_ids else walk_cache_for(self.settings)
        found = discover_for(self.settings, vaults, cache)
        if (cache is not None and found.same_as_cache
                and noop.remembered_clean(cache.clean, index, self.settings)):
            self.summary.plan = "walk cache"
            return found, {}, Plan(unchanged=len(found.files)), cache
        if self.probe:  # a deleted data file: IndexCorrupt, not a quiet "ok"
            store.probe(index)
        manifest = read_manifest(index)
        self._repair_mismatches(index, manifest)
        return found, manifest, reconcile(manifest, found, configured), cache

    def _finish(self, index: store.Index, plan: Plan, cache: WalkCache | None) -> None:
        """Maintenance, the ONNX export and the walk cache, each only where it can
        have changed: a path build leaves folding new rows into the indexes to the
        next sweep (they are searched meanwhile), a known no-op skips all three."""
        if self.summary.plan == "paths":
            maintain.ensure_indexes(index, self.settings)
            return
        if self.summary.plan != "walk cache":
            maintain.run(index, self.settings, self.wrote)
        if self.summary.query_onnx in ("", "current"):  # else exported before the text
            self.summary.query_onnx = onnx_export.after_build(self.settings, self.encoder,
                                                              index.meta.model)
        if cache is not None and self.summary.plan != "walk cache":
            clean = noop.is_empty(plan)
            cache.save(noop.clean_record(index, self.settings) if clean else None)

    def open_index(self) -> store.Index:
        """Continue a stopped rebuild's stage, or open the index, or create it; refuse
        one built by another model or schema. Either rebuild covers every vault
        (``_staged``), so a build asked for some vaults continues a stage too."""
        location = self.settings.index_dir
        staged = self._continue_stage(location)
        if staged is not None:
            return staged
        if not self.rebuild and store.exists_for(self.settings):
            index = store.open_for(self.settings)
            self.probe = True  # unless the walk says no row will be read (``_plan``)
            meta = index.meta
            if meta.schema_version != SCHEMA_VERSION:
                raise IndexMismatch(location, "schema version", str(meta.schema_version),
                                    str(SCHEMA_VERSION))
            if meta.model != self.settings.model:
                raise IndexMismatch(location, "model", meta.model, self.settings.model)
            if meta.chunker_version == CHUNKER_VERSION:
                return index
            self.summary.rebuilt = True  # new chunk boundaries: new tables, all re-encoded
        self.wrote = True
        return store.create_index(location, self._new_meta(),
                                  self.settings.storage_options or None)

    def _new_meta(self) -> IndexMeta:
        """What the tables this build creates say about themselves."""
        window = load_window(self.settings.model)  # a tokenizer only, no torch
        return IndexMeta(model=self.settings.model, dim=self.engine.dim(),
                         vector_dtype=self.settings.vector_dtype,
                         schema_version=SCHEMA_VERSION, chunker_version=CHUNKER_VERSION,
                         window=window.tokens if window else 0)

    def _continue_stage(self, location: str) -> store.Index | None:
        """The stage a stopped or killed rebuild left, when it is what this build would
        create: its committed text and vectors are kept, the reconcile against its own
        manifest reads only files it lacks or that changed since, and the embed step
        finds the rows it left without vectors. Plain builds continue it too (cron must
        not throw the work away), whatever the old index holds: it answers until the
        swap, as before (docs/decisions.md#rebuild-text-first)."""
        if not store.has_stage(location):
            return None
        index = store.open_stage(location, self._new_meta(),
                                 self.settings.storage_options or None)
        if index is None:
            return None
        s = self.summary
        s.rebuilt = s.continued_rebuild = True
        s.staged_files = index.files.count_rows()
        return index

    def _repair_mismatches(self, index: store.Index,
                           manifest: dict[tuple[str, str], ManifestRow]) -> None:
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

    def _count_discovery(self, found: Discovery, plan: Plan) -> None:
        s = self.summary
        s.files_seen = len(found.files)
        s.files_unchanged = plan.unchanged
        s.skipped = dict(found.skipped)
        s.missing_roots = found.missing_roots
        s.pruned_vaults = plan.pruned_vaults
        s.files_deleted = len(plan.deleted)

    def _problem_rows(self, found: Discovery, plan: Plan,
                      manifest: dict[tuple[str, str], ManifestRow]) -> list[dict]:
        """Every problem is reported; only those the manifest does not already record
        (``plan.problems``) are written: a quiet cron build writes nothing."""
        for p in found.problems:
            self._problem(p.vault, p.path, p.reason)
        rows = []
        for p in plan.problems:
            old = manifest.get((p.vault, p.path))
            rows.append(problem_row(p.vault, p.path, old.hash if old else "",
                                    old.chunks if old else 0, p.reason))
        return rows

    def _problem(self, vault: str, path: str, reason: str) -> None:
        self.summary.files_errored += 1
        self.summary.problems.append({"vault": vault, "path": path, "reason": reason})

    def _process(self, index: store.Index, entries: list[FileEntry],
                 manifest: dict[tuple[str, str], ManifestRow], timer: _Timer) -> None:
        """Hand the files to the engine a write batch at a time; commit each batch that
        comes back whole (the local engine: every few seconds, text first)."""
        self.tracker.phase("read")
        step = max(1, self.settings.write_batch_files)
        batches = ([FileWork(e, manifest.get((e.vault, e.path))) for e in entries[i:i + step]]
                   for i in range(0, len(entries), step))
        sizes = {(e.vault, e.path): e.size for e in entries}
        done = self.engine.run(index, batches)
        while entries:
            if self.should_stop():
                self.summary.outcome = "interrupted"
                return
            batch = next(done, None)
            if batch is None:
                return
            timer.lap("engine")  # wall time; the engine's own chunk/encode seconds follow
            self._commit(index, batch)
            timer.lap("write")
            self._committed(index, batch, sizes)

    def _committed(self, index: store.Index, batch: Chunked, sizes: dict) -> None:
        """The first text commit creates the full-text index (rows added later are
        searched too, unindexed until maintenance folds them in); progress moves."""
        if batch.rows and not self._fts_ready:
            maintain.ensure_fts(index, self.settings)
            self._fts_ready = True
        with_vectors = batch.rows if batch.table is None else \
            batch.table.num_rows - batch.table["vector"].null_count
        t = self.tracker
        t.table_rows = index.chunks.count_rows()
        t.table_pending += batch.rows - with_vectors
        self._owed |= batch.rows > with_vectors
        nbytes = sum(sizes.get(tuple(m[k] for k in ("vault", "path")), 0)
                     for m in batch.manifest)
        t.chunked(batch.files, nbytes, batch.rows, with_vectors)

    def _embed(self, index: store.Index) -> None:
        """Vectors for every row still without them; stops between batches when asked."""
        files = embed.pending_files(index)
        if not files:
            return
        self.tracker.phase("embed")
        embedder = embed.Embedder(index, self._encode, self.should_stop)
        left = sum(n for _, n in files)
        for out, filled in embedder.run(files):
            left -= filled
            self.wrote = True
            self._count(out)
            self.tracker.embedded(filled)
        if left > 0 and self.should_stop():
            self.summary.outcome = "interrupted"
        # rows still counted but never filled, without a stop, were taken by another
        # writer (a second builder on shared storage replaced that file): not ours to say

    def _encode(self, texts: list[str]) -> Any:
        return self.bulk_encoder().encode(texts)

    def _commit(self, index: store.Index, batch: Chunked) -> None:
        """The crash-safe order: blank the hashes, replace the chunks, then the manifest."""
        write.mark_pending(index, batch.keys)
        self.summary.chunks_deleted += write.delete_chunks(index, batch.keys)
        batch.commit_chunks(index)
        write.upsert_manifest(index, batch.manifest)
        self._count(batch)
        self.wrote |= bool(batch.keys or batch.manifest)

    def _count(self, batch: Chunked) -> None:
        s = self.summary
        for part, whole in SUMMARY_COUNTS.items():
            setattr(s, whole, getattr(s, whole) + getattr(batch, part))
        for problem in batch.problems:
            self._problem(problem["vault"], problem["path"], problem["reason"])
        for reason, count in batch.skipped.items():  # minified, generated
            s.skipped[reason] = s.skipped.get(reason, 0) + count
        for stage, took in batch.seconds.items():
            s.seconds[stage] = round(s.seconds.get(stage, 0) + took, 3)

    def _record(self, index: store.Index, started: float) -> None:
        s = self.summary
        record_build(index, self.settings, started, s.seconds.get("total", 0.0), s.outcome,
                     s.model, s.device, s.to_json())


def build(settings: Settings, vault_ids: tuple[str, ...] = (), rebuild: bool = False,
          progress: Any = None, should_stop: Callable[[], bool] | None = None,
          encoder: Encoder | None = None,
          paths: Mapping[str, Iterable[str]] | None = None) -> BuildSummary:
    """Run one build; the caller holds the lock (see ``vq.jobs.runner.locked_build``).

    ``paths`` (vault id -> changed paths relative to its root, the watcher's): only
    those are reconciled, no walk; the chunk, encode and commit steps are the same."""
    return Builder(settings, rebuild, progress, should_stop, encoder, paths).run(vault_ids)
