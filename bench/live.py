"""Live freshness: save -> searchable latency under `vq watch`, and the
watcher's cost on a large tree.

- latency: a Watcher (the real one, real inotify events, the real model) runs on a
  thread; each sample writes a unique word into a file (an edit, a new file), or
  deletes one, and polls a lexical search until it finds the word (gone, for a
  delete). p50/p95 over the samples; then a 1,000-file burst, timed until all
  of them are in the manifest.
- through the service: the user's `vq serve` watching the vault it holds; the same
  three cases, each polling a whole lexical search through the service's socket
  (save -> searchable as a `vq search` sees it when the service answers it).
- no-op: on a large generated tree (100k files by default), a no-op `vq build` (what
  cron and the watcher's sweep run on an unchanged tree) against a bare
  ``os.scandir`` stat walk, interleaved, best of N each (issue 38: ≤ 2×).
- cost: the same Watcher on that tree, idle: the process's RSS before and after the
  watch is set up, and its CPU seconds per wall second while nothing changes.

One run measures all of them (the issue's "in the same bench run"); ``--skip``
leaves parts out.

    python -m bench.live [--files 60] [--samples 20] [--burst 1000] [--tree-files 100000]
                         [--tree DIR] [--repeats 7] [--idle-seconds 30]
                         [--skip latency service noop idle] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench import genvault
from bench.common import (
    RandomEncoder,
    log,
    machine,
    percentile,
    prepare_env,
    publish,
    scratch,
    settings_for,
    timed,
    write_config,
)

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
    shutil.rmtree(work / f"{name}-index", ignore_errors=True)
    genvault.generate(root, genvault.Spec(files, seed=seed))
    config = write_config(work / f"{name}.yaml", work / f"{name}-index", {"v": {"path": root}},
                          watch_debounce_seconds=1.0)
    settings = settings_for(config)
    first = locked_build(settings)
    log(f"{name}: first build of {files} files, {first.chunks_written} chunks (real model)")
    return root, settings, first


def latency(work: Path, files: int, samples: int, burst: int) -> dict:
    root, settings, first = _built_vault(work, "live", files, 5)
    batches: list[Any] = []  # every batch's build summary: where its time went
    watcher, stop, thread = _watching(settings, on_batch=batches.append)
    try:
        probe = root / "zz-ready.md"
        _poll(lambda: probe.write_text(f"# ready {uuid.uuid4().hex}\n") and
              "zz-ready.md" in _indexed(settings) or False)
        out: dict[str, Any] = {"files": files, "chunks": first.chunks_written,
                               "debounce_s": settings.watch_debounce_seconds}
        quiet = lambda: not watcher.state.building and not watcher.pending  # noqa: E731
        out.update(_cases(lambda word: _found(settings, word), root, samples, quiet, batches))
        if burst:
            out["burst"] = _burst(settings, root, burst, quiet)
    finally:
        stop.set()
        thread.join(DEADLINE)
    return out


def _cases(found: Any, root: Path, samples: int, quiet: Any,
           batches: list[Any] | None = None) -> dict:
    """Edit, new file and delete, ``samples`` each, timed until ``found(word)`` agrees:
    a unique word appended to a note, in a new note, gone with the deleted note.
    Each save starts from a quiet watcher (``quiet()``: no batch building, nothing
    pending): a word is found when its text commits, before the batch has embedded it,
    and a save that lands during that batch waits for it (that case is the burst's).
    ``batches``: the watcher's build summaries, appended as it commits (each case then
    says the median seconds of its batches' stages)."""
    notes = sorted(p for p in root.rglob("*.md") if p.name != "zz-ready.md")
    words: dict[int, str] = {}

    def edit(i: int) -> float:
        word, path = "edit" + uuid.uuid4().hex[:12], notes[i % len(notes)]
        path.write_text(path.read_text(encoding="utf-8") + f"\n\nAdded {word} here.\n",
                        encoding="utf-8")
        return _poll(lambda: found(word))

    def new(i: int) -> float:
        words[i] = word = "new" + uuid.uuid4().hex[:12]
        (root / f"live-new-{i:03}.md").write_text(f"# New {i}\n\nA fresh note about {word}.\n",
                                                   encoding="utf-8")
        return _poll(lambda: found(word))

    def delete(i: int) -> float:
        (root / f"live-new-{i:03}.md").unlink()
        return _poll(lambda: not found(words[i]))

    out = {}
    for name, one in (("edit", edit), ("new_file", new), ("delete", delete)):
        start = len(batches or [])
        out[name] = _samples(samples, one, quiet)
        if batches:
            out[name]["batch_stages_median_s"] = _stages(batches[start:])
    return out


def _stages(summaries: list[Any]) -> dict[str, float]:
    names = sorted({k for s in summaries for k in s.seconds})
    return {k: round(statistics.median(s.seconds.get(k, 0.0) for s in summaries), 3)
            for k in names}


def _samples(n: int, one: Any, quiet: Any) -> dict:
    took = []
    for i in range(n):
        _poll(quiet)
        took.append(one(i))
    return {"n": n, "p50_s": round(percentile(took, 50), 3),
            "p95_s": round(percentile(took, 95), 3), "max_s": round(max(took), 3),
            "all_s": [round(t, 3) for t in took]}


def _burst(settings: Any, root: Path, n: int, quiet: Any) -> dict:
    folder = root / "burst"
    folder.mkdir()
    started = time.perf_counter()
    for i in range(n):
        (folder / f"b{i:04}.md").write_text(f"# Burst {i}\n\nBurst note number {i}.\n",
                                             encoding="utf-8")
    written = time.perf_counter() - started
    start = time.perf_counter()
    took = _poll(lambda: sum(p.startswith("burst/") for p in _indexed(settings)) == n,
                 deadline=1800.0)
    _poll(quiet, deadline=1800.0)  # the batch has embedded them too: dense search sees them
    return {"files": n, "write_s": round(written, 3), "searchable_after_last_write_s":
            round(took, 3), "embedded_after_last_write_s": round(time.perf_counter() - start, 3)}


def via_service(work: Path, files: int, samples: int) -> dict:
    """Save -> searchable through a `vq serve` that watches the index it holds."""
    import signal
    import subprocess

    from bench.common import REPO, bench_env
    from vq.core.watching import read_state
    from vq.query.service import client

    root, settings, _ = _built_vault(work, "served", files, 7)
    config = settings.config_file
    runtime, before = scratch(None, "live-run"), os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # a service of our own
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config), "serve"],
                            cwd=REPO, env={**bench_env(), **os.environ, "VQ_WATCH": "true"},
                            stderr=subprocess.DEVNULL)

    def answers(word: str) -> bool:
        reply = client.search(settings, {}, {"text": word, "method": "lexical", "limit": 1,
                                             "filters": {}}, {"json": True})
        if reply is None:  # never read as "gone": a delete would time nothing
            raise RuntimeError("the service did not answer")
        return bool(reply["exit"] == 0)

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

        def quiet() -> bool:
            state = read_state(settings.index_dir)
            return bool(state and not state.building and not state.pending_count)

        return {"files": files, **_cases(answers, root, samples, quiet)}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=DEADLINE)
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
        shutil.rmtree(runtime, ignore_errors=True)


