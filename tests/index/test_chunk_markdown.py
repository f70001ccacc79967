"""Markdown chunking on realistic notes, with exact line ranges."""

from __future__ import annotations

import json
import re

import pytest

from vq.indexer.handlers import Document, Limits, handler_for
from vq.indexer.handlers.markdown import markdown_handler

RUNBOOK = """\
---
title: Deploy runbook
tags: [Ops, "#Kubernetes", ops]
date: 2024-03-05
---

Short intro before any heading.

# Deploy runbook

## Prerequisites

Install kubectl and log in.

## Rollout

### Staging

```bash
# apply the manifests
kubectl apply -f k8s/
```

### Production ##

~~~
# not a heading either
~~~

# Appendix

Links to dashboards.
"""


def ranges(document: Document) -> list[tuple[int, int, str]]:
    return [(c.start_line, c.end_line, c.breadcrumb) for c in document.chunks]


def chunk_markdown(text: str, path: str = "notes/note.md", **limits: int) -> Document:
    return markdown_handler(text, path, Limits(**limits))


def test_registry_routes_markdown() -> None:
    assert handler_for("notes/runbook.md") == ("markdown", markdown_handler)
    assert handler_for("docs/page.MDX") == ("markdown", markdown_handler)


def test_frontmatter_feeds_metadata_and_is_never_chunked() -> None:
    document = chunk_markdown(RUNBOOK)
    assert document.title == "Deploy runbook"
    assert document.tags == ("ops", "kubernetes")
    assert document.date == "2024-03-05"
    assert document.language == ""
    assert document.chunks[0].start_line == 7
    assert document.chunks[0].text == "Short intro before any heading."


def test_sections_fences_and_heading_merge() -> None:
    """Heading-only sections (H1 here, `## Rollout`) join the section below them."""
    assert ranges(chunk_markdown(RUNBOOK)) == [
        (7, 7, "Deploy runbook"),
        (9, 13, "Deploy runbook > Prerequisites"),
        (15, 22, "Deploy runbook > Rollout > Staging"),
        (24, 28, "Deploy runbook > Rollout > Production"),
        (30, 32, "Deploy runbook > Appendix"),
    ]


def test_hash_lines_inside_fences_are_not_headings() -> None:
    document = chunk_markdown(RUNBOOK)
    staging = document.chunks[2]
    assert "# apply the manifests" in staging.text
    assert staging.text.endswith("```")
    assert "# not a heading either" in document.chunks[3].text
    assert not any("apply" in c.breadcrumb or "either" in c.breadcrumb for c in document.chunks)


def test_nested_breadcrumbs_under_a_distinct_title() -> None:
    text = (
        "---\ntitle: Architecture\n---\n"  # 1-3
        "# Storage\n"  # 4
        "Storage overview.\n"  # 5
        "## Index\n"  # 6
        "### Vectors\n"  # 7
        "Flat L2 index.\n"  # 8
        "### Text\n"  # 9
        "BM25 over chunks.\n"  # 10
        "## Locks\n"  # 11
        "One writer.\n"  # 12
        "# Query\n"  # 13
        "Hybrid search.\n"  # 14
    )
    assert ranges(chunk_markdown(text)) == [
        (4, 5, "Architecture > Storage"),
        (6, 8, "Architecture > Storage > Index > Vectors"),
        (9, 10, "Architecture > Storage > Index > Text"),
        (11, 12, "Architecture > Storage > Locks"),
        (13, 14, "Architecture > Query"),
    ]


def test_title_falls_back_to_first_h1_then_stem() -> None:
    assert chunk_markdown("intro\n\n# Real Title\nbody\n").title == "Real Title"
    untitled = chunk_markdown("## Only an H2\nbody\n", path="journal/2024-01-02 standup.md")
    assert untitled.title == "2024-01-02 standup"
    assert ranges(untitled) == [(1, 2, "2024-01-02 standup > Only an H2")]


