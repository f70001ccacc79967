"""Snippets show inline markup as each format renders it: a link shows its text, block
markup lines are not text, and code spans stay as written."""

from __future__ import annotations

import pytest

from tests.conftest import build_and_search
from vq.core.inline_markup import asciidoc_text, code_spans, markdown_text, org_text, rendered
from vq.indexer.handlers.base import Limits
from vq.indexer.handlers.markdown import markdown_handler
from vq.query.output import snippet


@pytest.mark.parametrize(("line", "shown"), [
    ("Open **[[Settings]]** → [[Settings#Files and links|Files and links]].",
     "Open Settings → Files and links."),
    ("See [[Internal links#Link to a heading]] and ![[Daily notes#^daily-notes-date]]",
     "See Internal links > Link to a heading and Daily notes"),
    ("Type `[[` or `[[Three laws]]` to link.", "Type `[[` or `[[Three laws]]` to link."),
    ("[URL encode](https://en.wikipedia.org/wiki/Percent-encoding) it, ![a chart](c.png)",
     "URL encode it, a chart"),
    ("Learn to link notes. ^b15695", "Learn to link notes."),
    ("Call f(**kwargs) in a [link (with parens)](https://x.io/a_(b)).",
     "Call f(**kwargs) in a link (with parens)."),
    ("a ^ b and x^2", "a ^ b and x^2"),
    ("- [`zod-to-json-schema`](https://github.com/x/zod-to-json-schema): Convert schemas",
     "- `zod-to-json-schema`: Convert schemas"),
    ("Write `[text](url)` for a link, or [`z.string()`](#strings).",
     "Write `[text](url)` for a link, or `z.string()`."),
    ('Follow the <a href="https://docs.docker.com/install/" target="_blank">instructions</a>.',
     "Follow the instructions."),
    ("Press <kbd>Ctrl</kbd>+<KBD>C</KBD>,<br/>then <img src='x.png' alt='the chart'>.",
     "Press Ctrl+C, then the chart."),
    ("Run `<b>x</b>` as docker run <image> in a <Tabs> block.",
     "Run `<b>x</b>` as docker run <image> in a <Tabs> block."),
    ("{% raw %}{{ log stream }}{% endraw %}, or write `{% raw %}` yourself",
     "{{ log stream }}, or write `{% raw %}` yourself"),
    ('A {{< glossary_tooltip text="Pod" term_id="pod" >}} runs; see [the guide]({{< ref '
     '"docs/guide.md" >}}).{{< /note >}} {{% tab name="Linux" %}}Go: `{{ .Name }}`',
     "A Pod runs; see the guide. Go: `{{ .Name }}`"),
    ('Use the {{% glossary-term "template action" %}} with {{% eturl where %}}. {{% include '
     '"/_common/a.md" %}}Write {{</* note */>}}.', "Use the template action with where. "
     "Write {{< note >}}."),  # Hugo's own docs
    ("Read it with [`fs.readFile()`][] or see [the guide][guide], ![a chart][c].",
     "Read it with `fs.readFile()` or see the guide, a chart."),  # Node.js' docs
    ("A _rune literal_ is *the* text; matrix[i][j], a * b, snake_case, __init__, *args",
     "A rune literal is the text; matrix[i][j], a * b, snake_case, __init__, *args"),
    (":::info Legacy Fake Timers", "Legacy Fake Timers"), (":::tip", "Tip:"),
    (r"Use \*\*not bold\*\*, `\[raw` and C:\Users", r"Use **not bold**, `\[raw` and C:\Users"),
    ('???+ warning "Careful"', "Careful"), ("!!! note", "Note:"),
    ('Since <Badge type="tip" text="^1.3.0" />, and <LinkCard title="Go" href="/go" /> here',
     "Since ^1.3.0, and here"),  # VitePress and Starlight components show their output
    ("an ``object`` dtype, `` `a` `` and `` x ``", "an `object` dtype, `` `a` `` and `x`"),
    ("[[schemas|dendron.topic.schema]] and [[refactor|dendron.ref.commands#refactor-hierarchy]]"
     ", [[Pod V2|dendron://dendron.dendron-site/dendron.topic.pod-v2]]",
     "schemas and refactor, Pod V2"),  # Dendron writes the alias first
    ("The above [[Hierarchy ordered querying|#hierarchy-ordered-querying]] is great",
     "The above Hierarchy ordered querying is great"),
    ("![[dendron://site/dendron.topic.journal#details]] and [[dendron.topic.schema|schemas]]",
     "dendron.topic.journal > details and schemas"),
    ("[[Release notes|v1.2.3]], [[Python|setup.py]]", "v1.2.3, setup.py"),  # Obsidian aliases
])
def test_markdown_links_render_as_their_text(line, shown):
    assert markdown_text(line) == shown


