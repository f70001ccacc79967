"""The build's engine seam: who reads, chunks and encodes the files a build must index.

The driver (``build.Builder``) walks and reconciles, then hands the files to
(re)read to an engine one write batch at a time, and commits each batch that
comes back, in order: the files' old chunk rows replaced first, then the
manifest rows that vouch for them (``write``). So readers see whole batches
only, and a build killed anywhere leaves a manifest the next build repairs,
whichever engine ran.

``LocalEngine`` puts text first: it hands back a batch every ``TEXT_SECONDS`` of
chunking (at most a write batch of files) whose rows carry vectors only where
the table already knows them (an unchanged chunk of an edited file); the rest
are committed without vectors, searchable lexically at once, and
``vq.indexer.embed`` gives them their vectors afterwards. ``engine_ray.RayEngine``
does the work in Ray actors that write Lance fragments (vectors included) for the
driver to commit. Both run ``chunk_files``, so both make the same rows from the
same tree.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from vq.core import store
from vq.core.filetypes import content_kind
from vq.core.manifest import ManifestRow
from vq.core.walk import FileEntry
from vq.indexer import write
from vq.indexer.extract_cache import FileChunker
from vq.indexer.fit_window import Fit, fitter
from vq.indexer.handlers.base import Limits
from vq.indexer.reading import Unreadable, content_hash, read_entry
from vq.indexer.rows import PendingChunk, document_rows, manifest_row

Key = tuple[str, str]
TEXT_SECONDS = 2.0  # chunking time between two text commits: searchable within seconds


@dataclass(frozen=True)
class FileWork:
    """One file reconcile found new or changed, with its manifest row from before."""

    entry: FileEntry
    old: ManifestRow | None


# A batch's counters and the BuildSummary field each one adds to.
SUMMARY_COUNTS = {"rows": "chunks_written", "encoded": "chunks_encoded",
                  "reused": "chunks_reused", "new": "files_new", "changed": "files_changed",
                  "restamped": "files_restamped", "sections": "sections_encoded"}


@dataclass
class Chunked:
    """One write batch, chunked and encoded, ready for the driver to commit.

    ``table`` (local) or ``fragments`` (Ray: Lance fragments already written by
    the workers, not yet part of any version) holds the new chunk rows.
    """

    keys: list[Key] = field(default_factory=list)        # files whose chunk rows are replaced
    manifest: list[dict] = field(default_factory=list)   # upserted after the chunks
    problems: list[dict] = field(default_factory=list)   # {"vault", "path", "reason"}
    files: int = 0
    rows: int = 0
    new: int = 0
    changed: int = 0
    restamped: int = 0
    encoded: int = 0
    reused: int = 0
    sections: int = 0   # split sections whose whole text was encoded (section vectors)
    skipped: Counter = field(default_factory=Counter)
    table: Any = None
    fragments: list = field(default_factory=list)
    # chunk, encode: worker seconds (summed over a Ray batch's tasks)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def merge(self, other: Chunked) -> Chunked:
        """Fold a task's part of the batch into this one (Ray splits batches into tasks)."""
        self.keys += other.keys
        self.manifest += other.manifest
        self.problems += other.problems
        for name in ("files", *SUMMARY_COUNTS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped.update(other.skipped)
        self.fragments += other.fragments
        for stage, took in other.seconds.items():
            self.seconds[stage] += took
        return self

    def commit_chunks(self, index: store.Index) -> None:
        if self.table is not None and self.table.num_rows:
            index.chunks.add(self.table)
        elif self.fragments:
            write.append_fragments(index, self.fragments)


class Engine(Protocol):
    """What ``build.Builder`` needs from an engine (``make_engine`` picks one)."""

    def dim(self) -> int: ...

    def device(self) -> str:
        """Where the encoding ran, for the summary; "" when this engine says nothing."""
        ...

    def run(self, index: store.Index, batches: Iterable[list[FileWork]]) -> Iterator[Chunked]:
        """One ``Chunked`` per batch, in the order given; may work ahead of the caller."""
        ...

    def close(self) -> None: ...


def chunk_files(chunker: FileChunker, kinds: dict[str, str], works: list[FileWork],
                read: Callable[[FileEntry], bytes] = read_entry,
                fit: Fit | None = None) -> tuple[list[PendingChunk], Chunked]:
    """Read, hash and chunk; a file whose content is unchanged is only re-stamped.

    ``fit`` (``vq.indexer.fit_window.fitter``) cuts chunks the model would truncate; every
    engine passes its own, so a Ray build cuts exactly as a local one.

    A file that cannot be read or chunked keeps its old rows (still searchable)
    and gets its error in the manifest; one bad file never stops the build.
    """
    pending: list[PendingChunk] = []
    out = Chunked(files=len(works))
    started = time.perf_counter()
    for work in works:
        entry, old = work.entry, work.old
        name, handler = chunker.claim(entry.path) or ("", None)
        try:
            data = read(entry)
            digest = content_hash(data)
            if old and old.error is None and old.hash == digest and \
                    not old.read_by_another(entry.path):
                out.restamped += 1
                out.manifest.append(manifest_row(entry, digest, old.chunks, name, None))
                continue
            doc = chunker.chunk(name, handler, data, digest, entry)
            if fit is not None:
                doc = fit(doc, entry, name)
        except Unreadable as exc:
            keep_old(out, entry, old, name, str(exc), exc.retry)
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the build
            keep_old(out, entry, old, name,
                     f"{name} handler failed: {type(exc).__name__}: {exc}"[:300])
            continue
        new = document_rows(entry, content_kind(kinds.get(entry.vault, "notes"), name), name, doc)
        pending.extend(new)
        out.keys.append((entry.vault, entry.path))
        out.manifest.append(manifest_row(entry, digest, len(new), name, None))
        if old and old.hash:
            out.changed += 1
        else:
            out.new += 1
    out.rows = len(pending)
    out.seconds["chunk"] += time.perf_counter() - started
    return pending, out


def keep_old(out: Chunked, entry: FileEntry, old: ManifestRow | None, handler: str,
             reason: str, retry: bool = False) -> None:
    """Record the error; the file's previously indexed chunks stay searchable.

    ``retry`` (the file changed under the build): the row records size -1, which
    no walk matches, so the index is stale until a build reads the file again."""
    out.problems.append({"vault": entry.vault, "path": entry.path, "reason": reason})
    if retry:
        entry = entry._replace(size=-1)
    elif old and old.error == reason and (old.size, old.mtime_ns) == (entry.size,
                                                                       entry.mtime_ns):
        return  # the same error on the same file: nothing new to write
    out.manifest.append(manifest_row(entry, old.hash if old else "", old.chunks if old else 0,
                                     handler, reason))


def vectors_for(index: store.Index, pending: list[PendingChunk],
                encode: Callable[[list[str]], np.ndarray], rebuild: bool, out: Chunked
                ) -> tuple[np.ndarray, np.ndarray]:
    """(piece vectors, section vectors): stored ones for known hashes, ``encode`` only
    the rest, each distinct text once (a one-piece section's text is its piece's)."""
    dim = index.meta.dim
    vectors = np.zeros((len(pending), dim), dtype=np.float32)
    sections = np.zeros((len(pending), dim), dtype=np.float32)
    if not pending:
        return vectors, sections
    split = {p.section_hash: p.section_text for p in pending if p.section_text is not None}
    known: dict[str, np.ndarray] = {}
    if not rebuild:
        known = write.stored_vectors(index, {p.text_hash for p in pending})
        known.update(write.stored_vectors(index, set(split) - known.keys(), "section_hash",
                                          "section_vector"))
    texts = {p.text_hash: p.row["text"] for p in pending if p.text_hash not in known}
    out.reused += sum(1 for p in pending if p.text_hash in known)
    out.encoded += len(texts)
    sections_todo = {h: t for h, t in split.items() if h not in known and h not in texts}
    out.sections += len(sections_todo)
    texts.update(sections_todo)
    if texts:
        started = time.perf_counter()
        known.update(zip(texts, encode(list(texts.values())), strict=True))
        out.seconds["encode"] += time.perf_counter() - started
    for i, p in enumerate(pending):
        vectors[i] = known[p.text_hash]
        sections[i] = known[p.section_hash]
    return vectors, sections


def known_vectors(index: store.Index, pending: list[PendingChunk], rebuild: bool, out: Chunked
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(piece vectors, section vectors, known): the vectors the table already holds for
    these chunks, with ``known`` True where it holds both (only those rows get vectors
    now; the others are left for ``vq.indexer.embed``). A rebuild reuses nothing."""
    dim = index.meta.dim
    vectors = np.zeros((len(pending), dim), dtype=np.float32)
    sections = np.zeros((len(pending), dim), dtype=np.float32)
    known = np.zeros(len(pending), dtype=bool)
    if rebuild or not pending:
        return vectors, sections, known
    stored = write.stored_vectors(index, {p.text_hash for p in pending})
    split = {p.section_hash for p in pending if p.section_text is not None}
    stored.update(write.stored_vectors(index, split - stored.keys(), "section_hash",
                                       "section_vector"))
    for i, p in enumerate(pending):
        if p.text_hash in stored and p.section_hash in stored:
            vectors[i], sections[i], known[i] = stored[p.text_hash], stored[p.section_hash], True
    out.reused += int(known.sum())
    return vectors, sections, known


class LocalEngine:
    """Chunk in this process and hand back text first: the default on one machine
    (the build's embed step encodes, with its own encoder)."""

    def __init__(self, settings: Any, rebuild: bool, progress: Any,
                 encoder: Callable[[], Any]) -> None:
        self.settings, self.rebuild, self.progress = settings, rebuild, progress
        self._encoder = encoder
        self.chunker = FileChunker(settings, limits_for(settings))
        self.fit = fitter(settings.model)
        self.kinds = {v.id: v.kind for v in settings.vaults}
        self.text_seconds = TEXT_SECONDS

    def dim(self) -> int:
        return int(self._encoder().dim)

    def device(self) -> str:
        return ""  # the build's encoder records its device itself, once it loads

    def run(self, index: store.Index, batches: Iterable[list[FileWork]]) -> Iterator[Chunked]:
        """A batch every ``TEXT_SECONDS`` of chunking, or at the end of a write batch:
        text commits stay seconds apart however slow the files are to chunk."""
        for batch in batches:
            pending: list[PendingChunk] = []
            out, started = Chunked(), time.monotonic()
            for n, work in enumerate(batch, 1):
                more, part = chunk_files(self.chunker, self.kinds, [work], fit=self.fit)
                pending += more
                out.merge(part)
                if n == len(batch) or time.monotonic() - started >= self.text_seconds:
                    yield self._text_batch(index, pending, out)
                    pending, out, started = [], Chunked(), time.monotonic()

    def _text_batch(self, index: store.Index, pending: list[PendingChunk], out: Chunked
                    ) -> Chunked:
        out.skipped.update(self.chunker.skipped)
        self.chunker.skipped.clear()
        if pending:
            vectors, sections, known = known_vectors(index, pending, self.rebuild, out)
            out.table = write.chunk_table(index.meta, [p.row for p in pending], vectors,
                                          sections, known)
        return out

    def close(self) -> None:
        pass  # the encoder is shared per process (``shared_model``) and outlives a build


def limits_for(settings: Any) -> Limits:
    return Limits(settings.chunk.max_chars, settings.chunk.min_chars)


def make_engine(settings: Any, rebuild: bool, progress: Any, encoder: Callable[[], Any]
                ) -> Engine:
    """The engine ``settings.engine`` names; Ray is imported only when asked for."""
    if settings.engine == "ray":
        from vq.indexer.engine_ray import RayEngine

        return RayEngine(settings, rebuild)
    return LocalEngine(settings, rebuild, progress, encoder)
