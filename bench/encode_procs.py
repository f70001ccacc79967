"""CPU encode throughput: one process against N encode processes (``encode_processes``).

    python -m bench.encode_procs [--chunks 480] [--processes 2] [--batch 32] [--rounds 3]

Both encoders get the same chunk-shaped texts (``genvault.chunk_like_texts``);
rounds alternate between them so background load hits both alike. The pool's
start (spawning workers that import torch) is timed apart from its throughput:
a one-off build pays it, a long-lived scheduler pays it once. Prints JSON with
the machine, chunks/s for each form and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import MODEL, machine, prepare_env
from bench.genvault import chunk_like_texts


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run(chunks: int, processes: int, batch: int, rounds: int) -> dict[str, Any]:
    import numpy as np

    from vq.core.encoder import Encoder

    info = machine()  # before the run: its load average is the one at the start
    texts = chunk_like_texts(chunks)
    single = Encoder(MODEL, "cpu", batch)
    pooled = Encoder(MODEL, "cpu", batch, processes=processes)
    single.encode(texts[:batch])  # first-call costs out of the measurement
    start_s, _ = timed(pooled.start_pool)
    pooled.encode(texts[:batch * processes * 2])
    seconds: dict[str, list[float]] = {"1": [], str(processes): []}
    vectors: dict[str, Any] = {}
    for _ in range(rounds):
        for key, enc in (("1", single), (str(processes), pooled)):
            took, vectors[key] = timed(lambda enc=enc: enc.encode(texts))
            seconds[key].append(took)
    pooled.close()
    rate = {k: chunks / statistics.median(v) for k, v in seconds.items()}
    diff = float(np.abs(vectors["1"] - vectors[str(processes)]).max())
    import torch

    return {"machine": info, "chunks": chunks, "batch_size": batch, "rounds": rounds,
            "mean_words": round(statistics.fmean(len(t.split()) for t in texts), 1),
            "threads_single": torch.get_num_threads(),
            "threads_per_worker": max(1, (os.cpu_count() or 1) // processes),
            "pool_start_s": round(start_s, 2),
            "seconds": {k: [round(s, 2) for s in v] for k, v in seconds.items()},
            "chunks_per_s": {k: round(v, 1) for k, v in rate.items()},
            "ratio": round(rate[str(processes)] / rate["1"], 3),
            "max_abs_vector_diff": diff,
            "load_avg_at_end": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=480)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = ap.parse_args(argv)
    if args.processes < 2:
        ap.error("--processes must be at least 2 (1 is the baseline)")
    prepare_env()
    result = run(args.chunks, args.processes, args.batch, args.rounds)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
