"""Single-file components (Vue's ``.vue``, Svelte's ``.svelte``, Astro's ``.astro``): script,
markup and styles.

A component file is HTML-shaped, so no code grammar reads it whole, and without this
module a front-end project's components were no code at all. Its ``<script>`` block
is JavaScript, or TypeScript where its ``lang`` says so: it is parsed by that grammar
(``treesitter.definitions`` over the block's lines), so ``const open = computed(() =>
…)`` and ``function onKeydown()`` are definitions with exact lines as in a ``.ts``
file; Astro's ``---`` frontmatter is such a script, in TypeScript. A Vue script that
is an options object (``export default { methods: { save() {} } }``, Vue 2's way) is
read through, so its options and methods are definitions too. The rest (Vue's
``<template>`` and ``<style>``, Svelte's and Astro's markup) is cut at each top-level
block's opening tag into symbol-less blocks that the code handler cuts by lines where
they are long. A script the grammar cannot read stays with the markup around it; every
line is in exactly one tile, as ``definitions`` promises.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from vq.indexer.handlers import treesitter
from vq.indexer.handlers.base import Limits
from vq.indexer.handlers.treesitter import Definition

LANGUAGES = frozenset({"vue", "svelte", "astro"})
# a top-level block's opening tag, at column 0 as both frameworks' tooling writes it
_OPEN = re.compile(r"<(script|template|style)\b([^>]*)>", re.IGNORECASE)
_CLOSE_SCRIPT = re.compile(r"</script\s*>", re.IGNORECASE)
_EXPORT_DEFAULT = re.compile(r"\s*export\s+default\b")
_NAME_OPTION = re.compile(r"""name\s*:\s*["']([\w.-]+)["']""")  # the options' `name: 'Cart'`
_TYPESCRIPT = re.compile(r"""\blang\s*=\s*["']?(?:ts|typescript|tsx)\b""", re.IGNORECASE)


def definitions(lines: Sequence[str], limits: Limits, language: str = "vue",
                component: str = "") -> list[Definition]:
    """Tiles of a component file: its scripts' definitions and its other blocks. A Vue
    script may be an options object, whose options and methods are definitions too,
    methods of the component (its ``name:``, else ``component``: the file's stem)."""
    tiles: list[Definition] = []
    cursor = 0
    for opening, close, grammar in _scripts(lines, language):
        found = treesitter.definitions(lines[opening + 1 : close], grammar, limits)
        if not found:
            continue  # a script the grammar cannot read stays with the markup around it
        found = _headers_join(lines[opening + 1 : close], found, limits)
        if grammar.startswith("vue-"):
            found = _owned(lines[opening + 1 : close], found, component)
        before = _markup(lines, cursor, opening + 1) if cursor < opening else []
        tiles += before  # the opening tag ends the markup above it, if there is some
        tiles += _shifted(found, opening + 1, opening + 1 if before else opening, close)
        cursor = close + 1
    return tiles + _markup(lines, cursor, len(lines))


def _scripts(lines: Sequence[str], language: str) -> Iterator[tuple[int, int, str]]:
    """(opening line, closing line, grammar) of each script, in order: Astro's ``---``
    frontmatter (TypeScript, as are Astro's ``<script>`` tags), then each ``<script>``
    block with lines of its own."""
    row = 0
    if language == "astro" and lines and lines[0].strip() == "---":
        fence = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), None)
        if fence is not None:
            yield 0, fence, "typescript"
            row = fence + 1
    dialect = "vue-" if language == "vue" else ""
    closes = [n for n, line in enumerate(lines) if _CLOSE_SCRIPT.search(line)]
    while row < len(lines):
        opened = _OPEN.match(lines[row])
        close = _script_end(closes, row) if opened and opened[1].lower() == "script" else None
        if opened is None or close is None:
            row += 1
            continue
        typed = language == "astro" or _TYPESCRIPT.search(opened[2])
        yield row, close, dialect + ("typescript" if typed else "javascript")
        row = close + 1


def _headers_join(lines: Sequence[str], found: list[Definition], limits: Limits
                  ) -> list[Definition]:
    """A small block between definitions that opens a group (``computed: {``, ``},
    methods: {``) joins the definition after it: alone it was a chunk of one line."""
    out: list[Definition] = []
    for tile in found:
        previous = out[-1] if out else None
        if previous is not None and not previous.parts and tile.parts and \
                _opens_group(lines, previous, limits):
            out[-1] = replace(tile, span=(previous.span[0], tile.span[1]))
        else:
            out.append(tile)
    return out


def _owned(lines: Sequence[str], found: list[Definition], component: str
           ) -> list[Definition]:
    """The options object's definitions (below ``export default``) as the component's
    methods: ``Cart.clear``, as a class's methods are named, so ``--symbol Cart.clear``
    finds it and a hit reads whose ``clear`` it is."""
    start = next((n for n, line in enumerate(lines) if _EXPORT_DEFAULT.match(line)), None)
    if start is None:
        return found
    options = [line for line in lines[start + 1:] if line.strip()]
    indent = options[0][: len(options[0]) - len(options[0].lstrip())] if options else ""
    named = (_NAME_OPTION.match(line[len(indent):]) for line in options
             if line.startswith(indent) and line[len(indent):len(indent) + 1].strip())
    owner = next((m[1] for m in named if m), component)  # the object's own `name:` only
    return [replace(d, parts=(owner, *d.parts), kind="method")
            if owner and d.parts and d.head >= start and d.parts[0] != owner else d
            for d in found]


def _opens_group(lines: Sequence[str], tile: Definition, limits: Limits) -> bool:
    text = [line for line in lines[tile.span[0] : tile.span[1]] if line.strip()]
    return bool(text) and text[-1].rstrip().endswith("{") and \
        sum(len(line) + 1 for line in text) < limits.min_chars


def _script_end(closes: Sequence[int], row: int) -> int | None:
    """The line of the ``</script>`` closing the block opened at ``row`` (``closes``: the
    lines holding one, in order), when the block has lines of its own between them (a
    one-line script stays with the markup)."""
    at = bisect.bisect_left(closes, row)
    close = closes[at] if at < len(closes) else None
    return close if close is not None and close > row + 1 else None


def _shifted(found: Sequence[Definition], offset: int, first: int, closing: int
             ) -> list[Definition]:
    """The script's tiles moved down by ``offset`` lines into the file's, from ``first``
    (the opening tag's line where no markup comes before it) to the closing tag's line."""
    out = [replace(d, span=(d.span[0] + offset, d.span[1] + offset), head=d.head + offset)
           for d in found]
    out[0] = replace(out[0], span=(first, out[0].span[1]))
    out[-1] = replace(out[-1], span=(out[-1].span[0], closing + 1))
    return out


def _markup(lines: Sequence[str], start: int, end: int) -> list[Definition]:
    """``[start, end)`` cut at each top-level block's opening tag (not at its last line,
    a script's tag that stays with what comes before): symbol-less tiles."""
    cuts = [n for n in range(start + 1, end - 1) if _OPEN.match(lines[n])]
    bounds = [start, *cuts, end]
    return [Definition((a, b), a) for a, b in itertools.pairwise(bounds) if a < b]
