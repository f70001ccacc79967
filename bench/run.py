"""`make bench` / `make bench-quick`: quality then speed, one JSON and one Markdown file.

Writes ``bench/results/<date>.json`` and ``<date>.md`` (``<date>-quick.*``
for the quick subset) and prints the Markdown. The machine the numbers came
from (cores, memory, device, load average) is part of both.

Ray build throughput (``bench.ray_build``) runs when the ``vq[ray]`` extra is installed.
The peers (``bench.peers``: txtai, LlamaIndex, LangChain beside vq's rows, on every
judged set; the quick run: the decision-record set only) run when the ``bench`` extra is,
over the indexes the quality part built.

The first build (``bench.searchable``: the first lexical and hybrid hit as a share of the
build, an interrupted build and its successor) and the CPU encoders (``bench.encoders``:
ONNX fp32 / int8 against sentence-transformers, chunks/s, cosine, dev-set nDCG@10) run
in the full run and with ``--only first``.

    python -m bench.run [--quick] [--only quality|peers|speed|ray|live|first] [--work DIR] [--keep]
                        [--sizes N ...] [--vault-sizes N ...] [--ann-max-rows N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from bench import ann, encoders, live, peers, quality, ray_build, report, searchable, speed
from bench.common import RESULTS, log, machine, prepare_env, save_json, scratch


def markdown(result: dict) -> str:
    kind = "quick subset" if result["quick"] else "full run"
    parts = [f"### Benchmark results {result['date']} ({kind}, {result['seconds']} s)",
             report.machine_markdown(result["machine"])]
    if "quality" in result:
        parts += ["### Retrieval quality", report.quality_markdown(result["quality"]).rstrip()]
    if "peers" in result:
        parts += ["### Peers (same model, documented defaults)",
                  report.peers_markdown(result["peers"]).rstrip()]
    if "ann" in result:
        parts += ["### ANN recall on real vectors", report.ann_markdown(result["ann"])]
    if "speed" in result:
        parts += ["### Speed", report.speed_markdown(result["speed"]).rstrip()]
    if "ray" in result:
        parts += ["### Ray build", ray_build.markdown(result["ray"])]
    if "live" in result:
        parts += ["### Live freshness (vq watch)", live.markdown(result["live"]).rstrip()]
    if "searchable" in result:
        parts += ["### First build: searchable before it is embedded",
                  searchable.markdown(result["searchable"]).rstrip()]
    if "encoders" in result:
        parts += ["### CPU encoders for the build", encoders.markdown(result["encoders"]).rstrip()]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the few-minutes subset")
    ap.add_argument("--only", choices=("quality", "peers", "speed", "ray", "live", "first"))
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    speed.add_size_options(ap)
    args = ap.parse_args(argv)
    prepare_env()
    work = scratch(args.work, "run")
    started = time.time()
    result: dict = {"date": time.strftime("%Y-%m-%d"), "quick": args.quick, "machine": machine()}
    try:
        if args.only in (None, "quality"):
            result["quality"] = quality.run(work / "quality", args.quick)
        if args.only in (None, "peers"):  # incremental over quality's indexes
            result["peers"] = peers.run(work / "quality", ("adr",) if args.quick else ())
        if args.only in (None, "quality"):
            # 100k real vectors (the size) fit the time of 20k full-window ones
            # only at 32 word pieces a chunk: ~20 min of encoding on 2 cores
            rows, sizes, seq = ((4000, [2000, 4000], ann.MAX_SEQ) if args.quick
                                else (100_000, [20_000, 100_000], 32))
            result["ann"] = ann.run(work / "ann", rows, sizes, seq)
        if args.only in (None, "speed"):
            result["speed"] = speed.run(work / "speed", args.quick, args.sizes,
                                        args.vault_sizes, args.ann_max_rows,
                                        tuple(args.sections))
        if args.only in (None, "live"):  # save -> searchable, watcher cost
            tree = work / "speed" / ("vault-10000" if args.quick else "vault-100000")
            result["live"] = live.run(work / "live", args.quick, tree if tree.is_dir() else None)
        if args.only in (None, "ray") and ray_build.available():
            files = 120 if args.quick else 300
            result["ray"] = ray_build.run(work / "ray", files, files // 3, files // 12)
        if args.only == "first" or (args.only is None and not args.quick):
            from vq.core.onnx_encoder import cpu_count

            result["searchable"] = searchable.run(work / "searchable", 10_000)
            result["encoders"] = encoders.run(work / "encoders", cpu_count())
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["seconds"] = round(time.time() - started)
    result["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    parts = [result["date"], "quick" if args.quick else "", args.only or ""]
    partial = set(args.sections) != set(speed.SECTIONS)
    if args.only not in ("quality", "peers", "ray", "live", "first") and partial:
        parts.append("+".join(args.sections))
    stem = "-".join(p for p in parts if p)
    save_json(args.out / f"{stem}.json", result)
    text = markdown(result)
    (args.out / f"{stem}.md").write_text(text, encoding="utf-8")
    print(text)
    log(f"wrote {args.out / stem}.json and .md in {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
