"""Inline markup as a reader sees it rendered, per format: a link shows its text.

It also knows which lines only open or close a block (a fence, ``#+begin_src``,
``[source,ruby]``), which snippets leave out. Snippets (shown by every search
surface) render each line with it, and the AsciiDoc
and Org readers their breadcrumbs, so it lives below both sides. A chunk's text keeps
its source lines as written: only breadcrumbs carry what this module renders into
the index.

* Markdown (and what is extracted to it: HTML, notebooks, hook output): ``[text](url)``,
  ``[text][label]`` and ``![alt](src)`` show their text (which may hold code spans), and
  ``[label]: url`` definition lines are not shown; Obsidian's ``[[Note#Heading|alias]]``
  its alias, else ``Note > Heading``, and ``![[embed]]`` the note it embeds; a Logseq
  block reference (``((6018cc98-…))``) shows nothing, as its link's text; a block id at
  the end of a line (``^b15695``), bold and emphasis markers, backslash escapes and
  blockquote markers are not shown; an Obsidian callout (``> [!warning] Title``) and an
  admonition (``:::tip Title``, ``!!! note "Title"``) show their title. Inline HTML shows
  its text; a Hugo shortcode its ``text=`` argument, else its words (``{{</* x */>}}``
  is one written literally); Jekyll's ``{% raw %}`` markers nothing. Code spans are
  left as written: ```[[Note]]``` in backticks is the syntax itself.
* AsciiDoc: ``xref:a.adoc[Options]`` and the other macros show their text, ``<<id,text>>``
  its text, anchors (``[[id]]``, ``[#id]``) nothing, quoted text no markers.
* Org: ``[[target][description]]`` shows its description (else its target), and
  ``=verbatim=`` / ``~code~`` lose their markers.
* RST: as Sphinx renders it, in ``vq.core.rst_markup``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from vq.core.attr_list import COMPONENT, ESCAPE, TEXT_ATTR, component_text, strip_bold
from vq.core.code_spans import code_spans, one_backtick, outside_code
from vq.core.filetypes import MARKDOWN_TEXT_HANDLERS

_WIKILINK = re.compile(r"!?\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_DENDRON_VAULT = re.compile(r"^dendron://[^/\s]*/")  # a note in another vault
_DENDRON_TARGET = re.compile(
    rf"{_DENDRON_VAULT.pattern}|^[a-z][\w-]*(?:\.[a-z][\w-]*){{2,}}(?:#\S*)?$|^#[a-z][\w-]*$",
    re.IGNORECASE)
_LINK = re.compile(r"!?\[([^\[\]]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+\"[^\"]*\")?\)")
# Each pattern below is linear in its line: a run of spaces is tried once (lookbehind),
# and a marker's text is bounded (MARKED), else a long line of openers went quadratic.
MARKED = 200
# A reference link, [text][label] or [text][] (Node.js' docs: [`fs.readFile()`][]), not
# an index (matrix[i][j]); and the definition lines ([label]: url), which never show
_ANY_LINK = re.compile(rf"{_LINK.pattern}|(?<![\w\]\\])!?\[([^\[\]]{{1,{MARKED}}})\]"
                       rf"\[[^\[\]]{{0,{MARKED}}}\]")
LINK_DEFINITION = re.compile(r" {0,3}\[(?!\^)[^\[\]]{1,999}\]:[ \t]*\S")  # not [^1]: a footnote
# Emphasis, *text* or _text_, as CommonMark reads it: not a * between spaces, not
# snake_case or __init__
_EMPHASIS = re.compile(rf"(?<![\w*\\])\*(?=[^\s*])([^*`]{{1,{MARKED}}}?)(?<=[^\s*\\])\*(?![\w*])"
                       rf"|(?<![\w_\\])_(?=[^\s_])([^_`]{{1,{MARKED}}}?)(?<=[^\s_\\])_(?![\w_])")
_BLOCK_ID = re.compile(r"(?<![ \t])[ \t]+\^[A-Za-z0-9-]+[ \t]*$")
_BLOCK_REF = re.compile(r"\(\([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\)\)")  # Logseq ((uuid))
_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_SPACES = re.compile(r"[ \t]{2,}")  # what a removed reference leaves, a table's alignment
_CALLOUT = re.compile(r"^\[!([\w-]+)\][+-]?[ \t]*(.*)$")  # > [!warning]- Title
# Inline HTML that Markdown renders: the tags go, their text stays (an image shows its
# alt text, a line break a space). Only these names: ``docker run <image>`` and an MDX
# ``<Component>`` in a sentence are words (a self-closing one shows its text=, and a line of
# component tags alone is block markup).
_HTML_TAG = re.compile(r"</?(?:a|abbr|b|big|br|center|cite|code|del|details|dfn|div|em|font|"
                       r"i|img|ins|kbd|mark|p|q|s|samp|small|span|strike|strong|sub|summary|"
                       rf"sup|time|tt|u|var)(?:\s[^<>]{{0,{MARKED}}})?/?>", re.IGNORECASE)
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)

_ADOC_ANCHOR = re.compile(r"\[\[[^\[\]]*\]\]|\[#[^\[\]]*\]")                 # [[id]], [#id]
_ADOC_MACRO = re.compile(r"\b(?:xref|link|kbd|btn|menu|footnote|pass|https?)"
                         rf":{{1,2}}([^\s\[]{{0,{MARKED}}})\[([^\]]{{0,{MARKED}}})\]")
_ADOC_XREF = re.compile(r"<<([^<>,]+)(?:,[ \t]*([^<>]*))?>>")              # <<id,text>>
_ADOC_QUOTED = re.compile(rf"(?<![\w`*+])([`*+_#]{{1,2}})(?=\S)(.{{1,{MARKED}}}?)(?<=\S)\1"
                          r"(?![\w`*+])")

# Lines that open or close a block, never shown as text: a Markdown fence, Org's
# #+begin_src / #+end_src (Logseq writes them in Markdown too), AsciiDoc's block
# attribute lines ([source,ruby], [NOTE]).
_FENCE = re.compile(r"^(?:`{3,}|~{3,})")
_ORG_BLOCK = re.compile(r"^#\+(?:begin|end)_\w", re.IGNORECASE)
_BLOCK_MARKUP = {"org": _ORG_BLOCK, "asciidoc": re.compile(r"^\[[\w#.,=\" -]*\]$")}
# Jekyll's {% raw %} / {% endraw %} (Docker's docs wrap Go templates in them): markup the
# site never shows, on a line of its own or around the words it protects
_LIQUID_RAW = re.compile(r"\{%-?[ \t]*(?:end)?raw[ \t]*-?%\}")
# Hugo shortcodes: {{< note >}}, {{% /tab %}}, {{< glossary_tooltip text="Pods" term_id=
# "pod" >}} (Kubernetes' docs, everywhere), {{% glossary-term "template action" %}},
# [the guide]({{< ref "guide.md" >}}). Their output is not in the source: a shortcode
# shows its text= argument, else its words among its arguments (not key=value, not a
# path), else nothing; {{</* x */>}} is Hugo's way to write one literally.
_SHORTCODE = re.compile(rf"\{{\{{([<%])(/\*)?[ \t]*(/?)[ \t]*[\w.-][\w./-]{{0,{MARKED}}}"
                        rf"([^{{}}]{{0,{MARKED}}}?)[ \t]*(\*/)?[>%]\}}\}}")
_ARG = re.compile(r""""([^"]*)"|'([^']*)'|(\S+)""")
# Admonitions: Docusaurus and VitePress ``:::tip Title`` ... ``:::``, MkDocs ``!!! note
# "Title"`` (``???`` folded). The opening line shows its title, else its type, as an
# Obsidian callout does; the closing ``:::`` is markup. mkdocstrings' ``::: httpx.Client``
# names an API and stays.
_ADMONITION = re.compile(r"^(?::{3,}[ \t]*|[!?]{3}\+?[ \t]+)(note|tip|info|warning|caution|"
                         r"danger|important|details|success|question|failure|bug|example|"
                         r"quote|abstract|hint|attention|error|seealso)\b[ \t]*"
                         r"(?:\"([^\"]*)\"|(.*))$", re.IGNORECASE)
