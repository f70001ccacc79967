"""Heading attribute lists (``## Title { #anchor .class key=value }``): markup, not words.

MkDocs' ``attr_list`` extension (``{: #id }``), Pandoc and Docusaurus (``{#id}``) let
an author give a heading an anchor or a class with a brace group at its end. Readers
never see it rendered, so a breadcrumb or a snippet that keeps it shows noise. Only a
group made wholly of ``#id``, ``.class`` and ``key=value`` tokens is markup: a heading
that ends in ``{name}`` (a template placeholder) keeps it.
"""

from __future__ import annotations

import re

_VALUE = r"""(?:"[^"]*"|'[^']*'|[^\s}"']+)"""
_TOKEN = rf"(?:[#.][\w:-]+|[\w:-]+={_VALUE})"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_TOKEN}(?:[ \t]+{_TOKEN})*[ \t]*\}}[ \t]*$")
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]")


def strip_attr_list(heading: str) -> str:
    """``"Install { #install .tab }"`` -> ``"Install"``; anything else unchanged."""
    return _ATTR_LIST.sub("", heading)


def strip_heading_attrs(line: str) -> str:
    """The same, for a whole Markdown line, only when the line is an ATX heading."""
    return strip_attr_list(line) if _HEADING_LINE.match(line) else line


def strip_breadcrumb(breadcrumb: str) -> str:
    """Each ``" > "`` part of a breadcrumb stored before headings were cleaned."""
    return " > ".join(strip_attr_list(part) for part in breadcrumb.split(" > "))
