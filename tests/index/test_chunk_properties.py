"""Property tests: every handler keeps the chunk invariants on arbitrary input.

The invariants are what the indexer and the result display rely on: a chunk's
text is exactly its lines, ranges never overlap, and no non-blank line is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from vq.core.filetypes import LANGUAGE_BY_EXTENSION
from vq.indexer.handlers import Document, Limits
from vq.indexer.handlers.asciidoc import asciidoc_handler
from vq.indexer.handlers.code import code_handler
from vq.indexer.handlers.latex import latex_handler
from vq.indexer.handlers.markdown import markdown_handler
from vq.indexer.handlers.org import org_handler
from vq.indexer.handlers.rst import rst_handler
from vq.indexer.handlers.text import text_handler

# The suite runs the same examples every time (a suite that fails on one run in forty is
# a failing suite); `VQ_FUZZ_RANDOM=1` explores new ones, as a fuzzing session does:
# `VQ_FUZZ_RANDOM=1 pytest tests/index -k "invariants or never_breaks" --hypothesis-seed=N`
# over many N found the bash grammar crash and the Java overlap (decisions#bash-high-planes).
EXPLORE = bool(os.environ.get("VQ_FUZZ_RANDOM"))
FUZZ = settings(max_examples=200, deadline=None, derandomize=not EXPLORE)

MARKDOWN_LINES = [
    "---",
    "...",
    "title: Fuzz",
    "tags: [a, '#B']",
    "date: 2024-13-45",
    "tags: [unclosed",
    "# Title",
    "## Section ##",
    "### Sub",
    "####### seven",
    "#nospace",
    "   # indented",
    "```",
    "```python",
    "````",
    "~~~",
    "~~~~ js",
    "``` a`b",
    "# comment in code?",
    "plain text line",
    "- list item",
    "",
    "   ",
    "\t",
    "x" * 60,
]
RST_LINES = [
    ":orphan:",
    ":tocdepth: 2",
    "Title",
    "=====",
    "-----",
    "~~~",
    "  Inset title",
    "Section",
    "-------",
    "Example::",
    "::",
    ".. code-block:: python",
    ".. note::",
    "    indented literal",
    "=====  =====",
    "Using ``async``",
    "plain text line",
    "",
    "   ",
    "\t",
]
ASCIIDOC_LINES = [
    "= Title",
    "== Section",
    "=== Sub `code` [[id]]",
    "# Markdown-style title",
    "Two-line title",
    "--------------",
    "~~~~",
    "[#anchor]",
    "[source,python]",
    "----",
    "....",
    "====",
    "|===",
    "```",
    "--",
    "// a comment",
    ":attr: value",
    "plain text line",
    "",
    "   ",
]
ORG_LINES = [
    "#+title: Note",
    "#+filetags: :a:b:",
    "* TODO [#A] Heading [1/2] :tag:",
    "** Sub [[file:x.org][link]]",
    "*bold* is not a heading",
    ":PROPERTIES:",
    ":ID: 1234",
    ":END:",
    "#+begin_src python",
    "#+end_src",
    "#+BEGIN_COMMENT",
    "#+END_COMMENT",
    "# a comment",
    "- list item",
    "plain text line",
    "",
    "   ",
]
LATEX_LINES = [
    "\\documentclass{article}",
    "\\begin{document}",
    "\\end{document}",
    "\\title{Notes}",
    "\\section{Intro}",
    "\\subsection*{The \\emph{real} part}",
    "\\chapter[short]{Long {nested} title",
    "\\begin{verbatim}",
    "\\end{verbatim}",
    "% a comment",
    "\\maketitle",
    "50\\% of text",
    "plain text line",
    "",
]
PYTHON_LINES = [
    "import os",
    "from a import b",
    "@decorator",
    "@decorator(",
    ")",
    "def f(x):",
    "async def g():",
    "class C(Base):",
    "    def method(self):",
    "    @property",
    "    async def other(self):",
    "        return 1",
    "    x = 1",
    "# comment",
    '"""',
    "'''",
    "if __name__ == '__main__':",
    "    main()",
    "(",
    "\tbad indent",
    "",
    "    ",
]
JS_LINES = [
    "import x from 'y';",
    "/**",
    " * Doc comment.",
    " */",
    "// line comment",
    "export default function () {",
    "export async function load(a) {",
    "function* gen() {",
    "class Foo extends Bar {",
    "  method() {",
    "const handler = async (req) => {",
    "let x = y => y * 2;",
    "@Component({",
    "})",
    "}",
    "  return 1;",
    "",
]


