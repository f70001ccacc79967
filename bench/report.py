"""Results JSON → Markdown tables: the one place that formats benchmark numbers."""

from __future__ import annotations

from typing import Any

METRICS = (("recall@1", "R@1"), ("recall@5", "R@5"), ("recall@10", "R@10"),
           ("mrr@10", "MRR@10"), ("ndcg@10", "nDCG@10"))


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def quality_markdown(result: dict) -> str:
    if "skipped" in result:
        return f"Quality: skipped — {result['skipped']}\n"
    parts = []
    for corpus in result["corpora"]:
        parts.append(_corpus_markdown(corpus))
    if result.get("nodejs_skipped"):
        parts.append(f"Second corpus skipped: {result['nodejs_skipped']}")
    return "\n\n".join(parts) + "\n"


def _corpus_markdown(c: dict) -> str:
    head = (f"#### {c['corpus']}: {c['label']}\n\n{c['chunks']} chunks, "
            f"`vq build` {c['build_seconds']} s ({c['chunks_encoded']} chunks encoded)"
            f"{_truncation_md(c.get('truncation') or {})}\n")
    rows, skipped = [], []
    for name, m in c["methods"].items():
        if "skipped" in m:
            skipped.append(f"- {name}: skipped ({m['skipped']})")
            continue
        rows.append([name, *(m[k] for k, _ in METRICS), f"{m['ms_per_query']:.1f}"])
    main = table(["method", *(label for _, label in METRICS), "ms/query (p50)"], rows)
    styles = _style_table(c["methods"])
    tail = "\n".join(skipped)
    return "\n".join(p for p in (head, main, "", "nDCG@10 by query style:", "", styles, "",
                                 tail) if p is not None).rstrip()


def _truncation_md(t: dict) -> str:
    """Chunks longer than the model window, chunked as before (v2) and now (v3)."""
    if "before" not in t:
        return ""
    b, a = t["before"], t["after"]
    return (f"; chunks the model truncates ({t['window']} word pieces): before "
            f"{b['truncated']}/{b['chunks']} ({b['share']:.1%}), now "
            f"{a['truncated']}/{a['chunks']} ({a['share']:.1%})")


def ann_markdown(r: dict) -> str:
    """ANN recall@10 against exact search on real embeddings, per size and setting."""
    if not r.get("sizes"):
        return f"ANN recall: not measured ({r.get('error', 'no sizes')})"
    rows = []
    for size, runs in r["sizes"].items():
        built = runs[0]["index_seconds"]
        for m in runs[1:]:
            rows.append([size, built, m["nprobes"], m["refine_factor"], m["recall@10"],
                         m["ms"]["p50_ms"]])
    head = (f"ANN (IVF_HNSW_SQ) recall@10 against exact search, {r['real_vectors']} real "
            f"{r['model']} vectors (max_seq {r['max_seq_length']}), {r['queries']} held-out "
            "chunks as queries:\n\n")
    out = head + table(["rows", "index s", "nprobes", "refine", "recall@10", "p50 ms"], rows)
    screens = [[size, m["candidates_p50"], m["candidates_max"], m["exact_top_k"],
                m["screened_ms"]["p50_ms"], m["float32_scan_ms"]["p50_ms"], m["build_seconds"]]
               for size, m in r.get("screen", {}).items() if "exact_top_k" in m]
    if screens:
        out += ("\n\nThe service's exact scan with the int8 screen (`int8_screen`) on the "
                "same vectors, top 100:\n\n" + table(
                    ["rows", "candidates p50", "max", "exact top 100", "screened p50 ms",
                     "float32 scan p50 ms", "screen build s"], screens))
    return out + _pools_markdown(r)


def _pools_markdown(r: dict) -> str:
    """Recall@100 of the piece search's pool beside the section search's larger pool,
    by refine factor (``bench.ann --pools``): what sets ``search.SECTION_REFINE``."""
    rows = [[size, m["limit"], m["refine_factor"], m["candidates"], f"{m['recall@100']:.4f}",
             m["ms"]["p50_ms"]] for size, runs in r.get("pools", {}).items() for m in runs]
    if not rows:
        return ""
    return ("\n\nPools, recall@100 against exact search (the piece search asks for 100 "
            "rows, the section search for 300):\n\n" + table(
                ["rows", "limit", "refine", "candidates", "recall@100", "p50 ms"], rows))


