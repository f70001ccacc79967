"""What every benchmark shares: where things are, the machine, timing, configs, processes.

Benchmarks report ratios measured in one run (vq vs a baseline on the same
data), never a bare wall-clock number that a test could assert on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
MODEL = "all-MiniLM-L6-v2"


def eval_dir() -> Path:
    """The shared eval set: ``$VQ_EVAL_DIR``, else ``../shared/eval`` beside the repo."""
    override = os.environ.get("VQ_EVAL_DIR")
    return Path(override) if override else REPO.parent / "shared" / "eval"


# offline, plain output, and a timed search never starts a service (a bench that
# measures one starts it itself)
BENCH_VARIABLES = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "NO_COLOR": "1",
                   "VQ_SEARCH__AUTOSTART": "false"}


def bench_env() -> dict[str, str]:
    """The environment for child processes: offline, no user config, no stray VQ_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VQ_")}
    env.update(BENCH_VARIABLES)
    return env


def prepare_env() -> None:
    """In-process runs see what child processes see: offline, no stray VQ_* settings."""
    for name in [n for n in os.environ if n.startswith("VQ_") and not n.startswith("VQ_BENCH")]:
        if name != "VQ_EVAL_DIR":
            del os.environ[name]
    os.environ.update(BENCH_VARIABLES)


def write_config(path: Path, index_dir: Path, vaults: dict[str, dict], **extra: Any) -> Path:
    """A vq config for one benchmark case; nothing is read from the user's config."""
    data = {"index_dir": str(index_dir), "model": MODEL, "device": "cpu",
            "vaults": {vid: {**spec, "path": str(spec["path"])} for vid, spec in vaults.items()}}
    data.update(extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def settings_for(config: Path) -> Any:
    from vq.core.settings import load_settings

    return load_settings(str(config))


# -- timing ---------------------------------------------------------------------------------

def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of an empty sample")
    rank = max(1, -(-len(ordered) * pct // 100))  # ceil without floats drifting
    return ordered[int(min(rank, len(ordered))) - 1]


def latency_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean in milliseconds from samples in seconds."""
    ms = [s * 1000 for s in samples]
    return {"p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
            "mean_ms": round(statistics.fmean(ms), 2), "n": len(ms)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


@dataclass(frozen=True)
class Proc:
    """A finished child process: exit code, wall seconds, peak RSS, output."""

    rc: int
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str


# A tiny launcher runs each measured command: a child forked from this (large) process
# would report this process's RSS as its own peak, one forked from the launcher does not.
LAUNCHER = """
import json, os, sys, time
t = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump({"rc": os.waitstatus_to_exitcode(status), "s": time.perf_counter() - t,
               "kb": usage.ru_maxrss}, fh)
"""


def run_proc(args: Sequence[str], cwd: Path | None = None, timeout: float = 3600) -> Proc:
    """Run a command; its wall time and peak RSS are measured around it alone."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(stats),
                                  *map(str, args)], cwd=cwd, env=bench_env(), text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(child.pid, signal.SIGKILL)  # the launcher and what it started
            child.communicate()
            raise RuntimeError(f"timed out after {timeout}s: {' '.join(map(str, args))}") from exc
        if not stats.exists():
            raise RuntimeError(f"launcher failed: {err.strip()[-400:]}")
        data = json.loads(stats.read_text())
    return Proc(data["rc"], data["s"], round(data["kb"] / 1024, 1), out, err)


def vq(*args: str | Path, timeout: float = 3600) -> Proc:
    """``vq ARGS`` in a fresh interpreter, as a shell or cron would run it."""
    script = Path(sys.executable).parent / "vq"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "vq"]
    return run_proc([*cmd, *map(str, args)], cwd=REPO, timeout=timeout)


# -- the machine ------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    """Where the numbers came from: cores, memory, CPU model, device, versions."""
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version(),
                            "cores": os.cpu_count(), "cpu": _cpu_model(),
                            "memory_gb": _memory_gb()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        info["device"] = (f"cuda ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available()
                          else "cpu")
    except ImportError:
        info["device"] = "cpu"
    for name in ("lancedb", "sentence_transformers", "bm25s"):
        info[name] = _version(name)
    info["sqlite"] = __import__("sqlite3").sqlite_version
    info["git"] = _git_state()
    info["load_avg_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def _git_state() -> str:
    """The commit measured, and whether the working tree differed from it (read-only git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    changed = len(dirty.splitlines())
    return f"{head} + {changed} modified files" if changed else head


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module.replace("_", "-"))
    except Exception:  # noqa: BLE001 - a missing optional package is reported as None
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return round(pages * size / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


# -- random vectors where encoding is not what is measured ------------------------------------

class RandomEncoder:
    """Stands in for the model when a benchmark measures everything but encoding.

    Vectors are unit-length and deterministic per text (seeded by its hash),
    so reruns write identical tables. Every result that used it says so.
    """

    def __init__(self, dim: int = 384, model_name: str = MODEL) -> None:
        from vq.core.encoder import Device

        self.dim, self.model_name, self.batch_size = dim, model_name, 64
        self.device = Device("cpu", "bench: random unit vectors, no model")
        self.calls = 0
        self.texts: list[str] = []  # every text asked for, in order (what a build encodes)

    def encode(self, texts: list[str], progress: Any = None) -> Any:
        import numpy as np

        self.calls += len(texts)
        self.texts.extend(texts)
        seed = int.from_bytes(hashlib.blake2b("\0".join(texts).encode(),
                                              digest_size=8).digest(), "little")
        out = unit_vectors(len(texts), self.dim, seed)
        if progress:
            progress(len(texts))
        return out.astype(np.float32)


def unit_vectors(n: int, dim: int, seed: int) -> Any:
    import numpy as np

    vecs = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs


def scratch(given: Path | None, name: str) -> Path:
    """The folder a benchmark works in: ``--work`` when given, else a fresh temp dir."""
    import tempfile

    return given or Path(tempfile.mkdtemp(prefix=f"vq-bench-{name}-"))


def publish(markdown: str, result: Any, json_path: Path | None) -> int:
    """Tables to stdout, the raw result to ``json_path`` when asked; the exit status."""
    print(markdown)
    if json_path:
        save_json(json_path, result)
    return 0


def save_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def log(msg: str) -> None:
    """Progress talk goes to stderr; stdout carries the tables."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def serving(config: Path | str, timeout: float = 600) -> Iterator[int]:
    """`vq serve` for the config's index, answering whole searches before the timed runs;
    yields its pid and stops it after."""
    from vq.core.settings import load_settings
    from vq.query.service import client

    settings = load_settings(str(config))
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config), "serve"],
                            cwd=REPO, env=bench_env(), stderr=subprocess.DEVNULL)
    probe = {"text": "warm up", "method": "hybrid", "limit": 1, "filters": {}}
    try:
        deadline = time.monotonic() + timeout
        while not client.search(settings, {}, probe, {"json": True}):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("vq serve did not come up")
            time.sleep(0.1)  # polling interval while the model and vectors load
        yield proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
