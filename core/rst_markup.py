"""reStructuredText as a reader sees it rendered by Sphinx, for snippets and breadcrumbs.

A Sphinx page (Flask, Requests, Django) is dense with markup that its rendered page
never shows: roles (``:meth:`~flask.Flask.errorhandler``` reads ``errorhandler()``),
hyperlink references, ``.. code-block:: python`` directives and their options, and
the ``::`` that introduces a literal block (shown as one colon, or none after a
space). Snippets read a chunk's lines through ``code_lines`` (what a literal block,
a code directive or a doctest holds: shown as written, and a snippet's window stops
at it as at a fence), ``markup_lines`` (left out) and ``rst_text`` (each other line).

The rules are Sphinx's defaults: ``~`` shows a target's last part, a function or
method role adds ``()`` (``add_function_parentheses``), a role of the Python domain
or one that names a file, option or variable is shown as code, others as text; an
admonition (``.. note::``) shows its type, ``.. versionadded:: 2.0`` its words, an
object's description (``.. py:data:: SECRET_KEY``) its signature, and a directive that
renders as navigation or media (``toctree``, ``image``) nothing.
Only the reader's text changes: the index keeps the page's lines as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vq.core.attr_list import strip_bold
from vq.core.code_spans import one_backtick

# :doc:`text <target>` -> text (the RST reader's breadcrumbs, and snippets below)
# (bounded, and no target crosses a backtick: a line of "`a <" was quadratic, minutes a MB)
ROLE = re.compile(r":[\w:+.-]{1,80}:`([^`<]{0,300}?)\s*(?:<[^>`]{0,300}>)?`")
REFERENCE = re.compile(r"`([^`<]{0,300}?)\s*(?:<[^>`]{0,300}>)?`__?")  # `text <url>`_ -> text
_ROLE_PARTS = re.compile(r":((?:[\w+.-]{1,40}:)?[\w+.-]{1,40}):`(~?)([^`<]{0,300}?)\s*"
                         r"(?:<([^`>]{0,300})>)?`")
_CODE_ROLES = frozenset({"func", "meth", "class", "attr", "mod", "data", "exc", "obj",
                         "const", "member", "type", "macro", "var", "enum", "struct",
                         "envvar", "option", "file", "command", "samp", "program", "code"})
_CALLS = frozenset({"func", "meth"})
_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+([\w:-]{1,60})::(?:[ \t]+(.*))?$")
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "doctest", "testcode",
                              "testoutput", "testsetup", "testcleanup", "literalinclude",
                              "highlight", "productionlist"})
# Directives whose line is markup: the code ones, and what renders as navigation, media
# or nothing (autodoc's ``.. autofunction:: flask.send_file`` names an API and stays)
_MARKUP_DIRECTIVES = _CODE_DIRECTIVES | frozenset({
    "toctree", "include", "image", "figure", "contents", "index", "only", "raw", "meta",
    "currentmodule", "module", "tabularcolumns", "rst-class", "role", "default-role",
    "sectionauthor", "moduleauthor", "highlightlang", "literalinclude", "csv-table"})
# An object's description (``.. py:data:: SECRET_KEY``, ``.. autofunction:: flask.abort``)
# shows its signature, as code; another directive its argument (a title, a caption)
_DESCRIBES = re.compile(r"(?:py|std|c|cpp|js|rst):|auto|(?:function|class|data|method|"
                        r"attribute|exception|decorator|module|envvar|option|describe)$")
_ADMONITIONS = frozenset({"note", "warning", "tip", "important", "caution", "danger",
                          "attention", "hint", "error", "seealso", "admonition"})
_VERSIONS = {"versionadded": "Added in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
_OPTION = re.compile(r"^[ \t]+:[\w -]{1,60}:(?:[ \t].*)?$")  # :caption: app.py
# A comment or a target: ``.. _label:``, ``.. |name| image::`` is a substitution (markup)
_EXPLICIT = re.compile(r"^[ \t]*\.\.(?:[ \t]+(?:_[^:]{0,300}:.*|\|[^|]{1,100}\|.*|(?!\[)[^:]*)"
                       r")?[ \t]*$")
_LITERAL = re.compile(r"``(?=\S).{0,1000}?(?<=\S)``")
_EMPHASIS = re.compile(r"(?<![\w*\\])\*(?=\S)([^*`]{1,200}?)(?<=\S)\*(?![\w*])")


def rst_text(line: str) -> str:
    """One RST line as Sphinx renders it (the module docstring says how)."""
    directive = _DIRECTIVE.match(line)
    if directive:
        name, rest = directive.group(2), (directive.group(3) or "").strip()
        if name in _ADMONITIONS:
            return f"{name.capitalize()}: {rest}" if rest else f"{name.capitalize()}:"
        if name in _VERSIONS:
            return f"{_VERSIONS[name]} {rest}." if rest else f"{_VERSIONS[name]}."
        return f"`{rest}`" if rest and _DESCRIBES.match(name) else rest
    if line.rstrip().endswith("::"):  # "mounted at other places::" shows one colon
        body = line.rstrip()[:-2]
        line = body if body.endswith((" ", "\t")) or not body.strip() else body + ":"
    if "`" not in line:
        return _prose(line)
    parts, cursor = [], 0
    for found in _LITERAL.finditer(line):  # ``literal``: code; a single backtick is a role's
        parts += [_prose(line[cursor:found.start()]), one_backtick(found.group(0))]
        cursor = found.end()
    return "".join(parts) + _prose(line[cursor:])


def _prose(text: str) -> str:
    if "`" in text:
        text = REFERENCE.sub(r"\1", _ROLE_PARTS.sub(_role_text, text))
    return _EMPHASIS.sub(r"\1", strip_bold(text))


def _role_text(found: re.Match[str]) -> str:
    role = found.group(1).rsplit(":", 1)[-1]
    text = found.group(3).strip() or (found.group(4) or "").strip()
    text = text.removeprefix(".")  # :meth:`.Flask.run`: the target, found from here
    if found.group(2):
        text = text.rsplit(".", 1)[-1]
    if role in _CALLS and text and not text.endswith(")"):
        text += "()"
    return f"`{text}`" if role in _CODE_ROLES and text else text


def code_lines(lines: Sequence[str]) -> set[int]:
    """The lines a literal block holds (after a line ending in ``::`` that is not another
    directive, or a code directive and its options), and doctest blocks (``>>>``). One
    pass: the walk goes on after a block, as nothing in it opens another."""
    out: set[int] = set()
    i = 0
    while i < len(lines):
        line, block = lines[i], range(0)
        directive = _DIRECTIVE.match(line)
        if directive and directive.group(2) not in _CODE_DIRECTIVES:
            pass
        elif directive or line.rstrip().endswith("::"):
            block = _indented_after(lines, i)
        elif line.lstrip().startswith(">>>") and (i == 0 or not lines[i - 1].strip()):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            block = range(i, end)
        out.update(block)
        i = max(i + 1, block.stop)
    return out


def markup_lines(lines: Sequence[str]) -> set[int]:
    """Lines a rendered page never shows: markup directives and the options under any
    directive, comments and targets, and a ``::`` alone."""
    out: set[int] = set()
    for i, line in enumerate(lines):
        directive = _DIRECTIVE.match(line)
        if directive:
            if directive.group(2) in _MARKUP_DIRECTIVES:
                out.add(i)
            j = i + 1
            while j < len(lines) and _OPTION.match(lines[j]):
                out.add(j)
                j += 1
        elif line.strip() == "::" or (_EXPLICIT.match(line) and line.strip()):
            out.add(i)
    return out


def _indented_after(lines: Sequence[str], opener: int) -> range:
    """The block indented deeper than ``lines[opener]`` below it (options skipped)."""
    depth = indent(lines[opener])
    start = opener + 1
    while start < len(lines) and _OPTION.match(lines[start]):
        start += 1
    end = start
    while end < len(lines) and (not lines[end].strip() or indent(lines[end]) > depth):
        end += 1
    return range(start, end)


def indent(line: str) -> int:
    """Columns of leading blanks (RST's literal blocks are told by their indentation)."""
    return len(line) - len(line.lstrip(" \t"))