def _style_table(methods: dict) -> str:
    ran = {n: m for n, m in methods.items() if "by_style" in m}
    if not ran:
        return ""
    first = next(iter(ran.values()))["by_style"]
    styles = list(first)
    header = ["method", *(f"{s} ({first[s]['n']})" for s in styles)]
    rows = [[n, *(m["by_style"][s]["ndcg@10"] for s in styles)] for n, m in ran.items()]
    return table(header, rows)


def machine_markdown(m: dict) -> str:
    return (f"Machine: {m.get('cores')} cores ({m.get('cpu')}), {m.get('memory_gb')} GiB RAM, "
            f"device {m.get('device')}; torch {m.get('torch')} ({m.get('torch_threads')} "
            f"threads), lancedb {m.get('lancedb')}, sentence-transformers "
            f"{m.get('sentence_transformers')}, bm25s {m.get('bm25s')}, SQLite {m.get('sqlite')}; "
            f"load average at start {m.get('load_avg_at_start')}, at end "
            f"{m.get('load_avg_at_end')}; vq at {m.get('git')}.")


def speed_markdown(r: dict) -> str:
    parts = [_throughput_md(r.get("build_throughput") or {}), _noop_md(r.get("noop") or [],
                                                                        r.get("edit")),
             _cli_md(r.get("cold_cli") or {}), _latency_md(r.get("latency") or {})]
    return "\n\n".join(p for p in parts if p) + "\n"


def _error(title: str, d: dict) -> str | None:
    return f"{title}: not measured ({d['error']})" if "error" in d else None


def _throughput_md(t: dict) -> str:
    if not t or _error("Build throughput", t):
        return _error("Build throughput", t) or ""
    if "texts_encoded" not in t:  # a result from before section vectors: chunks only
        t = {**t, "texts_encoded": t["chunks"], "raw_texts": t["distinct_texts"],
             "build_texts_per_s": t["build_chunks_per_s"],
             "build_cli_texts_per_s": t["build_cli_chunks_per_s"],
             "raw_texts_per_s": t["raw_chunks_per_s"],
             "raw_with_load_texts_per_s": t.get("raw_with_load_chunks_per_s")}
    rows = [["`vq build` (its own timer: model load, discover, chunk, encode, write, index)",
             t["texts_encoded"], t["build_texts_per_s"], t["ratio_build_vs_raw"]],
            ["`vq build` (process wall, incl. Python and torch start-up)", t["texts_encoded"],
             t["build_cli_texts_per_s"], t["ratio_cli_build_vs_raw"]],
            ["raw `SentenceTransformer.encode` (same texts, mean of 2 runs)",
             t["raw_texts"], t["raw_texts_per_s"], 1.0]]
    if t.get("raw_with_load_texts_per_s"):
        rows.append(["raw, counting torch import + model load like the build does",
                     t["raw_texts"], t["raw_with_load_texts_per_s"],
                     f"build/this: {t['ratio_build_vs_raw_with_load']}"])
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in t["build_stage_seconds"].items())
    stages = stages.replace("discover", "open index + model load + discover", 1)
    out = ("#### Build throughput: " + t["corpus"] + "\n\n"
           + table(["what", "texts encoded", "texts/s", "ratio vs raw (goal ≥ 0.9)"], rows)
           + f"\n\nBuild stages: {stages}. Peak RSS of the build: {t['build_peak_rss_mb']} MB.")
    if "raw_chunk_texts_only" in t:
        out += (f" The build encoded {t['chunks']} chunk texts and {t['sections_encoded']} "
                f"split sections' whole texts (section vectors): {t['build_chunks_per_s']} "
                f"chunks/s, {t['ratio_build_chunks_vs_raw_chunk_texts']} of raw encoding the "
                f"{t['raw_chunk_texts_only']} chunk texts alone "
                f"({t['raw_chunk_texts_only_chunks_per_s']} chunks/s, one run).")
    return out


