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

Result (bench/results/2026-12-04-multigrain.md): better than the default on
every metric of both sets (hybrid nDCG@10 Docker 0.895 -> 0.902, Node.js dev
0.848 -> 0.855; lexical alone 0.864 -> 0.894 and 0.769 -> 0.787), but +0.0072
on the mean, under the bar: by the rule, it does not ship.

Confirmation, written before the sets below were built or searched
(``--confirm``). A consistent gain under the bar on two small sets is a
hypothesis, not a result; it is tested on data it has not seen, with no
setting changed: (a) a third dev set, Node.js contributor guides
(``bench/devsets/nodejs-contributing``: 44 queries written and judged by a
helper session that never ran a search), and (b) the Node.js heading set of
``make bench`` (64 API files, 150 heading pseudo-queries, seed 5), lexically
easy, where hybrid already trails BM25. The variant ships only if on (a) its
hybrid nDCG@10 is at least 0.005 above the default's and on both (a) and (b)
none of recall@10, MRR@10, nDCG@10 drops by more than 0.005. If it ships, vq
indexes each section's whole text (header once, every piece's body) in a
second full-text column on the section's first piece (the column form scored
as the separate table did, and keeps one table), and fuses the three pools
with the weights above. Otherwise nothing changes and this module stays a
record.

Confirmation result (bench/results/2026-12-04-multigrain-confirm.md): not
confirmed, so it does not ship. On the contributor guides hybrid is at the
ceiling either way (recall@10 1.000, nDCG@10 0.969 both: the set cannot tell
them apart); on the heading set hybrid falls 0.939 -> 0.932 (MRR@10 0.921 ->
0.912). Piece + section BM25 as a *lexical* ranker was the best lexical row on
all four sets (nDCG@10 Docker 0.894, Node.js dev 0.787, contributor guides
0.956, heading set 0.960, against piece BM25's 0.864 / 0.769 / 0.917 / 0.953),
a hypothesis for a later test on unseen data, not a result to ship on sets
already looked at.

    python -m bench.multigrain [--confirm] [--work DIR] [--json OUT]
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
    return fusion_bench.convex_order(entry, {"bm25": LEXICAL / 2, "section": LEXICAL / 2,
                                             "dense": 1 - LEXICAL})


def lexical_both(entry: dict[str, Any]) -> list[str]:
    """For the record: the two BM25 pools alone, equally weighted."""
    return fusion_bench.convex_order(entry, {"bm25": 0.5, "section": 0.5})


def variants() -> list[tuple[str, Any]]:
    return [("default hybrid", lambda e: fusion_bench.default_order(e["bm25"], e["dense"])),
            ("hybrid, piece + section BM25", both),
            ("lexical, piece BM25", lambda e: fusion.ranked(e["bm25"])),
            ("lexical, section BM25", lambda e: fusion.ranked(e["section"])),
            ("lexical, piece + section BM25", lexical_both)]


CONFIRM = ("default hybrid", "hybrid, piece + section BM25")  # the rival pair of the rules


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.experiment_main(argv, __doc__, "multigrain", variants(),
                                        section_bm25.entries, CONFIRM)


if __name__ == "__main__":
    sys.exit(main())
