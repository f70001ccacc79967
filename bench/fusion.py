"""Fusion chosen on dev data: every fusion and heading boost scored from one set of pools.

For each dev corpus (the Docker eval set and ``bench/devsets/nodejs``) the index
is built once with ``vq build``; then each query's candidate pools are fetched
once (the vector pool, and a BM25 pool per heading boost) and every fusion is
computed from them in-process and scored by the shared ``score.py``. Nothing
is fitted per query: the grid below is the whole search space, and the choice
rule is stated in ``choose``.

    python -m bench.fusion [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from bench import quality
from bench.common import log, prepare_env, save_json, scratch, settings_for
from vq.core.settings import SearchSettings
from vq.query import fusion

POOL = 100
BOOSTS = (0.0, 0.25, 0.5, 1.0, 2.0)
WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
METRICS = ("recall@10", "mrr@10", "ndcg@10")


def pools(config: Path, queries: list[dict]) -> list[dict[str, Any]]:
    """Per query: the dense pool and a BM25 pool per boost, as [(id, score)], plus
    every candidate's (path, start, end)."""
    from vq.core.store import open_for
    from vq.query import search
    from vq.query.encoders import query_encoder

    settings = settings_for(config)
    index = open_for(settings)
    vectors = query_encoder(index.meta.model, "cpu").encode([q["q"] for q in queries])
    out = []
    for q, vector in zip(queries, vectors, strict=True):
        spans: dict[str, tuple[str, int, int]] = {}
        entry: dict[str, Any] = {"id": q["id"], "spans": spans}
        entry["dense"] = pairs(search._dense(index, vector, None, POOL), spans)
        for boost in BOOSTS:
            entry[f"bm25@{boost}"] = pairs(search._lexical(index, q["q"], None, POOL, boost),
                                            spans)
        out.append(entry)
    return out


def pairs(table: Any, spans: dict) -> list[tuple[str, float]]:
    """A search result as [(id, score)] best first; each row's span goes into ``spans``."""
    pairs = []
    for row in table.to_pylist():
        spans[row["id"]] = (row["path"], row["start_line"], row["end_line"], row["breadcrumb"])
        score = row["_score"] if "_score" in row else 1.0 - row["_distance"]
        pairs.append((row["id"], float(score)))
    return sorted(pairs, key=lambda p: (-p[1], p[0]))


def variants() -> list[tuple[str, dict]]:
    """The whole search space: name -> how to rank; each also one piece per section."""
    base = _variants()
    return base + [(f"{name} +section", {**spec, "section": True}) for name, spec in base]


def _variants() -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = [("dense", {"kind": "dense"})]
    for b in BOOSTS:
        out.append((f"lexical b={b}", {"kind": "lexical", "boost": b}))
        out.append((f"rrf k=60 b={b}", {"kind": "rrf", "boost": b}))
        for w in WEIGHTS:
            out.append((f"convex w={w} b={b}", {"kind": "convex", "boost": b, "weight": w,
                                                "floor": True}))
            out.append((f"minmax w={w} b={b}", {"kind": "convex", "boost": b, "weight": w,
                                                "floor": False}))
    return out


def rank(entry: dict, spec: dict) -> list[str]:
    order = _rank(entry, spec)
    if spec.get("section"):
        spans = entry["spans"]
        order = fusion.one_per_section(order, {i: (spans[i][0], spans[i][3]) for i in order})
    return order


def _rank(entry: dict, spec: dict) -> list[str]:
    dense = dict(entry["dense"])
    if spec["kind"] == "dense":
        return fusion.ranked(dense)
    lexical = dict(entry[f"bm25@{spec['boost']}"])
    if spec["kind"] == "lexical":
        return fusion.ranked(lexical)
    if spec["kind"] == "rrf":
        return fusion.ranked(fusion.rrf({"bm25": fusion.ranked(lexical),
                                         "dense": fusion.ranked(dense)}))
    w = spec["weight"]
    return fusion.ranked(fusion.convex({"bm25": lexical, "dense": dense},
                                       {"bm25": w, "dense": 1 - w}, spec["floor"]))