def test_heading_only_section_at_end_keeps_its_own_chunk() -> None:
    assert ranges(chunk_markdown("# A\n\ntext\n\n## Last ##\n\n")) == [
        (1, 3, "A"),
        (5, 5, "A > Last"),
    ]


def test_oversized_section_splits_at_paragraphs_then_lines() -> None:
    lines = [
        "# Big",  # 1
        "",
        "a" * 40,  # 3
        "b" * 40,  # 4
        "",
        "c" * 50,  # 6
        "",
        "d" * 30,  # 8
        "",
        "e" * 45,  # 10
        "f" * 45,  # 11
        "g" * 45,  # 12
        "",
        "h" * 150,  # 14: one line longer than max_chars stays whole
    ]
    document = chunk_markdown("\n".join(lines), max_chars=100)
    assert [(c.start_line, c.end_line) for c in document.chunks] == [
        (1, 4),
        (6, 8),
        (10, 11),
        (12, 12),
        (14, 14),
    ]
    assert {c.breadcrumb for c in document.chunks} == {"Big"}
    assert all(len(c.text) <= 100 for c in document.chunks[:-1])


def test_fence_with_blank_lines_is_not_split_when_it_fits() -> None:
    lines = [
        "# Code",  # 1
        "",
        "i" * 30,  # 3
        "",
        "```",  # 5
        "a" * 20,
        "",  # 7: blank inside the fence is not a paragraph break
        "b" * 20,
        "```",  # 9
        "",
        "o" * 60,  # 11
    ]
    document = chunk_markdown("\n".join(lines), max_chars=100)
    assert [(c.start_line, c.end_line) for c in document.chunks] == [(1, 9), (11, 11)]


@pytest.mark.parametrize(
    ("frontmatter", "tags", "date"),
    [
        ("tags: 'Alpha, beta  #Gamma'\ndate: 2024-3-5", ("alpha", "beta", "gamma"), "2024-03-05"),
        ("tags: solo\nupdated: 2023-12-31T08:00:00Z", ("solo",), "2023-12-31"),
        ("tags: [1, null, '#x']\ncreated: '2022/02/01'", ("1", "x"), "2022-02-01"),
        ("date: not a date\nupdated: 2021-02-30\ncreated: 2020-01-01", (), "2020-01-01"),
        ("tags: {a: b}\ndate: 2024-13-45", (), None),
    ],
)
def test_frontmatter_values_are_normalised(
    frontmatter: str, tags: tuple[str, ...], date: str | None
) -> None:
    document = chunk_markdown(f"---\n{frontmatter}\n---\nbody\n")
    assert (document.tags, document.date) == (tags, date)


def test_malformed_frontmatter_is_ignored_not_fatal() -> None:
    text = "---\ntitle: [unclosed\ntags: a, b\n---\n# Real title\ntext\n"
    document = chunk_markdown(text, path="notes/broken.md")
    assert (document.title, document.tags, document.date) == ("Real title", (), None)
    assert ranges(document) == [(5, 6, "Real title")]


def test_non_mapping_frontmatter_is_ignored() -> None:
    document = chunk_markdown("---\n- just\n- a list\n---\nbody\n", path="n/list.md")
    assert (document.title, document.tags) == ("list", ())
    assert ranges(document) == [(5, 5, "list")]


def test_file_with_only_frontmatter_has_no_chunks() -> None:
    document = chunk_markdown("---\ntitle: Empty\ntags: [x]\n---\n\n\n")
    assert document.chunks == ()
    assert (document.title, document.tags) == ("Empty", ("x",))


def test_unclosed_frontmatter_is_plain_text() -> None:
    document = chunk_markdown("---\ntitle: nope\n# Head\nbody\n")
    assert document.title == "Head"
    assert ranges(document) == [(1, 2, "Head"), (3, 4, "Head")]