# A line of nothing but MDX or Vue component tags (<Tabs syncKey="pkg">, </TabItem>,
# <Steps>): a block the page renders around its children, whose words are the next lines.
# VitePress' ::: code-group, ::: details and ::: raw containers are markup the same way, as
# is a Pandoc fenced div's opening (Quarto's ::: {.callout-note}, ::: {#fig-plot}).
_COMPONENT_LINE = rf"(?-i:(?:</?[A-Z][\w.]{{0,100}}(?:\s[^<>]{{0,{MARKED}}})?/?>[ \t]*)+)$"
_MARKDOWN_BLOCK = re.compile(f"{_FENCE.pattern}|{_ORG_BLOCK.pattern}|{_LIQUID_RAW.pattern}$"
                             f"|:{{3,}}[ \t]*(?:code-group|raw|v-pre|\\{{[^{{}}]*\\}})?[ \t]*$"
                             f"|{LINK_DEFINITION.pattern}|{_COMPONENT_LINE}", re.IGNORECASE)

_ORG_LINK = re.compile(r"\[\[([^\[\]]*)\](?:\[([^\[\]]*)\])?\]")  # [[target][text]]
_ORG_VERBATIM = re.compile(r"(?:(?<=^)|(?<=[\s({'\"]))([=~])"
                           rf"(\S(?:.{{0,{MARKED}}}?\S)?)\1(?=[\s.,:;!?'\")}}\]]|$)")


