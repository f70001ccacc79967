"""A lexical weight that depends on the query, measured on the dev sets before anything ships.

The default fusion gives BM25 a fixed weight (min-max convex, 0.4). Two
query-dependent rules from other engines lean lexical only where the lexical
signal is likely to be right, and keep 0.4 elsewhere:

* **identifier-like terms** (semble): a quoted phrase, a backticked term, a
  command-line flag (``--rm``, ``-p``) or an identifier (``snake_case``,
  ``dotted.name``, ``camelCase``, ``ALLCAPS``; ``vq.query.code_rank``'s test)
  in a query of several words. Exact strings are what BM25 matches and an
  embedding blurs.
* **a confident BM25 top hit** (qmd's gate): the first BM25 score is at least
  ``ratio`` times the second, i.e. one chunk is clear of the rest.

Each rule sets the lexical weight to ``LEAN`` for the queries it fires on.
The values are priors, not a grid searched for the best: ``LEAN`` 0.7 (the
mirror of the default 0.4 around 0.55, "lean lexical"), gate ratios 1.5 and 2.

Decision rule, written before the first run (the same as ``bench.prf``'s,
``bench.fusion.ship``): a variant ships only if its mean hybrid nDCG@10 over
the two dev sets (Docker, Node.js dev) is at least 0.01 above the default's
and none of recall@10, MRR@10, nDCG@10 drops by more than 0.005 on either set.
Otherwise nothing changes.

    python -m bench.qweight [--work DIR] [--json OUT]
"""

from __future__ import annotations

import re
import sys
from typing import Any

from bench import fusion as fusion_bench
from vq.query import code_rank

BASE = fusion_bench.DEFAULT_WEIGHT
LEAN = 0.7
RATIOS = (1.5, 2.0)
_QUOTED = re.compile(r"\"[^\"]+\"|`[^`]+`|(^|\s)--?[A-Za-z][\w-]*")


def identifier_like(query: str) -> bool:
    """Quoted, backticked, a flag, or an identifier among several words."""
    if _QUOTED.search(query):
        return True
    words = query.split()
    return len(words) > 1 and bool(code_rank.symbol_terms(query))


def confident(lexical: dict[str, float], ratio: float) -> bool:
    """BM25's first score is ``ratio`` times its second (or it found one chunk)."""
    top = sorted(lexical.values(), reverse=True)[:2]
    return bool(top) and (len(top) == 1 or top[0] >= ratio * max(top[1], 1e-9))


def variants() -> list[tuple[str, Any]]:
    return [(name, _order(rule)) for name, rule in rules()]


def rules() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [("default hybrid (w = 0.4)", None),
                                  ("identifier-like -> 0.7", ("ident", None))]
    out += [(f"BM25 top {r}x next -> 0.7", ("gate", r)) for r in RATIOS]
    out += [(f"either, gate {r}x -> 0.7", ("either", r)) for r in RATIOS]
    return out


def _order(rule: Any) -> Any:
    return lambda e: fusion_bench.default_order(e["bm25"], e["dense"],
                                                weight(rule, e["q"], e["bm25"]))


def weight(rule: Any, query: str, lexical: dict[str, float]) -> float:
    if rule is None:
        return BASE
    kind, ratio = rule
    fires = {"ident": lambda: identifier_like(query),
             "gate": lambda: confident(lexical, ratio),
             "either": lambda: identifier_like(query) or confident(lexical, ratio)}[kind]()
    return LEAN if fires else BASE


def fired(name: str, found: list[dict]) -> dict[str, int]:
    """How many queries the variant's rule moved off the default weight."""
    rule = dict(rules())[name]
    return {"fired": sum(weight(rule, e["q"], e["bm25"]) != BASE for e in found)}


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule of the module docstring."""
    names = [name for name, _ in rules()]
    return {**fusion_bench.ship(scores, names),
            "fired": {s: {n: scores[s][n]["fired"] for n in names} for s in scores}}


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.variant_main(argv, __doc__, "qweight", variants(), choose=choose,
                                     annotate=fired)


if __name__ == "__main__":
    sys.exit(main())