def test_rst_literals_read_as_code_spans():
    assert snippet("Call ``Client.get()`` or the `default role`.", "client", path="a.rst") \
        == "Call `Client.get()` or the `default role`."


def test_asciidoc_and_org_links_render_as_their_text():
    assert asciidoc_text("See xref:cli/pages/safe.adoc[Safe mode], <<opts,the options>>, "
                         "<<intro>> and link:https://x.io[]") == \
        "See Safe mode, the options, intro and https://x.io"
    assert asciidoc_text("[[anchor]]Run *asciidoctor* on `doc.adoc`.") == \
        "Run asciidoctor on doc.adoc."
    assert org_text("Run =doom sync= after [[file:install.org][installing]], see "
                    "[[https://x.io]], press ~C-c C-c~.") == \
        "Run doom sync after installing, see https://x.io, press C-c C-c."
    assert org_text("x = y and a=b=c stay") == "x = y and a=b=c stay"


def test_block_markup_lines_are_not_snippet_text():
    """A closing fence is markup, not a title's underline: the code line above it stays."""
    assert snippet("To embed:\n\n```md\n![[Note]]\n```\n", "embed", path="a.md") == \
        "To embed: ![[Note]]"
    assert snippet("[source,ruby]\n----\nputs convert(doc)\n----\n", "convert",
                   path="a.adoc") == "puts convert(doc)"
    assert snippet("#+begin_src emacs-lisp\n(doom-log \"x\")\n#+END_SRC\n", "doom-log",
                   path="a.org") == '(doom-log "x")'
    assert snippet("Routing\n=======\n\nUse the route decorator.", "route", path="a.rst") == \
        "Use the route decorator."
    assert snippet(":::tip\n\nMock the timers.\n\n:::\n\n!!! note \"TL;DR\"\n    Use a client.\n\n"
                   "::: httpx.Client\n", "timers client", path="a.md") == \
        "Mock the timers. TL;DR Use a client. ::: httpx.Client"  # mkdocstrings' line stays
    assert snippet("Read it whole.\n\n[`fs.readFile()`]: fs.md#fsreadfile\n[^1]: A note.\n",
                   "read fs", path="a.md") == "Read it whole. [^1]: A note."  # a footnote stays
    assert snippet("{% raw %}\n$ docker ps --format '{{.ID}}'\n{%- endraw %}\n", "docker ps",
                   path="a.md") == "$ docker ps --format '{{.ID}}'"  # Jekyll, as Docker's docs
    tabs = ('<Tabs syncKey="pkg">\n  <TabItem label="npm">\n\nRun npm install.\n\n'
            '  </TabItem>\n</Tabs>\n\n::: code-group\n\nSee the <Tabs> docs.\n\n:::\n')
    assert snippet(tabs, "npm", path="a.mdx") == "Run npm install. See the <Tabs> docs."
    quarto = "::: {.callout-note}\nThe plot uses matplotlib.\n:::\n\n::: {#fig-a}\nA figure.\n:::\n"
    assert snippet(quarto, "matplotlib", path="report.qmd") == \
        "The plot uses matplotlib. A figure."  # Pandoc's fenced divs: markup
    # a closing ::: right under a line is no setext underline (it hid the line: "Tip:")
    assert snippet(":::tip\nMock the timers.\n:::\n", "timers", path="a.md") == "Mock the timers."


