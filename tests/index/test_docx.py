"""Word documents: the body as Markdown (headings as breadcrumbs, lists, tables), a real
build and search over one python-docx wrote, and bad or hostile files reported in one line."""

from __future__ import annotations

import io
import zipfile

import pytest

from tests.conftest import write_config, write_tree
from vq.core.manifest import read_manifest
from vq.core.settings import load_settings
from vq.core.store import open_for
from vq.indexer.handlers import HandlerError, Limits, handler_for
from vq.indexer.handlers import docx as docx_reader
from vq.indexer.handlers.docx import docx_handler, extract_docx
from vq.indexer.project import inspect_project
from vq.query.search import Query, search


def runbook() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = "Incident runbook"
    document.add_heading("Incident runbook", 0)
    document.add_paragraph("What to do when the payment service fails.")
    document.add_heading("Rolling back a release", 1)
    document.add_paragraph("Run the rollback job from the deploy dashboard, then confirm "
                           "the canary is healthy.")
    document.add_paragraph("Page the on-call engineer first", style="List Bullet")
    document.add_heading("Escalation contacts", 2)
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Team", (0, 1): "Pager", (1, 0): "Payments",
                         (1, 1): "payments-oncall"}.items():
        table.cell(r, c).text = text
    document.add_paragraph("# a hash typed in the text, not a heading")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_the_body_reads_as_markdown_with_headings_lists_and_tables():
    title, text = extract_docx(runbook())
    assert title == "Incident runbook"
    assert text.startswith("# Incident runbook\n\nWhat to do when the payment service fails.")
    assert "\n## Rolling back a release\n" in text  # below the Title paragraph
    assert "\n- Page the on-call engineer first\n" in text
    assert "\n### Escalation contacts\n\n| Team | Pager |\n| Payments | payments-oncall |\n" in text
    assert "\n\\# a hash typed in the text" in text  # escaped: no heading of its own
    document = docx_handler(runbook(), "ops/runbook.docx", Limits())
    assert [c.breadcrumb for c in document.chunks] == [
        "Incident runbook", "Incident runbook > Rolling back a release",
        "Incident runbook > Rolling back a release > Escalation contacts"]
    assert handler_for("ops/Runbook.DOCX")[0] == "docx"


def test_a_heading_is_known_by_its_outline_level_whatever_its_style_is_called():
    """A localised Word names its heading styles "Überschrift 1"; a house style is
    "Chapter Head": the outline level they set is what Word's navigation pane reads."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    for name, level in (("Überschrift 1", "0"), ("Chapter Section", "1")):
        style = document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
        outline = OxmlElement("w:outlineLvl")
        outline.set(qn("w:val"), level)
        style.element.get_or_add_pPr().append(outline)
    document.add_paragraph("Installation", style="Überschrift 1")
    document.add_paragraph("On Linux", style="Chapter Section")
    document.add_paragraph("Unpack the archive.")
    out = io.BytesIO()
    document.save(out)
    assert extract_docx(out.getvalue())[1] == \
        "# Installation\n\n## On Linux\n\nUnpack the archive.\n"


@pytest.mark.parametrize(("data", "reason"), [
    (b"not a zip at all", "not a zip"),
    (b"PK\x03\x04truncated", "not a zip"),
])
def test_what_is_no_word_document_says_so_and_how_to_fix_it(data, reason):
    with pytest.raises(HandlerError, match=reason) as caught:
        extract_docx(data)
    assert "exclude it" in str(caught.value)


def test_a_zip_that_is_no_word_document_says_so():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "a zip, not a document")
    with pytest.raises(HandlerError, match="not a Word document"):
        extract_docx(out.getvalue())


def test_a_zip_bomb_is_refused_before_it_is_unpacked(monkeypatch):
    """A few kilobytes that would unpack to gigabytes: the declared sizes are added up
    first, and nothing is parsed."""
    monkeypatch.setattr(docx_reader, "MAX_UNPACKED", 1_000_000)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "<" + "a" * 2_000_000)
    assert len(out.getvalue()) < 50_000
    with pytest.raises(HandlerError, match=r"unpacks to 2,000,001 bytes, over 1,000,000"):
        extract_docx(out.getvalue())


def test_a_word_document_is_built_searched_and_a_bad_one_is_one_error(tmp_path, build):
    write_tree(tmp_path / "docs", {"broken.docx": "not a document", "notes.md": "# Notes\n"})
    (tmp_path / "docs" / "runbook.docx").write_bytes(runbook())
    settings = load_settings(str(write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"docs": {"path": str(tmp_path / "docs"), "kind": "docs"}}})))
    summary = build(settings)
    assert summary.files_errored == 1
    errors = {p: r.error for (_, p), r in read_manifest(open_for(settings)).items() if r.error}
    assert list(errors) == ["broken.docx"] and "not a zip" in errors["broken.docx"]
    hit = search(settings, Query("payments pager", limit=1)).hits[0]  # a table's cells
    assert (hit.path, hit.breadcrumb) == (
        "runbook.docx", "Incident runbook > Rolling back a release > Escalation contacts")


def test_init_proposes_word_documents_and_no_longer_says_there_is_no_reader(tmp_path):
    write_tree(tmp_path / "proj", {"src/app.py": "def run():\n    pass\n"})
    (tmp_path / "proj" / "handbook").mkdir()
    (tmp_path / "proj" / "handbook" / "runbook.docx").write_bytes(runbook())
    docs = next(v for v in inspect_project(tmp_path / "proj").vaults if v.kind == "docs")
    assert docs.include == ("*.docx",) and "no text extractor" not in docs.why, docs


def test_init_sizes_word_documents_by_extracting_a_sample(tmp_path, test_models):
    """A .docx is sampled like a notebook (extraction takes milliseconds): `vq init` said
    "1 documents not sized" and counted ~0 chunks for it."""
    from vq.core.settings import Settings, Vault
    from vq.indexer.estimate import estimate_build
    from vq.jobs.runner import locked_build

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "runbook.docx").write_bytes(runbook())
    settings = Settings(index_dir=str(tmp_path / "index"), model=test_models, device="cpu",
                        vaults=(Vault("d", tmp_path / "d", kind="docs"),))
    estimate = estimate_build(settings, settings.vaults, ("cpu", "asked"), tmp_path)
    summary = locked_build(settings)
    assert estimate.unsampled == 0 and estimate.chunks == summary.chunks_written == 3
