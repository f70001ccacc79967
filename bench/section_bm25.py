"""BM25 over whole sections, vectors over window-sized pieces: measured on the dev sets first.

Sizing chunks to the model window (chunker v3) was right for the embedding and
cost BM25: Docker lexical nDCG@10 fell from 0.885 (1,500-character chunks) to
0.864 (256-token pieces), since a long section's terms are now spread over
several short pieces and each piece is scored on its share. The unit the
judged sets ask for, and the unit search already returns (one piece per
section), is the section. So score BM25 on the section's whole text (its
breadcrumb header once, then every piece's body in order), keep the vectors
on the pieces, give each piece its section's BM25 score, and fuse as today
(min-max convex, BM25 weight 0.4, one piece per section): the piece the
vectors like best stands for the section.

Two ways to hold the section text: a table of its own (one row per section),
or a column on the chunks table filled on each section's first piece and empty
on the rest, which keeps every filter on one table but counts the empty rows
in BM25's document count and average length. The variants, all of them: the
default hybrid; the same fusion with section BM25 (either form) in place of
piece BM25; and, for the record, the lexical rankings alone. No weight is
searched.

Decision rule, written before the first run (``bench.fusion.ship``, as for
``bench.prf`` and ``bench.qweight``): section BM25 ships only if its mean
hybrid nDCG@10 over the two dev sets (Docker, Node.js dev) is at least 0.01
above the default's and none of recall@10, MRR@10, nDCG@10 drops by more than
0.005 on either set. If both forms pass, the column form is the one built
(one table, filters as today). Otherwise nothing changes.

    python -m bench.section_bm25 [--work DIR] [--json OUT]
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import fusion as fusion_bench
from vq.query import fusion

SECTION_COLUMNS = ["id", "vault", "path", "breadcrumb", "start_line", "text", "body_start"]


def sections(index: Any) -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    """One row per section (key, header once + every piece's body in line order),
    and each section's piece ids."""
    rows = index.chunks.to_arrow().select(SECTION_COLUMNS).to_pylist()
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[(row["vault"], row["path"], row["breadcrumb"])].append(row)
    table, members = [], {}
    for n, pieces in enumerate(grouped.values()):
        pieces.sort(key=lambda r: (r["start_line"], r["id"]))
        first = pieces[0]
        text = first["text"] + "".join("\n" + p["text"][p["body_start"]:] for p in pieces[1:])
        key = f"s{n}"
        table.append({"sid": key, "text": text})
        members[key] = [p["id"] for p in pieces]
    return table, members


def column_rows(rows: list[dict[str, str]], members: dict[str, list[str]]) -> list[dict]:
    """The column form: one row per piece, the section text on its first piece only."""
    out = []
    for row in rows:
        ids = members[row["sid"]]
        out.append({"sid": row["sid"], "text": row["text"]})
        out += [{"sid": row["sid"], "text": ""} for _ in ids[1:]]
    return out


def scratch_table(rows: list[dict[str, str]], where: Path, name: str) -> Any:
    """A scratch LanceDB table with vq's own FTS options."""
    import lancedb

    from vq.core.indexes import FTS_OPTIONS

    db = lancedb.connect(str(where))
    table = db.create_table(name, data=rows, mode="overwrite")
    table.create_fts_index("text", replace=True, **FTS_OPTIONS)
    return table


def entries(config: Path, queries: list[dict]) -> list[dict[str, Any]]:
    """Per query: the piece BM25 pool, the dense pool and the section BM25 pool in
    each form (each piece scored with its section's BM25)."""
    tables: dict[str, Any] = {}

    def section_pools(index: Any, entry: dict[str, Any], _vector: Any) -> None:
        from lancedb.query import MatchQuery

        if not tables:
            rows, members = sections(index)
            where = config.parent / "sections.lance-scratch"
            tables.update(members=members,
                          section=scratch_table(rows, where, "sections"),
                          column=scratch_table(column_rows(rows, members), where, "column"))
        for form in ("section", "column"):
            hits = (tables[form].search(MatchQuery(entry["q"], "text"), query_type="fts")
                    .select(["sid", "_score"]).limit(fusion_bench.POOL).to_arrow().to_pylist())
            entry[form] = {i: float(h["_score"]) for h in hits
                           for i in tables["members"][h["sid"]]}
            spans_for(index, [i for i in entry[form] if i not in entry["spans"]],
                       entry["spans"])

    return fusion_bench.dev_pools(config, queries, section_pools)


def spans_for(index: Any, ids: list[str], spans: dict) -> None:
    """Fill in the line spans of pieces only the section pool found."""
    from vq.core.store import IN_BATCH, sql_in

    for start in range(0, len(ids), IN_BATCH):
        batch = ids[start:start + IN_BATCH]
        table = (index.chunks.search().where(sql_in("id", batch))
                 .select(["id", "path", "start_line", "end_line", "breadcrumb"])
                 .limit(len(batch)).to_arrow())
        for row in table.to_pylist():
            spans[row["id"]] = (row["path"], row["start_line"], row["end_line"],
                                row["breadcrumb"])


def variants() -> list[tuple[str, Any]]:
    def hybrid(pool: str) -> Any:
        return lambda e: fusion_bench.default_order(e[pool], e["dense"])

    def lexical(pool: str) -> Any:
        return lambda e: fusion.ranked(e[pool])

    return [("default hybrid", hybrid("bm25")),
            ("hybrid, section BM25 (table)", hybrid("section")),
            ("hybrid, section BM25 (column)", hybrid("column")),
            ("lexical, piece BM25", lexical("bm25")),
            ("lexical, section BM25 (table)", lexical("section")),
            ("lexical, section BM25 (column)", lexical("column"))]


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule of the module docstring: only the hybrid rows compete."""
    names = [name for name, _ in variants() if name.startswith("hybrid")]
    return {form: fusion_bench.ship(scores, ["default hybrid", name])
            for form, name in zip(("table", "column"), names, strict=True)}


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.variant_main(argv, __doc__, "section_bm25", variants(), entries,
                                     choose)


if __name__ == "__main__":
    sys.exit(main())
