"""Dense pseudo-relevance feedback, measured on the dev sets before anything ships.

The weak signal on the Docker set is the dense one (nDCG@10 0.776 against
lexical 0.864). Rocchio-style feedback on the query vector is the textbook way
to strengthen it without a new model: move the query toward the mean vector of
its top ``m`` hits, ``q' = unit(q + beta * unit(mean(top m)))``, search the
vectors again and fuse with the same BM25 pool (the default fusion: min-max
convex, BM25 weight 0.4). The feedback hits come either from the first fused
ranking or from the dense pool alone.

Decision rule, written before the first run: a variant ships only if its mean
hybrid nDCG@10 over the two dev sets (Docker, Node.js dev) is at least 0.01
above the default's, and none of recall@10, MRR@10, nDCG@10 drops by more than
0.005 on either set. Of several such variants the one with the highest mean
wins, ties to the smaller ``m`` and ``beta``. Otherwise nothing changes.

    python -m bench.prf [--work DIR] [--json OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench import fusion as fusion_bench
from bench import quality
from vq.query import fusion

M = (3, 5, 10)
BETAS = (0.5, 1.0)
SOURCES = ("fused", "dense")


def feedback(index: Any, entry: dict[str, Any], vector: Any) -> None:
    """A dense pool per feedback variant, added to the entry."""
    from vq.query import search

    first = {"fused": fusion_bench.default_order(entry["bm25"], entry["dense"]),
             "dense": fusion.ranked(entry["dense"])}
    for source in SOURCES:
        for m in M:
            centre = _mean_vector(index, first[source][:m])
            for beta in BETAS:
                moved = vector + beta * centre
                moved = moved / np.linalg.norm(moved)
                entry[(source, m, beta)] = dict(fusion_bench._pairs(
                    search._dense(index, moved.astype(np.float32), None, fusion_bench.POOL),
                    entry["spans"]))


def entries(config: Path, queries: list[dict]) -> list[dict[str, Any]]:
    """Per query: the BM25 pool, the dense pool, and a dense pool per feedback variant."""
    return fusion_bench.dev_pools(config, queries, feedback)


def _mean_vector(index: Any, ids: list[str]) -> np.ndarray:
    quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids)
    rows = (index.chunks.search().where(f"id IN ({quoted})").select(["vector"])
            .limit(len(ids)).to_arrow()["vector"].to_pylist())
    mean = np.mean(np.asarray(rows, dtype=np.float32), axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def variants() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [("default hybrid", None)]
    out += [(f"prf {s} m={m} beta={b}", (s, m, b)) for s in SOURCES for m in M for b in BETAS]
    return out


def evaluate(corpus: quality.Corpus, found: list[dict], work: Path) -> dict[str, dict]:
    return {name: fusion_bench.score_orders(
        corpus, found, work, lambda e, key=key: fusion_bench.default_order(
            e["bm25"], e["dense"] if key is None else e[key]))
        for name, key in variants()}


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule of the module docstring."""
    return fusion_bench.ship(scores, [name for name, _ in variants()])


def render(scores: dict[str, dict[str, dict]]) -> str:
    return fusion_bench.render_rows(scores, [name for name, _ in variants()])


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.dev_main(argv, __doc__, "prf", entries, evaluate, choose, render)


if __name__ == "__main__":
    sys.exit(main())
