"""Where the first relevant hit is lost: every dev set through vq's own search, query by query.

Each dev set (the Docker eval set, the Node.js API and contributor sets, the
jsonschema code set, the decision records) is built once in ``--work`` with
``vq build`` and reused: a later run rebuilds nothing that has not changed.
Every variant then runs each query through ``vq.query.search.search`` in this
process (the whole pipeline: fusion, one hit per place, code signals), and the
rank of its first relevant hit is kept, so a variant is judged by the shared metrics and a lost
first hit can be read query by query (``--misses``).

A variant is a name and a context manager that switches one thing on search
(``VARIANTS``), or a hit unit applied to a deeper list of the same pool (``UNITS``,
docs/decisions.md#record-hits); each is judged against ``baseline`` by
``bench.fusion.ship`` (the rule: mean nDCG@10 over the sets up by ``--gain``, no
set's metric down by more than 0.005). Nothing is fitted per query.

    python -m bench.first_hit --work DIR [--sets a,b] [--variants a,b] [--misses] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench import code_rank, code_score, fusion, quality
from bench.common import eval_dir, log, prepare_env, save_json, scratch, settings_for

Variant = Callable[[Any], Any]  # settings -> a context manager yielding the settings to use
METRICS = ("recall@10", "mrr@10", "ndcg@10")


@contextlib.contextmanager
def as_shipped(settings: Any) -> Iterator[Any]:
    yield settings


def _with_search(**keys: Any) -> Variant:
    import dataclasses

    @contextlib.contextmanager
    def switch(settings: Any) -> Iterator[Any]:
        yield dataclasses.replace(settings, search=dataclasses.replace(settings.search, **keys))
    return switch


VARIANTS: dict[str, Variant] = {"baseline": as_shipped}

RECORD_BYTES = 4096  # docs/decisions.md#record-hits: a short file, about 1,024 tokens
DEEPER = 30  # hits asked for before a hit unit collapses them to ten


def record_unit(anchor_only: bool) -> Callable[[list[Any]], list[Any]]:
    """Hits where the sections of one short prose file are one hit, at the rank of its
    best section: spanning the whole file, or (``anchor_only``) that section's lines."""
    import dataclasses
    import os

    def collapse(hits: list[Any]) -> list[Any]:
        out, seen = [], set()
        for hit in hits:
            path = hit.abs_path or hit.path
            short = hit.kind != "code" and os.path.getsize(path) <= RECORD_BYTES
            if short and path in seen:
                continue
            if short:
                seen.add(path)
                if not anchor_only:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        hit = dataclasses.replace(hit, start_line=1,
                                                  end_line=max(1, sum(1 for _ in f)))
            out.append(hit)
        return out
    return collapse


UNITS: dict[str, Callable[[list[Any]], list[Any]]] = {
    "record": record_unit(anchor_only=False),
    "record-anchor": record_unit(anchor_only=True),
}


SETS: dict[str, Callable[[Path], quality.Corpus | None]] = {
    "docker": lambda work: quality.docker_corpus(),
    "nodejs-dev": quality.devset_corpus,
    "nodejs-contributing": quality.contributing_corpus,
    "jsonschema": code_rank.code_corpus,
    "adr": quality.adr_corpus,
    "httpx": quality.httpx_corpus,  # docs and code: each query by its own judge
}


def corpora(work: Path, sets: list[str] | None = None) -> list[quality.Corpus]:
    """The dev sets this machine has (or those named), each copied into ``work`` only
    when asked for, so a set another process is building is never touched."""
    found = [SETS[name](work) for name in SETS if not sets or name in sets]
    return [c for c in found if c is not None]