def test_crlf_line_endings_keep_line_numbers() -> None:
    document = chunk_markdown("---\r\ntitle: T\r\n---\r\n# H\r\nbody\r\n")
    assert document.title == "T"
    assert ranges(document) == [(4, 5, "T > H")]
    assert document.chunks[0].text == "# H\nbody"


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunk_markdown("").chunks == ()
    assert chunk_markdown(" \n\t\n").chunks == ()


def one_chunk_lines(text: str, span: tuple[int, int]) -> list[str]:
    """The lines of the one chunk ``text`` makes, which covers ``span``: a blanked line
    keeps its place."""
    (chunk,) = markdown_handler(text, "page.md", Limits()).chunks
    assert (chunk.start_line, chunk.end_line) == span
    return chunk.text.split("\n")


def test_html_comments_are_blanked_outside_fences_line_numbers_kept() -> None:
    text = ("# Timers\n\n## `timeout.refresh()`\n\n<!-- YAML\nadded: v10.2.0\n-->\n\n"
            "Resets the timer <!-- lint: off --> without a new object.\n\n"
            "```html\n<!-- shown: inside a fence -->\n```\n\n<!-- x --> after\n\n"
            "<!-- never closed\n")
    lines = one_chunk_lines(text, (1, 17))
    assert lines[4:7] == ["", "", ""]  # the YAML block's three lines, blank
    assert lines[8] == "Resets the timer  without a new object."
    assert "<!-- shown: inside a fence -->" in lines  # a fence shows what it holds
    assert lines[14] == " after" and lines[-1] == "<!-- never closed"


def test_script_and_style_blocks_are_blanked_outside_fences() -> None:
    """VitePress' team page opens with a ``<script setup>`` of 30 lines of member data,
    and Docker's docs keep ``<style>`` blocks: a rendered page runs or applies them and
    shows none of their words (docs/decisions.md#script-style-blocks)."""
    text = ("# Team\n\n<script setup>\nconst members = [{ name: 'Evan You' }]\n</script>\n\n"
            "Meet the team.\n\n<style>table td { white-space: nowrap; }</style>\n\n"
            "```html\n<script setup>\nconst shown = true\n</script>\n```\n\n"
            "A <script> tag in a sentence stays, and so does <scripts>.\n")
    lines = one_chunk_lines(text, (1, 17))
    assert lines[2:5] == ["", "", ""] and lines[6] == "Meet the team." and lines[8] == ""
    assert "const shown = true" in lines  # a fence shows what it holds
    assert lines[-1] == "A <script> tag in a sentence stays, and so does <scripts>."
    many = markdown_handler("<script>\n" * 20_000 + "</script>\n", "many.md", Limits())
    assert not "".join(c.text for c in many.chunks).strip()


def test_many_comment_openers_and_fences_are_read_in_one_pass() -> None:
    """40,000 unclosed ``<!--`` lines were each tried against the rest of the file, and
    each comment looked through every fence: both quadratic. They are text (unclosed)
    and, between fences, blanked (closed) all the same."""
    unclosed = markdown_handler("<!--\n" * 40_000, "hostile.md", Limits())
    assert sum(c.text.count("<!--") for c in unclosed.chunks) == 40_000
    text = "```\n<!-- in a fence -->\n```\n<!-- hidden -->\n" * 5_000
    shown = "\n".join(c.text for c in markdown_handler(text, "many.md", Limits()).chunks)
    assert shown.count("<!-- in a fence -->") == 5_000 and "hidden" not in shown


MDX = """\
---
title: Images
---
import { Steps } from '@astrojs/starlight/components';
import ReadMore from '~/components/ReadMore.astro';

Astro provides several ways to use images {/* TODO: video */} on your site.

```js
import { Image } from 'astro:assets';
```
export const meta = {
  sidebar: 'guides',
};

<ReadMore>See the image reference.</ReadMore>
"""


