"""Live freshness: save -> searchable latency under `vq watch`, and the
watcher's cost on a large tree.

- latency: a Watcher (the real one, real inotify events, the real model) runs on a
  thread; each sample writes a unique word into a file (an edit, a new file), or
  deletes one, and polls a lexical search (or the manifest, for deletes) until the
  index agrees. p50/p95 over the samples; then a 1,000-file burst, timed until all
  of them are in the manifest.
- through the service (``--service``): the user's `vq serve` watching the vault it
  holds; each sample edits a note and polls a whole lexical search through the
  service's socket until it answers with the new word (save -> searchable as a
  `vq search` sees it when the service answers it).
- cost: the same Watcher on a large generated tree (100k files by default), idle:
  the process's RSS before and after the watch is set up, and its CPU seconds per
  wall second while nothing changes.

    python -m bench.live [--files 60] [--samples 10] [--burst 1000] [--tree-files 100000]
                         [--tree DIR] [--service] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench import genvault
from bench.common import log, percentile, prepare_env, publish, scratch, settings_for, write_config

DEADLINE = 120.0


class _Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def event(self, event: str, message: str, level: int = 0, **fields: Any) -> None:
        self.lines.append(message)


def _poll(what: Any, deadline: float = DEADLINE) -> float:
    """Seconds until ``what()`` is true (polled every 10 ms), or raise."""
    start = time.perf_counter()
    while time.perf_counter() - start < deadline:
        if what():
            return time.perf_counter() - start
        time.sleep(0.01)
    raise RuntimeError(f"not within {deadline}s")


def _watching(settings: Any, **kwargs: Any) -> tuple[Any, threading.Event, threading.Thread]:
    from vq.jobs.watch import Watcher

    stop = threading.Event()
    watcher = Watcher(lambda: settings, _Log(), stop=stop, sweep=0, **kwargs)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    return watcher, stop, thread


def _found(settings: Any, word: str) -> bool:
    from vq.query.search import Query, search

    return bool(search(settings, Query(word, "lexical", 1)).hits)


def _indexed(settings: Any) -> set[str]:
    from vq.core.manifest import read_manifest
    from vq.core.store import open_for

    return {p for _, p in read_manifest(open_for(settings))}


def _built_vault(work: Path, name: str, files: int, seed: int) -> tuple[Path, Any, Any]:
    """A generated vault of ``files`` notes, built once with the real model: (root,
    settings, the build's summary); a 1 s debounce."""
    from vq.jobs.runner import locked_build

    root = work / f"{name}-vault"
    shutil.rmtree(root, ignore_errors=True)
    genvault.generate(root, genvault.Spec(files, seed=seed))
    config = write_config(work / f"{name}.yaml", work / f"{name}-index", {"v": {"path": root}},
                          watch_debounce_seconds=1.0)
    settings = settings_for(config)
    first = locked_build(settings)
    log(f"{name}: first build of {files} files, {first.chunks_written} chunks (real model)")
    return root, settings, first


def latency(work: Path, files: int, samples: int, burst: int) -> dict:
    root, settings, first = _built_vault(work, "live", files, 5)
    watcher, stop, thread = _watching(settings)
    try:
        probe = root / "zz-ready.md"
        _poll(lambda: probe.write_text(f"# ready {uuid.uuid4().hex}\n") and
              "zz-ready.md" in _indexed(settings) or False)
        notes = sorted(p for p in root.rglob("*.md") if p.name != "zz-ready.md")
        out: dict[str, Any] = {"files": files, "chunks": first.chunks_written,
                               "debounce_s": settings.watch_debounce_seconds}
        out["edit"] = _samples(samples, lambda i: _edit(settings, notes[i % len(notes)]))
        out["new_file"] = _samples(samples, lambda i: _new(settings, root, i))
        out["delete"] = _samples(samples, lambda i: _delete(settings, root, i))
        out["burst"] = _burst(settings, root, burst)
    finally:
        stop.set()
        thread.join(DEADLINE)
    return out


def _samples(n: int, one: Any) -> dict:
    took = [one(i) for i in range(n)]
    return {"n": n, "p50_s": round(percentile(took, 50), 3),
            "p95_s": round(percentile(took, 95), 3), "max_s": round(max(took), 3)}


def _edit(settings: Any, path: Path) -> float:
    word = "edit" + uuid.uuid4().hex[:12]
    path.write_text(path.read_text(encoding="utf-8") + f"\n\nAdded {word} here.\n",
                    encoding="utf-8")
    return _poll(lambda: _found(settings, word))


def _new(settings: Any, root: Path, i: int) -> float:
    word = "new" + uuid.uuid4().hex[:12]
    (root / f"live-new-{i:03}.md").write_text(f"# New {i}\n\nA fresh note about {word}.\n",
                                               encoding="utf-8")
    return _poll(lambda: _found(settings, word))


def _delete(settings: Any, root: Path, i: int) -> float:
    name = f"live-new-{i:03}.md"
    (root / name).unlink()
    return _poll(lambda: name not in _indexed(settings))


def _burst(settings: Any, root: Path, n: int) -> dict:
    folder = root / "burst"
    folder.mkdir()
    started = time.perf_counter()
    for i in range(n):
        (folder / f"b{i:04}.md").write_text(f"# Burst {i}\n\nBurst note number {i}.\n",
                                             encoding="utf-8")
    written = time.perf_counter() - started
    took = _poll(lambda: sum(p.startswith("burst/") for p in _indexed(settings)) == n,
                 deadline=1800.0)
    return {"files": n, "write_s": round(written, 3), "searchable_after_last_write_s":
            round(took, 3)}


def via_service(work: Path, files: int, samples: int) -> dict:
    """Save -> searchable through a `vq serve` that watches the index it holds."""
    import os
    import signal
    import subprocess

    from bench.common import REPO, bench_env
    from vq.query.service import client

    root, settings, _ = _built_vault(work, "served", files, 7)
    config = settings.config_file
    os.environ["XDG_RUNTIME_DIR"] = str(scratch(None, "live-run"))  # a service of our own
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config), "serve"],
                            cwd=REPO, env={**bench_env(), **os.environ, "VQ_WATCH": "true"},
                            stderr=subprocess.DEVNULL)

    def answers(word: str) -> bool:
        reply = client.search(settings, {}, {"text": word, "method": "lexical", "limit": 1,
                                             "filters": {}}, {"json": True})
        return bool(reply and reply["exit"] == 0)

    try:
        _poll(lambda: ((client.info() or {}).get("indexes") or [{}])[0].get("watch", {})
              .get("pid") == proc.pid)
        probe = root / "zz-ready.md"

        def live() -> bool:  # an event before the watch is registered is lost: write again
            word = "ready" + uuid.uuid4().hex[:12]
            probe.write_text(f"# {word}\n", encoding="utf-8")
            end = time.perf_counter() + 10.0
            while time.perf_counter() < end and not answers(word):
                time.sleep(0.05)
            return answers(word)

        _poll(live)
        notes = sorted(p for p in root.rglob("*.md") if p.name != "zz-ready.md")

        def edit(i: int) -> float:
            word = "served" + uuid.uuid4().hex[:12]
            path = notes[i % len(notes)]
            path.write_text(path.read_text(encoding="utf-8") + f"\n\nAdded {word}.\n",
                            encoding="utf-8")
            return _poll(lambda: answers(word))

        return {"files": files, "edit": _samples(samples, edit)}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=DEADLINE)


