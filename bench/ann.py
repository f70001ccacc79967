"""ANN recall on real embeddings: the IVF_HNSW_SQ index vq builds, against exact search.

Random vectors have no cluster structure, so they say little about the recall of
an IVF index on real text. Here the vectors are real MiniLM embeddings of real
chunks: vq's own chunkers over the Node.js API docs and Python sources in
site-packages, encoded in shards of ``SHARD`` cached in the scratch folder (so
a rerun or a bigger ``--rows`` only encodes what is missing). Queries are 200
chunks held out of the table. For each table size the index is built as
``vq.indexer.maintain`` builds it, and recall@10 against the exact top 10 (and
latency) is measured for each ``nprobes`` × ``refine_factor``.

Encoding on 2 shared CPU cores runs at ~10-20 chunks/s: 100k chunks is out of
reach there, so the result states how many real vectors it used.

    python -m bench.ann [--rows 20000] [--sizes 5000 10000 20000] [--pools] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import MODEL, latency_ms, log, save_json, scratch, timed
from bench.quality import NODEJS_DOCS

SHARD = 2000
HELD_OUT = 200
NPROBES = (10, 20, 40, 80)
REFINES = (None, 5, 10)
MAX_SEQ = 128  # half the window: twice the encode rate; still real embeddings of real text
# (``--max-seq 32`` reads each chunk's first 32 word pieces: ~90 chunks/s, so 100k real
# vectors take ~20 min on 2 cores)


def texts(limit: int) -> list[str]:
    """Chunk texts, in a fixed order: Node.js docs first, then site-packages Python."""
    from vq.indexer.handlers import Limits
    from vq.indexer.handlers.code import code_handler
    from vq.indexer.handlers.markdown import markdown_handler

    out: list[str] = []
    sources = sorted(NODEJS_DOCS.glob("*.md"))
    site = Path(np.__file__).resolve().parents[1]
    sources += sorted(p for pkg in ("lancedb", "pyarrow", "sentence_transformers", "transformers",
                                    "torch", "sympy") for p in (site / pkg).rglob("*.py"))
    for path in sources:
        try:
            body = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        handler = markdown_handler if path.suffix == ".md" else code_handler
        try:
            doc = handler(body, path.name, Limits())
        except Exception:  # noqa: BLE001 - a file a chunker refuses is just skipped
            continue
        out += [f"{path.name} > {c.breadcrumb}\n\n{c.text}" for c in doc.chunks
                if len(c.text) > 80]
        if len(out) >= limit:
            return out[:limit]
    return out


def vectors(work: Path, rows: int, max_seq: int = MAX_SEQ) -> np.ndarray:
    """``rows`` real embeddings, encoded shard by shard and cached."""
    from vq.query.encoders import query_encoder

    need = -(-rows // SHARD)
    corpus = texts(need * SHARD)
    enc = None
    shards = []
    for i in range(need):
        path = work / f"vectors-{MODEL}-{max_seq}-{i:03d}.npy"
        if not path.is_file():
            if enc is None:
                enc = query_encoder(MODEL, "cpu")
                enc.model.max_seq_length = max_seq
            start = time.perf_counter()
            part = corpus[i * SHARD:(i + 1) * SHARD]
            np.save(path, np.asarray(enc.encode(part), dtype=np.float32))
            rate = len(part) / (time.perf_counter() - start)
            log(f"ann: shard {i + 1}/{need} encoded ({rate:.1f} chunks/s)")
        shards.append(np.load(path))
    return np.concatenate(shards)[:rows]


def table(work: Path, data: np.ndarray, name: str) -> Any:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(work / "ann-db"))
    flat = pa.array(data.astype(np.float16).ravel())
    vec = pa.FixedSizeListArray.from_arrays(flat, data.shape[1])
    tbl = pa.table({"id": pa.array([f"c{i:06d}" for i in range(len(data))]), "vector": vec})
    return db.create_table(name, data=tbl, mode="overwrite")


def measure(tbl: Any, queries: np.ndarray) -> list[dict]:
    exact = [set(tbl.search(q).distance_type("cosine").bypass_vector_index().limit(10)
                 .select(["id"]).to_arrow()["id"].to_pylist()) for q in queries]
    from lancedb.index import HnswSq  # IVF_HNSW_SQ, as the build makes it

    seconds, _ = timed(lambda: tbl.create_index("vector", config=HnswSq(distance_type="cosine"),
                                                replace=True))
    out = [{"index_seconds": round(seconds, 1)}]
    for nprobes in NPROBES:
        for refine in REFINES:
            hits, times = [], []
            for q, want in zip(queries, exact, strict=True):
                query = tbl.search(q).distance_type("cosine").nprobes(nprobes).limit(10)
                if refine:
                    query = query.refine_factor(refine)
                t, got = timed(lambda query=query: query.select(["id"]).to_arrow())
                times.append(t)
                hits.append(len(want & set(got["id"].to_pylist())) / 10)
            out.append({"nprobes": nprobes, "refine_factor": refine,
                        "recall@10": round(float(np.mean(hits)), 4),
                        "ms": latency_ms(times)})
    return out


def pool_recall(tbl: Any, queries: np.ndarray, limit: int, top: int,
                refines: tuple[int, ...] = (1, 2, 3, 5, 10)) -> list[dict]:
    """Recall of a wide ANN pool: the exact top ``top`` found among ``limit`` ANN hits
    re-ranked from ``refine x limit`` candidates. The section-vector search asks for
    ``SECTION_FETCH x pool`` rows to keep ``pool`` sections, so its refine need not
    match the piece search's (run after ``measure`` built the index)."""
    exact = [set(tbl.search(q).distance_type("cosine").bypass_vector_index().limit(top)
                 .select(["id"]).to_arrow()["id"].to_pylist()) for q in queries]
    out = []
    for refine in refines:
        hits, times = [], []
        for q, want in zip(queries, exact, strict=True):
            query = (tbl.search(q).distance_type("cosine").nprobes(20).limit(limit)
                     .refine_factor(refine))
            t, got = timed(lambda query=query: query.select(["id"]).to_arrow())
            times.append(t)
            hits.append(len(want & set(got["id"].to_pylist())) / top)
        out.append({"limit": limit, "refine_factor": refine, f"recall@{top}":
                    round(float(np.mean(hits)), 4), "candidates": refine * limit,
                    "ms": latency_ms(times)})
    return out