def test_mdx_imports_exports_and_jsx_comments_are_blanked_outside_fences() -> None:
    """Astro, Docusaurus and Next.js docs are MDX: each page opened with lines of
    ``import`` statements, embedded and counted as the page's first words."""
    (chunk,) = markdown_handler(MDX, "docs/images.mdx", Limits()).chunks
    assert (chunk.start_line, chunk.end_line) == (7, 16)
    lines = chunk.text.split("\n")
    assert lines[0] == "Astro provides several ways to use images  on your site."
    assert "import { Image } from 'astro:assets';" in lines  # a fence shows what it holds
    assert "export const meta = {" not in lines and "  sidebar: 'guides'," not in lines
    assert lines[-1] == "<ReadMore>See the image reference.</ReadMore>"
    plain = markdown_handler(MDX, "docs/images.md", Limits()).chunks[0]
    assert plain.start_line == 4  # only MDX reads ESM: in a .md page it is text


def test_a_section_holding_only_a_comment_merges_like_a_heading_only_one() -> None:
    doc = markdown_handler("## A\n\n<!-- YAML\nadded: v1\n-->\n\n## B\n\nbody\n", "a.md", Limits())
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks] == [(1, 9, "a > B")]


def test_a_section_holding_only_the_next_headings_anchor_merges_into_it() -> None:
    """Laravel's docs put ``<a name>`` above each heading: "Rate Limiting" held only its
    child's anchor, and as a chunk of its own (its heading, nothing else) it outranked the
    child that holds the text for "rate limit a route"."""
    text = ('<a name="rate-limiting"></a>\n## Rate Limiting\n\n<a name="defining"></a>\n'
            "### Defining Rate Limiters\n\nLimit the traffic for a route.\n"
            '<a id="next"/>\n## Next\n\n<a name="x"></a> Words beside an anchor.\n')
    doc = markdown_handler(text, "routing.md", Limits())
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks] == [
        (1, 8, "routing > Rate Limiting > Defining Rate Limiters"),
        (9, 11, "routing > Next"),  # an anchor beside words is text
    ]


@pytest.mark.parametrize(("front", "context"), [
    ("aliases:\n  - GTD\n  - Getting Things Done\n", "aliases: GTD; Getting Things Done"),
    ("alias: Weekly review\n", "aliases: Weekly review"),
    ('aliases: ["/engine/misc/deprecated/", "https://x.io/a"]\n', ""),  # Hugo: old URLs
    ("aliases: [3, {a: 1}, '  spaced   out ']\n", "aliases: spaced out"),
])
def test_aliases_are_context_on_the_first_chunk_only(front: str, context: str) -> None:
    text = f"---\n{front}---\nIntro words.\n\n## Later\n\nMore words.\n"
    doc = markdown_handler(text, "notes/method.md", Limits())
    assert [c.context for c in doc.chunks] == [context, ""]
    assert all("aliases" not in c.text for c in doc.chunks)  # shown text stays the source


@pytest.mark.model
def test_a_note_is_found_by_its_alias(tmp_path, build, cli) -> None:
    """An Obsidian note's other name finds it, though its text never says that name."""
    from tests.conftest import build_and_search

    files = {"method.md": "---\naliases: [Zettelkasten]\n---\n# Slip box\n\n"
                          "Write one idea per card and link cards to each other.\n",
             "other.md": "# Cards\n\nIndex cards come in many sizes and colours.\n"}
    hits = build_and_search(tmp_path, build, cli, files, "notes", "--method", "lexical",
                            "zettelkasten")
    assert [h["path"] for h in hits] == ["method.md"]
    assert "aliases" not in hits[0]["snippet"]


def test_inline_tags_join_the_frontmatter_tags_as_obsidian_reads_them() -> None:
    text = ("---\ntags: [Reading]\n---\n# Notes #inbox\n\n"
            "#project and #area/health; not C#, page#x, #1984 or `#code`; #y1984.\n"
            "[exit]: #event-exit\nSee [the intro](#intro) and (#aside).\n"
            "<!-- #hidden -->\n\n```sh\n#comment\n```\n#Project again\n")
    doc = markdown_handler(text, "n.md", Limits())
    assert doc.tags == ("reading", "inbox", "project", "area/health", "y1984")