def lines_of(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def assert_invariants(text: str, document: Document, skipped: int = 0) -> None:
    """The contract in ``vq.indexer.handlers.base``; ``skipped`` leading lines are frontmatter."""
    lines = lines_of(text)
    covered: list[int] = []
    previous_end = 0
    for chunk in document.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.start_line > previous_end, "chunks overlap or are unsorted"
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert lines[chunk.start_line - 1].strip(), "chunk starts on a blank line"
        assert lines[chunk.end_line - 1].strip(), "chunk ends on a blank line"
        covered.extend(range(chunk.start_line, chunk.end_line + 1))
        previous_end = chunk.end_line
    non_blank = {n for n, line in enumerate(lines, 1) if line.strip() and n > skipped}
    assert non_blank <= set(covered), "a non-blank line is in no chunk"


def assert_sizes(document: Document, limits: Limits) -> None:
    """Over-long chunks are only single lines (a line is never cut)."""
    for chunk in document.chunks:
        assert len(chunk.text) <= limits.max_chars or "\n" not in chunk.text


def assert_prose(text: str, document: Document, limits: Limits,
                 may_hide: Callable[[int], bool] | None = None, skipped: int = 0) -> None:
    """The contract for a prose reader: lines as in the file (or blank where
    ``may_hide`` allows), sizes, and every breadcrumb under the title."""
    if may_hide is None:
        assert_invariants(text, document, skipped)
    else:
        assert_blanked_only(text, document, may_hide)
    assert_sizes(document, limits)
    assert all(chunk.breadcrumb.startswith(document.title) for chunk in document.chunks)


def documents(fragments: list[str]) -> st.SearchStrategy[str]:
    """Texts built from meaningful fragments plus noise, with mixed line endings."""
    line = st.one_of(st.sampled_from(fragments), st.text(max_size=30))
    return st.builds(
        lambda parts, newline: newline.join(parts),
        st.lists(line, max_size=40),
        st.sampled_from(["\n", "\r\n", "\r"]),
    )


limits_strategy = st.builds(
    Limits, max_chars=st.integers(min_value=1, max_value=300), min_chars=st.integers(0, 100)
)


def frontmatter_length(text: str) -> int:
    """How many leading lines the markdown handler may leave out of chunks."""
    lines = lines_of(text)
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


@FUZZ
@given(text=documents(MARKDOWN_LINES), limits=limits_strategy)
def test_markdown_invariants(text: str, limits: Limits) -> None:
    document = markdown_handler(text, "notes/fuzz.md", limits)
    assert_invariants(text, document, skipped=frontmatter_length(text))
    assert_sizes(document, limits)
    assert all(tag == tag.lower() and not tag.startswith("#") for tag in document.tags)


def field_list_length(text: str) -> int:
    """How many leading lines (a field list and blanks) the RST handler may leave out."""
    lines = lines_of(text)
    end = 0
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(":")):
        end += 1
    return end


@FUZZ
@given(text=documents(RST_LINES), limits=limits_strategy)
def test_rst_invariants(text: str, limits: Limits) -> None:
    document = rst_handler(text, "docs/fuzz.rst", limits)
    assert_prose(text, document, limits, skipped=field_list_length(text))


@FUZZ
@given(text=documents(ASCIIDOC_LINES), limits=limits_strategy)
def test_asciidoc_invariants(text: str, limits: Limits) -> None:
    """As the contract says, except that a comment (a ``//`` line, or a line after a
    ``////`` delimiter) may be blank in chunk text, or in no chunk."""
    lines = lines_of(text)

    def may_be_comment(i: int) -> bool:
        return lines[i].startswith("//") or any(line.rstrip() == "////" for line in lines[:i])

    document = asciidoc_handler(text, "docs/fuzz.adoc", limits)
    assert_prose(text, document, limits, may_be_comment)


def assert_blanked_only(text: str, document: Document, may_hide: Callable[[int], bool]
                        ) -> None:
    """The contract, for a handler that blanks what a reader never sees (comments,
    metadata): a chunk's line is the file's or blank, and blank only where ``may_hide``
    allows; such lines may also be in no chunk."""
    lines = lines_of(text)
    blanked = set()
    for chunk in document.chunks:
        shown = chunk.text.split("\n")
        assert len(shown) == chunk.end_line - chunk.start_line + 1
        for i, line in enumerate(shown, chunk.start_line - 1):
            if line != lines[i]:
                assert line == "" and may_hide(i), (i, lines[i])
                blanked.add(i)
    covered = {i for c in document.chunks for i in range(c.start_line - 1, c.end_line)}
    assert_invariants("\n".join("" if i in blanked or (i not in covered and may_hide(i))
                                else line for i, line in enumerate(lines)), document)


@FUZZ
@given(text=documents(ORG_LINES), limits=limits_strategy)
def test_org_invariants(text: str, limits: Limits) -> None:
    """Keyword, comment and drawer lines (and what a drawer or comment block holds) may
    be blank in chunk text."""
    lines = lines_of(text)

    def may_hide(i: int) -> bool:
        opened = any(line.strip().startswith(":") or line.strip().lower() == "#+begin_comment"
                     for line in lines[:i])
        return lines[i].lstrip().startswith(("#", ":")) or opened

    document = org_handler(text, "notes/fuzz.org", limits)
    assert_prose(text, document, limits, may_hide)