def test_a_snippet_does_not_run_a_sentence_into_the_example_below_it():
    """Starlight's frontmatter reference: a sentence, then a YAML example in a fence. Run
    together, the example's keys read as words of the sentence; a short lead-in ("To embed
    a note:") still shows its example."""
    text = ("Customize the heading levels to be included or set to `false` to hide the table "
            "of contents on this page.\n\n```md\n---\ntitle: Page with only H2s\n"
            "tableOfContents:\n  minHeadingLevel: 2\n---\n```\n")
    assert snippet(text, "hide the table of contents", path="a.md") == (
        "Customize the heading levels to be included or set to `false` to hide the table of "
        "contents on this page.")
    assert snippet(text, "minHeadingLevel", path="a.md") == "minHeadingLevel: 2 ---"


@pytest.mark.model
def test_a_search_shows_an_obsidian_note_as_it_reads(tmp_path, build, cli):
    """The real path: a built vault, `vq search --json`, the snippet as rendered."""
    note = ("# Weekly review\n\n## Weekly review\n\nEvery Friday, review the "
            "[[Projects#Active|active projects]] <b>list</b> and archive what is done. "
            "^review-1\n")
    hits = build_and_search(tmp_path, build, cli, {"review.md": note}, "notes",
                            "archive finished projects on friday")
    assert hits[0]["snippet"] == ("Every Friday, review the active projects list and "
                                  "archive what is done.")
    assert hits[0]["breadcrumb"] == "Weekly review"  # said twice in a row: shown once


def test_what_a_fence_holds_is_shown_as_written():
    text = "To embed a note:\n\n```md\n![[Internal links]]\n```\nSee [[Internal links|links]].\n"
    assert snippet(text, "embed note", path="a.md") == \
        "To embed a note: ![[Internal links]]"  # a lead-in and its example, no more


def test_quotes_and_obsidian_callouts_read_as_rendered():
    assert markdown_text("> [!warning] Interoperability") == "Interoperability"
    assert markdown_text("> [!faq]- ") == "Faq:"
    assert markdown_text("> > Block references are **specific** to Obsidian.") == \
        "Block references are specific to Obsidian."
    assert markdown_text("a > b stays") == "a > b stays"


def test_a_logseq_block_reference_is_not_shown():
    assert markdown_text("skim our [beginner resources](((63bc6201-53b1-47a4-834f-83934b69ad49)))"
                         " and ((6018cc98-67a8-4eb2-bfd7-2affe517a7c7)) first") == \
        "skim our beginner resources and first"


@pytest.mark.parametrize(("line", "spans"), [
    ("a `b` c", [(2, 5)]),
    ("``a ` b`` and `c`", [(0, 9), (14, 17)]),
    ("``` not closed ` here", []),
    ("`one` ``two`` `three`", [(0, 5), (6, 13), (14, 21)]),
])
def test_code_spans_close_on_a_run_of_as_many_backticks(line, spans):
    assert code_spans(line) == spans


def test_lines_of_backticks_and_tags_are_read_in_one_pass():
    """A code-span regex with a backreference took minutes on one line of 20,000
    backticks (every run length tried against the rest of the line, at every start)."""
    line = "#start " + "`" * 20_000 + " #end"
    assert code_spans(line) == []
    doc = markdown_handler(line + "\n" + "`a` #tag " * 50_000 + "\n", "hostile.md", Limits())
    assert doc.tags == ("start", "end", "tag")
    assert snippet(line, "end", path="a.md").startswith("#start ```")