def markdown_text(line: str) -> str:
    """One Markdown line as rendered (see the module docstring); code spans untouched."""
    line = _QUOTE.sub("", line)
    callout = _CALLOUT.match(line)
    if callout:  # Obsidian shows its title, else its type
        line = callout.group(2) or callout.group(1).capitalize() + ":"
    admonition = _ADMONITION.match(line)
    if admonition:
        line = (admonition.group(2) or admonition.group(3) or "").strip() \
            or admonition.group(1).capitalize() + ":"
    if "((" in line or "{%" in line or "{{" in line:  # first: it may be a link's target
        line = outside_code(line, _without_templates)
    line = _link_texts(line)
    return _BLOCK_ID.sub("", outside_code(line, _markdown_prose, one_backtick))


def _without_templates(text: str) -> str:
    """Logseq block references, Jekyll's raw markers and Hugo shortcodes as rendered."""
    text = _LIQUID_RAW.sub("", _BLOCK_REF.sub("", text))
    return _SHORTCODE.sub(_shortcode_text, text)


def _link_texts(line: str) -> str:
    """Each ``[text](url)`` and ``[text][label]`` whose brackets are outside code spans as
    its text, which may hold code spans itself (``[`zod-to-json-schema`](https://…)``,
    common in docs); a link written inside a code span is the syntax itself and stays."""
    if "](" not in line and "][" not in line:
        return line
    masked = list(line)
    for start, end in code_spans(line):
        masked[start:end] = "x" * (end - start)
    parts, cursor = [], 0
    for found in _ANY_LINK.finditer("".join(masked)):
        text = 1 if found.group(1) is not None else 2
        parts += [line[cursor:found.start()], line[found.start(text):found.end(text)]]
        cursor = found.end()
    return "".join(parts) + line[cursor:] if parts else line


def without_code(line: str) -> str:
    """``line`` with its code spans blanked (a ``#tag`` in backticks is code)."""
    return outside_code(line, str, code=lambda _: " ")


def _markdown_prose(text: str) -> str:
    if "<" in text:
        text = COMPONENT.sub(component_text, _HTML_TAG.sub(_html_tag_text, text))
    text = _WIKILINK.sub(_wikilink_text, text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), strip_bold(text))
    text = ESCAPE.sub(r"\1", text)  # \[ shows [
    if "&" in text:  # last: a decoded &lt;div&gt; is text, not a tag to strip
        text = html.unescape(text).replace("\xa0", " ")  # Hugo's docs: an&nbsp;`index.md`
    return _SPACES.sub(" ", text)


