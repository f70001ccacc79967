"""The long form of the crash-convergence check: many SIGKILLed builds, each repaired.

    python -m tests.reliability.chaos --trials 100 [--files 40] [--workdir DIR]

Each trial kills a real `vq build` subprocess (see ``harness.kill_build``: before
its first write, at a random moment of its working time, or just after its k-th
write), runs a normal build, and compares the tables with a clean build of the
same tree. Prints "N/N converged" with where the kills landed, and a JSON line
with every trial.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from tests.reliability import harness


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    from vq.core.encoder import shared_model
    from vq.core.settings import load_settings
    from vq.jobs.runner import locked_build

    encoder = shared_model("encoder", "all-MiniLM-L6-v2", "cpu")

    def in_process(config: Path) -> None:
        locked_build(load_settings(str(config)), encoder=encoder)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="vq-chaos-"))
    timing = harness.timings(work / "timing", args.files)
    for phase, t in timing.items():
        print(f"timing: a {phase} build first writes at {t.first_write:.2f}s, makes "
              f"{t.writes} writes the watcher sees, exits at {t.total:.2f}s",
              file=sys.stderr, flush=True)
    trials = []
    for seed in range(args.trials):
        phase = ("first", "incremental")[seed % 2]
        trial = harness.run_seed(work / f"seed{seed}", seed, timing, args.files, in_process,
                                 phases=(phase,))[0]
        trials.append(trial)
        k = trial.kill
        when = f"killed at {k.at}s after {k.writes_seen} writes" if k.killed else "finished"
        print(f"trial {seed}: {phase}, {k.mode}: {when}: "
              f"{'converged' if trial.converged else 'DIVERGED'}", file=sys.stderr, flush=True)
    print(summary_line(trials))
    print(json.dumps({"converged": sum(t.converged for t in trials), "trials": len(trials),
                      "timing": {p: asdict(t) for p, t in timing.items()},
                      "detail": [asdict(t) for t in trials]}))
    return 0 if all(t.converged for t in trials) else 1


def summary_line(trials: list) -> str:
    """"N/N converged" with where the kills landed."""
    killed = [t for t in trials if t.kill.killed]
    modes = Counter(t.kill.mode for t in killed)
    after_write = sum(t.kill.writes_seen > 0 for t in killed)
    return (f"{sum(t.converged for t in trials)}/{len(trials)} converged; "
            f"{len(killed)} builds SIGKILLed ({after_write} after they had started writing; "
            + ", ".join(f"{m} {n}" for m, n in sorted(modes.items())) + ")")


if __name__ == "__main__":
    sys.exit(main())