def _noop_md(noop: list[dict], edit: dict | None) -> str:
    if not noop and not edit:
        return ""
    rows = []
    for n in noop:
        if "error" in n:
            rows.append(["?", n["error"], "", "", "", "", ""])
            continue
        rows.append([f"{n['files']:,}", f"{n['chunks']:,}", n["stat_walk_s"], n["noop_inproc_s"],
                     n["ratio_noop_vs_walk"], f"{n['noop_cli_s']} / {n['walk_cli_s']}",
                     n["ratio_cli_noop_vs_walk_cli"]])
    parts = "; ".join(f"{n['files']:,} files: vq's discover walk {p['discover']} s, open index + "
                      f"read manifest {p['open_index_and_read_manifest']} s"
                      for n in noop if (p := n.get("noop_parts_s")))
    out = ("#### No-op rebuild vs a bare `os.scandir` stat walk (goal ≤ 2)\n\n"
           "Vaults from `bench/genvault.py`, first build with random unit vectors.\n\n"
           + table(["files", "chunks", "walk s", "vq no-op s (in-process)", "ratio",
                    "CLI: `vq build` s / `python walk` s", "CLI ratio"], rows)
           + (f"\n\nWhere a no-op goes: {parts}." if parts else ""))
    if edit and "error" not in edit:
        out += (f"\n\nOne-file edit ({edit['file']}): {edit['chunks_changed']} chunk(s) changed, "
                f"{edit['chunks_encoded']} encoded, {edit['chunks_reused']} reused "
                f"({'equal' if edit['encoded_equals_changed'] else 'NOT equal'}); "
                f"{edit['edit_build_s']} s vs no-op {edit['noop_s']} s "
                f"(ratio {edit['ratio_edit_vs_noop']}).")
    elif edit:
        out += f"\n\nOne-file edit: not measured ({edit['error']})"
    return out


def _cli_md(c: dict) -> str:
    if not c or _error("Cold CLI", c):
        return _error("Cold CLI", c) or ""
    rows = [[name, v["median_s"], v["ratio_vs_python"], v.get("ratio_vs_lexical", "–"),
             v["peak_rss_mb"]] for name, v in c.items() if name != "goals"]
    goals = "; ".join(f"{goal}: {value} ({'met' if met else 'NOT met'})"
                      for goal, (value, met) in (c.get("goals") or {}).items())
    return ("#### Cold CLI (fresh process, median)\n\n"
            + table(["command", "seconds", "× `python -c pass`", "× lexical", "peak RSS MB"],
                    rows) + (f"\n\nGoals: {goals}." if goals else ""))


def _latency_md(lat: dict) -> str:
    if not lat or _error("Query latency", lat):
        return _error("Query latency", lat) or ""
    rows = []
    for s in lat["sizes"]:
        for method in ("lexical", "dense", "hybrid", "vector search only", SERVED):
            f = s["flat"].get(method)
            a = s["ann"].get(method)
            rows.append([f"{s['rows']:,}", method,
                         f"{f['p50_ms']:.1f} / {f['p95_ms']:.1f}" if f else "–",
                         f"{a['p50_ms']:.1f} / {a['p95_ms']:.1f}" if a else "–"])
    builds = "; ".join(f"{s['rows']:,}: FTS {s['fts_index_s']} s, " + (
        f"ANN {s['ann_index_s']} s, ANN recall@10 vs exact {s['ann_recall_at_10_vs_flat']}"
        if s["ann"] else "ANN not built (above --ann-max-rows)") for s in lat["sizes"])
    enc = lat["query_encode"]
    pay = lat["ann_pays_off_from_rows"]
    return ("#### Warm query latency, in-process (p50 / p95 ms)\n\n"
            f"{lat['note']}. {lat['queries']} queries per cell. Query encoding alone: p50 "
            f"{enc['p50_ms']} ms, p95 {enc['p95_ms']} ms.\n\n"
            + table(["chunks", "method", "flat (no vector index)", "IVF_HNSW_SQ index"], rows)
            + f"\n\n'{SERVED}': the whole search answered by the resident service (flat: "
            "its in-memory matrix; with the index: LanceDB's ANN) as the thin client sees it, "
            f"JSON included.\n\nIndex builds: {builds}.\n\nANN index faster from "
            f"(smallest measured size): vector search {_rows(pay['vector search only'])}, dense "
            f"{_rows(pay['dense'])}, hybrid {_rows(pay['hybrid'])}.")