def test_long_lines_of_markup_openers_are_read_in_one_pass():
    """Unbounded matches went quadratic on one long line of openers: an Org heading of
    200,000 characters of ``=a `` or ``[``, an AsciiDoc title of ``*a ``, ``xref:a[`` or
    ``[``, and an Excalidraw text element after a run of spaces each took minutes."""
    from vq.indexer.handlers.asciidoc import asciidoc_handler
    from vq.indexer.handlers.org import org_handler

    org = org_handler("* " + "=a " * 70_000 + "\nbody\n", "n.org", Limits())
    assert org.chunks[0].breadcrumb.startswith("n > =a =a")  # nothing closes: as written
    assert org_handler("* " + "[" * 100_000 + "\nbody\n", "n.org", Limits()).chunks
    for unit in ("*a ", "xref:a[", "[", "[[a"):
        adoc = asciidoc_handler("== " + unit * 50_000 + "\n\nbody\n", "n.adoc", Limits())
        assert "body" in "\n".join(c.text for c in adoc.chunks)
    drawing = "---\nexcalidraw-plugin: parsed\n---\nwords" + " " * 200_000 + "x ^dXE45Wv8\n"
    assert "dXE45Wv8" not in markdown_handler(drawing, "d.excalidraw.md", Limits()).chunks[0].text
    assert markdown_text("a" + " " * 100_000 + "b ^b15695") == "a b"
    from vq.indexer.handlers.rst import rst_handler  # a role's target ran to the line's end
    title = "`a <" * 150_000  # for each backtick: 600 KB of title took minutes
    page = rst_handler(f"{title}\n{'=' * len(title)}\n\nbody\n", "n.rst", Limits())
    assert "body" in "\n".join(c.text for c in page.chunks)
    assert rendered(":a:`x <" * 150_000, "rst").startswith(":a:`x <")


@pytest.mark.parametrize(("line", "shown"), [
    ("the :meth:`~flask.Flask.errorhandler` decorator, :func:`send_file` and "
     ":class:`dict`", "the `errorhandler()` decorator, `send_file()` and `dict`"),
    (":ref:`the guide <blueprints>`, `Flask <https://flask.dev>`_ and `name`_",
     "the guide, Flask and name"),
    (":data:`.appcontext_pushed`, :envvar:`FLASK_APP`, :doc:`tutorial/index`",
     "`appcontext_pushed`, `FLASK_APP`, tutorial/index"),
    ("``a`b`` literal, *emphasis* and **strong**", "``a`b`` literal, emphasis and strong"),
    ("mounted at other places::", "mounted at other places:"),
    (".. note:: Mind the context.", "Note: Mind the context."),
    (".. versionadded:: 2.2", "Added in version 2.2."),
    (".. py:data:: SECRET_KEY", "`SECRET_KEY`"),
])
def test_rst_reads_as_sphinx_renders_it(line, shown):
    assert rendered(line, "rst").strip() == shown


FLASK_RST = """\
Registering Blueprints
----------------------

Blueprints can be mounted at other places, as :meth:`~flask.Flask.register_blueprint`
says::

    app.register_blueprint(simple_page, url_prefix='/pages')

And these are the rules:

.. code-block:: python
    :caption: app.py

    >>> app.url_map

.. _blueprint-errors:

.. toctree::
   :maxdepth: 2
"""


def test_rst_literal_blocks_directives_and_options_read_as_rendered():
    """Flask's blueprints.rst: a literal block after ``::``, a ``code-block`` with a
    caption, a target and a toctree; the code is shown as written, and a snippet that
    starts in prose stops at it."""
    assert snippet(FLASK_RST, "mounted blueprints", path="b.rst") == (
        "Blueprints can be mounted at other places, as `register_blueprint()` says: "
        "app.register_blueprint(simple_page, url_prefix='/pages')")  # a lead-in, its example
    assert snippet(FLASK_RST, "url_map", path="b.rst") == ">>> app.url_map"
    assert snippet(FLASK_RST, "url_prefix", path="b.rst") == \
        "app.register_blueprint(simple_page, url_prefix='/pages')"


@pytest.mark.model
def test_a_search_shows_a_sphinx_page_as_it_reads(tmp_path, build, cli):
    """The real path: an RST page built and searched, roles shown as Sphinx shows them."""
    hits = build_and_search(tmp_path, build, cli, {"blueprints.rst": FLASK_RST}, "notes",
                            "blueprints mounted at other places")
    assert hits[0]["snippet"].startswith("Blueprints can be mounted at other places, as "
                                         "`register_blueprint()` says:")