def large_tree(work: Path, tree: Path | None, files: int) -> tuple[Path, Any]:
    """The large tree (generated unless given) and settings for an index of it; the
    no-op and the idle cost share both, so the watcher idles over a built index."""
    if tree is None:
        tree = work / f"tree-{files}"
        if not tree.is_dir():
            seconds, _ = timed(lambda: genvault.generate(tree, genvault.Spec(files)))
            log(f"tree: generated {files:,} files in {seconds:.0f}s")
    # no ANN index: a no-op never touches one, and building one over random vectors is
    # the latency bench's business
    config = write_config(work / "tree.yaml", work / "tree-index", {"v": {"path": tree}},
                          maintenance={"vector_index_min_rows": 0})
    return tree, settings_for(config)


def noop_vs_walk(tree: Path, settings: Any, repeats: int) -> dict:
    """A no-op `vq build` (what cron and the watcher's sweep run on an unchanged tree)
    against a bare ``os.scandir`` stat walk of the same tree: interleaved, best of
    ``repeats`` each (goal ≤ 2). The first build uses RANDOM UNIT VECTORS (encoding
    100k files on a CPU takes hours; a no-op encodes nothing)."""
    from bench.speed import stat_walk
    from vq.core.store import open_for
    from vq.jobs.runner import locked_build

    # an index kept in ``--work`` from an earlier run is only brought up to date
    seconds, first = timed(lambda: locked_build(settings, encoder=RandomEncoder()))
    chunks = open_for(settings).chunks.count_rows()
    log(f"noop: first build of {first.files_seen:,} files, {chunks:,} chunks "
        f"(random vectors; {first.chunks_written:,} written now) in {seconds:.0f}s")
    walks, noops, plans, work_done = [], [], set(), 0
    for _ in range(repeats):
        walks.append(timed(lambda: stat_walk(tree))[0])
        took, summary = timed(lambda: locked_build(settings, encoder=RandomEncoder()))
        noops.append(took)
        plans.add(summary.plan)
        work_done += summary.files_new + summary.files_changed + summary.chunks_encoded
    walk, noop = min(walks), min(noops)
    log(f"noop: best {noop:.3f}s vs walk {walk:.3f}s = {noop / walk:.2f}x")
    return {"files": first.files_seen, "chunks": chunks,
            "first_build_s_random_vectors": round(seconds, 1), "repeats": repeats,
            "stat_walk_best_s": round(walk, 3), "noop_best_s": round(noop, 3),
            "ratio_best": round(noop / walk, 2),
            "stat_walk_median_s": round(statistics.median(walks), 3),
            "noop_median_s": round(statistics.median(noops), 3),
            "ratio_median": round(statistics.median(noops) / statistics.median(walks), 2),
            "plans": sorted(plans), "noop_did_work": work_done}