SERVED = "hybrid via vq serve"  # bench.latency.SERVED: a whole search, client to JSON


def _rows(n: int | None) -> str:
    return f"{n:,} chunks" if n else "no measured size"


def code_rank_markdown(r: dict) -> str:
    """The code set's runs, each rule's Δ nDCG@10 against hybrid, the queries it moved,
    and (with --docs) the sets without code, rules on against off."""
    if "skipped" in r:
        return f"Code ranking: skipped — {r['skipped']}\n"
    c = r["code"]
    parts = [_corpus_markdown(c)]
    base = c["methods"]["hybrid"]
    rows = [["hybrid (as shipped)", base["ndcg@10"], "", "", base["any_piece"]["ndcg@10"], ""]]
    for name, m in c["methods"].items():
        if not name.startswith("hybrid") or not (m["off"] or m.get("cap") is not None):
            continue
        moved = [f"{q} {_rank(base['ranks'][q])}→{_rank(r_)}" for q, r_ in m["ranks"].items()
                 if r_ != base["ranks"][q]]
        rows.append([name, m["ndcg@10"], f"{m['ndcg@10'] - base['ndcg@10']:+.4f}",
                     f"{m['mrr@10'] - base['mrr@10']:+.4f}", m["any_piece"]["ndcg@10"],
                     ", ".join(moved) or "none"])
    parts += ["Each change against hybrid as shipped (Δ = run − hybrid; the target's rank, "
              "– = not in the top 10; *any piece*: a chunk overlapping the target "
              "definition counts, not only the one holding its def line):",
              table(["run", "nDCG@10", "Δ nDCG@10", "Δ MRR@10", "nDCG@10 any piece",
                     "queries moved (hybrid→run)"], rows)]
    if r.get("docs"):
        docs = [[d["corpus"], d["queries"], d["rules on"]["ndcg@10"], d["rules off"]["ndcg@10"],
                 "yes" if d["identical"] else "NO"] for d in r["docs"]]
        parts += ["Sets without code chunks, hybrid:",
                  table(["corpus", "queries", "nDCG@10 rules on", "nDCG@10 rules off",
                         "identical hits"], docs)]
    return "\n\n".join(parts) + "\n"


def _rank(rank: int | None) -> str:
    return "–" if rank is None else str(rank)


PEER_METRICS = (("recall@10", "R@10"), ("mrr@10", "MRR@10"), ("ndcg@10", "nDCG@10"))


def peers_markdown(r: dict) -> str:
    """One table per set (every vq row and peer), then the compact comparison."""
    if "skipped" in r:
        return f"Peers: skipped — {r['skipped']}\n"
    parts = ["Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items())
             + f"; model `{r['model']}`."]
    for c in r["corpora"]:
        rows = [[name, *(m[k] for k, _ in PEER_METRICS), _lines(m.get("median_hit_lines")),
                 f"{m['ms_per_query']:.1f}"] for name, m in c["methods"].items()]
        builds = ", ".join(f"{k} {v} s" for k, v in c["build_seconds"].items())
        parts += [f"#### {c['corpus']}: {c['label']}\n\nbuild (encode included): {builds}\n",
                  table(["method", *(lbl for _, lbl in PEER_METRICS), "hit lines (p50)",
                         "ms/query (p50)"], rows)]
    parts += ["#### vq hybrid beside the peers (R@10 / MRR@10 / nDCG@10)", peers_compact(r)]
    return "\n\n".join(parts) + "\n"


def _lines(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def peers_compact(r: dict, names: tuple[str, ...] = (
        "vq hybrid", "vq lexical", "vq dense", "txtai hybrid", "llamaindex bm25",
        "llamaindex fusion", "langchain ensemble")) -> str:
    def cell(m: dict | None) -> str:
        if not m or "recall@10" not in m:
            return "–"
        return " / ".join(f"{m[k]:.3f}" for k, _ in PEER_METRICS)
    rows = [[f"{c['corpus']} ({c['queries']})", *(cell(c["methods"].get(n)) for n in names)]
            for c in r["corpora"]]
    return table(["set (queries)", *names], rows)
