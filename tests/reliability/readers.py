"""Concurrent readers: builds loop in one process while readers search in others.

Every reader result must name a row that existed in some committed version:
the writer records the chunk ids after each build; rows of an unfinished
build are a subset of the ids before and after it, so the union covers them.

The long form (about 3 minutes on two cores at 50 rounds; docs/decisions.md#concurrent-readers):

    python -m tests.reliability.readers [--readers 4] [--rounds 10] [--workdir DIR]

prints how many searches ran, the errors (must be none) and the hits that name a
row no committed version held (must be none), then a JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.processes import reap
from tests.reliability.harness import REPO, mutate_vault, write_config, write_vault

WRITER = """
import json, sys
from pathlib import Path
from vq.core.settings import load_settings
from vq.jobs.runner import locked_build
from tests.reliability.harness import mutate_vault, snapshot
cfg, vault, out, rounds = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
settings = load_settings(cfg)
with out.open("a") as fh:
    for r in range(rounds):
        mutate_vault(vault, 100 + r)
        locked_build(settings)
        ids = [c[0] for c in snapshot(settings.index_dir)[0]]
        fh.write(json.dumps(ids) + "\\n"); fh.flush()
"""

READER = """
import json, sys, time, traceback
from pathlib import Path
from vq.core.settings import load_settings
from vq.query.search import Query, search
cfg, method, stop, out = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
settings = load_settings(cfg)
seen, errors, count = set(), [], 0
words = ["lock", "index", "vector", "release", "crash repair", "reader writer", "edit"]
while not stop.exists():
    try:
        res = search(settings, Query(words[count % len(words)], method=method, limit=10))
        seen.update(h.id for h in res.hits)
    except Exception:
        errors.append(traceback.format_exc()[-800:])
    count += 1
out.write_text(json.dumps({"searches": count, "errors": errors, "seen": sorted(seen)}))
"""


def python(code: str, *args: str | Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: float) -> tuple[int, str]:
    """Wait for a `python` process, reading its stderr as it goes (a full pipe would stall
    it); returns (exit code, stderr). Whatever happens (a timeout too), the process is
    reaped and its pipe closed, so no unclosed file is left for the garbage collector."""
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        reap(proc)
    return proc.returncode, err


def run(workdir: Path, rounds: int = 4, methods: tuple[str, ...] = ("lexical", "hybrid"),
        grace_minutes: float = 0.02, timeout: float = 600, model: str | None = None) -> dict:
    """Returns {"searches", "errors", "unknown_ids", "builds"} over all readers."""
    vault, index = workdir / "vault", workdir / "index"
    write_vault(vault, 7, 30)
    cfg = write_config(workdir / "vq.yaml", vault, index, batch=5, model=model)
    text = cfg.read_text().replace("cleanup_grace_minutes: 0",
                                   f"cleanup_grace_minutes: {grace_minutes}")
    cfg.write_text(text)
    log, stop = workdir / "committed.jsonl", workdir / "stop"
    code, err = finish(python(WRITER, cfg, vault, log, 1), timeout)
    assert code == 0, err[-2000:]
    outs = [workdir / f"reader{i}.json" for i in range(len(methods))]
    readers = [python(READER, cfg, m, stop, o) for m, o in zip(methods, outs, strict=True)]
    writer = python(WRITER, cfg, vault, log, rounds)
    try:
        code, err = finish(writer, timeout)
        assert code == 0, err[-2000:]
    finally:
        stop.touch()
        deadline = time.monotonic() + timeout
        for r in readers:
            finish(r, max(1.0, deadline - time.monotonic()))
    committed = set().union(*(json.loads(line) for line in log.read_text().splitlines()))
    results = [json.loads(o.read_text()) for o in outs]
    seen = set().union(*(r["seen"] for r in results))
    return {"searches": sum(r["searches"] for r in results),
            "errors": [e for r in results for e in r["errors"]],
            "unknown_ids": sorted(seen - committed), "builds": rounds + 1}


__all__ = ["run", "mutate_vault"]


def main(argv: list[str] | None = None) -> int:
    """Reader processes (alternately lexical and hybrid) search while ``--rounds`` builds
    run, with version cleanup on (grace 1.2 s, so old versions really go while they read)."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="vq-readers-"))
    methods = tuple(("lexical", "hybrid")[i % 2] for i in range(args.readers))
    started = time.monotonic()
    report = run(work, rounds=args.rounds, methods=methods, timeout=3600)
    seconds = time.monotonic() - started
    ok = not report["errors"] and not report["unknown_ids"]
    print(f"{report['searches']} searches by {args.readers} readers "
          f"({', '.join(methods)}) during {report['builds']} builds in {seconds:.0f}s: "
          f"{len(report['errors'])} errors, {len(report['unknown_ids'])} hits outside "
          f"every committed version")
    print(json.dumps({**report, "readers": args.readers, "seconds": round(seconds, 1)}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