def idle_cost(tree: Path, settings: Any, seconds: float) -> dict:
    """RSS and CPU of watching a large tree while nothing changes, in a fresh process
    (this one holds the model and the tables the other parts loaded): what a `vq watch`
    idling costs, before its first batch loads the model."""
    import subprocess

    from bench.common import REPO, bench_env

    folders = sum(1 for p in tree.rglob("*") if p.is_dir()) + 1
    files = sum(1 for p in tree.rglob("*") if p.is_file())
    proc = subprocess.run([sys.executable, "-m", "bench.live", "--idle-child",
                           str(settings.config_file), "--idle-seconds", str(seconds)],
                          cwd=REPO, env=bench_env(), capture_output=True, text=True,
                          timeout=DEADLINE + seconds, check=True)
    return {"tree": str(tree), "files": files, "folders": folders,
            **json.loads(proc.stdout.strip().splitlines()[-1])}


def _idle_here(config: Path, seconds: float) -> dict:
    import resource

    from vq.jobs.watch import Watcher  # noqa: F401 - imported before the RSS "before"

    settings = settings_for(config)
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
    return {"rss_before_mib": round(rss_before / 1024, 1),
            "rss_watching_mib": round(rss_after / 1024, 1),
            "rss_added_mib": round((rss_after - rss_before) / 1024, 1),
            "idle_seconds": seconds, "idle_cpu_percent": round(100 * cpu / (wall1 - wall0), 2)}


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _case_rows(lat: dict, where: str) -> list[str]:
    rows = []
    for case in ("edit", "new_file", "delete"):
        if case in lat:
            c = lat[case]
            stages = ", ".join(f"{k} {v}" for k, v in c.get("batch_stages_median_s", {}).items())
            rows.append(f"| {case.replace('_', ' ')} | {where} | {c['n']} | {c['p50_s']} s | "
                        f"{c['p95_s']} s | {c['max_s']} s | {stages or '–'} |")
    return rows


