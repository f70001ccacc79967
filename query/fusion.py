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