def idle_cost(work: Path, tree: Path | None, files: int, seconds: float) -> dict:
    """RSS and CPU of watching a large tree while nothing changes."""
    import resource

    if tree is None:
        tree = work / f"tree-{files}"
        if not tree.is_dir():
            genvault.generate(tree, genvault.Spec(files))
    config = write_config(work / "tree.yaml", work / "tree-index", {"v": {"path": tree}})
    settings = settings_for(config)
    folders = sum(1 for p in tree.rglob("*") if p.is_dir()) + 1
    rss_before = _rss_kib()
    watcher, stop, thread = _watching(settings)
    try:
        _poll(lambda: watcher.state.mode == "watching")
        time.sleep(5.0)  # a benchmark, not a test: let inotify add its watches
        rss_after = _rss_kib()
        cpu0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        time.sleep(seconds)
        cpu1, wall1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    finally:
        stop.set()
        thread.join(DEADLINE)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    return {"tree": str(tree), "folders": folders, "rss_before_mib": round(rss_before / 1024, 1),
            "rss_watching_mib": round(rss_after / 1024, 1),
            "rss_added_mib": round((rss_after - rss_before) / 1024, 1),
            "idle_seconds": seconds, "idle_cpu_percent": round(100 * cpu / (wall1 - wall0), 2)}


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def markdown(result: dict) -> str:
    lat = result.get("latency", {})
    rows = ["| case | samples | p50 | p95 | max |", "|---|---|---|---|---|"]
    for case in ("edit", "new_file", "delete"):
        if case in lat:
            c = lat[case]
            rows.append(f"| {case.replace('_', ' ')} | {c['n']} | {c['p50_s']} s | "
                        f"{c['p95_s']} s | {c['max_s']} s |")
    text = "\n".join(rows)
    if "burst" in lat:
        b = lat["burst"]
        text += (f"\n\n{b['files']}-file burst: written in {b['write_s']} s, all searchable "
                 f"{b['searchable_after_last_write_s']} s after the last write.")
    if "service" in result:
        c = result["service"]["edit"]
        text += (f"\n\nThrough the service (`vq serve` watching its index, a whole lexical "
                 f"search per poll): edit p50 {c['p50_s']} s, p95 {c['p95_s']} s, max "
                 f"{c['max_s']} s over {c['n']} samples.")
    if "idle" in result:
        i = result["idle"]
        text += (f"\n\nWatching {i['folders']:,} folders: RSS +{i['rss_added_mib']} MiB "
                 f"({i['rss_watching_mib']} MiB), idle CPU {i['idle_cpu_percent']}% over "
                 f"{i['idle_seconds']:g} s.")
    return text + "\n"


def run(work: Path, quick: bool = False, tree: Path | None = None) -> dict:
    """The `make bench` entry (``bench.run``): latency, then the idle cost."""
    return {"latency": latency(work, 60, 5 if quick else 10, 200 if quick else 1000),
            "idle": idle_cost(work, tree, 10_000 if quick else 100_000, 10.0 if quick else 30.0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--tree-files", type=int, default=100_000)
    ap.add_argument("--tree", type=Path, help="an existing tree to watch for the idle cost")
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    ap.add_argument("--skip", choices=("latency", "idle"))
    ap.add_argument("--service", action="store_true",
                    help="also save -> searchable through `vq serve` (the user's service)")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    prepare_env()
    work = scratch(args.work, "live")
    result: dict[str, Any] = {}
    if args.skip != "latency":
        result["latency"] = latency(work, args.files, args.samples, args.burst)
    if args.service:
        result["service"] = via_service(work, args.files, args.samples)
    if args.skip != "idle":
        result["idle"] = idle_cost(work, args.tree, args.tree_files, args.idle_seconds)
    return publish(markdown(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