def _docs_scorer() -> Any:
    spec = importlib.util.spec_from_file_location("eval_score", eval_dir() / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Judge:
    """First relevant rank of a query's hits, by score.py (section targets) or code_score
    (definition targets, ``symbol``); a set may hold both (httpx), each query judged by
    its own. Hits are matched by absolute path where they carry one (several vaults
    share the corpus root)."""

    def __init__(self, corpus: quality.Corpus) -> None:
        self.root = corpus.root
        rows = quality.read_queries(corpus.queries)
        self.code_ids = {q["id"] for q in rows if "symbol" in q}
        found: dict[str, dict] = {}
        problems: list[str] = []
        with tempfile.TemporaryDirectory() as tmp:
            for part in ("code", "sections"):
                subset = [q for q in rows if (q["id"] in self.code_ids) == (part == "code")]
                if not subset:
                    continue
                path = Path(tmp) / f"{part}.jsonl"
                path.write_text("".join(json.dumps(q) + "\n" for q in subset), encoding="utf-8")
                if part == "code":
                    queries, bad = code_score.load_queries(corpus.root, path)
                    found.update({q["id"]: q for q in queries})
                else:
                    self.scorer = _docs_scorer()
                    self.corpus = self.scorer.Corpus(str(corpus.root))
                    loaded, bad, _ = self.scorer.load_queries(str(path), self.corpus)
                    found.update(loaded)
                problems += bad
        if problems:
            raise RuntimeError(f"{corpus.name}: judgements do not resolve: {problems[:3]}")
        self.queries = {q["id"]: found[q["id"]] for q in rows}

    def rank(self, qid: str, hits: list[Any]) -> int | None:
        q = self.queries[qid]
        paths = [getattr(h, "abs_path", "") or h.path for h in hits[:10]]
        if qid in self.code_ids:
            found = [{"path": p, "start_line": h.start_line, "end_line": h.end_line}
                     for p, h in zip(paths, hits, strict=False)]
            return code_score.first_relevant_rank(q, found, self.root)
        return self.scorer.first_relevant_rank(
            q, [(p, h.start_line, h.end_line) for p, h in zip(paths, hits, strict=False)],
            self.corpus)


def run_variant(config: Path, judge: Judge, variant: Variant,
                unit: Callable[[list[Any]], list[Any]] | None = None) -> dict[str, Any]:
    from vq.core.store import open_for
    from vq.query.search import Query, search
    from vq.query.sources import LanceSources

    base = settings_for(config)
    sources = LanceSources(open_for(base))
    ranks: dict[str, int | None] = {}
    firsts: dict[str, str] = {}
    with variant(base) as settings:
        for qid, q in judge.queries.items():
            if unit is None:
                hits = search(settings, Query(q["q"], "hybrid", limit=10), sources).hits
            else:  # the same pool as ten hits get, read deeper, then collapsed
                pool = max(settings.search.pool, 5 * 10)
                hits = unit(search(settings, Query(q["q"], "hybrid", limit=DEEPER, pool=pool),
                                   sources).hits)[:10]
            ranks[qid] = judge.rank(qid, hits)
            firsts[qid] = f"{hits[0].path}:{hits[0].start_line}" if hits else ""
    return {**code_score.summarise(list(ranks.values())), "ranks": ranks, "firsts": firsts}


def measure(work: Path, names: list[str], sets: list[str] | None = None,
            found: list[quality.Corpus] | None = None) -> dict[str, dict[str, dict]]:
    scores: dict[str, dict[str, dict]] = {}
    for corpus in corpora(work, sets) if found is None else found:
        config, _, _ = quality._build(corpus, work / corpus.name)
        judge = Judge(corpus)
        scores[corpus.name] = {}
        for name in names:
            log(f"{corpus.name}: {name}")
            scores[corpus.name][name] = run_variant(config, judge,
                                                    VARIANTS.get(name, as_shipped),  # a unit
                                                    UNITS.get(name))
    return scores


def misses(scores: dict[str, dict[str, dict]], name: str, found: list[quality.Corpus]
           ) -> str:
    """Every query whose first relevant hit is not at rank 1, with what ranked first.
    ``found``: the corpora measured (asking ``corpora`` again would copy them afresh)."""
    lines = []
    for corpus in found:
        per = scores.get(corpus.name, {}).get(name)
        if per is None:
            continue
        queries = {q["id"]: q for q in quality.read_queries(corpus.queries)}
        for qid, rank in per["ranks"].items():
            if rank != 1:
                q = queries[qid]
                want = q.get("heading") or q.get("symbol")
                lines.append(f"{corpus.name} {qid} rank={rank} [{q['style']}] {q['q']!r} -> "
                             f"want {q['path']} {want!r}; first {per['firsts'][qid]}")
    return "\n".join(lines)


def render(scores: dict[str, dict[str, dict]], names: list[str]) -> str:
    slim = {s: {n: {m: round(v[n][m], 4) for m in METRICS} for n in names}
            for s, v in scores.items()}
    return fusion.render_rows(slim, names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, help="scratch folder with (or for) the built sets")
    ap.add_argument("--variants", default="", help="comma-separated names of VARIANTS or UNITS")
    ap.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    ap.add_argument("--gain", type=float, default=0.005, help="the ship rule's nDCG@10 gain")
    ap.add_argument("--misses", action="store_true", help="list the baseline's lost first hits")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    prepare_env()
    work = scratch(args.work, "first-hit")
    names = ["baseline", *[n for n in args.variants.split(",") if n and n != "baseline"]]
    unknown = [n for n in names if n not in VARIANTS and n not in UNITS]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}: choose from {[*VARIANTS, *UNITS]}")
    found = corpora(work, [s for s in args.sets.split(",") if s])
    scores = measure(work, names, found=found)
    choice = fusion.ship(scores, names, gain=args.gain)
    print(render(scores, names))
    print(json.dumps(choice))
    if args.misses:
        print(misses(scores, "baseline", found))
    if args.json:
        save_json(args.json, {"scores": scores, "choice": choice})
    return 0


if __name__ == "__main__":
    sys.exit(main())
