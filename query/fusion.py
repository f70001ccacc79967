"""Reciprocal Rank Fusion and recency weighting: pure arithmetic, no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

LN2 = math.log(2)


def rrf(rankings: Mapping[str, Sequence[str]], k: int = 60) -> dict[str, float]:
    """score(id) = Σ over signals of 1 / (k + rank), rank starting at 1.

    RRF needs no score calibration between BM25 and cosine, which live on
    different scales; k damps the advantage of a single first place.
    """
    scores: dict[str, float] = {}
    for ranked in rankings.values():
        for rank, doc_id in enumerate(ranked, 1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return scores


def recency_factor(age_days: float, half_life_days: float, floor: float = 0.5) -> float:
    """floor + (1 - floor)·2^(−age/half_life): a fresh note counts double an ancient one.

    Applied to every fused candidate before truncation, so it reorders the
    pool instead of only the top k; the floor keeps old but relevant hits in.
    """
    if half_life_days <= 0:
        return 1.0
    return floor + (1 - floor) * math.exp(-LN2 * max(age_days, 0.0) / half_life_days)


def convex(pools: Mapping[str, Mapping[str, float]], weights: Mapping[str, float]
           ) -> dict[str, float]:
    """score(id) = Σ over signals of weight · min-max-normalised score; absent counts 0.

    Each signal's scores are scaled to [0, 1] over its own candidate pool (best
    1, worst 0), so a hit that one signal ranks near the top and the other
    misses keeps most of its weight, where RRF would rank it under documents
    both signals put 20th (Bruch et al., "An Analysis of Fusion Functions for
    Hybrid Retrieval", TOIS 2023: a convex combination beats RRF in and out of
    domain, and needs one parameter). A pool whose scores are all equal gives
    each of its members the full weight.
    """
    scores: dict[str, float] = {}
    for signal, pool in pools.items():
        if not pool:
            continue
        weight = weights.get(signal, 0.0)
        low, high = min(pool.values()), max(pool.values())
        span = high - low
        for doc_id, value in pool.items():
            norm = (value - low) / span if span > 0 else 1.0
            scores[doc_id] = scores.get(doc_id, 0.0) + weight * norm
    return scores


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Best first; equal scores by id, so a repaired index and a clean one agree."""
    return sorted(scores, key=lambda i: (-scores[i], i))
