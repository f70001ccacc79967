"""Warm query latency at 10k..1M chunks, flat vs ANN, and where the ANN index pays off.

Tables are written directly into LanceDB (``vq.core.store`` + the real schema)
with generated chunk texts and RANDOM UNIT VECTORS: encoding 1M chunks on a
CPU takes days and is not what is measured. Queries go through
``vq.query.search.search`` with the index held open (an MCP server's case),
including the real model encoding each query. The vector index is created by
``vq.indexer.maintain.ensure_indexes`` itself, with ``vector_index_min_rows``
lowered so that it fires.

Random vectors are the ANN index's worst case (no cluster structure), so the
recall figure here is a floor; the latency figures are representative.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

from bench.common import MODEL, latency_ms, log, settings_for, timed, unit_vectors, write_config
from bench.genvault import BLOCK, WORDS, text_block

METHODS = ("lexical", "dense", "hybrid")
SERVED = "hybrid via vq serve"
DIM = 384
ADD_ROWS = 100_000  # rows per LanceDB append: few fragments, bounded memory


def bench_queries(n: int, seed: int = 11) -> list[str]:
    """Short keyword-ish queries from the generator's vocabulary (minus its commonest words)."""
    rng = random.Random(seed)
    content = WORDS[80:]
    return [" ".join(rng.sample(content, rng.randint(2, 5))) for _ in range(n)]


def arrow_rows(schema: Any, texts: list[str], first: int, seed: int) -> Any:
    """One append's worth of chunk rows in the real schema, vectors random and unit-length."""
    import numpy as np
    import pyarrow as pa

    n = len(texts)
    ids = [f"{first + j:016x}" for j in range(n)]
    paths = [t.split(" > ", 1)[0] for t in texts]
    vecs = unit_vectors(n, DIM, seed * 1_000_003 + first).astype(np.float16)
    sections = unit_vectors(n, DIM, seed * 1_000_003 + first + 500_001).astype(np.float16)
    blank = [""] * n
    cols = {
        "id": ids, "vault": ["bench"] * n, "path": paths, "kind": ["notes"] * n,
        "handler": ["markdown"] * n, "language": blank, "title": blank, "breadcrumb": blank,
        "symbol": blank, "symbol_kind": blank, "start_line": [1] * n, "end_line": [12] * n,
        "page": [None] * n, "text": texts, "body_start": [0] * n, "text_hash": ids,
        "tags": [[] for _ in range(n)], "doc_date": [None] * n,
        "mtime": [1_735_689_600.0 + first + j for j in range(n)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), DIM),
        # a section vector of its own per row: the service holds and scans both matrices
        "section_hash": [f"s{i}" for i in ids],
        "section_vector": pa.FixedSizeListArray.from_arrays(pa.array(sections.reshape(-1)), DIM),
    }
    for f in schema:  # a column added to the schema later: nulls, not a broken benchmark
        cols.setdefault(f.name, pa.nulls(n, f.type))
    return pa.Table.from_pydict({f.name: cols[f.name] for f in schema}, schema=schema)


