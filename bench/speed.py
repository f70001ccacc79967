"""Speed, each figure a ratio against a baseline measured in the same run.

- build throughput: chunks/s of a full `vq build` vs raw
  ``SentenceTransformer.encode`` of exactly the chunk texts it encoded;
- no-op rebuild of generated 10k/100k-file vaults vs a bare ``os.scandir``
  stat walk of the same tree; a one-file edit vs the no-op;
- warm query latency at 10k..1M chunks, flat vs ANN (``bench.latency``);
- cold CLI (`vq status`, lexical and hybrid `vq search`) vs `python -c pass`;
- peak RSS of a build and of a search (``wait4``'s ru_maxrss of the child).

Vault builds for the no-op figures use RANDOM UNIT VECTORS (the pipeline is
real, the model is not: encoding 100k files on a CPU takes hours); every
figure that did says so.

    python -m bench.speed [--quick] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench import genvault, latency, report
from bench.common import (
    MODEL,
    RandomEncoder,
    eval_dir,
    log,
    prepare_env,
    publish,
    run_proc,
    scratch,
    serving,
    settings_for,
    timed,
    vq,
    write_config,
)

RAW_ENCODE = """
import time
t = time.perf_counter()
import json, sys
from sentence_transformers import SentenceTransformer
from vq.core.encoder import model_location
texts = json.load(open(sys.argv[1], encoding="utf-8"))
model = SentenceTransformer(model_location("{model}"), device="cpu")
loaded = time.perf_counter() - t
t = time.perf_counter()
model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
print(json.dumps({{"load_s": loaded, "encode_s": time.perf_counter() - t, "n": len(texts)}}))
"""


def stat_walk(root: Path) -> int:
    """The floor for a no-op rebuild: visit every entry, stat every file, nothing else."""
    count, stack = 0, [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    entry.stat()
                    count += 1
    return count


def best(n: int, fn: Any) -> float:
    return min(timed(fn)[0] for _ in range(n))


# -- build throughput -------------------------------------------------------------------------

def throughput_corpus(work: Path, quick: bool) -> tuple[Path, str]:
    docker = eval_dir() / "docker" / "corpus"
    if not quick and docker.is_dir():
        return docker, "Docker Engine docs (eval corpus, real Markdown)"
    root = work / "tp-vault"
    shutil.rmtree(root, ignore_errors=True)
    files = 60 if quick else 400
    genvault.generate(root, genvault.Spec(files, seed=3))
    return root, f"generated vault, {files} files (seed 3)"


def raw_encode(texts: list[str], work: Path) -> dict:
    path = work / "texts.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    proc = run_proc([sys.executable, "-c", RAW_ENCODE.format(model=MODEL), str(path)], cwd=work)
    if proc.rc != 0:
        raise RuntimeError(f"raw encode failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def encoded_texts(vaults: dict[str, dict], base: Path) -> list[str]:
    """Exactly the texts a clean build of ``vaults`` hands the model (chunk texts, then the
    split sections' whole texts), captured on a throwaway index by a stand-in encoder."""
    from vq.jobs.runner import locked_build

    config = write_config(base / "vq.yaml", base / "index", vaults)
    recorder = RandomEncoder()
    locked_build(settings_for(config), rebuild=True, encoder=recorder)
    return recorder.texts


def build_throughput(work: Path, quick: bool) -> dict:
    """raw encode, `vq build`, raw encode again: the ratio uses the mean of the two raws.

    The raw baseline encodes the texts the build encodes (pieces and, for section vectors,
    whole split sections), so the ratio is the pipeline's overhead over the model; one raw
    encode of the chunk texts alone says what section vectors cost per chunk."""
    from bench.baselines import load_chunks

    root, label = throughput_corpus(work, quick)
    base = work / "tp"
    shutil.rmtree(base, ignore_errors=True)
    vaults = {"docs": {"path": root, "kind": "docs", "include": ["*.md", "*.py"]}}
    config = write_config(base / "vq.yaml", base / "index", vaults)
    log(f"throughput: vq build of {label}")
    built = vq("--config", config, "build", "--json", "--no-progress")
    if built.rc != 0:
        raise RuntimeError(f"vq build failed: {built.stderr.strip()[-400:]}")
    summary = json.loads(built.stdout)
    texts = encoded_texts(vaults, base / "capture")
    log(f"throughput: raw encode of the same {len(texts)} texts (twice)")
    raws = [raw_encode(texts, work), raw_encode(texts, work)]
    chunk_texts = sorted({r.text for r in load_chunks(str(base / "index"))})
    log(f"throughput: raw encode of the {len(chunk_texts)} chunk texts alone (once)")
    pieces = raw_encode(chunk_texts, work)
    n, sections = summary["chunks_encoded"], summary.get("sections_encoded", 0)
    raw_tps = len(texts) / statistics.fmean(r["encode_s"] for r in raws)
    raw_full = len(texts) / statistics.fmean(r["encode_s"] + r["load_s"] for r in raws)
    build_tps = (n + sections) / summary["seconds"]["total"]
    cli_tps = (n + sections) / built.seconds
    pieces_cps = len(chunk_texts) / pieces["encode_s"]
    return {"corpus": label, "chunks": n, "sections_encoded": sections,
            "texts_encoded": n + sections, "raw_texts": len(texts),
            "build_stage_seconds": summary["seconds"], "build_cli_wall_s": round(built.seconds, 1),
            "build_peak_rss_mb": built.peak_mb,
            "raw_encode_s": [round(r["encode_s"], 1) for r in raws],
            "raw_import_and_load_s": [round(r["load_s"], 1) for r in raws],
            "raw_texts_per_s": round(raw_tps, 1), "build_texts_per_s": round(build_tps, 1),
            "raw_with_load_texts_per_s": round(raw_full, 1),
            "ratio_build_vs_raw_with_load": round(build_tps / raw_full, 3),
            "build_cli_texts_per_s": round(cli_tps, 1),
            "ratio_build_vs_raw": round(build_tps / raw_tps, 3),
            "ratio_cli_build_vs_raw": round(cli_tps / raw_tps, 3),
            "build_chunks_per_s": round(n / summary["seconds"]["total"], 1),
            "raw_chunk_texts_only": len(chunk_texts),
            "raw_chunk_texts_only_chunks_per_s": round(pieces_cps, 1),
            "ratio_build_chunks_vs_raw_chunk_texts": round(
                n / summary["seconds"]["total"] / pieces_cps, 3), "config": str(config)}


# -- no-op rebuild and one-file edit ----------------------------------------------------------

def vault_case(work: Path, files: int) -> tuple[Path, Any, Path]:
    root = work / f"vault-{files}"
    shutil.rmtree(root, ignore_errors=True)
    seconds, size = timed(lambda: genvault.generate(root, genvault.Spec(files)))
    log(f"noop: generated {files:,} files ({size / 1e6:.0f} MB) in {seconds:.0f}s")
    base = work / f"vault-{files}-idx"
    shutil.rmtree(base, ignore_errors=True)
    # No ANN index on these vaults: a no-op never touches it, and building one over random
    # vectors is timed in the latency section instead of here.
    config = write_config(base / "vq.yaml", base / "index", {"v": {"path": root}},
                          maintenance={"vector_index_min_rows": 0})
    return root, settings_for(config), config


def noop_rebuild(work: Path, files: int, repeats: int) -> tuple[dict, Any, Path]:
    from vq.jobs.runner import locked_build

    root, settings, config = vault_case(work, files)
    seconds, first = timed(lambda: locked_build(settings, rebuild=True, encoder=RandomEncoder()))
    log(f"noop: first build of {files:,} files: {first.chunks_written:,} chunks in {seconds:.0f}s")
    walk = best(repeats, lambda: stat_walk(root))
    parts = noop_parts(settings, repeats)
    noops = [timed(lambda: locked_build(settings, encoder=RandomEncoder())) for _ in
             range(repeats)]
    inproc = min(s for s, _ in noops)
    encoded = max(r.chunks_encoded + r.files_changed + r.files_new for _, r in noops)
    cli = min(vq("--config", config, "build").seconds for _ in range(repeats))
    walk_cli = min(run_proc([sys.executable, "-c", f"from bench.speed import stat_walk;"
                             f"stat_walk(__import__('pathlib').Path({str(root)!r}))"],
                            cwd=Path(__file__).resolve().parents[1]).seconds
                   for _ in range(repeats))
    return {"files": files, "chunks": first.chunks_written,
            "first_build_s_random_vectors": round(seconds, 1),
            "stat_walk_s": round(walk, 3), "noop_inproc_s": round(inproc, 3),
            "ratio_noop_vs_walk": round(inproc / walk, 2),
            "noop_cli_s": round(cli, 2), "walk_cli_s": round(walk_cli, 2),
            "ratio_cli_noop_vs_walk_cli": round(cli / walk_cli, 2), "noop_parts_s": parts,
            "noop_did_work": encoded}, settings, root


def noop_parts(settings: Any, repeats: int) -> dict:
    """Where a no-op's time goes: vq's walk (globs, ignores, handlers) and the manifest read."""
    from vq.core.manifest import read_manifest
    from vq.core.store import open_index
    from vq.core.walk import SizeCap, discover

    walk = best(repeats, lambda: discover(settings.vaults, SizeCap.of(settings)))
    manifest = best(repeats, lambda: read_manifest(open_index(settings.index_dir)))
    return {"discover": round(walk, 3), "open_index_and_read_manifest": round(manifest, 3)}


def edit_target(root: Path) -> Path:
    """The first note with at least three sections: an edit touches one of them."""
    for path in sorted(root.rglob("*.md")):
        if path.read_text(encoding="utf-8").count("\n## ") >= 3:
            return path
    raise RuntimeError("no note with three sections")


def changed_chunks(settings: Any, root: Path, path: Path, new_text: str) -> int:
    """Chunks of the edited file whose embed text is not in the index yet (the expected work)."""
    from vq.core.store import open_index, sql_str
    from vq.core.walk import FileEntry
    from vq.indexer.handlers import handler_for
    from vq.indexer.handlers.base import Limits
    from vq.indexer.rows import document_rows

    rel = path.relative_to(root).as_posix()
    name, handler = handler_for(rel)
    doc = handler(new_text, rel, Limits(settings.chunk.max_chars, settings.chunk.min_chars))
    entry = FileEntry("v", rel, path, 0, 0)
    new = {p.text_hash for p in document_rows(entry, "notes", name, doc)}
    table = open_index(settings.index_dir).chunks.search().where(
        f"path = {sql_str(rel)}").select(["text_hash"]).limit(None).to_arrow()
    return len(new - set(table["text_hash"].to_pylist()))


def one_file_edit(settings: Any, root: Path, noop_s: float) -> dict:
    """Edit one paragraph of one note; the build must encode exactly the changed chunks."""
    from vq.jobs.runner import locked_build
    from vq.query.encoders import query_encoder

    encoder = query_encoder(MODEL, "cpu")  # the real model: these chunks are really encoded
    path = edit_target(root)
    old = path.read_text(encoding="utf-8")
    cut = old.index("\n## ", old.index("\n## ") + 1)
    new = old[:cut] + "\nAn edited sentence about the ingest scheduler.\n" + old[cut:]
    expected = changed_chunks(settings, root, path, new)
    path.write_text(new, encoding="utf-8")
    seconds, summary = timed(lambda: locked_build(settings, encoder=encoder))
    return {"file": path.relative_to(root).as_posix(), "chunks_changed": expected,
            "chunks_encoded": summary.chunks_encoded, "chunks_reused": summary.chunks_reused,
            "encoded_equals_changed": summary.chunks_encoded == expected,
            "edit_build_s": round(seconds, 3), "noop_s": round(noop_s, 3),
            "ratio_edit_vs_noop": round(seconds / noop_s, 2)}


# -- cold CLI and memory ----------------------------------------------------------------------

def cold_cli(config: str, repeats: int) -> dict:
    """Median wall of fresh processes; peak RSS is the largest seen for each command.

    The last case runs hybrid search with `vq serve` answering it (goal: ≤ 4 × `python -c
    pass`); without a service the hybrid search encodes with the build's ONNX export
    (goal: ≤ 1.6 × cold lexical). ``goals`` says whether both held in this run.
    """
    query = "container restart policy"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "vq status": ["--config", config, "status"],
        "vq search --method lexical": ["--config", config, "search", "-m", "lexical", query],
        "vq search (hybrid)": ["--config", config, "search", query],
    }
    out = {name: _cold_runs(name, args, repeats) for name, args in cases.items()}
    with serving(config):
        out["vq search (hybrid, vq serve running)"] = _cold_runs(
            "warm hybrid", ["--config", config, "search", "--explain", query], repeats,
            expect="encoder=service")
    floor = out["python -c pass"]["median_s"]
    lexical = out["vq search --method lexical"]["median_s"]
    for v in out.values():
        v["ratio_vs_python"] = round(v["median_s"] / floor, 1)
        v["ratio_vs_lexical"] = round(v["median_s"] / lexical, 2)
    served = out["vq search (hybrid, vq serve running)"]["ratio_vs_python"]
    alone = out["vq search (hybrid)"]["ratio_vs_lexical"]
    out["goals"] = {"hybrid with service ≤ 4 × python -c pass": [served, served <= 4],
                    "hybrid without service ≤ 1.6 × lexical": [alone, alone <= 1.6]}
    return out


