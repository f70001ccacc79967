"""Crash convergence: kill `vq build` with SIGKILL at random moments, rebuild, compare.

Shared by the test suite (a few seeds) and ``tests/reliability/chaos.py`` (the long form).
After every kill + normal rebuild, the ``chunks`` and ``files`` tables must
equal those of a clean full build of the same tree: same ids, paths, line
ranges and text hashes.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.processes import reap

REPO = Path(__file__).resolve().parents[2]
TEST_MODEL = "vq-test/hash-384"  # deterministic, no torch: see vq.core.hash_encoder
WORDS = ["lock", "index", "vector", "chunk", "heading", "schedule", "cron", "deploy",
         "rollback", "release", "model", "encode", "query", "filter", "vault", "manifest",
         "crash", "repair", "version", "reader", "writer", "table"]


def write_vault(root: Path, seed: int, files: int = 40) -> None:
    """A reproducible tree of Markdown notes with several sections each."""
    rng = random.Random(seed)
    for i in range(files):
        sections = []
        for s in range(rng.randint(1, 4)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
            sections.append(f"## Part {s} {rng.choice(WORDS)}\n\n{words}.\n")
        path = root / f"d{i % 5}" / f"note{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\n" + "\n".join(sections), encoding="utf-8")


def mutate_vault(root: Path, seed: int) -> None:
    """Edits, deletions and additions, so an incremental build has all three to do."""
    rng = random.Random(seed + 1000)
    files = sorted(root.rglob("*.md"))
    for path in rng.sample(files, k=min(6, len(files))):
        path.write_text(path.read_text() + f"\n## Added\n\n{rng.choice(WORDS)} edit {seed}\n")
    for path in rng.sample(files, k=min(3, len(files))):
        if path.exists():
            path.unlink()
    for i in range(5):
        (root / f"new{seed}_{i}.md").write_text(f"# New {i}\n\nfresh {rng.choice(WORDS)}\n")


def write_config(path: Path, vault: Path, index: Path | str, batch: int = 5,
                 model: str | None = None) -> Path:
    """``model``: e.g. ``TEST_MODEL`` (needs VQ_TEST_MODELS=1) to skip the model load."""
    data: dict = {"index_dir": str(index), "device": "cpu", "write_batch_files": batch,
                  "maintenance": {"cleanup_grace_minutes": 0},
                  "vaults": {"v": {"path": str(vault)}}}
    if model:
        data["model"] = model
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def snapshot(index_dir: str) -> tuple[list[tuple], list[tuple]]:
    from vq.core import store

    index = store.open_index(index_dir)
    chunk_cols = ["id", "vault", "path", "start_line", "end_line", "text_hash", "embedded"]
    data = index.chunks.search().select(chunk_cols[:-1] + ["vector"]).limit(None).to_arrow()
    chunks = [{**row, "embedded": row.pop("vector") is not None} for row in data.to_pylist()]
    file_cols = ["vault", "path", "hash", "chunks", "error"]
    files = index.files.search().select(file_cols).limit(None).to_arrow().to_pylist()
    return (sorted(tuple(r[c] for c in chunk_cols) for r in chunks),
            sorted(tuple(r[c] for c in file_cols) for r in files))


def vq_build(config: Path, *args: str) -> subprocess.Popen:
    """`vq build` (with ``args``, e.g. ``--rebuild``) in a subprocess."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CI": "1"}
    return subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config), "build",
                             *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env, cwd=REPO)


def index_state(index: Path) -> tuple[int, int]:
    """(entries, bytes) of the index's tables (``*.lance``; the lock files beside them do
    not count): it moves with every write a build makes to them."""
    entries = size = 0
    for folder, dirs, files in os.walk(index):
        if Path(folder) == index:
            dirs[:] = [d for d in dirs if d.endswith(".lance")]
            continue
        entries += len(dirs) + len(files)
        for name in files:
            with contextlib.suppress(OSError):  # removed by a cleanup while we looked
                size += os.stat(os.path.join(folder, name)).st_size
    return entries, size


class Watch:
    """A running `vq build` and the writes it has made so far, seen by polling its index."""

    def __init__(self, config: Path, index: Path, args: tuple[str, ...] = ()) -> None:
        self.index, self.started = index, time.monotonic()
        self.last = index_state(index)
        self.changes: list[float] = []   # seconds after start at which a write was seen
        self.proc = vq_build(config, *args)

    def poll(self) -> bool:
        """Record a write if one happened; False once the build has exited."""
        alive = self.proc.poll() is None
        now = index_state(self.index)
        if now != self.last:
            self.last = now
            self.changes.append(time.monotonic() - self.started)
        return alive

    def until(self, done: Callable[[], bool], timeout: float = 600) -> bool:
        """Poll until ``done()``; False if the build exited first. A build still running
        after ``timeout`` seconds is killed and fails the trial loudly."""
        deadline = time.monotonic() + timeout
        while self.poll():
            if done():
                return True
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"vq build still running after {timeout:.0f}s")
            time.sleep(0.005)  # polling interval of the watcher, not a wait for an event
        return False

    def kill(self) -> None:
        """SIGKILL the build if it still runs, reap it and close its pipe."""
        reap(self.proc)


@dataclass
class Timing:
    """An unkilled build watched from outside: when it first wrote, how many writes it
    made that the watcher saw, and when it exited (seconds after start)."""

    first_write: float
    writes: int
    total: float


