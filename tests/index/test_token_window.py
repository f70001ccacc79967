"""Chunks fit the model window: the real bundled tokenizer, random Markdown, real builds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.index.test_chunk_properties import EXPLORE
from vq.core.schema import IndexMeta
from vq.core.settings import DEFAULT_MODEL
from vq.core.token_window import load_window
from vq.indexer.fit_window import fit_document
from vq.indexer.handlers import Limits
from vq.indexer.handlers.base import split_lines
from vq.indexer.handlers.markdown import markdown_handler
from vq.indexer.rows import chunk_header

WINDOW = load_window(DEFAULT_MODEL)
assert WINDOW is not None and WINDOW.tokens == 256

WORDS = st.sampled_from(["docker", "container", "run", "--volume", "/var/lib", "exit", "code",
                         "125", "the", "a", "Überprüfung", "naïve", "`cmd`", "x=1;", "{", "}",
                         "ÆØÅ", "日本語", "émoji🙂", "configuration", "supercalifragilistic"])
LINE = st.lists(WORDS, min_size=1, max_size=25).map(" ".join)
BLOCK = st.one_of(
    LINE.map(lambda t: "#" * 1 + " " + t), LINE.map(lambda t: "## " + t),
    LINE.map(lambda t: "### " + t), LINE, st.just(""), st.just("```"), st.just("~~~"),
    st.lists(LINE, min_size=1, max_size=12).map("\n".join))
MARKDOWN = st.lists(BLOCK, min_size=1, max_size=60).map("\n".join)


def fitted(text: str, path: str = "notes/fuzz.md"):
    doc = markdown_handler(text, path, Limits(max_chars=4000))
    return fit_document(doc, WINDOW, lambda c: chunk_header("v", path, c), fenced=True)


@settings(max_examples=150, deadline=None, derandomize=not EXPLORE)
@given(MARKDOWN)
def test_no_chunk_exceeds_the_window(text):
    """Every multi-line chunk's embed text (header included) fits in 256 word pieces;
    only a single line longer than the window can overflow (chunks hold whole lines)."""
    doc = fitted(text)
    lines = split_lines(text)
    covered = []
    for chunk in doc.chunks:
        size = WINDOW.count(chunk_header("v", "notes/fuzz.md", chunk) + chunk.text)
        one_long_line = chunk.start_line == chunk.end_line
        assert size <= WINDOW.tokens or one_long_line, (size, chunk.start_line, chunk.end_line)
        assert chunk.text == "\n".join(lines[chunk.start_line - 1:chunk.end_line])
        covered.append((chunk.start_line, chunk.end_line))
    assert covered == sorted(covered)
    assert all(a[1] < b[0] for a, b in zip(covered, covered[1:], strict=False))


def test_a_long_section_is_split_at_paragraphs_and_keeps_its_breadcrumb():
    para = " ".join(["container volumes persist data beyond the container lifetime"] * 6)
    text = "# Guide\n\n## Storage\n\n" + "\n\n".join([para] * 16)
    doc = fitted(text)
    assert len(doc.chunks) > 2
    assert {c.breadcrumb for c in doc.chunks} == {"Guide > Storage"}
    for chunk in doc.chunks:
        assert WINDOW.count(chunk_header("v", "notes/fuzz.md", chunk) + chunk.text) <= 256
        assert chunk.text.startswith(("# Guide", "container"))  # cut at paragraphs


def test_a_chunk_that_fits_is_left_alone():
    text = "# Title\n\nshort body\n\n## Two\n\nanother short body"
    doc = markdown_handler(text, "a.md", Limits())
    assert fitted(text, "a.md").chunks == doc.chunks


def test_a_longer_window_gives_longer_chunks():
    para = " ".join(["word"] * 100)
    text = "# T\n\n" + "\n\n".join([para] * 12)
    wide = type(WINDOW)(512, WINDOW.tokenizer, WINDOW.specials)
    doc = markdown_handler(text, "a.md", Limits(max_chars=100_000))
    narrow_n = len(fit_document(doc, WINDOW, lambda c: chunk_header("v", "a.md", c)).chunks)
    wide_n = len(fit_document(doc, wide, lambda c: chunk_header("v", "a.md", c)).chunks)
    assert wide_n < narrow_n


def test_the_window_is_recorded_in_the_index_metadata():
    meta = IndexMeta(model="m", dim=3, window=256)
    assert IndexMeta.from_metadata(meta.to_metadata()).window == 256
    old = {k: v for k, v in meta.to_metadata().items() if b"window" not in k}
    assert IndexMeta.from_metadata(old).window == 0


@pytest.mark.model
def test_doctor_reports_the_truncated_share(tmp_path, build):
    from tests.conftest import write_config, write_tree
    from vq.core import store
    from vq.core.settings import load_settings
    from vq.query.doctor.truncation import window_check

    root = tmp_path / "n"
    long_line = " ".join(["overflow"] * 400)  # one line: it cannot be cut, so it truncates
    write_tree(root, {"a.md": "# A\n\nshort\n\n## B\n\n" + long_line + "\n",
                      "b.md": "# B\n\n" + "\n\n".join(["para words here"] * 200)})
    settings = load_settings(str(write_config(tmp_path / "c.yaml", {
        "index_dir": str(tmp_path / "ix"), "vaults": {"n": {"path": str(root)}}})))
    assert build(settings).outcome == "ok"
    index = store.open_for(settings)
    assert index.meta.window == 256
    check = window_check(index)
    total = index.chunks.count_rows()
    assert check.status == "warn" and f"1 of {total} chunks" in check.detail, check