def evaluate(corpus: quality.Corpus, entries: list[dict], work: Path) -> dict[str, dict]:
    out = {}
    for name, spec in variants():
        results = []
        for e in entries:
            hits = [dict(zip(("path", "start_line", "end_line"), e["spans"][i][:3], strict=True))
                    for i in rank(e, spec)[:10]]
            results.append({"id": e["id"], "hits": hits})
        out[name] = quality.score(corpus, results, work)
    return out


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule: the heading boost that maximises lexical nDCG@10 (mean over the dev
    sets), then the fusion and weight that maximise hybrid nDCG@10 (mean) at that boost.
    Ties go to the smaller parameter."""
    sets = list(scores)

    def mean(name: str) -> float:
        return statistics.mean(scores[s][name]["ndcg@10"] for s in sets)

    boost = max(BOOSTS, key=lambda b: (round(mean(f"lexical b={b}"), 4), -b))
    fused = [f"rrf k=60 b={boost}"] + [f"{kind} w={w} b={boost}" for kind in ("convex", "minmax")
                                       for w in WEIGHTS]
    fused += [f"{name} +section" for name in fused]
    best = max(fused, key=lambda n: (round(mean(n), 4), -fused.index(n)))
    return {"heading_boost": boost, "fusion": best, "mean_ndcg@10": round(mean(best), 4)}


# the fusion every dev-set experiment is judged against: convex min-max of BM25 and the
# piece vectors at the settings' BM25 weight (what shipped until section vectors passed,
# docs/decisions.md#section-vectors; vq now adds them as a third signal)
DEFAULT_WEIGHT = SearchSettings().lexical_weight


def default_order(lexical: dict[str, float], dense: dict[str, float],
                  weight: float = DEFAULT_WEIGHT) -> list[str]:
    """The two-signal fusion's ranking of two pools (before one piece per section)."""
    return fusion.ranked(fusion.convex({"bm25": lexical, "dense": dense},
                                       {"bm25": weight, "dense": 1 - weight}, False))


def convex_order(entry: dict[str, Any], weights: dict[str, float]) -> list[str]:
    """Min-max convex over the entry's pools named in ``weights``, ranked."""
    return fusion.ranked(fusion.convex({name: entry[name] for name in weights}, weights,
                                       False))


def dev_pools(config: Path, queries: list[dict], extra: Any = None) -> list[dict[str, Any]]:
    """Per query: its text, the BM25 and dense pools as {id: score}, every candidate's
    span; ``extra(index, entry, vector)`` adds an experiment's own pools."""
    from vq.core.store import open_for
    from vq.query import search
    from vq.query.encoders import query_encoder

    index = open_for(settings_for(config))
    vectors = query_encoder(index.meta.model, "cpu").encode([q["q"] for q in queries])
    out = []
    for q, vector in zip(queries, vectors, strict=True):
        spans: dict = {}
        entry = {"id": q["id"], "q": q["q"], "spans": spans,
                 "bm25": dict(pairs(search._lexical(index, q["q"], None, POOL), spans)),
                 "dense": dict(pairs(search._dense(index, vector, None, POOL), spans))}
        if extra is not None:
            extra(index, entry, vector)
        out.append(entry)
    return out


def score_orders(corpus: quality.Corpus, found: list[dict], work: Path,
                 order_of: Any) -> dict[str, Any]:
    """Score one variant: ``order_of(entry)`` ranks ids, then one piece per section
    (as search does) and the top 10 go to the shared scorer."""
    results = []
    for e in found:
        spans = e["spans"]
        order = fusion.one_per_section(order_of(e), {i: (spans[i][0], spans[i][3])
                                                     for i in spans})
        hits = [dict(zip(("path", "start_line", "end_line"), spans[i][:3], strict=True))
                for i in order[:10]]
        results.append({"id": e["id"], "hits": hits})
    return quality.score(corpus, results, work)


def ship(scores: dict[str, dict[str, dict]], names: list[str], gain: float = 0.01,
         slack: float = 0.005) -> dict[str, Any]:
    """The dev-set experiments' shipping rule: ``names[0]`` is the default; another
    variant ships only if its mean nDCG@10 over the sets is ``gain`` above the
    default's and no metric drops by more than ``slack`` on any set. Of those, the
    highest mean; ties to the earlier name."""
    sets = list(scores)

    def mean(name: str) -> float:
        return statistics.mean(scores[s][name]["ndcg@10"] for s in sets)

    base = names[0]
    passing = [name for name in names[1:]
               if mean(name) >= mean(base) + gain
               and all(scores[s][name][m] >= scores[s][base][m] - slack
                       for s in sets for m in METRICS)]
    best = max(passing, key=lambda n: round(mean(n), 4), default=None)
    return {"ships": best, "mean_ndcg@10": {n: round(mean(n), 4) for n in names}}


def render_rows(scores: dict[str, dict[str, dict]], names: list[str]) -> str:
    from bench.report import table as markdown_table

    rows = [[name] + [scores[s][name][m] for s in scores for m in METRICS] for name in names]
    return markdown_table(["variant"] + [f"{s} {m}" for s in scores for m in METRICS], rows)


