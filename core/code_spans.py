"""Where a line's Markdown code spans are: what every renderer of inline markup leaves as
written (a heading's backslash escape, a snippet's link or ``#tag``).

Below both ``vq.core.attr_list`` (headings) and ``vq.core.inline_markup`` (snippets),
which need the same answer; standard library only, so it costs a search nothing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

_BACKTICKS = re.compile(r"`+")


def code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of one line, as CommonMark finds them: a run of backticks opens
    one that the next run of exactly as many closes (```a ` b```); a run no later run
    matches is text. One pass over the runs, each length's runs looked up by bisection:
    a regex with a backreference took minutes on a line of 20,000 backticks."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(k)
    spans, k = [], 0
    while k < len(runs):
        a, b = runs[k]
        same = by_length[b - a]
        j = bisect.bisect_right(same, k)
        if j == len(same):
            k += 1  # no closing run: these backticks are text
            continue
        close = same[j]
        spans.append((a, runs[close][1]))
        k = close + 1
    return spans


def outside_code(line: str, render: Callable[[str], str],
                 code: Callable[[str], str] = str) -> str:
    """``line`` with ``render`` applied to the text between its code spans (and ``code``
    to each span)."""
    parts, cursor = [], 0
    for start, end in code_spans(line):
        parts += [render(line[cursor:start]), code(line[start:end])]
        cursor = end
    parts.append(render(line[cursor:]))
    return "".join(parts)


def one_backtick(span: str) -> str:
    """A code span as its rendering reads: ````%timeit```` (RST's literal, and Markdown
    written by RST hands: the Python Data Science Handbook) is ```%timeit```, code all
    the same. A span whose text holds a backtick keeps its run, which is what lets it."""
    ticks = len(span) - len(span.lstrip("`"))
    inner = span[ticks:len(span) - ticks]
    if ticks < 2 or "`" in inner or not inner.strip():
        return span
    if inner[0] == inner[-1] == " " and len(inner) > 2:  # CommonMark strips one each side
        inner = inner[1:-1]
    return f"`{inner}`"
