"""`engine: ray`: chunk + encode in Ray actors, rows written as Lance fragments.

What runs where (docs/ray.md): the driver (`vq build`) holds the lock, walks,
reconciles, reads each file's bytes and ships them with the work, and commits
every write batch itself, in order, exactly as a local build does. Actors (one
per GPU, or CPU actors where the cluster has none) hash, chunk, look up stored
vectors by text hash, encode the rest and write the rows as Lance fragments
beside the ``chunks`` table; the driver then commits a batch's fragments with
one ``Append``, so readers see whole batches only.

A killed actor is restarted and its task retried (``MAX_RETRIES``); fragments
its first attempt wrote belong to no version and are never read. A killed
driver takes its actors with it and leaves what a killed local build leaves.

``ray`` and ``lance`` (pylance) are imported here only, and only when a build
asks for this engine: the ``vq[ray]`` extra.
"""

from __future__ import annotations

import os
import warnings
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from vq.core import store
from vq.core.errors import AcceleratorRequired, VqError
from vq.core.settings import Settings
from vq.core.walk import FileEntry
from vq.indexer import write
from vq.indexer.engine import Chunked, FileWork, chunk_files, limits_for, vectors_for
from vq.indexer.extract_cache import FileChunker
from vq.indexer.fit_window import fitter
from vq.indexer.reading import Unreadable, read_entry

MAX_RETRIES = 2           # restarts of a killed actor, and retries of its task
BATCHES_AHEAD = 2         # write batches in flight while the driver commits
CPUS_PER_ACTOR = 4        # CPU actors: torch threads each (fewer on a smaller cluster)
FORWARDED_ENV = ("AWS_", "AZURE_", "GOOGLE_", "HF_", "TRANSFORMERS_")
INSTALL = "pip install 'vq[ray]'"


def require_ray() -> Any:
    """The ``ray`` module, or the one-line error that says how to get it."""
    try:
        with warnings.catch_warnings():  # "not fork-safe": Ray's fork+exec starts no Lance
            warnings.simplefilter("ignore")
            import lance  # noqa: F401 - the fragment writes need pylance as well
            import ray
    except ImportError as exc:
        raise VqError(f"engine 'ray' needs {exc.name or 'ray'}, which is not installed: "
                      f"{INSTALL}") from None  # one line: the fix is the message
    return ray


class Worker:
    """One actor: a loaded model plus the chunker; ``work`` does one Ray task."""

    def __init__(self, settings: Settings, rebuild: bool, device: str, threads: int) -> None:
        if device == "cpu":
            import torch

            torch.set_num_threads(threads)
        from vq.core.encoder import new_encoder

        self.settings, self.rebuild = settings, rebuild
        self.encoder = new_encoder(settings.model, device, settings.batch_size)
        self.chunker = FileChunker(settings, limits_for(settings))
        self.fit = fitter(settings.model)
        self.kinds: dict[str, str] = {v.id: v.kind for v in settings.vaults}
        self.index: store.Index | None = None

    def dim(self) -> int:
        return int(self.encoder.dim)

    def pid(self) -> int:
        return os.getpid()

    def work(self, target: tuple[str, str], works: list[FileWork],
             blobs: dict[str, bytes | Unreadable]) -> Chunked:
        """Chunk and encode ``works``; their rows become fragments at ``target``."""
        if self.index is None:  # opened at the first task: the driver created it by then
            self.index = store.open_for(self.settings)

        def read(entry: FileEntry) -> bytes:
            blob = blobs[entry_key(entry)]
            if isinstance(blob, Unreadable):
                raise blob
            return blob

        pending, out = chunk_files(self.chunker, self.kinds, works, read, self.fit)
        vectors = vectors_for(self.index, pending, self.encoder.encode, self.rebuild, out)
        out.skipped.update(self.chunker.skipped)
        self.chunker.skipped.clear()
        if pending:
            table = write.chunk_table(self.index.meta, [p.row for p in pending], *vectors)
            out.fragments = write.write_fragments(*target, table,
                                                  dict(self.settings.storage_options))
        return out


def entry_key(entry: FileEntry) -> str:
    return f"{entry.vault}\0{entry.path}"


