"""The code-ranking rules measured on a judged code set: each rule off in turn, and all off.

Corpus and queries: ``bench/devsets/jsonschema`` (35 files of the installed
``jsonschema`` package, 40 queries judged before any search ran; its README
states the decision rule). The index is built once with ``vq build`` as a
``kind: code`` vault; every run then calls ``vq.query.search.search`` in this
process (the CLI's in-process path, never a service) with some of the rules of
``vq.query.code_rank`` switched off, and ``bench.code_score`` scores it.

"Off" means: *definitions* - no query term counts as a symbol (no lookup by
symbol, no x ``DEFINES`` for the definition it names); *secondary* - no file
counts as a test/example; *cap* - a file's code hits are not capped
(``search.per_file_cap`` 0, as shipped since this set measured it). ``--cap N``
adds a run with the cap at N.

With ``--docs`` the Docker eval set and the Node.js dev set (no code chunks)
are built too, and hybrid with all rules off is checked to score as hybrid.

    python -m bench.code_rank [--docs] [--cap N] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from importlib import metadata, util
from pathlib import Path
from typing import Any

from bench import code_score, quality, report
from bench.common import log, prepare_env, publish, scratch, settings_for

DEVSET = Path(__file__).resolve().parent / "devsets" / "jsonschema"
VERSION = "4.26.0"  # the version the judgements were written against
RULES = ("definitions", "secondary", "cap")
# (label, method, rules switched off, per-file cap or None = as shipped)
RUNS: tuple[tuple[str, str, tuple[str, ...], int | None], ...] = (
    ("lexical", "lexical", (), None),
    ("dense", "dense", (), None),
    ("hybrid", "hybrid", (), None),
    ("hybrid − definitions", "hybrid", ("definitions",), None),
    ("hybrid − secondary", "hybrid", ("secondary",), None),
    ("hybrid + cap 3", "hybrid", (), 3),
    ("hybrid, all rules off", "hybrid", RULES, None),
    ("lexical, all rules off", "lexical", RULES, None),
    ("dense, all rules off", "dense", RULES, None),
)


def source_dir() -> Path | None:
    """The folder holding ``jsonschema/``: ``$VQ_BENCH_JSONSCHEMA_SRC``, else the venv's."""
    override = os.environ.get("VQ_BENCH_JSONSCHEMA_SRC")
    if override:
        return Path(override)
    spec = util.find_spec("jsonschema")
    return Path(spec.origin).parent.parent if spec and spec.origin else None


def code_corpus(work: Path) -> quality.Corpus | None:
    """Copy the listed files; None when the package (or one of its files) is missing."""
    source = source_dir()
    names = (DEVSET / "files.txt").read_text(encoding="utf-8").split()
    if source is None or not all((source / n).is_file() for n in names):
        return None
    root = work / "jsonschema" / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, root / name)
    return quality.Corpus("jsonschema", root, DEVSET / "queries.jsonl",
                          f"jsonschema {_version()} source ({len(names)} .py files), 40 "
                          "hand-written code queries judged before any search ran",
                          kind="code", include=("*.py",))


def _version() -> str:
    try:
        return metadata.version("jsonschema")
    except metadata.PackageNotFoundError:
        return "unknown"


@contextlib.contextmanager
def rules_off(names: tuple[str, ...], cap: int | None = None) -> Iterator[None]:
    """Switch the named rules of ``vq.query.code_rank`` off for the block (``cap``: set
    the per-file cap instead of the configured one)."""
    from vq.query import code_rank, collapse

    saved = code_rank.symbol_terms, code_rank.secondary, collapse.cap_per_file
    if "definitions" in names:
        code_rank.symbol_terms = lambda query: []
    if "secondary" in names:
        code_rank.secondary = lambda path, query, symbol=None: False
    if "cap" in names or cap is not None:
        collapse.cap_per_file = lambda order, rows, _: saved[2](order, rows, cap or 0)
    try:
        yield
    finally:
        code_rank.symbol_terms, code_rank.secondary, collapse.cap_per_file = saved


