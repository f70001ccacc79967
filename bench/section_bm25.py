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
from bench import quality
from bench.common import settings_for
from vq.query import fusion

WEIGHT = 0.4  # the default fusion (core.settings: convex, lexical_weight 0.4, no floor)
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
    """Per query: the piece BM25 pool, the dense pool and the section BM25 pool
    (each piece scored with its section's BM25)."""
    from lancedb.query import MatchQuery

    from vq.core.store import open_for
    from vq.query import search
    from vq.query.encoders import query_encoder

    settings = settings_for(config)
    index = open_for(settings)
    rows, members = sections(index)
    scratch_dir = config.parent / "sections.lance-scratch"
    tables = {"section": scratch_table(rows, scratch_dir, "sections"),
              "column": scratch_table(column_rows(rows, members), scratch_dir, "column")}
    vectors = query_encoder(index.meta.model, "cpu").encode([q["q"] for q in queries])
    out = []
    for q, vector in zip(queries, vectors, strict=True):
        spans: dict = {}
        pair = fusion_bench._pairs
        entry: dict[str, Any] = {
            "id": q["id"], "spans": spans,
            "bm25": dict(pair(search._lexical(index, q["q"], None, fusion_bench.POOL), spans)),
            "dense": dict(pair(search._dense(index, vector, None, fusion_bench.POOL), spans))}
        for form, table in tables.items():
            hits = (table.search(MatchQuery(q["q"], "text"), query_type="fts")
                    .select(["sid", "_score"]).limit(fusion_bench.POOL).to_arrow().to_pylist())
            entry[form] = {i: float(h["_score"]) for h in hits for i in members[h["sid"]]}
            _spans_for(index, [i for i in entry[form] if i not in spans], spans)
        out.append(entry)
    return out


def _spans_for(index: Any, ids: list[str], spans: dict) -> None:
    """Fill in the line spans of pieces only the section pool found."""
    for start in range(0, len(ids), 500):
        quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids[start:start + 500])
        table = (index.chunks.search().where(f"id IN ({quoted})")
                 .select(["id", "path", "start_line", "end_line", "breadcrumb"])
                 .limit(len(ids)).to_arrow())
        for row in table.to_pylist():
            spans[row["id"]] = (row["path"], row["start_line"], row["end_line"],
                                row["breadcrumb"])


def _fused(lexical: dict[str, float], dense: dict[str, float]) -> list[str]:
    return fusion.ranked(fusion.convex({"bm25": lexical, "dense": dense},
                                       {"bm25": WEIGHT, "dense": 1 - WEIGHT}, False))


def variants() -> list[tuple[str, Any]]:
    return [("default hybrid", lambda e: _fused(e["bm25"], e["dense"])),
            ("hybrid, section BM25 (table)", lambda e: _fused(e["section"], e["dense"])),
            ("hybrid, section BM25 (column)", lambda e: _fused(e["column"], e["dense"])),
            ("lexical, piece BM25", lambda e: fusion.ranked(e["bm25"])),
            ("lexical, section BM25 (table)", lambda e: fusion.ranked(e["section"])),
            ("lexical, section BM25 (column)", lambda e: fusion.ranked(e["column"]))]


def evaluate(corpus: quality.Corpus, found: list[dict], work: Path) -> dict[str, dict]:
    out = {}
    for name, order_of in variants():
        results = []
        for e in found:
            spans = e["spans"]
            order = fusion.one_per_section(order_of(e), {i: (spans[i][0], spans[i][3])
                                                         for i in spans})
            hits = [dict(zip(("path", "start_line", "end_line"), spans[i][:3], strict=True))
                    for i in order[:10]]
            results.append({"id": e["id"], "hits": hits})
        out[name] = quality.score(corpus, results, work)
    return out


def choose(scores: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The rule of the module docstring: only the hybrid rows compete."""
    names = [name for name, _ in variants() if name.startswith("hybrid")]
    return {form: fusion_bench.ship(scores, ["default hybrid", name])
            for form, name in zip(("table", "column"), names, strict=True)}


def render(scores: dict[str, dict[str, dict]]) -> str:
    return fusion_bench.render_rows(scores, [name for name, _ in variants()])


def main(argv: list[str] | None = None) -> int:
    return fusion_bench.dev_main(argv, __doc__, "section_bm25", entries, evaluate, choose,
                                 render)


if __name__ == "__main__":
    sys.exit(main())