@pytest.mark.parametrize(("path", "date"), [
    ("daily/2024-01-15.md", "2024-01-15"), ("_posts/2024-1-5-launch.md", "2024-01-05"),
    ("daily/2024-02-30.md", None), ("adr/0001-record.md", None), ("notes/2024.md", None),
])
def test_a_note_without_a_frontmatter_date_is_dated_by_its_name(path, date) -> None:
    assert markdown_handler("# Day\n\nWords.\n", path, Limits()).date == date
    dated = markdown_handler("---\ndate: 2023-06-01\n---\nWords.\n", path, Limits())
    assert dated.date == "2023-06-01"  # the frontmatter says it first


@pytest.mark.model
def test_tags_and_dates_the_text_holds_filter_a_search(tmp_path, build, cli) -> None:
    """An inline #tag is a --tag; a daily note's name is its date for --since, not its
    mtime (journals are copied and synced, so their mtimes are all new)."""
    import json

    from tests.conftest import build_and_search

    files = {"run.md": "# Running\n\nLong runs on Sunday. #area/health\n",
             "swim.md": "# Swimming\n\nLong swims on Sunday. #area/sport\n",
             "daily/2020-03-02.md": "# Monday\n\nPlanned the garden beds.\n",
             "daily/2031-03-02.md": "# Sunday\n\nPlanted the garden beds.\n"}
    hits = build_and_search(tmp_path, build, cli, files, "notes", "--tag", "area/health",
                            "long on sunday")
    assert [h["path"] for h in hits] == ["run.md"]
    dated = cli("--config", tmp_path / "vq.yaml", "search", "--json", "--since", "2025-01-01",
                "garden beds")
    found = [h["path"] for h in json.loads(dated.stdout)]
    assert found[0] == "daily/2031-03-02.md" and "daily/2020-03-02.md" not in found


LOGSEQ_PAGE = """title:: Query Sprint/Week one
alias:: Sprint, [[Learning sprint]]
tags:: [[Queries]], docs

- # About this sprint
\t- ## Why queries?
\t\t- Finding notes back gets hard as a graph grows.
\t\t  id:: 6018cc98-67a8-4eb2-bfd7-2affe517a7c7
\t\t  collapsed:: true
\t\t  owner:: Ramses
- ## Simple queries
\t- ```clojure
\t  - # not a heading
\t  id:: kept-in-code
\t  ```
"""


def test_a_logseq_page_reads_as_its_outline() -> None:
    """Headings in list items are sections (never the title); the page's opening
    properties are its title, aliases and tags; hidden built-in properties are blanked."""
    doc = markdown_handler(LOGSEQ_PAGE, "pages/Query Sprint___Week one.md", Limits())
    assert doc.title == "Query Sprint/Week one"
    assert doc.tags == ("queries", "docs")
    assert [c.breadcrumb for c in doc.chunks] == [
        "Query Sprint/Week one", "Query Sprint/Week one > About this sprint > Why queries?",
        "Query Sprint/Week one > Simple queries"]
    assert doc.chunks[0].context == "aliases: Sprint; Learning sprint"
    assert "6018cc98" not in doc.chunks[1].text and "collapsed" not in doc.chunks[1].text
    assert "owner:: Ramses" in doc.chunks[1].text  # a user's property is shown by Logseq
    assert "id:: kept-in-code" in doc.chunks[2].text
    named = markdown_handler("- # Inbox\n\t- a\n", "pages/triage___inbox.md", Limits())
    assert named.title == "triage/inbox"  # the namespace, not the first listed heading
    assert markdown_handler("# Day\n", "journals/2020_09_14.md", Limits()).date == "2020-09-14"


