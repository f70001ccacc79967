"""Term proximity as a lexical signal (docs/decisions.md#proximity): the sequential
dependence model's ordered and unordered pair features (Metzler and Croft, "A Markov
Random Field Model for Term Dependencies", SIGIR 2005) beside BM25, at its default
weights 0.85 / 0.10 / 0.05 of the lexical share.

A variant for ``bench.first_hit``: it replaces the convex fusion for the run and
reads only the candidates the pools already found.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

# Lucene's EnglishAnalyzer stop set: the standard list a query's pairs skip.
STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such "
                 "that the their then there these they this to was will with".split())
WINDOW = 8  # SDM's unordered window (#uw8)
K1 = 1.2    # BM25's saturation for a pair's count
LAMBDA = {"bm25": 0.85, "ordered": 0.10, "unordered": 0.05}  # SDM's defaults


def s_stem(word: str) -> str:
    """Harman's S-stemmer (1991): plurals only, so 'handlers' meets 'handler'."""
    if len(word) > 3 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Lower-cased alphanumeric runs, stop words out, S-stemmed."""
    return [s_stem(w) for w in re.findall(r"[0-9a-z]+", text.lower()) if w not in STOP]


def pair_counts(query_pairs: list[tuple[str, str]], doc: list[str]
                ) -> dict[tuple[str, str], tuple[int, int]]:
    """Per pair: (ordered: t2 right after t1, unordered: t1 with t2 within WINDOW - 1)."""
    where: dict[str, list[int]] = {}
    for pos, word in enumerate(doc):
        where.setdefault(word, []).append(pos)
    out = {}
    for a, b in query_pairs:
        pa, pb = where.get(a, []), set(where.get(b, []))
        if not pa or not pb:
            continue
        ordered = sum(1 for p in pa if p + 1 in pb)
        unordered = sum(1 for p in pa if any(p + d in pb or p - d in pb
                                             for d in range(1, WINDOW)))
        out[(a, b)] = (ordered, unordered)
    return out


def features(query: str, texts: dict[str, str]) -> dict[str, dict[str, float]]:
    """Each candidate's ordered and unordered scores: Σ over the query's adjacent pairs of
    idf(pair, over the candidates) · c / (c + K1)."""
    q = terms(query)
    pairs = list(dict.fromkeys(zip(q, q[1:], strict=False)))
    counts = {i: pair_counts(pairs, terms(t)) for i, t in texts.items()}
    n = len(texts)
    out: dict[str, dict[str, float]] = {"ordered": {}, "unordered": {}}
    for slot, name in enumerate(("ordered", "unordered")):
        df = {p: sum(1 for c in counts.values() if c.get(p, (0, 0))[slot]) for p in pairs}
        idf = {p: math.log(1 + (n - d + 0.5) / (d + 0.5)) for p, d in df.items()}
        for i, c in counts.items():
            out[name][i] = sum(idf[p] * v[slot] / (v[slot] + K1) for p, v in c.items())
    return out


@contextlib.contextmanager
def variant(settings: Any) -> Iterator[Any]:
    from vq.query import fusion, search

    shipped, original_fuse = search._convex, search._fuse
    asked = {"text": ""}  # the query in hand: _fuse sees it, _convex does not

    def convex(rankings: dict[str, list[str]], rows: dict[str, dict],
               lexical_weight: float) -> dict[str, float]:
        pools = {name: {i: rows[i]["_signals"][name]["score"] for i in ids}
                 for name, ids in rankings.items()}
        weights = search.convex_weights(lexical_weight, search.SECTIONS in pools)
        if "bm25" in pools:
            ids = {i for pool in pools.values() for i in pool}
            pools.update(features(asked["text"], {i: rows[i]["text"] for i in ids}))
            lexical = weights["bm25"]
            weights.update({name: lexical * share for name, share in LAMBDA.items()})
        return fusion.convex(pools, weights, zero_floor=False)

    def fuse(rankings: dict[str, list[str]], rows: dict[str, dict], settings: Any,
             q: Any) -> list[str]:
        asked["text"] = q.text
        return original_fuse(rankings, rows, settings, q)

    search._convex, search._fuse = convex, fuse
    try:
        yield settings
    finally:
        search._convex, search._fuse = shipped, original_fuse
