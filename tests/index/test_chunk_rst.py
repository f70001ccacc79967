"""reStructuredText (Sphinx) pages chunk by section, like Markdown, with the file's lines."""

from __future__ import annotations

import pytest

from tests.conftest import build_and_search
from vq.indexer.handlers import Limits, handler_for
from vq.indexer.handlers.rst import literal_blocks, rst_handler, titles

PAGE = """\
:orphan:

=================
 Quickstart
=================

A minimal application is a single file.

Routing
=======

Use the :func:`~flask.Flask.route` decorator to bind a function to a URL.

Variable Rules
--------------

Mark parts of the URL with ``<name>``. For example::

    @app.route("/user/<username>")
    def show(username):
        return username

    Not a title
    -----------

Using ``async`` views
---------------------

Views can be coroutines.

=====  =====
a      b
=====  =====

Static Files
============
Serve them from the static folder.
"""


def test_titles_levels_follow_the_order_their_styles_first_appear():
    lines = PAGE.split("\n")
    found, _ = titles(lines, literal_blocks(lines))
    assert [(h.line + 1, h.level, h.text) for h in found] == [
        (3, 1, "Quickstart"), (9, 2, "Routing"), (14, 3, "Variable Rules"),
        (26, 3, "Using async views"), (35, 2, "Static Files")]


def test_sections_carry_breadcrumbs_and_the_files_own_line_numbers():
    doc = rst_handler(PAGE, "docs/quickstart.rst", Limits())
    lines = PAGE.split("\n")
    assert doc.title == "Quickstart"
    got = [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks]
    assert got == [(3, 7, "Quickstart"),  # the :orphan: metadata is no chunk
                   (9, 12, "Quickstart > Routing"),
                   (14, 24, "Quickstart > Routing > Variable Rules"),
                   (26, 33, "Quickstart > Routing > Using async views"),
                   (35, 37, "Quickstart > Static Files")]
    for chunk in doc.chunks:  # the text is the file's lines, adornment included
        assert chunk.text == "\n".join(lines[chunk.start_line - 1:chunk.end_line])


def test_a_title_right_above_a_subtitle_joins_it_and_a_short_underline_is_text():
    doc = rst_handler("Guide\n=====\n\nInstall\n-------\n\npip install it\n\n"
                      "Some words\n--\n\nmore words\n", "g.rst", Limits())
    assert [(c.start_line, c.breadcrumb) for c in doc.chunks] == [(1, "Guide > Install")]


def test_a_section_holding_only_its_subsections_target_joins_it():
    """Sphinx pages put ``.. _label:`` above the titles they link to: "Installing" held
    only its child's target, a chunk of a title and nothing to read
    (docs/decisions.md#anchor-sections)."""
    doc = rst_handler("Guide\n=====\n\nIntro.\n\nInstalling\n----------\n\n.. _pip:\n\n"
                      "With pip\n~~~~~~~~\n\nRun pip.\n\n.. _pypi: https://pypi.org\n\nMore.\n",
                      "g.rst", Limits())
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks] == [
        (1, 4, "Guide"), (6, 18, "Guide > Installing > With pip")]  # a link target is text's


def test_rst_files_have_their_own_handler():
    assert handler_for("docs/index.rst")[0] == "rst"
    assert handler_for("notes.txt")[0] == "text"


@pytest.mark.model
def test_an_rst_page_in_a_code_vault_is_searchable_by_section(tmp_path, build, cli):
    """A Sphinx project indexed as `vq init` proposes (or as one code vault): a hit names
    its section, is notes for --kind, and a section is one hit."""
    hits = build_and_search(tmp_path, build, cli, {"docs/quickstart.rst": PAGE + "\n".join(
        f"Static file {n} is served from the static folder with a cache header."
        for n in range(60)), "app.py": "def route(path):\n    return path\n"},
        "code", "--kind", "notes", "serve files from the static folder")
    assert hits[0]["breadcrumb"] == "Quickstart > Static Files"
    assert hits[0]["kind"] == "notes" and hits[0]["start_line"] >= 35
    assert sum(h["breadcrumb"] == "Quickstart > Static Files" for h in hits) == 1


def test_an_upgrade_that_gives_rst_its_reader_re_reads_pages_the_old_reader_indexed(
        settings, test_models):
    """A vq that read ``.rst`` as plain text indexed the page; the next build of this vq
    re-reads it with the RST reader, though the file did not change, and only once."""
    from dataclasses import replace

    from tests.index.test_walk_cache import age
    from vq.core import filetypes
    from vq.core.manifest import NEW_READER, plan_for
    from vq.core.store import open_for
    from vq.indexer import noop
    from vq.jobs.runner import locked_build

    settings = replace(settings, model=test_models)
    (settings.vaults[0].path / "quickstart.rst").write_text(PAGE, encoding="utf-8")
    age(settings.vaults[0].path)  # a tree untouched for a minute: its walk can be cached

    def crumbs() -> set[str]:
        rows = open_for(settings).chunks.search().where("path = 'quickstart.rst'") \
            .select(["breadcrumb"]).limit(100).to_list()
        return {r["breadcrumb"] for r in rows}

    with pytest.MonkeyPatch.context() as old_vq:
        old_vq.setitem(filetypes.HANDLER_BY_EXTENSION, ".rst", "text")
        old_vq.setattr(noop, "READERS_ID", -1)
        assert locked_build(settings).outcome == "ok"
        assert crumbs() == {"quickstart.rst"}  # paragraphs under the path
        assert locked_build(settings).files_changed == 0  # nothing to do: recorded clean
        assert locked_build(settings).plan == "walk cache"  # known clean, no row read

    plan, _, _ = plan_for(settings, open_for(settings))
    assert [(s.path, s.reason) for s in plan.stale] == [("quickstart.rst", NEW_READER)]
    summary = locked_build(settings)  # the readers changed: not the clean record's walk
    assert summary.outcome == "ok" and summary.files_changed == 1, summary.plan
    assert "Quickstart > Routing > Variable Rules" in crumbs()
    assert not plan_for(settings, open_for(settings))[0].stale
    assert locked_build(settings).files_changed == 0
