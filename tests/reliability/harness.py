"""Crash convergence: kill `vq build` with SIGKILL at random moments, rebuild, compare.

Shared by the test suite (a few seeds) and ``bench/chaos.py`` (the long form).
After every kill + normal rebuild, the ``chunks`` and ``files`` tables must
equal those of a clean full build of the same tree: same ids, paths, line
ranges and text hashes.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
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


def write_config(path: Path, vault: Path, index: Path, batch: int = 5) -> Path:
    data = {"index_dir": str(index), "device": "cpu", "write_batch_files": batch,
            "maintenance": {"cleanup_grace_minutes": 0},
            "vaults": {"v": {"path": str(vault)}}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def snapshot(index_dir: str) -> tuple[list[tuple], list[tuple]]:
    from core import store

    index = store.open_index(index_dir)
    chunk_cols = ["id", "vault", "path", "start_line", "end_line", "text_hash"]
    chunks = index.chunks.search().select(chunk_cols).limit(None).to_arrow().to_pylist()
    file_cols = ["vault", "path", "hash", "chunks", "error"]
    files = index.files.search().select(file_cols).limit(None).to_arrow().to_pylist()
    return (sorted(tuple(r[c] for c in chunk_cols) for r in chunks),
            sorted(tuple(r[c] for c in file_cols) for r in files))


def vq_build(config: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CI": "1"}
    return subprocess.Popen([sys.executable, "-m", "query.cli", "--config", str(config), "build"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            cwd=REPO)


def timed_build(config: Path) -> float:
    started = time.monotonic()
    proc = vq_build(config)
    _, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"build failed: {err.decode()[-2000:]}")
    return time.monotonic() - started


def kill_at(config: Path, delay: float) -> int | None:
    """Start a build and SIGKILL it after ``delay`` seconds; None if it finished first."""
    proc = vq_build(config)
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        try:
            proc.wait(timeout=min(0.05, max(0.0, deadline - time.monotonic())))
            return None
        except subprocess.TimeoutExpired:
            continue
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return proc.returncode


@dataclass
class Trial:
    seed: int
    phase: str           # "first" (empty index) or "incremental"
    delay: float
    killed: bool
    converged: bool


def subprocess_build(config: Path) -> None:
    timed_build(config)


def run_seed(workdir: Path, seed: int, full_seconds: float, files: int = 40,
             build: Callable[[Path], None] = subprocess_build,
             phases: tuple[str, ...] = ("first", "incremental")) -> list[Trial]:
    """Kill a first build and an incremental build at random moments; check both converge.

    ``full_seconds`` is how long an unkilled subprocess build takes, so kill
    times spread over model load, chunking, encoding, writes and optimize.
    ``build`` runs the reference and repair builds (in-process in the tests).
    """
    rng = random.Random(seed)
    vault, ref_index, index = workdir / "vault", workdir / "ref", workdir / "index"
    for p in (vault, ref_index, index):
        shutil.rmtree(p, ignore_errors=True)
    write_vault(vault, seed, files)
    ref_cfg = write_config(workdir / "ref.yaml", vault, ref_index)
    cfg = write_config(workdir / "vq.yaml", vault, index)
    trials = []
    if phases[0] == "incremental":
        build(cfg)  # start from a complete index
    for phase in phases:
        if phase == "incremental":
            mutate_vault(vault, seed)
        shutil.rmtree(ref_index, ignore_errors=True)
        build(ref_cfg)
        delay = rng.uniform(0.3, 1.0) * full_seconds
        code = kill_at(cfg, delay)
        build(cfg)  # a killed holder's lock must not block this build
        trials.append(Trial(seed, phase, round(delay, 2), code is not None,
                            snapshot(str(index)) == snapshot(str(ref_index))))
    return trials
