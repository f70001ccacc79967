"""Section vectors: a split section's pieces share one embedding of the whole section,
stored beside each piece's own, and hybrid search fuses them as a third signal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.conftest import write_config, write_tree
from vq.core import store
from vq.core.settings import load_settings
from vq.core.walk import FileEntry
from vq.indexer.handlers.base import Chunk, Document
from vq.indexer.rows import document_rows, text_digest
from vq.query.search import SECTIONS, Query, search
from vq.query.sources import LanceSources

PARAGRAPH = ("The ingest worker reads the spool directory, validates every record against "
             "the schema registry, and moves rejected batches to the quarantine bucket. ")
LONG = "\n\n".join(f"{PARAGRAPH}Step {n} of the pipeline keeps its own offsets." for n in
                   range(24))
FILES = {
    "pipeline.md": f"# Pipeline\n\n## Ingest\n\n{LONG}\n\n## Short\n\nOne small paragraph.\n",
    "other.md": "# Other\n\nNothing about spools here, only the lunch menu.\n",
}


def _chunk(text: str, breadcrumb: str, start: int) -> Chunk:
    return Chunk(text=text, start_line=start, end_line=start, breadcrumb=breadcrumb)


def test_split_section_pieces_share_the_whole_section_text_and_hash():
    doc = Document(chunks=(_chunk("first body", "A > B", 3), _chunk("lone", "A > C", 9),
                           _chunk("second body", "A > B", 5)), title="A")
    entry = FileEntry("v", "a.md", "/x/a.md", 1, 1)
    rows = document_rows(entry, "notes", "markdown", doc)
    b1, c, b2 = rows
    assert b1.section_hash == b2.section_hash != b1.text_hash
    assert b1.section_text == b2.section_text == b1.row["text"] + "\nsecond body"
    assert b1.section_hash == text_digest(b1.section_text)
    assert c.section_text is None and c.section_hash == c.text_hash  # the piece is its section
    code = document_rows(entry, "code", "code", doc)  # code chunks stand alone in search
    assert all(p.section_text is None and p.section_hash == p.text_hash for p in code)


def _vectors(index, column: str) -> dict[str, np.ndarray]:
    table = index.chunks.search().select(["id", column]).limit(None).to_arrow()
    return {i: np.asarray(v, dtype=np.float32)
            for i, v in zip(table["id"].to_pylist(), table[column].to_pylist(), strict=True)}


@pytest.mark.model
def test_build_stores_section_vectors_and_hybrid_fuses_them(tmp_path, build):
    write_tree(tmp_path / "v", FILES)
    settings = load_settings(str(write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "vaults": {"v": {"path": str(tmp_path / "v")}}})))
    first = build(settings)
    assert first.outcome == "ok"
    index = store.open_for(settings)
    assert store.has_sections(index)
    rows = index.chunks.search().select(["id", "path", "breadcrumb", "text_hash", "section_hash"]
                                        ).limit(None).to_arrow().to_pylist()
    ingest = [r for r in rows if r["breadcrumb"].endswith("Ingest")]
    assert len(ingest) >= 2, "the long section is split to fit the model window"
    own, whole = _vectors(index, "vector"), _vectors(index, "section_vector")
    assert len({r["section_hash"] for r in ingest}) == 1
    shared = whole[ingest[0]["id"]]
    for r in ingest:  # one vector for the section, not any piece's own
        assert np.allclose(whole[r["id"]], shared, atol=1e-3)
        assert not np.allclose(own[r["id"]], shared, atol=1e-2)
    for r in rows:
        if r not in ingest:  # a one-piece section's vector is its piece's
            assert r["section_hash"] == r["text_hash"]
            assert np.allclose(whole[r["id"]], own[r["id"]], atol=1e-3)
    assert first.sections_encoded == 1  # the one split section
    # an edit elsewhere in the file re-reads it: the split section's vector is reused
    path = tmp_path / "v" / "pipeline.md"
    path.write_text(path.read_text().replace("One small paragraph.", "One edited paragraph."))
    edited = build(settings)
    assert (edited.files_changed, edited.chunks_encoded, edited.sections_encoded) == (1, 1, 0)
    assert np.allclose(_vectors(store.open_for(settings), "section_vector")[ingest[0]["id"]],
                       shared, atol=1e-3)

    res = search(settings, Query("records rejected by the schema registry go to quarantine"))
    assert "sections" in res.fusion and res.pools.get(SECTIONS)
    top = res.hits[0]
    assert top.path == "pipeline.md" and top.breadcrumb.endswith("Ingest")
    assert set(top.signals) >= {"bm25", "dense", SECTIONS, "fused"}
    assert set(top.signals["fused"]) == {"bm25", "dense", SECTIONS}

    # an index from before section vectors (chunker 3) still answers, with two signals
    old = dataclasses.replace(index, meta=dataclasses.replace(index.meta, chunker_version=3))
    res = search(settings, Query("records rejected by the schema registry"), LanceSources(old))
    assert SECTIONS not in res.pools and "sections" not in res.fusion
    assert res.hits and res.hits[0].path == "pipeline.md"


def test_the_section_pool_counts_sections_and_keeps_each_whole():
    """Pieces of one section share its vector, so they arrive together; the pool holds
    the best ``pool`` sections with all their fetched pieces, however many pieces."""
    from vq.query.search import _top_sections

    def row(i: str, section: str) -> dict:
        return {"id": i, "kind": "notes", "vault": "v", "path": "a.md", "breadcrumb": section}

    found = [row("1", "A"), row("2", "A"), row("3", "A"), row("4", "B"), row("5", "C"),
             row("6", "B")]
    assert [r["id"] for r in _top_sections(2)(found)] == ["1", "2", "3", "4", "6"]
    code = [dict(row(str(n), "same"), kind="code") for n in range(4)]  # code: one per piece
    assert [r["id"] for r in _top_sections(2)(code)] == ["0", "1"]
