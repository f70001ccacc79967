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


def convex(pools: Mapping[str, Mapping[str, float]], weights: Mapping[str, float],
           zero_floor: bool = True) -> dict[str, float]:
    """score(id) = Σ over signals of weight · normalised score; absent from a pool counts 0.

    Each signal's scores are scaled to [0, 1] over its own candidate pool so BM25
    and cosine become comparable; a hit that one signal ranks near the top and
    the other misses keeps most of its weight, where RRF would rank it under
    documents both signals put 20th (Bruch et al., "An Analysis of Fusion
    Functions for Hybrid Retrieval", TOIS 2023: a convex combination beats RRF
    in and out of domain, with one parameter). ``zero_floor`` divides by the
    pool's best score, taking 0 as the lowest possible (BM25 cannot go below it,
    and a cosine below 0 is no match): their "theoretical minimum", which unlike
    min-max does not push the last of a small pool to 0. Without it, min-max.
    """
    scores: dict[str, float] = {}
    for signal, pool in pools.items():
        if not pool:
            continue
        weight = weights.get(signal, 0.0)
        high = max(pool.values())
        low = 0.0 if zero_floor else min(pool.values())
        span = high - low
        for doc_id, value in pool.items():
            norm = max(value - low, 0.0) / span if span > 0 else 1.0
            scores[doc_id] = scores.get(doc_id, 0.0) + weight * norm
    return scores


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Best first; equal scores by id, so a repaired index and a clean one agree."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def one_per_section(order: Sequence[str], section: Mapping[str, object]) -> list[str]:
    """Keep the best-ranked piece of each section (MaxP: a section split to fit the
    model window is still one place to read); later pieces drop out of the ranking."""
    seen: set[object] = set()
    out = []
    for doc_id in order:
        key = section[doc_id]
        if key not in seen:
            seen.add(key)
            out.append(doc_id)
    return out
