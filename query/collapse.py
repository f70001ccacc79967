"""One hit per place to read, and no file filling the list.

A Markdown section split to fit the model window, and a code definition split
into pieces (a long function, a class's own lines between its methods), are
each one place: the best-ranked piece carries the place's score (MaxP) and the
later pieces drop out, so a 2,000-line function is one hit, not twenty. A
definition is shown from its head, the piece holding its ``def``/``class``
line, whichever piece matched best (``signals.piece`` names that one). Then a
file's code hits past ``search.per_file_cap`` (when set) move below every other hit,
keeping their order: they still come back when nothing else is left. Each
signal's candidate pool counts a definition's pieces once too (``pooled``), so
a long function cannot push every other candidate out of the pool.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from vq.core.store import sql_str
from vq.query import fusion

HEAD_FETCH = 100_000  # pieces of the shown definitions read to find their heads
PLACE_FETCH = 3  # a pool that repeats a code definition is fetched again this much deeper


def is_definition(row: dict) -> bool:
    """A named code chunk: its pieces share vault, path and breadcrumb (file :: symbol)."""
    return row.get("kind") == "code" and bool(row.get("symbol"))


def place(row: dict) -> tuple[str, ...]:
    """Pieces of one section or one definition share this key; any other code chunk
    (imports, top-level statements) is a place of its own."""
    if row.get("kind") == "code" and not row.get("symbol"):
        return (row["id"],)
    return (row["vault"], row["path"], row["breadcrumb"])


def pool_key(row: dict) -> tuple[str, ...]:
    """How a candidate pool counts rows: a code definition's pieces as one, any other
    row as itself (a notes pool is the signal's top rows, as measured)."""
    return place(row) if is_definition(row) else (row["id"],)


def pooled(fetch: Callable[[int], Any], pool: int) -> list[dict]:
    """One signal's candidates: the rows of its ``pool`` best places, where the pieces
    of one code definition count once (``pool_key``), so a long function's
    pieces cannot take every place in the pool. Only a full pool that repeats a
    definition is fetched again, ``PLACE_FETCH`` times deeper; notes never are."""
    found = fetch(pool).to_pylist()
    if len(found) < pool or len({pool_key(r) for r in found}) == len(found):
        return found
    found = sorted(fetch(PLACE_FETCH * pool).to_pylist(), key=_best_first)
    return first_keys(found, pool_key, pool)


def first_keys(rows: Sequence[dict], key: Callable[[dict], tuple[str, ...]], count: int
               ) -> list[dict]:
    """The rows, in order, of the first ``count`` distinct keys: a pool that counts
    places (or sections), each kept whole."""
    kept: set[tuple[str, ...]] = set()
    out = []
    for row in rows:
        k = key(row)
        if k not in kept:
            if len(kept) == count:
                continue
            kept.add(k)
        out.append(row)
    return out


def _best_first(row: dict) -> tuple[float, str]:
    return (-row["_score"] if "_score" in row else row["_distance"], row["id"])


def one_per_place(order: Sequence[str], rows: dict[str, dict]) -> list[str]:
    return fusion.one_per_section(order, {i: place(rows[i]) for i in order})


def cap_per_file(order: Sequence[str], rows: dict[str, dict], cap: int) -> list[str]:
    """The code hits of one file past the ``cap``-th go below every other hit, in order
    (0: no cap). Notes and docs are never moved."""
    if cap <= 0:
        return list(order)
    seen: Counter[tuple[str, str]] = Counter()
    kept, moved = [], []
    for i in order:
        row = rows[i]
        if row.get("kind") != "code":
            kept.append(i)
            continue
        seen[row["vault"], row["path"]] += 1
        if seen[row["vault"], row["path"]] > cap:
            row["_signals"].setdefault("code", {})["capped"] = 1.0
            moved.append(i)
        else:
            kept.append(i)
    return kept + moved


def one_per_file(order: Sequence[str], rows: dict[str, dict]) -> list[str]:
    """Each file's best hit only: ``vq search --files -n 5`` names five files, as
    ``rg -l`` would, not the files among the five best hits."""
    return fusion.one_per_section(order, {i: (rows[i]["vault"], rows[i]["path"]) for i in order})


def show_heads(sources: Any, shown: Sequence[str], rows: dict[str, dict]) -> list[str]:
    """``shown`` with each definition's hit moved to its head piece, which keeps the
    hit's score and signals; the piece that matched is recorded as ``signals.piece``,
    and its lines as ``_piece`` (first line, text), for the lines a hit shows."""
    places = {place(rows[i]) for i in shown if is_definition(rows[i]) and not _head(rows[i])}
    if not places:
        return list(shown)
    heads = _heads(sources, places)
    out = []
    for i in shown:
        head = heads.get(place(rows[i]))
        if head is None or head["id"] == i or head["start_line"] >= rows[i]["start_line"]:
            out.append(i)
            continue
        hit = rows[i]
        hit["_signals"]["piece"] = {"start_line": hit["start_line"], "end_line": hit["end_line"]}
        rows[head["id"]] = {**head, "_signals": hit["_signals"], "_score": hit["_score"],
                            "_piece": (hit["start_line"], hit["text"][hit["body_start"]:])}
        out.append(head["id"])
    return out


NOT_CODE_MARKS = ("@", "#", "//", "/*", "*", "--", ";")  # decorators, comments, doc comments


def names_definition(line: str, name: str) -> bool:
    """Whether a source line is the one naming a definition (its ``def``, ``fn``,
    ``func`` line): it holds the name and is no decorator, attribute or comment line,
    which can come first in a definition's chunk (a Go or Rust doc comment)."""
    return bool(name) and name in line and not line.lstrip().startswith(NOT_CODE_MARKS)


def definition_line(row: dict) -> str:
    """A code chunk's embed context line naming its definition, ``function f: def f(x)``
    (kind, symbol, signature), below the breadcrumb header; "" when it has none."""
    context = row["text"][:row["body_start"]].split("\n")
    return context[1] if len(context) > 1 else ""


# Rust's ``impl Searcher`` blocks share their place (file :: Searcher) with the
# ``struct``, ``enum`` or ``trait`` they implement, as Swift's ``extension Session``
# does with its ``class``
IMPL_BLOCKS = re.compile(r"impl[ <]|(?:(?:public|internal|fileprivate|private|open)\s+)?"
                         r"extension\s")
HEADER_LINES = 2  # a chunk of at most this many non-blank lines is its definition's header


def header_only(row: dict) -> bool:
    """The chunk is its definition's header alone (``impl Searcher {``, ``class A:``):
    a class cut at its methods, which are chunks of their own."""
    body = row["text"][row["body_start"]:]
    return sum(1 for line in body.splitlines() if line.strip()) <= HEADER_LINES


def _head(row: dict) -> bool:
    """The piece holds its definition's signature, so it is the head: no lookup. A bare
    ``impl`` header is not, unless nothing comes before it: "Searcher" asks for ``pub
    struct Searcher``, and ripgrep's ``impl Searcher {`` line had been shown for it (an
    ``impl`` with its body, ``impl Flag for Hidden``, is where the match is)."""
    signature = definition_line(row).partition(": ")[2][:80]
    if IMPL_BLOCKS.match(signature) and header_only(row):
        return False
    return bool(signature) and signature in " ".join(row["text"][row["body_start"]:].split())


def _heads(sources: Any, places: set[tuple[str, ...]]) -> dict[tuple[str, ...], dict]:
    """Each place's first piece (lowest start line; ties by id), asked of the search's
    sources (``vq.query.sources.Sources.rows``)."""
    where = " OR ".join(f"(vault = {sql_str(v)} AND path = {sql_str(p)} AND "
                        f"breadcrumb = {sql_str(b)})" for v, p, b in sorted(places))
    first: dict[tuple[str, ...], dict] = {}
    for row in sorted(sources.rows(where, HEAD_FETCH).to_pylist(),
                      key=lambda r: (r["start_line"], r["id"])):
        first.setdefault((row["vault"], row["path"], row["breadcrumb"]), row)
    return first