@pytest.mark.model
def test_a_logseq_page_is_found_by_its_alias_with_its_outline(tmp_path, build, cli) -> None:
    from tests.conftest import build_and_search

    hits = build_and_search(tmp_path, build, cli, {"pages/sprint.md": LOGSEQ_PAGE}, "notes",
                            "--method", "lexical", "learning sprint graph grows")
    assert hits[0]["breadcrumb"] == "Query Sprint/Week one > About this sprint > Why queries?"
    assert "6018cc98" not in hits[0]["snippet"] and "#" not in hits[0]["snippet"]


def test_a_new_revision_of_the_markdown_reader_re_reads_its_pages_once(settings,
                                                                        test_models) -> None:
    """An index written before the reader knew Logseq outlines: the next build re-reads
    the page though it did not change (its breadcrumbs gain the outline), keeps the
    vectors of every chunk whose text is unchanged, and does it only once."""
    from dataclasses import replace

    from vq.core import filetypes
    from vq.core.manifest import NEW_READER, plan_for
    from vq.core.store import open_for
    from vq.indexer import noop
    from vq.jobs.runner import locked_build

    settings = replace(settings, model=test_models)
    root = settings.vaults[0].path
    (root / "sprint.md").write_text(LOGSEQ_PAGE, encoding="utf-8")

    def crumbs() -> set[str]:
        rows = open_for(settings).chunks.search().where("path = 'sprint.md'") \
            .select(["breadcrumb"]).limit(100).to_list()
        return {r["breadcrumb"] for r in rows}

    with pytest.MonkeyPatch.context() as old_vq:
        old_vq.setitem(filetypes.READER_REVISIONS, "markdown", 1)
        old_vq.setattr(noop, "READERS_ID", -1)
        old_vq.setattr("vq.indexer.handlers.markdown._LIST_HEADING", re.compile(r"(?!)"))
        assert locked_build(settings).outcome == "ok"
        assert crumbs() == {"Query Sprint/Week one"}
        assert locked_build(settings).files_changed == 0

    plan, _, _ = plan_for(settings, open_for(settings))
    assert {(s.path, s.reason) for s in plan.stale} >= {("sprint.md", NEW_READER)}
    summary = locked_build(settings)
    assert summary.outcome == "ok" and summary.chunks_reused > 0  # other notes: same text
    assert "Query Sprint/Week one > About this sprint > Why queries?" in crumbs()
    assert not plan_for(settings, open_for(settings))[0].stale
    assert locked_build(settings).files_changed == 0


NATS_RECORD = """# JetStream JSON API Design

|Metadata|Value|
|--------|-----|
|Date    |2020-04-30|
|Author  |@ripienaar|
|Status  |Implemented|
|Tags    |jetstream, client, server|

## Context

Several JetStream APIs exist for message submission and administration.
"""
ADR_TOOLS_RECORD = "# 1. Record decisions\n\nDate: 2018-03-01\n\n## Status\n\nAccepted\n"
MADR_RECORD = ("# Use Markdown\n\n* Status: accepted\n* **Date:** 2017-12-14\n\n## Context\n\n"
               "Tags: not, the, header\n")


@pytest.mark.parametrize(("text", "date", "tags"), [
    (NATS_RECORD, "2020-04-30", ("jetstream", "client", "server")),
    (ADR_TOOLS_RECORD, "2018-03-01", ()),
    (MADR_RECORD, "2017-12-14", ()),
    ("# Groceries\nTags: #home #food/weekly\n\nMilk.\n", None, ("home", "food/weekly")),
    ("# API\n\n| Tags | Description |\n|---|---|\n| a | b |\n", None, ()),  # column names
    ("---\ndate: 2021-01-01\n---\n# T\n\nDate: 2018-03-01\n", "2021-01-01", ()),
    ("---\nid: 4b1cf\nupdated: 1636492098000\ncreated: 1636400000000\n---\n# Sprint\n",
     "2021-11-09", ()),  # Dendron: milliseconds since 1970
    ("---\ndate: 20240305\n---\n# T\n", "2024-03-05", ()),
    ("---\ndate: 42\n---\n# T\n", None, ()),
])
def test_a_decision_records_header_gives_its_date_and_tags(text, date, tags) -> None:
    """adr-tools, MADR and NATS keep a record's date and tags under its title."""
    doc = markdown_handler(text, "adr/record.md", Limits())
    assert (doc.date, doc.tags) == (date, tags)