@FUZZ
@given(text=documents(LATEX_LINES), limits=limits_strategy)
def test_latex_invariants(text: str, limits: Limits) -> None:
    """Preamble, what follows \\end{document}, comments and bare commands may be blank."""
    lines = lines_of(text)

    def may_hide(i: int) -> bool:
        stripped = lines[i].strip()
        return (stripped.startswith(("%", "\\")) or any(
            line.strip().startswith(("\\begin{document}", "\\end{document}"))
            for line in lines))

    document = latex_handler(text, "notes/fuzz.tex", limits)
    assert_prose(text, document, limits, may_hide)


@FUZZ
@given(text=documents(PYTHON_LINES), limits=limits_strategy)
def test_python_invariants(text: str, limits: Limits) -> None:
    document = chunked(code_handler, text, "pkg/fuzz.py", limits)
    for chunk in document.chunks:
        path = chunk.symbol.split(".") if chunk.symbol else []
        assert chunk.breadcrumb == " :: ".join(["pkg/fuzz.py", *path])


@FUZZ
@given(text=documents(JS_LINES), limits=limits_strategy)
def test_javascript_invariants(text: str, limits: Limits) -> None:
    chunked(code_handler, text, "web/fuzz.js", limits)


# the pattern languages' heads, clauses and block comments (docs and docstrings above)
PATTERN_LINES = [
    "f :: Int -> Int", "f 0 = 1", "{-| doc", "-}", "{- x -}", "instance Show A where",
    "(** doc", "*)", "(* c *)", "let rec g x =", "and h y =", "module M = struct", "end",
    '"""', '"""doc"""', "function f(x)", "f(x) = x", "struct S", "pub fn run() void {",
    "test \"t\" {", "g(0) ->", "g(N) -> N;", "-spec g(integer()) -> integer().", "<#", "#>",
    "function Get-Thing {", "class Client {", "Future<void> main() async {", "def call() {",
    "  int twice(int x) => x * 2;", "pub const S = struct {", "    pub fn f() void {", "};",
    "contract T {", "    function f() external {", "    constructor() {}", "function! a#b()",
    "proc f*() =", "MODULE m", "subroutine s(x)", "function(f x)", "model User {",
]
PATTERN_PATHS = ["a.hs", "a.ml", "a.jl", "a.zig", "a.erl", "a.ps1", "a.dart", "a.groovy", "a.vim",
                 "a.nim", "a.sol", "a.f90", "a.cmake", "a.prisma", "a.thrift", "a.nix"]


@FUZZ
@given(text=documents(PATTERN_LINES), limits=limits_strategy)
def test_pattern_language_invariants(text: str, limits: Limits) -> None:
    for path in PATTERN_PATHS:
        chunked(code_handler, text, path, limits)


@FUZZ
@given(text=documents(MARKDOWN_LINES + PYTHON_LINES), limits=limits_strategy)
def test_text_invariants(text: str, limits: Limits) -> None:
    document = chunked(text_handler, text, "docs/fuzz.txt", limits)
    assert all(chunk.breadcrumb == "docs/fuzz.txt" for chunk in document.chunks) or \
        document.chunks[0].breadcrumb == "fuzz"  # a Vim help file: its sections


VIMDOC_LINES = ["*fuzz.txt*  a help file", "=" * 78, "-" * 78, "INTRODUCTION   *fuzz.nvim*",
                "fuzz.setup({opts})          *fuzz.setup()*", "                  *fuzz.opt*",
                "opt: ~", "    Text of an entry.", "", " vim:tw=78:ft=help:norl:", "*a* *b*"]


@FUZZ
@given(text=documents(VIMDOC_LINES), limits=limits_strategy)
def test_vimdoc_invariants(text: str, limits: Limits) -> None:
    chunked(text_handler, text, "doc/fuzz.txt", limits)


def chunked(handler: Callable[[str, str, Limits], Document], text: str, path: str,
            limits: Limits) -> Document:
    """``handler``'s document for ``text``, which must tile it within ``limits``."""
    document = handler(text, path, limits)
    assert_invariants(text, document)
    assert_sizes(document, limits)
    return document


CODE_PATHS = [f"src/a{ext}" for ext in LANGUAGE_BY_EXTENSION] + ["Makefile", "Dockerfile"]


@FUZZ
@given(text=st.text(max_size=400), limits=limits_strategy)
def test_arbitrary_text_never_breaks_any_handler(text: str, limits: Limits) -> None:
    assert_invariants(text, markdown_handler(text, "a.md", limits), frontmatter_length(text))
    assert_invariants(text, text_handler(text, "a.txt", limits))
    for path in CODE_PATHS:
        assert_invariants(text, code_handler(text, path, limits))
