"""The long form of the crash-convergence check: many SIGKILLed builds, each repaired.

    python -m bench.chaos --trials 100 [--files 40] [--workdir DIR]

Each trial kills a real `vq build` subprocess at a random moment (model load,
walk, chunking, encoding, chunk writes, manifest writes, optimize), runs a
normal build, and compares the tables with a clean build of the same tree.
Prints "N/N converged" and a JSON line with every trial.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    from core.encoder import shared_model
    from core.settings import load_settings
    from jobs.runner import locked_build
    from tests.reliability import harness

    encoder = shared_model("encoder", "all-MiniLM-L6-v2", "cpu")

    def in_process(config: Path) -> None:
        locked_build(load_settings(str(config)), encoder=encoder)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="vq-chaos-"))
    harness.write_vault(work / "timing-vault", 0, args.files)
    full = harness.timed_build(harness.write_config(work / "timing.yaml", work / "timing-vault",
                                                    work / "timing-index"))
    trials = []
    for seed in range(args.trials):
        phase = ("first", "incremental")[seed % 2]
        trial = harness.run_seed(work / f"seed{seed}", seed, full, args.files, in_process,
                                 phases=(phase,))[0]
        trials.append(trial)
        print(f"trial {seed}: {phase} killed after {trial.delay}s "
              f"({'killed' if trial.killed else 'finished first'}): "
              f"{'converged' if trial.converged else 'DIVERGED'}", file=sys.stderr, flush=True)
    ok = sum(t.converged for t in trials)
    killed = sum(t.killed for t in trials)
    print(f"{ok}/{len(trials)} converged ({killed} builds killed mid-run, "
          f"one full build here takes {full:.1f}s)")
    print(json.dumps({"converged": ok, "trials": len(trials), "killed": killed,
                      "full_build_seconds": round(full, 2),
                      "detail": [asdict(t) for t in trials]}))
    return 0 if ok == len(trials) else 1


if __name__ == "__main__":
    sys.exit(main())