def test_records_are_found_by_the_tags_and_dates_in_their_header(tmp_path, build, cli) -> None:
    from tests.conftest import build_and_search

    files = {"ADR-1.md": NATS_RECORD, "0001-record.md": ADR_TOOLS_RECORD.replace(
        "Accepted", "Accepted: JetStream APIs are recorded too.")}
    hits = build_and_search(tmp_path, build, cli, files, "notes", "--method", "lexical",
                            "JetStream APIs", "--tag", "jetstream")
    assert {h["path"] for h in hits} == {"ADR-1.md"}
    since = cli("--config", tmp_path / "vq.yaml", "search", "JetStream APIs", "--method",
                "lexical", "--since", "2019-01-01", "--json")
    assert {(h["path"], h["date"]) for h in json.loads(since.stdout)} == \
        {("ADR-1.md", "2020-04-30")}


def test_link_definitions_leave_the_indexed_text(tmp_path, build, cli) -> None:
    """Node.js' docs end each file with `[label]: url` lines a reader never sees; a piece
    of only those was a hit. Footnotes and fenced look-alikes stay; line numbers hold."""
    text = ("# Streams\n\nUse a pipeline, see [`stream.pipeline()`][].\n\n```md\n[x]: y\n```\n"
            "\n[^1]: A footnote.\n\n[`stream.pipeline()`]: https://example.com/quokka\n")
    [chunk] = markdown_handler(text, "streams.md", Limits()).chunks
    assert "quokka" not in chunk.text and "[x]: y" in chunk.text and "[^1]:" in chunk.text
    assert chunk.start_line == 1
    from tests.conftest import build_and_search

    hits = build_and_search(tmp_path, build, cli, {"streams.md": text}, "notes",
                            "--method", "lexical", "quokka")
    assert hits == []  # the only quokka was in a definition's URL


EXCALIDRAW = """---

excalidraw-plugin: parsed
tags: [excalidraw]

---
==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can
decompress Drawing data with the command palette.


# Excalidraw Data

## Text Elements
Container runtime talks to the kernel ^dXE45Wv8

cgroups and namespaces ^PbHALNxe

## Element Links
PbHALNxe: [[Namespaces]]

## Embedded Files
8f3e2a: [[kernel.png]]

%%
## Drawing
```compressed-json
""" + "N4KAkARALgngDgUwgLgAQQ4DYhAYwKYB2AJhAJ4DOAzAF2QKZRlTgjOYAdHAGsCh3gAxAGYAIg" * 40 + """
```
%%
"""


def test_an_excalidraw_drawing_is_its_text_elements_under_its_name() -> None:
    doc = markdown_handler(EXCALIDRAW, "diagrams/runtime.excalidraw.md", Limits())
    assert doc.title == "runtime" and doc.tags == ("excalidraw",)
    text = "\n".join(c.text for c in doc.chunks)
    assert "Container runtime talks to the kernel" in text and "[[Namespaces]]" in text
    for noise in ("N4KAk", "EXCALIDRAW VIEW", "^dXE45Wv8", "kernel.png", "Text Elements", "%%"):
        assert noise not in text
    assert {c.breadcrumb for c in doc.chunks} == {"runtime"}


@pytest.mark.model
def test_a_drawing_is_found_by_what_it_says(tmp_path, build, cli) -> None:
    from tests.conftest import build_and_search

    hits = build_and_search(tmp_path, build, cli, {"runtime.excalidraw.md": EXCALIDRAW},
                            "notes", "--method", "lexical", "cgroups namespaces")
    assert [(h["path"], h["breadcrumb"]) for h in hits] == [("runtime.excalidraw.md",
                                                             "runtime")]
    assert "N4KAk" not in hits[0]["snippet"]
