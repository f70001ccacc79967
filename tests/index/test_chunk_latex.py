"""LaTeX papers and notes chunk by sectioning command, with the file's lines."""

from __future__ import annotations

import pytest

from tests.conftest import build_and_search
from vq.indexer.handlers import Limits, handler_for
from vq.indexer.handlers.latex import latex_handler, plain

PAPER = r"""\documentclass{article}
\usepackage{amsmath}
% a macro nobody reads
\newcommand{\R}{\mathbb{R}}
\title{Sparse \emph{Recovery} Notes}
\begin{document}
\maketitle

\section{Introduction}
We recover sparse vectors in $\R^n$.
% TODO: cite the survey
\subsection*{The \textbf{real} problem}
Compressed sensing measures $y = Ax$ with far fewer rows than columns.

\begin{verbatim}
\section{not a section inside verbatim}
\end{verbatim}

\section[Short]{Results with 50\% fewer samples}
Fewer samples suffice when the signal is sparse.
\end{document}
Notes after the end are not typeset.
"""


def test_sections_levels_title_and_what_is_never_typeset():
    doc = latex_handler(PAPER, "papers/sparse.tex", Limits())
    assert doc.title == "Sparse Recovery Notes"
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in doc.chunks] == [
        (9, 10, "Sparse Recovery Notes > Introduction"),
        (12, 17, "Sparse Recovery Notes > Introduction > The real problem"),
        (19, 20, "Sparse Recovery Notes > Results with 50% fewer samples")]
    text = "\n".join(c.text for c in doc.chunks)
    for gone in ("usepackage", "newcommand", "TODO", "maketitle", "after the end"):
        assert gone not in text
    assert "\\section{not a section inside verbatim}" in text  # verbatim is text
    lines = PAPER.split("\n")
    for chunk in doc.chunks:  # the file's lines, hidden ones blank
        for shown, line in zip(chunk.text.split("\n"),
                               lines[chunk.start_line - 1:chunk.end_line], strict=True):
            assert shown in (line, "")


def test_an_included_chapter_without_a_preamble_is_all_body():
    doc = latex_handler("\\chapter{Methods}\nWe sample.\n\\section{Data}\nRows.\n",
                        "thesis/methods.tex", Limits())
    assert doc.title == "methods"
    assert [c.breadcrumb for c in doc.chunks] == ["methods > Methods", "methods > Methods > Data"]


def test_a_title_reads_as_typeset():
    assert plain(r"The \emph{real} deal~again") == "The real deal again"
    assert plain(r"50\% of \textbf{$n$} \& more") == "50% of $n$ & more"


def test_tex_files_have_their_own_handler():
    assert handler_for("papers/main.tex")[0] == "latex"


@pytest.mark.model
def test_a_latex_paper_is_searchable_by_section(tmp_path, build, cli):
    hits = build_and_search(tmp_path, build, cli, {"sparse.tex": PAPER}, "notes",
                            "measurements with fewer rows than columns")
    assert hits[0]["breadcrumb"] == "Sparse Recovery Notes > Introduction > The real problem"
    assert hits[0]["start_line"] == 12