def write_table(work: Path, rows: int, seed: int = 7) -> tuple[Any, Any, dict]:
    """A fresh index of ``rows`` chunks with its FTS index; returns (settings, index, timings)."""
    from vq.core import store
    from vq.core.schema import IndexMeta, chunks_schema
    from vq.indexer import maintain

    shutil.rmtree(work, ignore_errors=True)
    config = write_config(work / "vq.yaml", work / "index", {"bench": {"path": work}},
                          maintenance={"vector_index_min_rows": 0})
    settings = settings_for(config)
    meta = IndexMeta(model=MODEL, dim=DIM, vector_dtype="float16")
    index = store.create_index(str(work / "index"), meta)
    schema = chunks_schema(meta)
    start = time.perf_counter()
    pending: list[str] = []
    first = 0
    for block in range(-(-rows // BLOCK)):
        pending += text_block(seed, block)[:rows - block * BLOCK]
        if len(pending) >= ADD_ROWS or first + len(pending) >= rows:
            index.chunks.add(arrow_rows(schema, pending, first, seed))
            first += len(pending)
            pending = []
    written = time.perf_counter() - start
    fts, _ = timed(lambda: maintain.ensure_indexes(index, settings))
    compact, _ = timed(lambda: maintain.optimize(index, settings))
    return settings, index, {"write_s": round(written, 1), "fts_index_s": round(fts, 1),
                             "optimize_s": round(compact, 1)}


def measure(settings: Any, index: Any, queries: list[str], methods=METHODS) -> dict:
    """p50/p95 per method through ``search``; methods take turns on each query, so a burst
    of load from elsewhere hits them alike. Every query runs once untimed first."""
    from vq.query.search import Query, search
    from vq.query.sources import LanceSources

    samples: dict[str, list[float]] = {m: [] for m in methods}
    for timed_pass in (False, True):
        for q in queries:
            for m in methods:
                seconds, _ = timed(lambda q=q, m=m: search(settings, Query(q, m, 10),
                                                           LanceSources(index)))
                if timed_pass:
                    samples[m].append(seconds)
    return {m: latency_ms(v) for m, v in samples.items()}


def via_service(settings: Any, queries: list[str]) -> dict:
    """p50/p95 of whole hybrid searches answered by a `vq serve` of this index, timed at
    the client (request, search, JSON rendering, reply); every query once untimed first."""
    from bench.common import serving
    from vq.query.service import client

    samples: list[float] = []
    with serving(settings.config_file) as pid:
        check = client.search(settings, {}, {"text": queries[0], "method": "hybrid", "limit": 10,
                                           "filters": {}}, {"json": True, "explain": True})
        if f"service pid {pid}" not in check["stdout"]:
            raise RuntimeError("the service did not answer the search itself")
        for timed_pass in (False, True):
            for q in queries:
                query = {"text": q, "method": "hybrid", "limit": 10, "filters": {}}
                seconds, reply = timed(lambda query=query: client.search(
                    settings, {}, query, {"json": True}))
                if reply is None:
                    raise RuntimeError("the service stopped answering")
                if timed_pass:
                    samples.append(seconds)
    return latency_ms(samples)


def vector_query(index: Any, vector: Any, exact: bool, pool: int = 100) -> Any:
    """The dense candidate query ``vq.query.search`` makes, optionally forced to a flat scan."""
    from vq.query.search import COLUMNS

    query = index.chunks.search(vector, vector_column_name="vector").distance_type("cosine")
    if exact:
        query = query.bypass_vector_index()
    return query.select([*COLUMNS, "_distance"]).limit(pool).to_arrow()


def vector_only(index: Any, vectors: Any, ann: bool = True) -> tuple[dict, dict, float]:
    """Flat scan vs ANN on the same table, interleaved, from pre-encoded query vectors.

    Returns (flat latency, ANN latency, ANN recall@10 against the exact top 10).
    """
    flat: list[float] = []
    ann_s: list[float] = []
    overlap = []
    for timed_pass in (False, True):
        for v in vectors:
            t_flat, exact = timed(lambda v=v: vector_query(index, v, True))
            if not ann:
                flat.append(t_flat)
                continue
            t_ann, approx = timed(lambda v=v: vector_query(index, v, False))
            if timed_pass:
                flat.append(t_flat)
                ann_s.append(t_ann)
                want = set(exact["id"].to_pylist()[:10])
                overlap.append(len(want & set(approx["id"].to_pylist()[:10])) / len(want))
    if not ann:
        return latency_ms(flat[len(vectors):]), {}, 0.0
    return latency_ms(flat), latency_ms(ann_s), round(sum(overlap) / len(overlap), 3)


def add_vector_index(settings: Any, index: Any) -> float:
    """The indexer's own maintenance step, told to index from 1 row on."""
    from dataclasses import replace

    from vq.indexer import maintain

    lowered = replace(settings, maintenance=replace(settings.maintenance,
                                                    vector_index_min_rows=1))
    seconds, created = timed(lambda: maintain.ensure_indexes(index, lowered))
    if "vector" not in created:
        raise RuntimeError("ensure_indexes did not create the vector index")
    return round(seconds, 1)


def encode_queries(queries: list[str]) -> tuple[dict, Any]:
    """The query-encoding share of dense/hybrid latency, and the vectors for ``vector_only``."""
    from vq.query.encoders import query_encoder

    enc = query_encoder(MODEL, "cpu")
    enc.encode(queries[:2])
    samples = [timed(lambda q=q: enc.encode([q]))[0] for q in queries]
    return latency_ms(samples), enc.encode(queries)


def one_size(work: Path, rows: int, queries: list[str], vectors: Any, ann: bool,
             onnx: Path | None = None) -> dict:
    log(f"latency: writing {rows:,} chunks (random unit vectors)")
    settings, index, timings = write_table(work / f"lat-{rows}", rows)
    if onnx is not None:  # the build's ONNX export, as a real build leaves it
        shutil.copytree(onnx, Path(settings.index_dir) / onnx.name)
    log(f"latency: {rows:,} chunks, flat")
    flat = measure(settings, index, queries)
    log(f"latency: {rows:,} chunks, flat, through vq serve (resident vectors)")
    flat[SERVED] = section_or_error(lambda: via_service(settings, queries))
    if not ann:
        flat["vector search only"] = vector_only(index, vectors, ann=False)[0]
        shutil.rmtree(work / f"lat-{rows}", ignore_errors=True)
        return {"rows": rows, **timings, "flat": flat, "ann": {}, "ann_index_s": None,
                "ann_recall_at_10_vs_flat": None}
    log(f"latency: {rows:,} chunks, building the vector index")
    ann_build = add_vector_index(settings, index)
    ann = measure(settings, index, queries, ("dense", "hybrid"))
    log(f"latency: {rows:,} chunks, ANN, through vq serve")
    ann[SERVED] = section_or_error(lambda: via_service(settings, queries))
    flat["vector search only"], ann["vector search only"], recall = vector_only(index, vectors)
    shutil.rmtree(work / f"lat-{rows}", ignore_errors=True)
    return {"rows": rows, **timings, "flat": flat, "ann": ann, "ann_index_s": ann_build,
            "ann_recall_at_10_vs_flat": recall}


def section_or_error(fn: Any) -> dict:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - reported in the results, the run goes on
        log(f"latency via service failed: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}


def export_onnx(work: Path) -> Path | None:
    """The query encoder exported once, copied beside each size's tables."""
    from vq.indexer import onnx_export
    from vq.query.encoders import query_encoder

    try:
        return onnx_export.export(str(work / "onnx-src"), MODEL,
                                  query_encoder(MODEL, "cpu").model)
    except Exception as exc:  # noqa: BLE001 - the service then encodes with torch
        log(f"latency: no ONNX export ({type(exc).__name__}: {exc})")
        return None


def payoff(sizes: list[dict]) -> dict:
    """The smallest measured size from which the ANN index is faster, for dense and hybrid."""
    out: dict[str, Any] = {}
    for method in ("vector search only", "dense", "hybrid"):
        faster = [s["rows"] for s in sizes if s["ann"]
                  and s["ann"][method]["p50_ms"] < s["flat"][method]["p50_ms"]]
        out[method] = min(faster) if faster else None
    return out


def run(work: Path, sizes: list[int], n_queries: int, ann_max_rows: int | None = None) -> dict:
    """``ann_max_rows``: above it, only flat search is measured (an ANN build too long here)."""
    queries = bench_queries(n_queries)
    encode, vectors = encode_queries(queries)
    onnx = export_onnx(work)
    results = []
    for rows in sizes:
        results.append(one_size(work, rows, queries, vectors,
                                ann_max_rows is None or rows <= ann_max_rows, onnx))
        log(f"latency: {rows:,} chunks: {json.dumps(results[-1])}")  # kept if a run dies later
    return {"note": "chunk vectors are random unit vectors (encode cost kept out); query "
                    "encoding with the real model is included in dense/hybrid, not in "
                    "'vector search only'",
            "queries": n_queries, "query_encode": encode, "sizes": results,
            "ann_pays_off_from_rows": payoff(results)}