def _shortcode_text(found: re.Match[str]) -> str:
    opener, escaped, closing, args = found.group(1), found.group(2), found.group(3), found.group(4)
    if escaped:  # {{</* x */>}} shows {{< x >}}
        return found.group(0).replace(opener + "/*", opener, 1).replace("*/", "", 1)
    text = TEXT_ATTR.search(args)
    if text or closing:
        return (text.group(1) or text.group(2) or "") if text else ""
    words = (m.group(1) or m.group(2) or m.group(3) or "" for m in _ARG.finditer(args))
    return " ".join(w for w in words if w and "=" not in w and "/" not in w
                    and not w.endswith((".md", ".html", ".yaml", ".json", ".toml")))


def _html_tag_text(found: re.Match[str]) -> str:
    """What a tag shows: an image its alt text, a line break a space, others nothing."""
    tag = found.group(0)[1:4].lower()
    if tag == "img":
        alt = _ALT.search(found.group(0))
        return (alt.group(1) or alt.group(2) or "") if alt else ""
    return " " if tag.startswith("br") else ""


def _wikilink_text(found: re.Match[str]) -> str:
    """``[[Note#Heading|alias]]`` -> ``alias``; ``[[Note#Heading]]`` -> ``Note > Heading``;
    a block reference (``#^id``) names only its note. Dendron writes the alias first,
    ``[[schemas|dendron.topic.schema]]``: a right side shaped like its dotted hierarchy
    (three parts or more), a ``dendron://`` link or a slug anchor (``#a-heading``),
    beside a left side that is not, is the target."""
    target, alias = found.group(1).strip(), (found.group(2) or "").strip()
    if alias and _DENDRON_TARGET.match(alias) and not _DENDRON_TARGET.match(target):
        target, alias = alias, target
    if alias:
        return alias
    note, _, heading = _DENDRON_VAULT.sub("", target).partition("#")
    shown = [part.strip() for part in (note, heading) if part.strip() and part[:1] != "^"]
    return " > ".join(shown)


def asciidoc_text(text: str) -> str:
    """AsciiDoc inline markup as rendered: anchors gone, a macro's or cross reference's
    text (else its target), quoted text without its markers."""
    text = _ADOC_ANCHOR.sub("", text)
    text = _ADOC_MACRO.sub(lambda m: m.group(2) or m.group(1), text)
    text = _ADOC_XREF.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    return _ADOC_QUOTED.sub(r"\2", text)


def org_text(text: str) -> str:
    """Org inline markup as rendered: a link's description (else its target), verbatim
    and code without their ``=``/``~`` markers."""
    text = _ORG_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return _ORG_VERBATIM.sub(r"\2", text)


def rendered(line: str, handler: str | None) -> str:
    """``line`` of a chunk read by ``handler`` as a reader sees it; formats without
    inline links (code, LaTeX, text) unchanged; RST as Sphinx renders it
    (``vq.core.rst_markup``)."""
    if handler == "asciidoc":
        return asciidoc_text(line)
    if handler == "org":
        return org_text(line)
    if handler is None or handler in MARKDOWN_TEXT_HANDLERS:  # None: a hook's Markdown
        return markdown_text(line)
    if handler == "rst":  # imported here: only a search with RST hits pays for its patterns
        from vq.core.rst_markup import rst_text

        return rst_text(line)
    return line


def is_fence(line: str) -> bool:
    """A Markdown fence line (stripped): opens or closes a code block."""
    return bool(_FENCE.match(line))


def is_block_markup(line: str, handler: str | None) -> bool:
    """A (stripped) line of ``handler``'s format that opens or closes a block: markup a
    reader never sees as text."""
    return bool(_BLOCK_MARKUP.get(handler or "", _MARKDOWN_BLOCK).match(line))


def fenced(lines: Sequence[str]) -> set[int]:
    """The lines between a fence's opening and closing lines (an unclosed one: to the end)."""
    inside, opened = set(), False
    for i, line in enumerate(lines):
        if is_fence(line):
            opened = not opened
        elif opened:
            inside.add(i)
    return inside
