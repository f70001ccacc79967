"""AsciiDoc (Antora, Asciidoctor) pages chunk by section, like Markdown, with the file's lines."""

from __future__ import annotations

import pytest

from tests.conftest import build_and_search
from vq.indexer.handlers import Limits, handler_for
from vq.indexer.handlers.asciidoc import asciidoc_handler, plain, scan

PAGE = """\
= Load and Convert Strings
:navtitle: Convert Strings
// an author's note, not shown

This page converts AsciiDoc strings.

[#load]
== The `load` method

To parse a string, use:

[,ruby]
----
doc = Asciidoctor.load '*This* is it.'

== not a title inside a listing
----
More text.
== not a title: it continues the paragraph

////
== a commented-out section
////

=== Options [[options]]

Pass options as a hash.

Legacy Style Title
------------------

Still read as a section, as Asciidoctor reads it.

====
== an example block's look-alike
====

== See xref:api:index.adoc[the API]
Last words.
"""


def test_titles_outside_blocks_comments_and_paragraphs_with_their_levels():
    page = scan(PAGE.split("\n"))
    assert [(h.line + 1, h.level, h.text) for h in page.headings] == [
        (1, 1, "Load and Convert Strings"), (8, 2, "The load method"), (25, 3, "Options"),
        (29, 2, "Legacy Style Title"), (38, 2, "See the API")]
    assert page.underlines == {29}  # 0-based: the line under "Legacy Style Title"
    assert (12, 17) in page.blocks  # the listing, delimiters included (0-based, end excl.)
    assert page.comments == {2, 20, 21, 22}  # the // line and the //// block


def test_sections_carry_breadcrumbs_and_the_files_own_line_numbers():
    doc = asciidoc_handler(PAGE, "docs/modules/api/pages/convert.adoc", Limits())
    lines = PAGE.split("\n")
    assert doc.title == "Load and Convert Strings"
    got = [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks]
    assert got == [(1, 7, "Load and Convert Strings"),  # [#load] ends it: block attributes
                   (8, 19, "Load and Convert Strings > The load method"),
                   (25, 27, "Load and Convert Strings > The load method > Options"),
                   (29, 36, "Load and Convert Strings > Legacy Style Title"),
                   (38, 39, "Load and Convert Strings > See the API")]
    for chunk in doc.chunks:  # the file's lines, comments blanked
        want = ["" if line.startswith("//") else line
                for line in lines[chunk.start_line - 1:chunk.end_line]]
        assert chunk.text == "\n".join(want)
    assert not any("commented-out" in c.text or "author's note" in c.text for c in doc.chunks)


def test_a_section_holding_only_its_subsections_anchor_joins_it():
    """os-lib's changelog: "== Changelog" then ``[#0-11-3]`` above "=== 0.11.3" was a
    chunk of a title and an anchor (docs/decisions.md#anchor-sections)."""
    doc = asciidoc_handler("= Doc\n\nIntro.\n\n== Changelog\n\n[#0-11-3]\n=== 0.11.3\n\n"
                           "* Fix a thing\n\n[[b]]\n=== 0.11.2\n\n* Another\n", "a.adoc", Limits())
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks] == [
        (1, 3, "Doc"), (5, 12, "Doc > Changelog > 0.11.3"), (13, 15, "Doc > Changelog > 0.11.2")]


def test_an_unclosed_block_runs_to_the_end_and_hides_no_line():
    text = "= Page\n\n== One\n\n----\ncode\n\n== Two in the open listing\n"
    doc = asciidoc_handler(text, "p.adoc", Limits())
    assert [c.breadcrumb for c in doc.chunks] == ["Page > One"]
    assert doc.chunks[-1].end_line == 8


def test_inline_markup_leaves_titles():
    assert plain("The `load` method [[load]]") == "The load method"
    assert plain("Use xref:cli:options.adoc[CLI options] or kbd:[Ctrl+C]") == \
        "Use CLI options or Ctrl+C"
    assert plain("*Bold* and _em_ words, snake_case_name kept") == \
        "Bold and em words, snake_case_name kept"


def test_asciidoc_files_have_their_own_handler_and_asc_is_not_one():
    assert handler_for("docs/modules/ROOT/pages/index.adoc")[0] == "asciidoc"
    assert handler_for("guide.asciidoc")[0] == "asciidoc"
    assert handler_for("release.tar.gz.asc") is None  # a PGP signature, not AsciiDoc


@pytest.mark.model
def test_an_asciidoc_page_in_a_code_vault_is_searchable_by_section(tmp_path, build, cli):
    """A project indexed as one code vault: a hit names its section, is notes for --kind,
    and a long section is one hit."""
    hits = build_and_search(tmp_path, build, cli, {"docs/convert.adoc": PAGE + "\n".join(
        f"Cached conversion {n} keeps the converted HTML output of a string in memory."
        for n in range(60)), "lib/convert.rb": "def convert(text)\n  text\nend\n"},
        "code", "--kind", "notes", "keep the converted HTML output in memory")
    assert hits[0]["breadcrumb"] == "Load and Convert Strings > See the API"
    assert hits[0]["kind"] == "notes" and hits[0]["start_line"] >= 38
    assert sum(h["breadcrumb"].endswith("See the API") for h in hits) == 1
