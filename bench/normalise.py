"""How the fused scores are normalised, measured on the dev sets before anything ships.

The shipped fusion scales each signal's pool min-max to [0, 1], so a pool's
best hit always gets 1 whether it is clear of the rest or one of many near-ties,
and its 100th gets 0. Two standard alternatives use the pool's distribution
instead of its two extremes:

* **z-score** (Lee 1997; Kamps et al.): ``(s - mean) / std`` over the pool; a
  candidate absent from a pool gets that pool's lowest z.
* **DBSF** (distribution-based score fusion, Qdrant's second fusion):
  ``(s - (mean - 3 std)) / (6 std)`` clipped to [0, 1]; absent counts 0.

Both at the shipped BM25 weight 0.4, then one piece per section as search does;
no weight is searched.

Decision rule, written before the first run (``bench.fusion.ship``, as for
``bench.prf``, ``bench.qweight`` and ``bench.section_bm25``): a normalisation
ships only if its mean hybrid nDCG@10 over the two dev sets (Docker, Node.js
dev) is at least 0.01 above the default's and none of recall@10, MRR@10,
nDCG@10 drops by more than 0.005 on either set. Otherwise nothing changes.

    python -m bench.normalise [--work DIR] [--json OUT]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping
from typing import Any

from bench import fusion as fusion_bench
from vq.query import fusion

Normaliser = Callable[[Mapping[str, float]], tuple[dict[str, float], float]]


def zscore(pool: Mapping[str, float]) -> tuple[dict[str, float], float]:
    """Each score's z over the pool, and the value an absent candidate gets."""
    mean, std = _moments(pool)
    scores = {i: (s - mean) / std for i, s in pool.items()}
    return scores, min(scores.values())


def dbsf(pool: Mapping[str, float]) -> tuple[dict[str, float], float]:
    """mean ± 3 std mapped to [0, 1], clipped; absent counts 0."""
    mean, std = _moments(pool)
    return {i: min(max((s - mean + 3 * std) / (6 * std), 0.0), 1.0)
            for i, s in pool.items()}, 0.0


def _moments(pool: Mapping[str, float]) -> tuple[float, float]:
    values = list(pool.values())
    std = statistics.pstdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), std if std > 0 else 1.0


def combined(entry: dict[str, Any], normalise: Normaliser) -> list[str]:
    """0.4 · BM25 + 0.6 · cosine, each normalised by ``normalise`` over its pool."""
    weights = {"bm25": fusion_bench.DEFAULT_WEIGHT, "dense": 1 - fusion_bench.DEFAULT_WEIGHT}
    scores: dict[str, float] = {}
    pools = {s: entry[s] for s in weights if entry[s]}
    normed = {s: normalise(pool) for s, pool in pools.items()}
    for doc_id in set().union(*pools.values()):
        scores[doc_id] = sum(weights[s] * normed[s][0].get(doc_id, normed[s][1])
                             for s in pools)
    return fusion.ranked(scores)


def variants() -> list[tuple[str, Any]]:
    return [("default hybrid (min-max)",
             lambda e: fusion_bench.default_order(e["bm25"], e["dense"])),
            ("z-score", lambda e: combined(e, zscore)),
            ("DBSF (mean ± 3 std)", lambda e: combined(e, dbsf))]


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.variant_main(argv, __doc__, "normalise", variants())


if __name__ == "__main__":
    sys.exit(main())