def screened(data: np.ndarray, queries: np.ndarray, k: int = 100) -> dict:
    """The service's exact scan with and without the int8 screen (``int8_screen``) on
    these real vectors: candidates per query, p50 latency, and whether the top ``k``
    (a hybrid search's dense pool) is the float32 scan's exactly."""
    from vq.query.service import int8_screen

    unit = data.astype(np.float16).astype(np.float32)  # stored as float16, as vq stores them
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    seconds, scr = timed(lambda: int8_screen.build(unit))
    if scr is None:
        return {"skipped": f"fewer than {int8_screen.MIN_ROWS} rows"}
    sizes, same, fast, full = [], 0, [], []
    for q in queries:
        q = (q / np.linalg.norm(q)).astype(np.float32)
        t_full, scores = timed(lambda q=q: unit @ q)
        want = np.argsort(-scores, kind="stable")[:k]
        t_fast, rows = timed(lambda q=q: int8_screen.candidates(scr, q, k))
        if rows is None:
            rows = np.arange(len(unit))
        t_rescore, part = timed(lambda rows=rows, q=q: unit[rows] @ q)
        got = rows[np.argsort(-part, kind="stable")[:k]]
        sizes.append(len(rows))
        same += set(got.tolist()) == set(want.tolist())
        fast.append(t_fast + t_rescore)
        full.append(t_full)
    return {"build_seconds": round(seconds, 2), "k": k,
            "candidates_p50": int(np.median(sizes)), "candidates_max": int(max(sizes)),
            "exact_top_k": f"{same}/{len(queries)}",
            "screened_ms": latency_ms(fast), "float32_scan_ms": latency_ms(full)}


def run(work: Path, rows: int, sizes: list[int], max_seq: int = MAX_SEQ,
        pools: bool = False) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    data = vectors(work, rows + HELD_OUT, max_seq)
    queries, pool = data[:HELD_OUT], data[HELD_OUT:]
    result: dict[str, Any] = {"real_vectors": int(len(pool)), "queries": HELD_OUT,
                              "model": MODEL, "max_seq_length": max_seq, "sizes": {}}
    for size in sizes:
        if size > len(pool):
            continue
        log(f"ann: {size} rows")
        tbl = table(work, pool[:size], f"t{size}")
        result["sizes"][size] = measure(tbl, queries)
        if pools:  # the piece search's pool (100, refine 10) beside the section search's
            result.setdefault("pools", {})[size] = (
                pool_recall(tbl, queries, 100, 100, (10,)) + pool_recall(tbl, queries, 300, 100))
        result.setdefault("screen", {})[size] = screened(pool[:size], queries)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    ap.add_argument("--max-seq", type=int, default=MAX_SEQ,
                    help="word pieces of each chunk encoded (fewer: faster, still real text)")
    ap.add_argument("--pools", action="store_true",
                    help="also recall@100 of 100-row and 300-row pools by refine factor")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    result = run(scratch(args.work, "ann"), args.rows, args.sizes, args.max_seq, args.pools)
    print(json.dumps(result, indent=1))
    if args.json:
        save_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
