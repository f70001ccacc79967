"""Retrieval quality: every vq method and the baselines, on the same chunks, in one run.

Corpora:
- ``docker``: the shared eval set (real Docker Engine docs, 80 hand-written
  queries in four styles). Found at ``$VQ_EVAL_DIR`` or ``../shared/eval``;
  absent, the benchmark says so and exits 0.
- ``nodejs-dev``: 12 Node.js API files with 44 hand-written queries judged before
  any search ran (``bench/devsets/nodejs``): the second dev set the fusion was
  chosen on (``bench.fusion``).
- ``nodejs-contributing``: 14 Node.js contributor guides (prose process docs)
  with 44 queries written and judged by a helper that ran no search
  (``bench/devsets/nodejs-contributing``); added after the fusion was chosen,
  so for the fusion it is held out.
- ``jsonschema``: the judged code set of ``bench.code_rank`` (40 queries, one
  target definition each, scored by ``bench.code_score``).
- ``adr``: 60 real decision records from two public repositories at pinned
  commits, 50 queries judged before any search ran (``bench/devsets/adr``).
- ``httpx``: HTTPX's Markdown docs and its package as two vaults, the way
  ``vq init`` sets them up; 25 section and 25 definition targets, judged before
  any search ran (``bench/devsets/httpx``); scored as the weighted mean of the
  two scorers. Both are fetched by ``bench.gitcorpus`` (skipped when offline
  with no cache).
- ``nodejs``: the Node.js API reference as shipped by the machine's ``nodejs``
  package (``/usr/share/doc/nodejs/api/*.md``, or ``$VQ_BENCH_NODEJS_DOCS``),
  with pseudo-queries made from headings (query = heading text, target = that
  section). Lexically easy by construction: a regression check, not a claim.

vq is driven through its CLI: ``vq build`` in a fresh process, then
``vq search --json`` per query through click in-process (so the model loads
once, not 400 times). Baselines index the ``text`` column of the same table.

    python -m bench.quality [--quick] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import baselines, code_score, report, truncation
from bench.common import eval_dir, log, prepare_env, publish, run_proc, scratch, vq, write_config

VQ_METHODS = (
    ("vq lexical", ("-m", "lexical")),
    ("vq dense", ("-m", "dense")),
    ("vq hybrid", ("-m", "hybrid")),
    ("vq hybrid+recency", ("-m", "hybrid", "--recency")),
    ("vq hybrid+rerank", ("-m", "hybrid", "--rerank")),
)
NODEJS_DOCS = Path("/usr/share/doc/nodejs/api")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")  # as score.py reads them


@dataclass(frozen=True)
class Corpus:
    name: str
    root: Path
    queries: Path
    label: str
    kind: str = "docs"
    include: tuple[str, ...] = ("*.md",)
    # (vault id, folder under root, kind, include globs): a project indexed as several
    # vaults, as `vq init` proposes; empty: one vault, the whole root
    vaults: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()

    def vault_specs(self) -> dict[str, dict]:
        if not self.vaults:
            return {self.name: {"path": self.root, "kind": self.kind,
                                "include": list(self.include)}}
        return {vid: {"path": self.root / sub, "kind": kind, "include": list(inc)}
                for vid, sub, kind, inc in self.vaults}


def docker_corpus() -> Corpus | None:
    base = eval_dir() / "docker"
    if not (base / "queries.jsonl").is_file() or not (eval_dir() / "score.py").is_file():
        return None
    return Corpus("docker", base / "corpus", base / "queries.jsonl",
                  "Docker Engine docs, 80 hand-written queries (paraphrase/question/keyword/task)")


def nodejs_corpus(work: Path, files: int | None, queries: int, seed: int = 5) -> Corpus | None:
    """Copy the Node.js API docs (all, or ``files`` of them) and write heading pseudo-queries."""
    source = Path(os.environ.get("VQ_BENCH_NODEJS_DOCS", NODEJS_DOCS))
    docs = sorted(source.glob("*.md"))
    if not docs:
        return None
    if files and files < len(docs):  # the quick subset: small files, so it builds in a minute
        small = sorted(docs, key=lambda p: (p.stat().st_size, p.name))[:len(docs) // 2]
        docs = sorted(random.Random(seed).sample(small, min(files, len(small))))
    root = work / "nodejs" / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for doc in docs:
        shutil.copyfile(doc, root / doc.name)
    out = work / "nodejs" / "queries.jsonl"
    picked = heading_queries(root, queries, seed)
    out.write_text("".join(json.dumps(q) + "\n" for q in picked), encoding="utf-8")
    return Corpus("nodejs", root, out, f"Node.js API docs ({len(docs)} files), {len(picked)} "
                  "heading pseudo-queries: LEXICALLY EASY (query = heading text)")


def headings(lines: list[str]) -> list[str]:
    """ATX heading texts outside fenced code (``#`` lines in a fence are not headings)."""
    out, fence = [], None
    for line in lines:
        m = _FENCE.match(line)
        if fence is None and m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            continue
        if fence is not None:
            if (m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
                    and not m.group(2).strip()):
                fence = None
            continue
        h = _HEADING.match(line)
        if h and h.group(2):
            out.append(h.group(2))
    return out


def query_text(heading: str) -> str:
    """A heading as a user would type it: no Markdown punctuation."""
    return " ".join(re.sub(r"[`*_\[\]]", " ", heading).split())


DEVSETS = Path(__file__).resolve().parent / "devsets"
DEVSET = DEVSETS / "nodejs"
CONTRIBUTING_DOCS = Path("/usr/share/doc/nodejs/contributing")


def devset_corpus(work: Path) -> Corpus | None:
    """The Node.js dev set: 12 API files and 44 queries judged before any search ran."""
    source = Path(os.environ.get("VQ_BENCH_NODEJS_DOCS", NODEJS_DOCS))
    return _listed_corpus(work, "nodejs-dev", DEVSET, source,
                          "Node.js API docs ({n} files), 44 hand-written dev queries "
                          "(paraphrase/question/keyword/task), judged before any search ran")


def contributing_corpus(work: Path) -> Corpus | None:
    """The third dev set: Node.js contributor guides, queries written blind to any search."""
    source = Path(os.environ.get("VQ_BENCH_NODEJS_CONTRIBUTING", CONTRIBUTING_DOCS))
    return _listed_corpus(work, "nodejs-contributing", DEVSETS / "nodejs-contributing", source,
                          "Node.js contributor guides ({n} files), 44 hand-written queries, "
                          "written and judged before any search ran")


def adr_corpus(work: Path) -> Corpus | None:
    """Decision records from two public repositories at pinned commits (fetched)."""
    return _git_corpus(work, "adr", "60 decision records (GOV.UK AWS, Home Assistant), 50 "
                       "hand-written queries judged before any search ran")


def httpx_corpus(work: Path) -> Corpus | None:
    """A project's Markdown docs and its package, indexed as two vaults as `vq init` would."""
    return _git_corpus(work, "httpx", "HTTPX docs (notes vault) + source (code vault), 25 "
                       "section + 25 definition queries judged before any search ran",
                       vaults=(("docs", "docs", "notes", ("*.md",)),
                               ("code", "", "code", ("*.py",))))


def jsonschema_corpus(work: Path) -> Corpus | None:
    """The judged code set of ``bench.code_rank`` (the installed jsonschema's source)."""
    from bench import code_rank

    return code_rank.code_corpus(work)


def dev_corpora(work: Path) -> list[Corpus]:
    """Every judged dev set that can be had here (Docker, the shared set, apart)."""
    found = (devset_corpus(work), contributing_corpus(work), jsonschema_corpus(work),
             adr_corpus(work), httpx_corpus(work))
    return [c for c in found if c is not None]


def _git_corpus(work: Path, name: str, label: str,
                vaults: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()) -> Corpus | None:
    """A dev set whose corpus ``bench.gitcorpus`` fetches; None (logged) when it cannot."""
    from bench import gitcorpus

    try:
        root = gitcorpus.materialise(DEVSETS / name, work / name / "corpus")
    except gitcorpus.FetchError as exc:
        log(f"{name}: skipped, corpus not fetched ({exc})")
        return None
    return Corpus(name, root, DEVSETS / name / "queries.jsonl", label, vaults=vaults)


def _listed_corpus(work: Path, name: str, devset: Path, source: Path,
                   label: str) -> Corpus | None:
    """Copy the files a dev set lists (``files.txt``) from ``source``; None if any is missing."""
    names = (devset / "files.txt").read_text(encoding="utf-8").split()
    if not all((source / n).is_file() for n in names):
        return None
    root = work / name / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for n in names:
        shutil.copyfile(source / n, root / n)
    return Corpus(name, root, devset / "queries.jsonl", label.format(n=len(names)))


def heading_queries(root: Path, n: int, seed: int) -> list[dict]:
    """``n`` headings unique in their file and, as queries, across the corpus."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(root.glob("*.md")):
        texts = headings(path.read_text(encoding="utf-8").split("\n"))
        for h in texts:
            if texts.count(h) == 1 and len(query_text(h).split()) >= 2:
                found.setdefault(query_text(h).lower(), []).append((path.name, h))
    unique = sorted(v[0] for v in found.values() if len(v) == 1)
    picked = random.Random(seed).sample(unique, min(n, len(unique)))
    return [{"id": f"n{i:03d}", "q": query_text(h), "path": p, "heading": h, "style": "keyword"}
            for i, (p, h) in enumerate(sorted(picked), 1)]


def read_queries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def score(corpus: Corpus, results: list[dict], work: Path) -> dict:
    """The judged numbers for one results list. Section targets (``heading``) are scored
    by the shared score.py, definition targets (``symbol``) by ``bench.code_score``; a set
    holding both reports the query-weighted mean of the two (same formulas, one target a
    query), with each half under ``parts``."""
    queries = read_queries(corpus.queries)
    code = [q for q in queries if "symbol" in q]
    if not code:
        return _score_sections(corpus.root, corpus.queries, results, work)
    if len(code) == len(queries):
        return _score_code(corpus.root, corpus.queries, results)
    work.mkdir(parents=True, exist_ok=True)
    halves = {}
    for part, rows in (("sections", [q for q in queries if "symbol" not in q]), ("code", code)):
        path = work / f"queries-{part}.jsonl"
        path.write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")
        halves[part] = (_score_sections(corpus.root, path, results, work) if part == "sections"
                        else _score_code(corpus.root, path, results))
    out: dict[str, Any] = {m: sum(h[m] * h["n"] for h in halves.values()) / len(queries)
                           for m in code_score.METRICS}
    out.update(n=len(queries), missing=sum(h.get("missing", 0) for h in halves.values()),
               by_style={**halves["sections"]["by_style"],  # a style may be in both halves
                         **{f"code {k}": v for k, v in halves["code"]["by_style"].items()}},
               parts=halves)
    return out


def _score_sections(root: Path, queries: Path, results: list[dict], work: Path) -> dict:
    """score.py's numbers (it, not this file, does the math)."""
    path = work / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    proc = run_proc([sys.executable, str(eval_dir() / "score.py"), "--corpus", str(root),
                     "--queries", str(queries), "--results", str(path), "--json"])
    if proc.rc != 0:
        raise RuntimeError(f"score.py failed ({proc.rc}): {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def _score_code(root: Path, queries: Path, results: list[dict]) -> dict:
    resolved, problems = code_score.load_queries(root, queries)
    if problems:
        raise RuntimeError(f"code judgements do not resolve: {problems[:3]}")
    out = code_score.score(root, resolved, {r["id"]: r["hits"] for r in results})
    out["n"] = len(resolved)
    return out


def cli_search(config: Path, flags: tuple[str, ...], text: str, runner: Any) -> list[dict]:
    """``vq --config C search --json -n 10 FLAGS -- TEXT`` through click, parsed."""
    from vq.cli import cli

    args = ["--config", str(config), "search", "--json", "-n", "10", *flags, "--", text]
    res = runner.invoke(cli, args, catch_exceptions=False)
    if res.exit_code not in (0, 1):
        raise RuntimeError(f"vq search exited {res.exit_code}: {res.stderr.strip()[-300:]}")
    return json.loads(res.stdout) if res.stdout.strip() else []


def run_vq_method(corpus: Corpus, config: Path, flags: tuple[str, ...], queries: list[dict],
                  work: Path) -> dict:
    from click.testing import CliRunner

    runner = CliRunner()
    cli_search(config, flags, queries[0]["q"], runner)  # warm: model load is not per query
    results, seconds = [], []
    for q in queries:
        start = time.perf_counter()
        hits = cli_search(config, flags, q["q"], runner)
        seconds.append(time.perf_counter() - start)
        results.append({"id": q["id"], "hits": [  # absolute: several vaults share the root
            {"path": h.get("abs_path") or h["path"], "start_line": h["start_line"],
             "end_line": h["end_line"]} for h in hits]})
    return {**score(corpus, results, work), "ms_per_query": _ms(seconds)}


def run_baseline(corpus: Corpus, base: Any, rows: list, queries: list[dict], work: Path) -> dict:
    results, seconds = [], []
    for q in queries:
        start = time.perf_counter()
        found = base.search(q["q"], 10)
        seconds.append(time.perf_counter() - start)
        results.append({"id": q["id"], "hits": baselines.hits_json(rows, found)})
    return {**score(corpus, results, work), "ms_per_query": _ms(seconds)}


def _ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 2)


def evaluate(corpus: Corpus, work: Path) -> dict:
    """Build the corpus with `vq build`, then score every method and baseline."""
    base = work / corpus.name
    rerank = os.environ.get("VQ_BENCH_RERANK_MODEL")
    config, built, summary = _build(corpus, base, rerank)
    rows = baselines.load_chunks(str(base / "index"), {v[0]: v[1] for v in corpus.vaults})
    queries = read_queries(corpus.queries)
    out: dict[str, Any] = {"corpus": corpus.name, "label": corpus.label,
                           "queries": len(queries), "chunks": len(rows),
                           "build_seconds": round(built.seconds, 1),
                           "chunks_encoded": summary["chunks_encoded"],
                           "truncation": truncation.share(corpus.root, corpus.name),
                           "methods": {}}
    for label, flags in VQ_METHODS:
        if "--rerank" in flags and not rerank:
            out["methods"][label] = {"skipped": "no reranker configured (set "
                                     "VQ_BENCH_RERANK_MODEL; no cross-encoder ships offline)"}
            continue
        log(f"{corpus.name}: {label}")
        out["methods"][label] = run_vq_method(corpus, config, flags, queries, base)
    for b in baselines.all_baselines(rows):
        log(f"{corpus.name}: baseline {b.name}")
        out["methods"][f"baseline {b.name}"] = run_baseline(corpus, b, rows, queries, base)
    return out


def _build(corpus: Corpus, base: Path, rerank: str | None = None) -> tuple[Path, Any, dict]:
    """`vq build` of the corpus in a fresh process: (config, process, JSON summary)."""
    extra = {"search": {"rerank_model": rerank}} if rerank else {}
    config = write_config(base / "vq.yaml", base / "index", corpus.vault_specs(), **extra)
    log(f"{corpus.name}: vq build")
    built = vq("--config", config, "build", "--json", "--no-progress")
    if built.rc != 0:
        raise RuntimeError(f"vq build failed: {built.stderr.strip()[-500:]}")
    return config, built, json.loads(built.stdout)


def build_corpus(corpus: Corpus, work: Path) -> tuple[Path, Any]:
    """The corpus indexed exactly as ``evaluate`` indexes it: (config, open index)."""
    from vq.core.store import open_index

    config, _, _ = _build(corpus, work / corpus.name)
    return config, open_index(str(work / corpus.name / "index"))


def run(work: Path, quick: bool = False) -> dict:
    """All corpora; a missing eval set is a skip with a message, not a failure."""
    out: dict[str, Any] = {"corpora": []}
    docker = docker_corpus()
    if docker is None:
        msg = f"eval set not found at {eval_dir()} (set VQ_EVAL_DIR): quality benchmark skipped"
        log(msg)
        return {"skipped": msg}
    out["corpora"].append(evaluate(docker, work))
    for dev in dev_corpora(work):
        out["corpora"].append(evaluate(dev, work))
    node = nodejs_corpus(work, files=8 if quick else None, queries=40 if quick else 150)
    if node is None:
        out["nodejs_skipped"] = f"no Node.js API docs at {NODEJS_DOCS} (apt-get install nodejs)"
        log(out["nodejs_skipped"])
    else:
        out["corpora"].append(evaluate(node, work))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smaller regression corpus")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    prepare_env()
    result = run(scratch(args.work, "quality"), args.quick)
    return publish(report.quality_markdown(result), result, args.json)


if __name__ == "__main__":
    sys.exit(main())