def table(scores: dict[str, dict[str, dict]]) -> str:
    first = next(iter(scores.values()))
    return render_rows(scores, [name for name, _ in variants() if name in first]) + "\n"


def dev_corpora(work: Path) -> list[quality.Corpus | None]:
    """The two dev sets every fusion experiment is judged on: Docker, Node.js dev."""
    return [quality.docker_corpus(), quality.devset_corpus(work)]


def dev_scores(work: Path, fetch: Any, score: Any, corpora: Any = dev_corpora) -> dict[str, dict]:
    """Each set of ``corpora(work)`` built once in ``work``, its queries' pools fetched
    once (``fetch(config, queries)``) and scored per variant (``score(corpus, pools, dir)``)."""
    scores = {}
    for corpus in corpora(work):
        if corpus is None:
            continue
        config, _ = quality.build_corpus(corpus, work)
        queries = quality.read_queries(corpus.queries)
        log(f"{corpus.name}: pools for {len(queries)} queries")
        scores[corpus.name] = score(corpus, fetch(config, queries), work / corpus.name)
    return scores


def dev_main(argv: list[str] | None, doc: str, name: str, fetch: Any, score: Any,
             choose_: Any, render: Any, corpora: Any = dev_corpora) -> int:
    """The command line of a dev-set experiment: --work, --json; the table, the choice."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--work", type=Path, help="scratch folder with (or for) the built corpora")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    prepare_env()
    scores = dev_scores(scratch(args.work, name), fetch, score, corpora)
    result = {"scores": scores, "choice": choose_(scores)}
    print(render(scores))
    print(json.dumps(result["choice"]))
    if args.json:
        save_json(args.json, result)
    return 0


def variant_main(argv: list[str] | None, doc: str, name: str,
                 variants: list[tuple[str, Any]], fetch: Any = dev_pools, choose: Any = None,
                 annotate: Any = None, corpora: Any = dev_corpora) -> int:
    """A dev-set experiment whose variants each rank an entry's ids (``(name,
    order_of)``): scored by ``score_orders``, judged by ``ship`` (default first)
    unless ``choose`` is given; ``annotate(name, found)`` adds counts to a row."""
    names = [n for n, _ in variants]

    def evaluate(corpus: quality.Corpus, found: list[dict], work: Path) -> dict[str, dict]:
        out = {}
        for n, order_of in variants:
            out[n] = score_orders(corpus, found, work, order_of)
            if annotate is not None:
                out[n].update(annotate(n, found))
        return out

    return dev_main(argv, doc, name, fetch, evaluate, choose or (lambda s: ship(s, names)),
                    lambda s: render_rows(s, names), corpora)


def confirm_corpora(work: Path) -> list[quality.Corpus | None]:
    """Sets a variant that passed (or nearly passed) ``ship`` is confirmed on: the
    contributor guides, then the Node.js heading set of ``make bench``."""
    return [quality.contributing_corpus(work), quality.nodejs_corpus(work, None, 150)]


def confirm(scores: dict[str, dict[str, dict]], base: str, new: str, gain: float = 0.005,
            slack: float = 0.005) -> dict[str, Any]:
    """The confirmation rule: ``new`` gains ``gain`` nDCG@10 on the contributor guides
    and no metric drops by more than ``slack`` on any confirmation set."""
    fresh = scores.get("nodejs-contributing")
    gained = fresh is not None and fresh[new]["ndcg@10"] >= fresh[base]["ndcg@10"] + gain
    kept = all(per[new][m] >= per[base][m] - slack for per in scores.values() for m in METRICS)
    return {"ships": new if gained and kept else None, "sets": list(scores),
            "gain_on_new_set": gained, "no_drop": kept}


def experiment_main(argv: list[str] | None, doc: str, name: str,
                    variants: list[tuple[str, Any]], fetch: Any, rival: tuple[str, str]
                    ) -> int:
    """``variant_main`` judged by ``ship`` on the dev sets, or with ``--confirm`` by
    ``confirm`` on ``confirm_corpora``: only ``rival`` (default, variant) competes."""
    base, new = rival
    args = list(sys.argv[1:] if argv is None else argv)
    if "--confirm" in args:
        args.remove("--confirm")
        return variant_main(args, doc, name, variants, fetch,
                            lambda s: confirm(s, base, new), corpora=confirm_corpora)
    return variant_main(args, doc, name, variants, fetch, lambda s: ship(s, [base, new]))


def main(argv: list[str] | None = None) -> int:
    return dev_main(argv, __doc__, "fusion", pools, evaluate, choose, table)


if __name__ == "__main__":
    sys.exit(main())
