"""Ray build throughput against a local build of the same generated vault.

    python -m bench.ray_build [--files 300] [--batch-files 100] [--task-files 25] [--out F]

Each build is a fresh `vq build --json` subprocess on its own index, as cron
would run it: the Ray one starts a local Ray on this machine (`ray.address`
unset), its actors load the model, and the driver commits. Reported as ratios
(Ray / local) of chunks per second, both end to end and for the stage after
start-up (the summary's engine + write seconds), with the start-up cost and a
check that both indexes hold the same chunk ids. On a 2-core machine Ray adds
processes and serialisation to the same two cores: expect a ratio below 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.common import log, machine, prepare_env, publish, scratch, vq, write_config
from bench.genvault import Spec, generate


def available() -> bool:
    try:
        import lance  # noqa: F401
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def one_build(cfg: Path) -> dict[str, Any]:
    proc = vq("--config", cfg, "build", "--json", "--no-progress")
    if proc.rc != 0:
        raise RuntimeError(f"build failed: {proc.stderr.strip()[-1500:]}")
    summary = json.loads(proc.stdout)
    stage = summary["seconds"].get("engine", 0) + summary["seconds"].get("write", 0)
    chunks = summary["chunks_written"]
    return {"wall_s": round(proc.seconds, 2), "peak_mb": proc.peak_mb,
            "chunks": chunks, "device": summary["device"],
            "stage_s": round(stage, 2), "seconds": summary["seconds"],
            "chunks_per_s": round(chunks / proc.seconds, 2),
            "stage_chunks_per_s": round(chunks / stage, 2) if stage else None}


def chunk_ids(index: Path) -> list[str]:
    from vq.core import store

    table = store.open_index(str(index)).chunks.search().select(["id"]).limit(None).to_arrow()
    return sorted(table["id"].to_pylist())


def run(work: Path, files: int, batch_files: int, task_files: int) -> dict[str, Any]:
    info = machine()
    vault = work / "vault"
    generate(vault, Spec(files, seed=18))
    common = {"write_batch_files": batch_files, "ray": {"batch_size": task_files}}
    builds = {}
    for engine in ("local", "ray"):
        cfg = write_config(work / f"{engine}.yaml", work / f"{engine}-index",
                           {"bench": {"path": vault, "kind": "notes"}}, engine=engine, **common)
        log(f"{engine} build of {files} files")
        builds[engine] = one_build(cfg)
    local, ray = builds["local"], builds["ray"]
    same = chunk_ids(work / "local-index") == chunk_ids(work / "ray-index")
    stage_ratio = (round(ray["stage_chunks_per_s"] / local["stage_chunks_per_s"], 3)
                   if ray["stage_chunks_per_s"] and local["stage_chunks_per_s"] else None)
    return {"machine": info, "files": files, "write_batch_files": batch_files,
            "ray_batch_size": task_files, "local": local, "ray": ray,
            "ratio_end_to_end": round(ray["chunks_per_s"] / local["chunks_per_s"], 3),
            "ratio_after_startup": stage_ratio,
            "ray_startup_overhead_s": round((ray["wall_s"] - ray["stage_s"])
                                            - (local["wall_s"] - local["stage_s"]), 2),
            "same_chunk_ids": same}


def markdown(r: dict[str, Any]) -> str:
    rows = ["| build | device | chunks | wall s | chunks/s | engine+write s | chunks/s there |",
            "|---|---|---|---|---|---|---|"]
    for name in ("local", "ray"):
        b = r[name]
        rows.append(f"| {name} | {b['device']} | {b['chunks']} | {b['wall_s']} | "
                    f"{b['chunks_per_s']} | {b['stage_s']} | {b['stage_chunks_per_s']} |")
    return "\n".join([
        f"Ray build vs local build, {r['files']} generated files "
        f"(write_batch_files {r['write_batch_files']}, ray.batch_size {r['ray_batch_size']}):",
        "", *rows, "",
        f"Ray / local throughput: {r['ratio_end_to_end']} end to end, "
        f"{r['ratio_after_startup']} after start-up; Ray's extra start-up "
        f"{r['ray_startup_overhead_s']} s; same chunk ids: {r['same_chunk_ids']}."])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--batch-files", type=int, default=100)
    ap.add_argument("--task-files", type=int, default=25)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = ap.parse_args(argv)
    if not available():
        ap.error("needs the ray extra: pip install -e '.[ray]'")
    prepare_env()
    result = run(scratch(args.work, "ray"), args.files, args.batch_files, args.task_files)
    return publish(markdown(result), result, args.out)


if __name__ == "__main__":
    sys.exit(main())
