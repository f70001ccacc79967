"""The peers harness: chunk-to-lines mapping, chunker and report on tiny inputs; one
model test runs every real peer on two files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import peers, quality, report  # noqa: E402

MD = """# Title

intro

## Install

```sh
# not a heading
pip install x
```

## Use

Call it.
"""


def test_heading_pieces_split_at_headings_outside_fences_and_cap_lines():
    doc = peers.Doc("a.md", MD, False)
    spans = [(p.start_line, p.end_line) for p in peers.heading_pieces(doc)]
    assert spans == [(1, 4), (5, 11), (12, 15)]
    long = peers.Doc("b.py", "\n".join(f"x{i} = {i}" for i in range(70)), True)
    assert [(p.start_line, p.end_line) for p in peers.heading_pieces(long, 30)] == [
        (1, 30), (31, 60), (61, 70)]


def test_offsets_map_to_one_based_lines():
    doc = peers.Doc("a.md", "ab\ncd\nef\n", False)
    assert peers.span_of(doc, 0, "ab") == (1, 1)
    assert peers.span_of(doc, 3, "cd\nef") == (2, 3)


def test_locate_finds_a_reshaped_chunk_and_moves_past_repeated_lines():
    text = "## A\n\n**Since: v1**\n  one  \n\n## B\n\n**Since: v1**\ntwo\n"
    doc = peers.Doc("a.md", text, False)
    assert peers.locate(doc, "**Since: v1**  \none", 1) == (3, 4)  # stripped, re-joined
    assert peers.locate(doc, "**Since: v1**  \ntwo", 4) == (8, 9)  # not the first copy
    assert peers.locate(doc, "", 5) == (5, 5)


def test_langchain_chunks_carry_spans_that_hold_their_text():
    pytest.importorskip("langchain_text_splitters", reason="the bench extra is not installed")
    doc = peers.Doc("a.md", MD, False)
    chunks = peers.langchain_chunks(doc)
    lines = MD.split("\n")
    for c in chunks:
        start, end = c.metadata["span"]
        first = next(ln.strip() for ln in c.page_content.split("\n") if ln.strip())
        assert any(first in ln for ln in lines[start - 1:end]), (first, start, end)
    code = peers.Doc("m.py", "def f():\n    return 1\n", True)
    assert [c.metadata["span"] for c in peers.langchain_chunks(code)] == [(1, 2)]


def test_read_docs_follows_each_vaults_folder_and_kind(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    corpus = quality.Corpus("p", tmp_path, tmp_path / "q.jsonl", "p",
                            vaults=(("docs", "docs", "notes", ("*.md",)),
                                    ("code", "", "code", ("*.py",))))
    assert [(d.path, d.code) for d in peers.read_docs(corpus)] == [
        ("docs/a.md", False), ("pkg/m.py", True)]


def test_report_puts_vq_hybrid_beside_each_peer():
    m = {"recall@10": 0.9, "mrr@10": 0.8, "ndcg@10": 0.85, "ms_per_query": 3.0}
    r = {"versions": {"txtai": "9"}, "model": "m", "corpora": [
        {"corpus": "adr", "label": "ADRs", "queries": 50, "build_seconds": {"vq": 1.0},
         "methods": {"vq hybrid": m, "txtai hybrid": {**m, "median_hit_lines": 12}}}]}
    text = report.peers_markdown(r)
    assert "| adr (50) | 0.900 / 0.800 / 0.850 | – | – | 0.900 / 0.800 / 0.850 |" in text
    assert "| txtai hybrid | 0.900 | 0.800 | 0.850 | 12 | 3.0 |" in text
    assert report.peers_markdown({"skipped": "no extra"}).startswith("Peers: skipped")


def test_bench_run_report_has_the_peers_section_and_a_missing_extra_is_a_skip(monkeypatch):
    from bench import run

    monkeypatch.setattr(peers, "available", lambda: False)
    skipped = peers.run(Path("/nonexistent"))
    assert skipped == {"skipped": "peers skipped: install the bench extra "
                                  "(pip install -e '.[bench]')"}
    text = run.markdown({"date": "d", "quick": True, "seconds": 1, "peers": skipped,
                         "machine": {"cpus": 2, "memory_gb": 1, "device": "cpu",
                                     "load_avg": [0, 0, 0]}})
    assert "### Peers (same model, documented defaults)" in text
    assert "Peers: skipped" in text


def test_vq_only_runs_vqs_rows_without_the_extra(monkeypatch, tmp_path):
    """``--vq-only`` (is hybrid at or above vq's own signals?) needs no peer library and
    asks each set's evaluation for no peer."""
    monkeypatch.setattr(peers, "available", lambda: False)
    corpus = quality.Corpus("adr", tmp_path, tmp_path / "q.jsonl", "ADRs")
    monkeypatch.setattr(peers, "judged_sets", lambda work: [corpus])
    asked = []
    monkeypatch.setattr(peers, "evaluate", lambda c, work, with_peers: asked.append(
        (c.name, with_peers)) or {"corpus": c.name})
    out = peers.run(tmp_path, peers=False)
    assert "skipped" not in out and out["versions"] == {}
    assert asked == [("adr", False)] and out["corpora"] == [{"corpus": "adr"}]


@pytest.mark.model
@pytest.mark.filterwarnings("ignore")  # third-party deprecations; not vq's warnings
def test_every_peer_finds_a_distinctive_section_and_code_definition():
    """The real libraries on two tiny files: each retriever returns the file and the lines
    that hold the answer, so a wiring or line-mapping break shows before a bench run."""
    if not peers.available():
        pytest.skip("the bench extra (txtai, LlamaIndex, LangChain) is not installed")
    md = "# Guide\n\n## Tides\n\nThe moon pulls the ocean into tides twice a day.\n\n" \
         "## Bread\n\nKnead the dough, let it rise, then bake the loaf.\n"
    py = "def unrelated():\n    return 0\n\n\ndef bake_loaf(dough):\n    return oven(dough)\n"
    docs = [peers.Doc("docs/guide.md", md, False), peers.Doc("pkg/bakery.py", py, True)]
    model = peers.model_path()
    found = {}
    for make in peers.PEERS:
        for label, search in make(docs, model).items():
            found[label] = search("moon ocean tides")
    assert set(found) == set(peers.PEER_ROWS)
    for label, hits in found.items():
        assert hits, label
        top = hits[0]
        assert top.path == "docs/guide.md" and top.start_line <= 5 <= top.end_line, (label, top)