def _cold_runs(name: str, args: list[str], repeats: int, expect: str = "") -> dict:
    runs = [run_proc(args) if name.startswith("python") else vq(*args) for _ in range(repeats)]
    if any(r.rc not in (0, 1) for r in runs):
        raise RuntimeError(f"{name} failed: {runs[0].stderr.strip()[-300:]}")
    if expect and not all(expect in r.stdout + r.stderr for r in runs):
        raise RuntimeError(f"{name}: expected {expect!r} in its output")
    return {"median_s": round(statistics.median(r.seconds for r in runs), 3),
            "peak_rss_mb": max(r.peak_mb for r in runs)}


# -- orchestration ----------------------------------------------------------------------------

def section(name: str, fn: Any) -> Any:
    """One failing section is reported, never the end of the run."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the report says what failed and why
        log(f"{name} failed: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}


SECTIONS = ("throughput", "noop", "cli", "latency")
ANN_MAX_ROWS = 100_000  # 1M rows: IVF_HNSW_SQ build measured at 2,263 s here


def run(work: Path, quick: bool = False, sizes: list[int] | None = None,
        vault_sizes: list[int] | None = None, ann_max_rows: int | None = None,
        sections: tuple[str, ...] = SECTIONS) -> dict:
    """The chosen sections; ``sizes`` (chunks) and ``vault_sizes`` (files) override defaults.

    Cold CLI needs the index the throughput section builds (a real model's).
    """
    repeats = 3
    vault_sizes = vault_sizes or ([10_000] if quick else [10_000, 100_000])
    sizes = sizes or ([10_000] if quick else [10_000, 100_000, 1_000_000])
    out: dict[str, Any] = {"quick": quick, "sections": list(sections)}
    if "throughput" in sections:
        out["build_throughput"] = section("throughput", lambda: build_throughput(work, quick))
    if "noop" in sections:
        out.update(noop_and_edit(work, vault_sizes, repeats))
    config = (out.get("build_throughput") or {}).get("config")
    if config and "cli" in sections:
        out["cold_cli"] = section("cold cli", lambda: cold_cli(config, 3 if quick else 5))
    if "latency" in sections:
        out["latency"] = section("latency", lambda: latency.run(
            work, sizes, 20 if quick else 40, ann_max_rows))
    return out


def noop_and_edit(work: Path, vault_sizes: list[int], repeats: int) -> dict:
    """No-op rebuilds per vault size; the one-file edit on the first (smallest) vault."""
    out: dict[str, Any] = {"noop": [], "edit": None}
    for files in vault_sizes:
        res = section("noop", lambda f=files: noop_rebuild(work, f, repeats))
        if isinstance(res, dict):
            out["noop"].append(res)
            continue
        out["noop"].append(res[0])
        if out["edit"] is None:
            out["edit"] = section("edit", lambda r=res: one_file_edit(r[1], r[2],
                                                                      r[0]["noop_inproc_s"]))
        shutil.rmtree(res[2], ignore_errors=True)
        shutil.rmtree(work / f"vault-{files}-idx", ignore_errors=True)
    return out


def add_size_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--sizes", type=int, nargs="*",
                    help="chunk counts for query latency (default 10k 100k 1M; quick 10k)")
    ap.add_argument("--vault-sizes", type=int, nargs="*",
                    help="file counts for no-op rebuilds (default 10k 100k; quick 10k)")
    ap.add_argument("--ann-max-rows", type=int, default=ANN_MAX_ROWS,
                    help="build the ANN index only up to this many chunks (default "
                    f"{ANN_MAX_ROWS:,}: the 1M build takes ~40 min on 2 cores; the service "
                    "answers 1M flat and exact)")
    ap.add_argument("--sections", nargs="*", choices=SECTIONS, default=list(SECTIONS),
                    help="speed sections to run (default: all; cli needs throughput)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a few minutes")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    add_size_options(ap)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    prepare_env()
    started = time.time()
    result = run(scratch(args.work, "speed"), args.quick, args.sizes, args.vault_sizes,
                 args.ann_max_rows, tuple(args.sections))
    result["seconds"] = round(time.time() - started)
    return publish(report.speed_markdown(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
