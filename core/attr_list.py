"""Heading attribute lists (``## Title { #anchor .class key=value }``): markup, not words.

MkDocs' ``attr_list`` extension (``{: #id }``), Pandoc and Docusaurus (``{#id}``) let
an author give a heading an anchor or a class with a brace group at its end. Readers
never see it rendered, so a breadcrumb or a snippet that keeps it shows noise. Only a
group made wholly of ``#id``, ``.class`` and ``key=value`` tokens is markup: a heading
that ends in ``{name}`` (a template placeholder) keeps it.

Two more kinds of heading markup leave the breadcrumbs a search shows
(``clean_heading``, through ``strip_breadcrumb``): an empty HTML element, almost
always an anchor (``### <a name="filter"></a> Filtering``: 159 of the Docker docs'
1,915 headings), and bold markers (``#### **Finer Points**``). Other tags stay:
``<Component>`` in an MDX heading is words, but a self-closing one is a component's output
(VitePress' ``### `$params` <Badge type="info" text="template global" />``), shown as its
``text`` attribute, else not at all. Only what is shown: taking them out of
the indexed breadcrumb too moved near-ties on the judged sets past the rule fixed
for it (docs/decisions.md#heading-markup).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vq.core.code_spans import one_backtick, outside_code

_VALUE = r"""(?:"[^"]*"|'[^']*'|[^\s}"']+)"""
_TOKEN = rf"(?:[#.][\w:-]+|[\w:-]+={_VALUE})"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_TOKEN}(?:[ \t]+{_TOKEN})*[ \t]*\}}[ \t]*$")
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_HEADING_LINE = re.compile(r"^[ \t]*[-*+][ \t]+#{1,6}[ \t]+\S")  # - ## Setup (Logseq)
_ASCIIDOC_TITLE = re.compile(r"^={1,6}[ \t]+\S")  # == Section (an AsciiDoc title line)
_LATEX_HEADING = re.compile(r"^\\(?:part|chapter|(?:sub){0,2}section|paragraph)\*?[\[{]")
# One punctuation character repeated: an RST title's over- and underline (docutils'
# adornment), a Markdown setext underline or rule. The RST chunker and snippets share it.
ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_EMPTY_ELEMENT = re.compile(r"<([A-Za-z][\w-]*)\b[^<>]*>\s*</\1\s*>")
_SELF_CLOSING_ANCHOR = re.compile(r"<a\b[^<>]*/>")
# A self-closing MDX or Vue component, <Badge type="tip" text="^1.0" />: its output is not in
# the source; it shows its text= attribute (a badge's words), else nothing
COMPONENT = re.compile(r"<[A-Z][\w.]{0,100}(?:\s[^<>]{0,500})?/>")
TEXT_ATTR = re.compile(r"""\btext[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)')""")
# Bold outside code spans; not __x__: __init__ is a name, `**kwargs` is code.
_BOLD = re.compile(r"(?<![`\w*])\*\*(?=[^\s*`])([^`]+?)(?<=[^\s*`])\*\*(?![`\w*])")
# A backslash escape of ASCII punctuation (CommonMark): ``\[node | jsdom]`` shows ``[node |
# jsdom]`` (Jest's headings); inside a code span it is written as is
ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def strip_attr_list(heading: str) -> str:
    """``"Install { #install .tab }"`` -> ``"Install"``; anything else unchanged."""
    return _ATTR_LIST.sub("", heading)


def strip_heading_attrs(line: str) -> str:
    """The same, for a whole Markdown line, only when the line is an ATX heading."""
    return strip_attr_list(line) if _HEADING_LINE.match(line) else line


def is_heading_markup(line: str) -> bool:
    """An ATX heading line (also in a list item), an AsciiDoc title line, a LaTeX
    sectioning command or an adornment line: what a breadcrumb already says, or what a
    reader never sees."""
    return bool(_HEADING_LINE.match(line) or _LIST_HEADING_LINE.match(line)
                or _ASCIIDOC_TITLE.match(line)
                or _LATEX_HEADING.match(line) or ADORNMENT.match(line))


def unescape(text: str) -> str:
    """``\\[`` -> ``[`` outside code spans."""
    if "\\" not in text:
        return text
    return outside_code(text, lambda prose: ESCAPE.sub(r"\1", prose))


def strip_bold(text: str) -> str:
    """``**Settings**`` -> ``Settings``; ``**kwargs`` and ``__init__`` unchanged."""
    return _BOLD.sub(r"\1", text)


def renders_nothing(line: str) -> bool:
    """True for a line of nothing but empty HTML elements (``<a name="x"></a>``,
    ``<a id="x"/>``): an anchor for the heading below it, shown as nothing. Laravel's docs put
    one above every heading, so a section holding only its child's anchor is heading-only."""
    rest = _SELF_CLOSING_ANCHOR.sub("", _EMPTY_ELEMENT.sub("", line))
    return bool(line.strip()) and not rest.strip()


def clean_heading(heading: str) -> str:
    """A heading's words as a reader sees them rendered: no attribute list, no empty
    anchor element, a component as its text, code spans in one backtick, no bold
    markers, no backslash escapes (``"<a name="f"></a> **Filtering**"`` ->
    ``"Filtering"``)."""
    text = _EMPTY_ELEMENT.sub("", strip_attr_list(heading))
    if "/>" in text:
        text = outside_code(text, lambda prose: COMPONENT.sub(component_text, prose))
    if "``" in text:
        text = outside_code(text, str, one_backtick)
    return " ".join(unescape(strip_bold(text)).split())


def component_text(found: re.Match[str]) -> str:
    """What a self-closing component (``COMPONENT``) shows: its ``text=``, else nothing."""
    text = TEXT_ATTR.search(found.group(0))
    return (text.group(1) or text.group(2) or "") if text else ""


def strip_breadcrumb(breadcrumb: str, render: Callable[[str], str] = str) -> str:
    """Each ``" > "`` part of a breadcrumb stored before headings were cleaned, and a part
    said twice in a row once: a page whose title and first heading are the same words
    (Docker's ``title: Deprecated Engine Features`` over ``# Deprecated Engine Features``).
    ``render`` shows a part's inline markup as its format renders it: a changelog's
    ``## [1.2.0](https://…/compare/v1.1.0...v1.2.0) (2023-01-31)`` is ``1.2.0 (2023-01-31)``."""
    parts: list[str] = []
    for part in (" ".join(render(clean_heading(p)).split()) for p in breadcrumb.split(" > ")):
        if part and (not parts or part.casefold() != parts[-1].casefold()):
            parts.append(part)
    return " > ".join(parts)
