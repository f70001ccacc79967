"""Heading attribute lists (``{ #id .class }``, MkDocs attr_list) are markup: breadcrumbs,
titles and snippets leave them out, while the stored chunk text keeps the line as written."""

from __future__ import annotations

from vq.core.attr_list import strip_attr_list
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
"""


def test_breadcrumbs_and_title_leave_out_attribute_lists() -> None:
    doc = markdown_handler(PAGE, "docs/deploy.md", Limits())
    assert doc.title == "Deploying"
    crumbs = [c.breadcrumb for c in doc.chunks]
    assert crumbs == ["Deploying", "Deploying > Rolling out",
                      "Deploying > Templates use {name}"]
    assert "{: #rollout" in doc.chunks[1].text  # the source line, as written


def test_snippet_of_a_heading_line_leaves_out_its_attribute_list() -> None:
    text = "## Rolling out { #rollout .tab }\n\nRun the rollout script."
    assert snippet(text, "rolling") == "## Rolling out Run the rollout script."
    assert snippet("## Braces {x}\nbody", "braces") == "## Braces {x} body"


def test_only_whole_attribute_groups_are_markup() -> None:
    assert strip_attr_list("Set up {#setup}") == "Set up"
    assert strip_attr_list("Use {name} here") == "Use {name} here"
    assert strip_attr_list("Format {a b}") == "Format {a b}"


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