def markdown(result: dict) -> str:
    lat = result.get("latency", {})
    rows = ["| case | watcher | samples | p50 | p95 | max | a batch's stages, median s |",
            "|---|---|---|---|---|---|---|"]
    rows += _case_rows(lat, "in-process") + _case_rows(result.get("service", {}), "`vq serve`")
    text = "\n".join(rows) if len(rows) > 2 else "(no latency measured)"
    if lat.get("burst"):
        b = lat["burst"]
        text += (f"\n\n{b['files']}-file burst (in-process watcher): written in {b['write_s']} s, "
                 f"all searchable (lexically: in the manifest) "
                 f"{b['searchable_after_last_write_s']} s after the last write, all embedded "
                 f"{b.get('embedded_after_last_write_s', '–')} s after it.")
    if "noop" in result:
        n = result["noop"]
        text += (f"\n\nNo-op `vq build` vs a bare `os.scandir` stat walk, {n['files']:,} files "
                 f"({n['chunks']:,} chunks, random vectors), interleaved, best of {n['repeats']}: "
                 f"{n['noop_best_s']} s vs {n['stat_walk_best_s']} s = **{n['ratio_best']}×** "
                 f"(goal ≤ 2; medians {n['noop_median_s']} s vs {n['stat_walk_median_s']} s = "
                 f"{n['ratio_median']}×; plan {', '.join(n['plans'])}; work done "
                 f"{n['noop_did_work']}).")
    if "idle" in result:
        i = result["idle"]
        text += (f"\n\nA watcher process (vq imported, no model yet) watching {i['files']:,} "
                 f"files in {i['folders']:,} folders: RSS {i['rss_watching_mib']} MiB, "
                 f"{i['rss_added_mib']} MiB of it added by setting up the watch; idle CPU "
                 f"{i['idle_cpu_percent']}% over {i['idle_seconds']:g} s.")
    return text + "\n"


def run(work: Path, quick: bool = False, tree: Path | None = None) -> dict:
    """The `make bench` entry (``bench.run``): latency, the no-op, then the idle cost."""
    files = 10_000 if quick else 100_000
    out = {"latency": latency(work, 60, 5 if quick else 20, 200 if quick else 1000),
           "service": via_service(work, 60, 5 if quick else 20)}
    tree, settings = large_tree(work, tree, files)
    out["noop"] = noop_vs_walk(tree, settings, 5 if quick else 7)
    out["idle"] = idle_cost(tree, settings, 10.0 if quick else 30.0)
    return out


PARTS = ("latency", "service", "noop", "idle")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--tree-files", type=int, default=100_000)
    ap.add_argument("--tree", type=Path, help="an existing tree for the no-op and idle cost")
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    ap.add_argument("--repeats", type=int, default=7, help="no-op and walk: best of N each")
    ap.add_argument("--skip", choices=PARTS, nargs="+", default=[])
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--idle-child", type=Path, help=argparse.SUPPRESS)  # idle_cost's process
    args = ap.parse_args(argv)
    prepare_env()
    if args.idle_child:
        print(json.dumps(_idle_here(args.idle_child, args.idle_seconds)))
        return 0
    work = scratch(args.work, "live")
    result: dict[str, Any] = {"command": " ".join(["python -m bench.live", *sys.argv[1:]]),
                              "machine": machine()}
    if "latency" not in args.skip:
        result["latency"] = latency(work, args.files, args.samples, args.burst)
    if "service" not in args.skip:
        result["service"] = via_service(work, args.files, args.samples)
    if "noop" not in args.skip or "idle" not in args.skip:
        tree, settings = large_tree(work, args.tree, args.tree_files)
        if "noop" not in args.skip:
            result["noop"] = noop_vs_walk(tree, settings, args.repeats)
        if "idle" not in args.skip:
            result["idle"] = idle_cost(tree, settings, args.idle_seconds)
    result["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return publish(markdown(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
