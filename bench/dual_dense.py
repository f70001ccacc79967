"""Piece and section vectors together, BM25 on the pieces: measured on the dev sets first.

Sizing chunks to the model window (chunker v3) had dense nDCG@10 on Docker fall
from 0.791 (1,500-character chunks, their tails cut off by the encoder) to
0.776 (window-sized pieces, each embedded whole): a short piece can lose the
context a whole section gives. The dense counterpart of ``bench.multigrain``:
embed each section too (header once, every piece's body, cut to the model's
window by the encoder as any input is: the section's first passage, Dai and
Callan's FirstP, SIGIR 2019), keep the piece vectors (MaxP over pieces, as
search does), and add both signals.

The one variant: min-max convex over three pools, piece BM25 at the shipped
weight 0.4 and the dense weight 0.6 split equally between piece cosine and
section cosine (0.3 + 0.3); each piece of a section in the top 100 sections
carries that section's cosine; one piece per section, as search does. The
equal split is the prior of not knowing which granularity is better, not a
searched value; nothing else is varied. Section vectors come from the index's
own model, encoded here once per corpus.

Decision rule, written before the first run (``bench.fusion.ship``, as for
every earlier experiment): the variant passes only if its mean hybrid nDCG@10
over the two dev sets (Docker, Node.js dev) is at least 0.01 above the
default's and none of recall@10, MRR@10, nDCG@10 drops by more than 0.005 on
either set. A variant that passes must then pass ``--confirm``
(``bench.fusion.confirm``: +0.005 nDCG@10 on the contributor guides, no metric
down by more than 0.005 there or on the Node.js heading set) before anything
is built into vq. Otherwise nothing changes.

Result: it passed both, the first experiment to pass either.
Dev sets (bench/results/2026-12-04-dual-dense.md): mean hybrid nDCG@10
0.8716 -> 0.8820 (Docker 0.895 -> 0.910, Node.js dev 0.848 -> 0.854), no
metric down. Confirmation (bench/results/2026-12-04-dual-dense-confirm.md):
contributor guides 0.969 -> 0.978, heading set 0.939 -> 0.956 (above BM25
alone there, 0.953, for the first time), no metric down. Section vectors alone
are the weaker dense ranker on every set; the gain comes from adding them.

Not yet in vq (the next step, in this order): the build encodes each section
of two or more pieces once more (a one-piece section's vector is its piece's)
and stores it on every piece as ``section_vector`` (chunker version 4, so old
indexes rebuild; both engines go through ``engine.vectors_for`` and
``write.chunk_table``); search adds a second vector search over that column
(top pool sections, each piece of a section in it scored with the section's
cosine) to the convex fusion with the weights above; the warm service holds
the second matrix and its int8 screen as it holds the first, and the ANN
index covers both columns past ``vector_index_min_rows``. The product path is
then measured again with ``bench.quality`` on all four sets.

    python -m bench.dual_dense [--confirm] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import sys
from typing import Any

from bench import fusion as fusion_bench
from bench import section_bm25
from vq.query import fusion

DENSE = 1 - fusion_bench.DEFAULT_WEIGHT
CONFIRM = ("default hybrid", "hybrid, piece + section vectors")


def entries(config: Any, queries: list[dict]) -> list[dict[str, Any]]:
    """Per query: the BM25 and dense pools, and the section-vector pool (each piece
    scored with its section's cosine)."""
    state: dict[str, Any] = {}

    def section_pool(index: Any, entry: dict[str, Any], vector: Any) -> None:
        import numpy as np

        if not state:
            from vq.core.encoder import Encoder

            rows, members = section_bm25.sections(index)
            encoded = Encoder(index.meta.model, "cpu").encode([r["text"] for r in rows])
            matrix = np.asarray(encoded, dtype=np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            state.update(matrix=matrix, sids=[r["sid"] for r in rows], members=members)
        query = np.asarray(vector, dtype=np.float32)
        cosine = state["matrix"] @ (query / np.linalg.norm(query))
        top = np.argsort(-cosine, kind="stable")[:fusion_bench.POOL]
        entry["dsection"] = {i: float(cosine[n]) for n in top
                             for i in state["members"][state["sids"][n]]}
        section_bm25.spans_for(index, [i for i in entry["dsection"] if i not in entry["spans"]],
                               entry["spans"])

    return fusion_bench.dev_pools(config, queries, section_pool)


def both(entry: dict[str, Any]) -> list[str]:
    """Min-max convex over piece BM25, piece cosine and section cosine; dense weight split."""
    return fusion_bench.convex_order(entry, {"bm25": 1 - DENSE, "dense": DENSE / 2,
                                             "dsection": DENSE / 2})


def dense_both(entry: dict[str, Any]) -> list[str]:
    """For the record: the two vector pools alone, equally weighted."""
    return fusion_bench.convex_order(entry, {"dense": 0.5, "dsection": 0.5})


def variants() -> list[tuple[str, Any]]:
    return [("default hybrid", lambda e: fusion_bench.default_order(e["bm25"], e["dense"])),
            ("hybrid, piece + section vectors", both),
            ("dense, piece vectors", lambda e: fusion.ranked(e["dense"])),
            ("dense, section vectors", lambda e: fusion.ranked(e["dsection"])),
            ("dense, piece + section vectors", dense_both)]


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.experiment_main(argv, __doc__, "dual_dense", variants(), entries,
                                        CONFIRM)


if __name__ == "__main__":
    sys.exit(main())