def test_function_words_neither_pick_the_line_nor_light_up():
    """"where is the request context pushed" lit up every "the" on the dashboard, and a
    line of them could win the snippet over the one about contexts."""
    from vq.query.output import terms

    assert terms("where is the request context pushed") == ["request", "context", "pushed"]
    assert terms("where is the") == ["where", "the"]  # nothing else: kept
    text = "The the the the of the.\n\nA context is pushed per request.\n"
    assert snippet(text, "where is the request context pushed", path="a.md") == \
        "A context is pushed per request."


def test_a_bold_line_that_heads_a_paragraph_reads_as_a_run_in_heading():
    """Obsidian's help heads paragraphs with bold lines; joined on one line they ran into
    the paragraph ("…in another note To link to…"). A bold line ends with a period; bold
    inside a line, or a bold line that ends in punctuation, is left as written."""
    page = ("**Linking to a heading in another note**\n\nTo link to a heading, add a hash.\n")
    assert snippet(page, "link heading") == \
        "Linking to a heading in another note. To link to a heading, add a hash."
    assert snippet("**Note:**\nKeep it.\n", "note") == "Note: Keep it."
    assert snippet("**a** and **b**\nthen c\n", "and") == "a and b then c"
    assert snippet("**Bold**\nprint(1)\n", "bold", path="x.py") == "**Bold** print(1)"


def test_html_entities_read_as_rendered_outside_code():
    """Hugo's docs write ``an&nbsp;`index.md`&nbsp;file``; a decoded ``&lt;div&gt;`` is
    text, not a tag to strip, and a code span keeps its entities as written."""
    assert markdown_text("an&nbsp;`index.md`&nbsp;file") == "an `index.md` file"
    assert markdown_text("use &lt;div&gt; &amp; `a &amp; b`") == "use <div> & `a &amp; b`"
    assert markdown_text("R&D and AT&T") == "R&D and AT&T"


def test_a_definition_list_reads_term_colon_definition():
    """Hugo's and Pandoc's definition lists: the snippet read "`Destination` : (`string`)
    The link destination." and began other hits with a bare ": "."""
    page = ("Templates receive the following context:\n\n`Destination`\n: (`string`) The link "
            "destination.\n\n`Ordinal`\n: {{< new-in v0.160.0 />}}\n: (`int`) The "
            "zero-based ordinal of the link.\n")
    assert snippet(page, "destination ordinal") == \
        "`Destination`: (`string`) The link destination. `Ordinal`: v0.160.0"
    assert snippet(page, "zero-based") == "(`int`) The zero-based ordinal of the link."
    assert snippet("Text\n: not a definition\n", "definition", path="a.rst") == \
        ": not a definition"  # RST has no such lists


def test_a_chunk_of_only_a_shortcode_shows_no_snippet_not_the_tag():
    """Hugo's "Template lookup order" page opens with a section holding only
    ``{{< newtemplatesystem >}}``: the hit showed the tag. A heading-only chunk still
    shows its heading."""
    assert snippet("{{< newtemplatesystem >}}\n", "template lookup order") == ""
    assert snippet("## Lookup rules\n", "lookup") == "## Lookup rules"
    # Laravel's docs: the anchor above the next heading ends a section with no text
    assert snippet('## Rate Limiting\n\n<a name="defining-rate-limiters"></a>\n',
                   "rate limit a route", path="routing.md") == "## Rate Limiting"



def test_every_reader_of_markdown_text_renders_its_snippets_alike():
    """HTML, notebooks and Word render to Markdown: one set of readers
    (``filetypes.MARKDOWN_TEXT_HANDLERS``) decides it, where three lists had drifted and
    a Word hit's bold run-in heading and definition list stayed unrendered."""
    page = "**Rolling back**\nRun the job.\n\n`Pager`\n: payments-oncall\n"
    for path in ("a.md", "a.html", "a.ipynb", "a.docx"):
        assert snippet(page, "rolling back pager", path=path) == \
            "Rolling back. Run the job. `Pager`: payments-oncall", path