def search_all(config: Path, method: str, queries: list[dict]) -> tuple[list[dict], float]:
    """Every query's top 10 as score files want them, and the median ms per query."""
    from vq.core.store import open_for
    from vq.query.search import Query, search
    from vq.query.sources import LanceSources

    settings = settings_for(config)
    sources = LanceSources(open_for(settings))
    search(settings, Query(queries[0]["q"], method), sources)  # warm: the model loads once
    results, seconds = [], []
    for q in queries:
        start = time.perf_counter()
        hits = search(settings, Query(q["q"], method, limit=10), sources).hits
        seconds.append(time.perf_counter() - start)
        results.append({"id": q["id"], "hits": [
            {"path": h.path, "start_line": h.start_line, "end_line": h.end_line} for h in hits]})
    return results, round(statistics.median(seconds) * 1000, 2)


def evaluate_code(corpus: quality.Corpus, work: Path, caps: tuple[int, ...] = ()) -> dict:
    queries, problems = code_score.load_queries(corpus.root, corpus.queries)
    if problems:
        raise RuntimeError(f"judgements do not resolve in jsonschema {_version()} "
                           f"(written for {VERSION}): {problems[:3]}")
    config, built, summary = quality._build(corpus, work / corpus.name)
    out: dict[str, Any] = {"corpus": corpus.name, "label": corpus.label,
                           "queries": len(queries),
                           "chunks": _chunk_count(work / corpus.name / "index"),
                           "build_seconds": round(built.seconds, 1),
                           "chunks_encoded": summary["chunks_encoded"], "methods": {}}
    runs = [*RUNS, *((f"hybrid, cap {n}", "hybrid", (), n) for n in caps)]
    for label, method, off, cap in runs:
        log(f"{corpus.name}: {label}")
        with rules_off(off, cap):
            results, ms = search_all(config, method, queries)
        scored = code_score.score(corpus.root, queries, {r["id"]: r["hits"] for r in results})
        out["methods"][label] = {**scored, "off": list(off), "cap": cap, "ms_per_query": ms}
    return out


def _chunk_count(index_dir: Path) -> int:
    from bench import baselines

    return len(baselines.load_chunks(str(index_dir)))


def docs_unaffected(work: Path) -> list[dict]:
    """Hybrid with every rule on and off, on the sets without code: the scores must match."""
    out = []
    for corpus in (quality.docker_corpus(), quality.devset_corpus(work)):
        if corpus is None:
            continue
        config, _, _ = quality._build(corpus, work / corpus.name)
        queries = quality.read_queries(corpus.queries)
        row: dict[str, Any] = {"corpus": corpus.name, "queries": len(queries)}
        for label, off in (("rules on", ()), ("rules off", RULES)):
            log(f"{corpus.name}: hybrid, {label}")
            with rules_off(off):
                results, _ = search_all(config, "hybrid", queries)
            row[label] = {k: v for k, v in quality.score(corpus, results, work / corpus.name)
                          .items() if k in ("recall@10", "mrr@10", "ndcg@10")}
            row[f"{label} hits"] = results
        row["identical"] = row["rules on hits"] == row["rules off hits"]
        del row["rules on hits"], row["rules off hits"]
        out.append(row)
    return out


def run(work: Path, docs: bool = False, caps: tuple[int, ...] = ()) -> dict:
    corpus = code_corpus(work)
    if corpus is None:
        msg = f"jsonschema not found under {source_dir()}: code-rank benchmark skipped"
        log(msg)
        return {"skipped": msg}
    result: dict[str, Any] = {"code": evaluate_code(corpus, work, caps)}
    if docs:
        result["docs"] = docs_unaffected(work)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", action="store_true",
                    help="also check the Docker and Node.js dev sets are unaffected")
    ap.add_argument("--cap", type=int, action="append", default=[],
                    help="also run hybrid with the per-file cap at N (repeatable)")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    prepare_env()
    result = run(scratch(args.work, "code-rank"), args.docs, tuple(args.cap))
    return publish(report.code_rank_markdown(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