def watched_build(config: Path, index: Path) -> Timing:
    watch = Watch(config, index)
    watch.until(lambda: False)
    finish(watch.proc)
    total = time.monotonic() - watch.started
    first = watch.changes[0] if watch.changes else total
    return Timing(first, len(watch.changes), total)


def timings(workdir: Path, files: int, model: str | None = None) -> dict[str, Timing]:
    """How a first and an incremental build of a seed-0 vault spend their time here."""
    vault, index = workdir / "vault", workdir / "index"
    write_vault(vault, 0, files)
    cfg = write_config(workdir / "t.yaml", vault, index, model=model)
    first = watched_build(cfg, index)
    mutate_vault(vault, 0)
    return {"first": first, "incremental": watched_build(cfg, index)}


@dataclass
class Kill:
    mode: str            # "startup", "working" or "at-write"
    at: float            # seconds after start when SIGKILL was sent (0: it finished first)
    writes_seen: int     # writes the watcher saw before the kill
    killed: bool


def kill_build(config: Path, index: Path, timing: Timing, rng: random.Random,
               within: float = 1.0) -> Kill:
    """Start a build and SIGKILL it at a moment drawn from three kinds, so kills land in
    every stage, not only in the seconds of imports and model load before any write:

    - ``startup`` (15%): uniformly before the first write (imports, model load, walk);
    - ``working`` (45%): uniformly over the build's working time after its first write
      (chunking, encoding, chunk and manifest writes, optimize);
    - ``at-write`` (40%): a few milliseconds after the k-th write the watcher sees.

    ``within`` < 1 draws the working and at-write moments from that first fraction of
    the build only, so a test's kill lands while the build still runs (a kill that
    never fired proves nothing, and the tests fail on one).
    """
    roll = rng.random()
    watch = Watch(config, index)
    if roll < 0.15:
        mode, deadline = "startup", rng.uniform(0.2, 1.0) * timing.first_write
        alive = watch.until(lambda: time.monotonic() - watch.started >= deadline)
    elif roll < 0.6:
        mode, extra = "working", rng.uniform(0, within * (timing.total - timing.first_write))
        alive = watch.until(lambda: bool(watch.changes))
        mark = time.monotonic()
        alive = alive and watch.until(lambda: time.monotonic() - mark >= extra)
    else:
        mode, k = "at-write", rng.randint(1, max(1, int(within * timing.writes)))
        alive = watch.until(lambda: len(watch.changes) >= k)
        mark, jitter = time.monotonic(), rng.uniform(0, 0.02)
        alive = alive and watch.until(lambda: time.monotonic() - mark >= jitter)
    return _kill(watch, mode, alive)


def kill_in_phase(config: Path, index: Path, phase: str, rng: random.Random,
                  jitter: float = 0.02, args: tuple[str, ...] = ()) -> Kill:
    """SIGKILL a build (`vq build` + ``args``) a few milliseconds after its progress
    record (beside the lock in ``index``) first names ``phase`` (e.g. "embed": while
    rows wait for vectors)."""
    from vq.core.build_progress import read_record

    watch = Watch(config, index, args)
    lock = index / "build.lock"
    alive = watch.until(lambda: (read_record(lock) or {}).get("phase") == phase)
    mark, wait = time.monotonic(), rng.uniform(0, jitter)
    alive = alive and watch.until(lambda: time.monotonic() - mark >= wait)
    return _kill(watch, phase, alive)


@dataclass
class Trial:
    seed: int
    phase: str           # "first" (empty index) or "incremental"
    kill: Kill
    converged: bool


def finish(proc: subprocess.Popen) -> None:
    """Wait for an unkilled build; a failed one stops the run with its stderr."""
    _, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"build failed: {err.decode()[-2000:]}")


def subprocess_build(config: Path) -> None:
    finish(vq_build(config))


def run_seed(workdir: Path, seed: int, timing: dict[str, Timing], files: int = 40,
             build: Callable[[Path], None] = subprocess_build,
             phases: tuple[str, ...] = ("first", "incremental"), model: str | None = None,
             within: float = 1.0) -> list[Trial]:
    """Kill a first and/or an incremental build (see ``kill_build``); check each converges
    (the same rows, every one with its vectors).

    ``timing``: ``timings()`` of this machine (with the same ``model``). ``build`` runs
    the reference and repair builds (in-process in the tests).
    """
    rng = random.Random(seed)
    vault, ref_index, index = workdir / "vault", workdir / "ref", workdir / "index"
    for p in (vault, ref_index, index):
        shutil.rmtree(p, ignore_errors=True)
    write_vault(vault, seed, files)
    ref_cfg = write_config(workdir / "ref.yaml", vault, ref_index, model=model)
    cfg = write_config(workdir / "vq.yaml", vault, index, model=model)
    trials = []
    if phases[0] == "incremental":
        build(cfg)  # start from a complete index
    for phase in phases:
        if phase == "incremental":
            mutate_vault(vault, seed)
        shutil.rmtree(ref_index, ignore_errors=True)
        build(ref_cfg)
        kill = kill_build(cfg, index, timing[phase], rng, within)
        build(cfg)  # a killed holder's lock must not block this build
        trials.append(Trial(seed, phase, kill, snapshot(str(index)) == snapshot(str(ref_index))))
    return trials


def _kill(watch: Watch, mode: str, alive: bool) -> Kill:
    """SIGKILL the watched build now (if it still runs) and say when and where it died."""
    at = time.monotonic() - watch.started
    watch.kill()
    return Kill(mode, round(at, 3) if alive else 0.0, len(watch.changes), alive)
