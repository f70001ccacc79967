"""Piece and section BM25 together, vectors on the pieces: measured on the dev sets first.

``bench.section_bm25`` found section BM25 the better lexical ranker on both dev
sets, and hybrid with it in place of piece BM25 better on Docker and worse on
Node.js dev (+0.0027 mean nDCG@10, under the bar). Passage retrieval's oldest
answer to "which granularity?" is both: score the document and its best
passage and add the evidence (Callan, "Passage-level evidence in document
retrieval", SIGIR 1994; Bendersky and Kurland, "Utilizing passage-based
language models for document retrieval", ECIR 2008). A piece scores on its own
terms and on its whole section's; a section whose terms are spread over
several pieces is not lost, and a piece that holds the match itself still
leads its section.

The one variant: min-max convex over three pools, the lexical weight of the
shipped fusion (0.4) split equally between piece BM25 and section BM25
(0.2 + 0.2), dense 0.6; one piece per section, as search does. The equal split
is the prior of not knowing which granularity is better, not a searched value;
nothing else is varied. Section BM25 comes from ``bench.section_bm25``'s
separate table. This experiment was motivated by that result, so its
motivation is after the fact; its one setting is fixed before its first run.

Decision rule, written before the first run (``bench.fusion.ship``, as for
``bench.prf``, ``bench.qweight``, ``bench.section_bm25``, ``bench.normalise``):
the variant ships only if its mean hybrid nDCG@10 over the two dev sets
(Docker, Node.js dev) is at least 0.01 above the default's and none of
recall@10, MRR@10, nDCG@10 drops by more than 0.005 on either set. Otherwise
nothing changes.

    python -m bench.multigrain [--work DIR] [--json OUT]
"""

from __future__ import annotations

import sys
from typing import Any

from bench import fusion as fusion_bench
from bench import section_bm25
from vq.query import fusion

LEXICAL = fusion_bench.DEFAULT_WEIGHT


def both(entry: dict[str, Any]) -> list[str]:
    """Min-max convex over piece BM25, section BM25 and dense; the lexical weight split."""
    pools = {"bm25": entry["bm25"], "section": entry["section"], "dense": entry["dense"]}
    weights = {"bm25": LEXICAL / 2, "section": LEXICAL / 2, "dense": 1 - LEXICAL}
    return fusion.ranked(fusion.convex(pools, weights, False))


def lexical_both(entry: dict[str, Any]) -> list[str]:
    """For the record: the two BM25 pools alone, equally weighted."""
    pools = {"bm25": entry["bm25"], "section": entry["section"]}
    return fusion.ranked(fusion.convex(pools, {"bm25": 0.5, "section": 0.5}, False))


def variants() -> list[tuple[str, Any]]:
    return [("default hybrid", lambda e: fusion_bench.default_order(e["bm25"], e["dense"])),
            ("hybrid, piece + section BM25", both),
            ("lexical, piece BM25", lambda e: fusion.ranked(e["bm25"])),
            ("lexical, section BM25", lambda e: fusion.ranked(e["section"])),
            ("lexical, piece + section BM25", lexical_both)]


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule of the module docstring: only the hybrid rows compete."""
    return fusion_bench.ship(scores, ["default hybrid", "hybrid, piece + section BM25"])


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.variant_main(argv, __doc__, "multigrain", variants(),
                                     section_bm25.entries, choose)


if __name__ == "__main__":
    sys.exit(main())
