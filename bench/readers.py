"""The long form of the concurrent-readers check: searches never fail during builds.

    python -m bench.readers [--readers 4] [--rounds 10] [--workdir DIR]

Reader processes (alternately lexical and hybrid) search without pause while a
writer process runs ``--rounds`` builds, each after edits, deletions and additions,
with version cleanup on (grace 1.2 s, so old versions really go while readers
read). Prints how many searches ran, the errors (must be none) and the hits that
name a row no committed version held (must be none), then a JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.common import scratch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    from tests.reliability import readers

    work = scratch(args.workdir, "readers")
    methods = tuple(("lexical", "hybrid")[i % 2] for i in range(args.readers))
    started = time.monotonic()
    report = readers.run(work, rounds=args.rounds, methods=methods, timeout=3600)
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