def read_blobs(works: list[FileWork]) -> dict[str, bytes | Unreadable]:
    """Each file's bytes, or why it could not be read: workers need no access to vaults."""
    blobs: dict[str, bytes | Unreadable] = {}
    for work in works:
        try:
            blobs[entry_key(work.entry)] = read_entry(work.entry)
        except Unreadable as exc:
            blobs[entry_key(work.entry)] = exc
    return blobs


class RayEngine:
    """Fans each write batch out over actors as tasks of ``ray.batch_size`` files."""

    def __init__(self, settings: Settings, rebuild: bool) -> None:
        self.ray = require_ray()
        self.settings, self.rebuild = settings, rebuild
        self.actors: list[Any] = []
        self._device = ""

    def dim(self) -> int:
        return int(self.ray.get(self._start()[0].dim.remote()))

    def device(self) -> str:
        return self._device

    def run(self, index: store.Index, batches: Iterable[list[FileWork]]) -> Iterator[Chunked]:
        actors = self._start()
        target = write.fragment_target(index)
        size = self.settings.ray.batch_size
        flight: deque[list[Any]] = deque()
        turn = 0
        for batch in batches:
            tasks = []
            for i in range(0, len(batch), size):
                part = batch[i:i + size]
                actor = actors[turn % len(actors)]
                turn += 1
                tasks.append(actor.work.remote(target, part, read_blobs(part)))
            flight.append(tasks)
            if len(flight) > BATCHES_AHEAD:
                yield self._gather(flight.popleft())
        while flight:
            yield self._gather(flight.popleft())

    def _gather(self, tasks: list[Any]) -> Chunked:
        out = Chunked()
        for part in self.ray.get(tasks):
            out.merge(part)
        return out

    def close(self) -> None:
        """Free the actors' GPUs and CPUs for the next build; Ray itself stays connected."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []

    def _start(self) -> list[Any]:
        if self.actors:
            return self.actors
        connect(self.ray, self.settings.ray.address)
        device, count, options = actor_plan(self.settings, self.ray.cluster_resources())
        threads = int(options["num_cpus"])
        remote = self.ray.remote(Worker).options(
            **options, max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES,
            runtime_env={"env_vars": forwarded_env()})
        self.actors = [remote.remote(self.settings, self.rebuild, device, threads)
                       for _ in range(count)]
        self._device = f"ray: {count} {device} actor{'s' if count > 1 else ''}"
        return self.actors


def connect(ray: Any, address: str | None) -> None:
    """Join the configured cluster (or ``RAY_ADDRESS``); else start Ray on this machine,
    bound to loopback. A process already connected (scheduler, tests) stays so."""
    if ray.is_initialized():
        return
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning"}
    with warnings.catch_warnings():  # lance(db) warn at every fork; Ray forks only to exec
        warnings.simplefilter("ignore")
        if address or os.environ.get("RAY_ADDRESS"):
            ray.init(address=address, **quiet)
        else:
            ray.init(_node_ip_address="127.0.0.1", **quiet)


def actor_plan(settings: Settings, resources: dict[str, float]) -> tuple[str, int, dict]:
    """(device, actor count, actor options): one actor per GPU share where the cluster
    has GPUs (unless ``device: cpu``), else CPU actors of up to ``CPUS_PER_ACTOR``."""
    gpus, cpus = resources.get("GPU", 0), max(1, int(resources.get("CPU", 1)))
    per_gpu = settings.ray.num_gpus_per_worker
    if settings.device == "cuda" and gpus < per_gpu:
        raise AcceleratorRequired("cuda", f"the Ray cluster has {gpus:g} GPU(s) and "
                                  f"ray.num_gpus_per_worker is {per_gpu:g}")
    if settings.device != "cpu" and gpus >= per_gpu:
        return "cuda", int(gpus // per_gpu), {"num_gpus": per_gpu, "num_cpus": 1}
    threads = min(CPUS_PER_ACTOR, cpus)
    return "cpu", max(1, cpus // threads), {"num_cpus": threads}


def forwarded_env() -> dict[str, str]:
    """Object-store credentials and hub settings the driver has, for its actors."""
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}
