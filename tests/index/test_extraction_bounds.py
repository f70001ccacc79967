"""Issue 37, item 6: unbounded work hiding inside a small PDF is an error for that file.

A 150 KB PDF whose pages all share one compressed content stream expanded to
60 M characters a page on main (a minute and a GB per page). Extracted text is
now bounded per page and per file, and a page's drawing instructions are
measured before pypdf interprets them.
"""

from __future__ import annotations

import io
import time

import pytest

from tests.conftest import write_config
from vq.core.settings import load_settings
from vq.indexer.handlers.base import HandlerError
from vq.indexer.handlers.pdf import extract_pdf
from vq.jobs.runner import locked_build


def shared_stream_pdf(pages: int, ops: bytes) -> bytes:
    """``pages`` pages that all point at ONE compressed content stream (a few KB on disk)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    stream = DecodedStreamObject()
    stream.set_data(ops)
    shared = writer._add_object(stream.flate_encode())
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        page[NameObject("/Contents")] = shared
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def text_ops(chars: int) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (" + b"A" * chars + b") Tj ET"


def test_a_page_with_too_much_text_is_refused_naming_the_setting():
    bomb = shared_stream_pdf(3, text_ops(5_000))
    assert len(bomb) < 2_000  # 15,000 characters of text in a file this small
    with pytest.raises(HandlerError, match="extract_max_page_chars"):
        extract_pdf(bomb, max_page_chars=1_000, max_chars=10**6)
    title, pages, _ = extract_pdf(bomb, max_page_chars=10_000, max_chars=10**6)
    assert [len(p) for p in pages] == [5_000] * 3


def test_a_file_with_too_much_text_in_all_is_refused():
    bomb = shared_stream_pdf(50, text_ops(1_000))
    with pytest.raises(HandlerError, match="extract_max_chars"):
        extract_pdf(bomb, max_page_chars=10_000, max_chars=20_000)


def test_huge_drawing_instructions_are_refused_before_pypdf_interprets_them():
    drawing = b"0 0 m 1 1 l S\n" * 200_000  # 2.8 MB of lines, no text at all
    bomb = shared_stream_pdf(100, drawing)
    started = time.perf_counter()
    with pytest.raises(HandlerError, match="drawing instructions"):
        extract_pdf(bomb, max_page_chars=1_000, max_chars=10**6)
    took = time.perf_counter() - started
    print(f"refused in {took:.2f}s")  # measured, not asserted


def test_the_build_makes_the_bomb_one_files_error(tmp_path, test_models):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "bomb.pdf").write_bytes(shared_stream_pdf(20, text_ops(5_000)))
    (root / "fine.md").write_text("# Fine\n\nA note that still gets indexed.\n")
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                             "model": test_models,
                                             "extract_max_page_chars": 1_000,
                                             "vaults": {"d": {"path": str(root)}}})
    summary = locked_build(load_settings(str(cfg)))
    assert summary.outcome == "ok" and summary.files_new == 1
    assert [(p["path"], "extract_max_page_chars" in p["reason"])
            for p in summary.problems] == [("bomb.pdf", True)]
