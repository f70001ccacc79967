"""Heading attribute lists (``{ #id .class }``, MkDocs attr_list) are markup: breadcrumbs,
titles and snippets leave them out, while the stored chunk text keeps the line as written."""

from __future__ import annotations

from tests.conftest import build_and_search
from vq.core.attr_list import clean_heading, strip_attr_list, strip_breadcrumb
from vq.indexer.handlers import Limits
from vq.indexer.handlers.markdown import markdown_handler
from vq.query.output import snippet

PAGE = """\
# Deploying { #deploying }

Intro.

## Rolling out {: #rollout .tab data-x="a b" }

Run the rollout script.

## Templates use {name}

Placeholders stay.

### <a name="filter"></a> Filtering (**--filter**)

Filter the list.
"""


def test_breadcrumbs_and_title_leave_out_attribute_lists() -> None:
    doc = markdown_handler(PAGE, "docs/deploy.md", Limits())
    assert doc.title == "Deploying"
    crumbs = [c.breadcrumb for c in doc.chunks]
    assert crumbs == ["Deploying", "Deploying > Rolling out",
                      "Deploying > Templates use {name}",
                      'Deploying > Templates use {name} > <a name="filter"></a> Filtering '
                      '(**--filter**)']  # anchors and bold leave only what a search shows
    assert "{: #rollout" in doc.chunks[1].text  # the source line, as written


def test_a_snippet_leaves_out_headings_the_breadcrumb_already_says() -> None:
    text = "## Rolling out { #rollout .tab }\n\nRun the rollout script."
    assert snippet(text, "rolling") == "Run the rollout script."
    assert snippet("Routing\n=======\n\nUse the route decorator.", "route") == \
        "Use the route decorator."  # an RST title and its adornment
    assert snippet("some text\n\n---\n\nmore text", "text") == "some text more text"
    assert snippet("== Convert a string\n\nCall convert.", "convert") == "Call convert."
    assert snippet("\\section*{Results}\nFewer samples suffice.", "results samples") == \
        "Fewer samples suffice."  # an AsciiDoc title, a LaTeX sectioning command
    # a chunk that is only a heading keeps it, its attribute list left out
    assert snippet("## Rolling out { #rollout }", "rolling") == "## Rolling out"
    assert snippet("## Braces {x}", "braces") == "## Braces {x}"


def test_only_whole_attribute_groups_are_markup() -> None:
    assert strip_attr_list("Set up {#setup}") == "Set up"
    assert strip_attr_list("Use {name} here") == "Use {name} here"
    assert strip_attr_list("Format {a b}") == "Format {a b}"


def test_empty_anchors_and_bold_leave_headings_and_code_stays() -> None:
    assert clean_heading('<a id="custom"></a> Custom type adapter') == "Custom type adapter"
    assert clean_heading("**Finer Points** with <span id='x'> </span>objects") == \
        "Finer Points with objects"
    assert clean_heading(r"`testEnvironment` \[node | jsdom | string]") == \
        "`testEnvironment` [node | jsdom | string]"  # Jest's Configuration.md
    assert clean_heading(r"`a\[b` stays") == r"`a\[b` stays"
    assert clean_heading(r"``a`b\[`` and \[x]") == r"``a`b\[`` and [x]"  # spans as CommonMark
    assert clean_heading('`$params` <Badge type="info" text="template global" />') == \
        "`$params` template global"  # VitePress' API reference
    assert clean_heading("Setup <Since v='2'/> and `<Demo />`") == "Setup and `<Demo />`"
    assert clean_heading("Timing Code Snippets: ``%timeit`` and ``%time``") == \
        "Timing Code Snippets: `%timeit` and `%time`"  # the Data Science Handbook
    for kept in ("Use <Component> props", "`**kwargs` and __init__", "f(**kw) or g(**kw)",
                 "a ** b ** c", "a <b/> c"):
        assert clean_heading(kept) == kept


def test_a_breadcrumb_part_said_twice_in_a_row_is_shown_once() -> None:
    """Docker's deprecated.md: ``# Deprecated Engine Features`` over a ``##`` of the same."""
    assert strip_breadcrumb("Deprecated Engine Features > Deprecated engine features > "
                            "Btrfs") == "Deprecated Engine Features > Btrfs"
    assert strip_breadcrumb("Usage > Options > Usage") == "Usage > Options > Usage"


def test_search_cleans_breadcrumbs_stored_by_an_older_chunker(
        settings, test_models, monkeypatch, tmp_path) -> None:
    """An index chunked before the fix keeps ``{ #id }`` in its rows; hits show it clean."""
    from dataclasses import replace

    from vq.indexer.handlers import markdown as handler
    from vq.jobs.runner import locked_build
    from vq.query.filters import Filters
    from vq.query.search import Query, search

    (settings.vaults[0].path / "deploy.md").write_text(PAGE, encoding="utf-8")
    monkeypatch.setattr(handler, "strip_attr_list", lambda text: text)  # the old chunker
    settings = replace(settings, model=test_models)
    assert locked_build(settings).outcome == "ok"
    res = search(settings, Query("rollout script", method="lexical", limit=3,
                                 filters=Filters()))
    top = res.hits[0]
    assert top.path == "deploy.md"
    assert top.breadcrumb == "Deploying > Rolling out"
    anchored = search(settings, Query("filter the list", method="lexical", limit=1,
                                      filters=Filters())).hits[0]
    assert anchored.breadcrumb == "Deploying > Templates use {name} > Filtering (--filter)"


def test_breadcrumbs_show_links_as_their_text(tmp_path, build, cli) -> None:
    """A changelog's heading links its version to a comparison (conventional-changelog
    writes ``## [1.2.0](https://…/compare/v1.1.0...v1.2.0) (2023-01-31)``): a hit's
    breadcrumb shows the version and date, as the rendered page does, not the URL."""
    changelog = ("# Changelog\n\n## [1.2.0](https://github.com/o/r/compare/v1.1.0...v1.2.0)"
                 " (2023-01-31)\n\n### Bug Fixes\n\n* retry the upload after a timeout\n\n"
                 "## Notes on [[Release policy|releases]]\n\nEach release is tagged.\n")
    hits = build_and_search(tmp_path, build, cli, {"CHANGELOG.md": changelog}, "notes",
                            "upload retry timeout", "-n", "2", "--method", "lexical")
    assert hits[0]["breadcrumb"] == "Changelog > 1.2.0 (2023-01-31) > Bug Fixes"
    tagged = build_and_search(tmp_path / "again", build, cli, {"c.md": changelog}, "notes",
                              "release tagged", "-n", "1", "--method", "lexical")
    assert tagged[0]["breadcrumb"] == "Changelog > Notes on releases"
