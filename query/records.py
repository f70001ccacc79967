"""The record signal: a short file scored by BM25 as a whole (docs/decisions.md#record-bm25).

A short record (a decision record, a how-to page) often holds a query's words in
different sections: the component in its title, the reason in its Context, the
cost in its Consequences. Each piece's BM25 sees only its own part. Here a file of
at most ``search.record_chars`` bytes that holds a candidate of any signal is
scored as a whole: the sum of the BM25 scores of its pieces that match the query
(CombSUM over a record's passages), from one more full-text query restricted to
those files, with the search's filters. Every piece of such a file that a search
returned carries that score, and the fusion weighs it beside the piece BM25; a
piece of a long file scores 0 on it, as a piece absent from any pool does.
"""

from __future__ import annotations

from typing import Any

from vq.core.store import sql_in

RECORD = "record"
PIECES_PER_RECORD = 20  # a 4 KB file holds a handful of pieces; the query fetches this many each


def add_pool(sources: Any, text: str, where: str | None, search: Any,
             rankings: dict[str, list[str]], rows: dict[str, dict]) -> None:
    """Rank the record signal into ``rankings`` (nothing when ``search.record_chars`` is 0
    or no candidate file is short): one BM25 query over the short candidate files'
    pieces, with the search's filter ``where``."""
    files = short_files(sources.index, rows, search.record_chars)
    if not files:
        return
    both = " AND ".join(f"({p})" for p in (where, file_filter(files)) if p)
    found = sources.lexical(text, both, PIECES_PER_RECORD * len(files), search.heading_boost)
    ranked = spread(found if isinstance(found, list) else found.to_pylist(), files, rows)
    if ranked:
        rankings[RECORD] = ranked


def short_files(index: Any, rows: dict[str, dict], max_bytes: int) -> set[tuple[str, str]]:
    """The (vault, path) of candidate files whose size is at most ``max_bytes``."""
    if max_bytes <= 0:
        return set()
    keys = {(row["vault"], row["path"]) for row in rows.values()}
    if not keys:
        return set()
    paths = sorted({p for _, p in keys})
    vaults = sorted({v for v, _ in keys})
    where = (f"size <= {int(max_bytes)} AND {sql_in('vault', vaults)} "
             f"AND {sql_in('path', paths)}")
    found = (index.files.search().where(where).select(["vault", "path"])
             .limit(len(paths) * len(vaults)).to_arrow().to_pylist())
    return {(f["vault"], f["path"]) for f in found} & keys


def file_filter(files: set[tuple[str, str]]) -> str:
    """A filter for the chunks of ``files`` (pairs kept exact by the caller)."""
    return (f"{sql_in('vault', sorted({v for v, _ in files}))} "
            f"AND {sql_in('path', sorted({p for _, p in files}))}")


def scores(found: list[dict], files: set[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """Each record's score: the sum of its matching pieces' BM25 (``_score``)."""
    out: dict[tuple[str, str], float] = {}
    for row in found:
        key = (row["vault"], row["path"])
        if key in files:
            out[key] = out.get(key, 0.0) + float(row["_score"])
    return out


def spread(found: list[dict], files: set[tuple[str, str]], rows: dict[str, dict]
           ) -> list[str]:
    """Give every candidate piece of a matching record (and each matching piece the
    record query found) its record's score; the ranked ids, best first, ties by id."""
    by_file = scores(found, files)
    for row in found:
        key = (row["vault"], row["path"])
        if key in by_file and row["id"] not in rows:
            fresh = {k: v for k, v in row.items() if k != "_score"}
            rows[row["id"]] = {**fresh, "_signals": {}}
    ranked = [i for i, row in rows.items() if (row["vault"], row["path"]) in by_file]
    for i in ranked:
        rows[i]["_signals"][RECORD] = {"rank": 0, "score": round(
            by_file[(rows[i]["vault"], rows[i]["path"])], 6)}
    ranked.sort(key=lambda i: (-rows[i]["_signals"][RECORD]["score"], i))
    for rank, i in enumerate(ranked, 1):
        rows[i]["_signals"][RECORD]["rank"] = rank
    return ranked
