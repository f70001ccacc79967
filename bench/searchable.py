"""Searchable in seconds: when does a first build answer, as a share of its wall time?

A real `vq build` (bundled MiniLM, CPU) of a fresh index runs in a child process while
this process searches the index once a second, in-process (no torch: lexical needs no
model, hybrid takes the ONNX export the build writes before its first text commit):

- time to the first lexical hit and to the first hybrid hit (the dense pool non-empty),
  each as a share of the build's wall time;
- then, on a second fresh index, a build interrupted (SIGINT) at half that wall time,
  and the build after it: the chunks each encoded, against the full build's (the
  interrupted build's work is kept, so the two add up to the full build's, not more).

Corpora: the Node.js API docs of the dev set (``bench/devsets/nodejs``) and a generated
vault (``bench.genvault``, 10k files; ``--vault-files`` for a smaller one on a busy machine).

    python -m bench.searchable [--vault-files N] [--no-devset] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import genvault, quality
from bench.common import (
    REPO,
    bench_env,
    log,
    prepare_env,
    publish,
    scratch,
    settings_for,
    write_config,
)

POLL = 1.0  # seconds between the watcher's searches


def start_build(config: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config), "build",
                             "--json", "--no-progress"], cwd=REPO, env=bench_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def answers(settings: Any, text: str, method: str) -> bool:
    """True when ``method`` finds something (hybrid: with a non-empty dense pool)."""
    from vq.core.errors import VqError
    from vq.query.search import Query, search

    try:
        res = search(settings, Query(text, method, 5))
    except (VqError, OSError, ValueError, RuntimeError):
        return False  # no tables yet, or no full-text index yet
    if method == "hybrid":
        return bool(res.hits) and res.method == "hybrid" and res.pools.get("dense", 0) > 0
    return bool(res.hits)


def watched_build(config: Path, query: str) -> dict:
    """The build's wall time and when each kind of search first answered."""
    settings = settings_for(config)
    load_before = _load()
    proc, started = start_build(config), time.monotonic()
    first: dict[str, float] = {}
    while proc.poll() is None:
        for method in ("lexical", "hybrid"):
            if method not in first and answers(settings, query, method):
                first[method] = time.monotonic() - started
        time.sleep(POLL)  # the watcher's sampling period, not a wait for an event
    out, err = proc.communicate()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"vq build failed: {err.strip()[-400:]}")
    summary = json.loads(out)
    texts = summary["chunks_encoded"] + summary.get("sections_encoded", 0)
    res = {"wall_s": round(wall, 1), "chunks_encoded": summary["chunks_encoded"],
           "texts_encoded": texts,
           "chunks": summary["chunks_written"], "device": summary["device"],
           "load_avg_before": load_before, "load_avg_after": _load()}
    for method in ("lexical", "hybrid"):
        at = first.get(method)
        res[f"first_{method}_s"] = None if at is None else round(at, 1)
        res[f"first_{method}_share"] = None if at is None else round(at / wall, 3)
    return res


def _load() -> list[float]:
    """The 1/5/15-minute load averages: the machine may be shared while this runs."""
    return [round(x, 2) for x in os.getloadavg()]


def interrupted(config: Path, at: float) -> dict:
    """SIGINT at ``at`` seconds, then a build to the end: what each encoded."""
    proc = start_build(config)
    deadline = time.monotonic() + at
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # the moment of the interrupt, not a wait for an event
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate()
    first = json.loads(out) if out.strip() else {}
    proc2 = start_build(config)
    out2, err2 = proc2.communicate()
    if proc2.returncode != 0:
        raise RuntimeError(f"resumed build failed: {err2.strip()[-400:]}")
    second = json.loads(out2)
    return {"interrupted_at_s": round(at, 1), "exit": proc.returncode,
            "interrupted_outcome": first.get("outcome"),
            "interrupted_encoded": first.get("chunks_encoded", 0) + first.get(
                "sections_encoded", 0),
            "resumed_encoded": second["chunks_encoded"] + second.get("sections_encoded", 0)}


def case(name: str, root: Path, query: str, work: Path, resume: bool) -> dict:
    base = work / f"{name}-builds"  # never the corpus copy (``work/<set>/corpus``)
    shutil.rmtree(base, ignore_errors=True)
    vaults = {"docs": {"path": root, "kind": "docs", "include": ["*.md", "*.py"]}}
    log(f"searchable: {name}: watched first build")
    res = {"corpus": name, **watched_build(write_config(base / "a.yaml", base / "a", vaults),
                                           query)}
    log(f"searchable: {name}: {json.dumps(res)}")  # kept in the log if a later case dies
    if resume:
        log(f"searchable: {name}: interrupted at half time, then resumed")
        res.update(interrupted(write_config(base / "b.yaml", base / "b", vaults),
                               res["wall_s"] / 2))
        log(f"searchable: {name}: {json.dumps(res)}")
    return res


def run(work: Path, vault_files: int, devset: bool = True) -> dict:
    out: dict[str, Any] = {"cases": []}
    node = quality.devset_corpus(work) if devset else None
    if node is not None:
        first_query = quality.read_queries(node.queries)[0]["q"]
        out["cases"].append(case("nodejs-dev", node.root, first_query, work, resume=True))
    if not vault_files:
        return out
    root = work / "genvault"
    shutil.rmtree(root, ignore_errors=True)
    genvault.generate(root, genvault.Spec(vault_files, seed=3))
    out["cases"].append(case(f"genvault-{vault_files}", root, "release schedule", work,
                             resume=False))
    return out


def share(case: dict, method: str) -> str:
    at = case.get(f"first_{method}_s")
    return "never" if at is None else f"{at} s ({100 * case[f'first_{method}_share']:.0f}%)"


def markdown(res: dict) -> str:
    lines = ["| corpus | chunks | build wall s | first lexical hit | first hybrid hit | "
             "interrupted at half: texts encoded then + after (full build) | encoder | "
             "load avg (1 min) before / after |",
             "|---|---|---|---|---|---|---|---|"]
    for c in res["cases"]:
        resumed = (f"{c['interrupted_encoded']} + {c['resumed_encoded']} = "
                   f"{c['interrupted_encoded'] + c['resumed_encoded']} (full: "
                   f"{c.get('texts_encoded', c['chunks_encoded'])})"
                   if "resumed_encoded" in c else "-")
        lines.append(f"| {c['corpus']} | {c['chunks']} | {c['wall_s']} | {share(c, 'lexical')} | "
                     f"{share(c, 'hybrid')} | {resumed} | {c.get('device', '')} | "
                     f"{_first(c.get('load_avg_before'))} / {_first(c.get('load_avg_after'))} |")
    return "\n".join(lines) + "\n"


def _first(load: list[float] | None) -> str:
    return "-" if not load else str(load[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault-files", type=int, default=10_000, help="0: no generated vault")
    ap.add_argument("--no-devset", action="store_true", help="only the generated vault")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    prepare_env()
    res = run(scratch(args.work, "searchable"), args.vault_files, not args.no_devset)
    return publish(markdown(res), res, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
