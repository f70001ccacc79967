"""One way to turn a hit into output: JSON objects, path lists, or a readable list."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from vq.core.attr_list import ADORNMENT, is_heading_markup, strip_heading_attrs
from vq.core.display import shown
from vq.core.filetypes import MARKDOWN_TEXT_HANDLERS, handler_name
from vq.core.inline_markup import fenced, is_block_markup, is_fence, markdown_text, rendered
from vq.query.collapse import names_definition
from vq.query.search import Hit, Result

SNIPPET_CHARS = 240
# A hit's full text in JSON (MCP ``full_text``, ``--explain``) stops here: a chunk holds
# whole lines, and one line can be megabytes (a minified bundle); MCP ``get`` reads the
# rest by lines when it is really wanted.
TEXT_CHARS = 32_000
# A line is rendered from this many characters at most: a snippet shows 240, and one
# line of a Markdown page can be a megabyte (an inline base64 image).
RENDER_CHARS = 4_000
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
# A line that is all bold (``**Linking to a heading in another note**``): a run-in
# heading, in the formats whose bold is ``**`` (``__`` stays as written: ``__init__``)
_RUN_IN = re.compile(r"^\*\*(?:(?!\*\*).)+\*\*$")
_DEFINITION = re.compile(r"^:[ \t]+(?=\S)")  # a definition list's definition line
# Markdown underlines a (setext) title with = or - only; RST with any punctuation. A
# closing ::: under a line of an admonition is no underline: read as one, it hid the line.
_SETEXT = re.compile(r"^(=+|-+)[ \t]*$")


# English function words: in nearly every line, so they neither pick a snippet's line nor
# light up (a dashboard full of highlighted "the"); the search itself still weighs them
FUNCTION_WORDS = frozenset("""
the and for with that this are was were has have had not but you your how what when where
which who whom why can does did into from its all any our out than then them they their
there these those will would should could been being about over under also only just
""".split())


def terms(query: str) -> list[str]:
    """The query's words a reader looks for in a hit: three letters or more, less English
    function words (all of them when the query is nothing else)."""
    words = [t.lower() for t in _WORD.findall(query) if len(t) > 2]
    return [w for w in words if w not in FUNCTION_WORDS] or words


def snippet(text: str, query: str, width: int = SNIPPET_CHARS, path: str = "") -> str:
    """The window of the chunk with the most query terms, on one line, its inline markup
    as rendered for the format ``path``'s reader reads (``vq.core.inline_markup``: a
    link shows its text). Headings are left out (the breadcrumb line says them; an RST
    title's adornment is markup the reader never sees), and so are block markup lines
    (``#+begin_src``, ``[source,ruby]``), unless the chunk is nothing else."""
    words = terms(query)
    handler = handler_name(path) if path else "markdown"
    lines = _body_lines(text, handler)
    if not lines:
        return ""
    best = max(range(len(lines)),
               key=lambda i: (sum(w in lines[i][0].lower() for w in words), -i))
    out = _window(lines, best, width).replace("\t", " ")  # a tab is a space here
    return out if len(out) <= width else out[:width - 1].rstrip() + "…"


def _window(lines: list[tuple[str, bool]], best: int, width: int) -> str:
    """Up to four lines from ``best``, on one line. It stays on ``best``'s side of a
    fence (prose, or what a fence holds: a YAML example run into a sentence reads as
    neither), except that a short lead-in ("To embed a note:", under a third of
    ``width``) goes on into its example, and ends with it."""
    picked, first, crossed = [lines[best][0]], lines[best][1], False
    for line, code in lines[best + 1:best + 4]:
        if code == first and crossed:
            break  # out of the lead-in's example again
        if code != first and not crossed:
            if first or len(" ".join(picked)) >= width // 3:
                break
            crossed = True
        picked.append(line)
    return " ".join(picked)


def hit_snippet(hit: Hit, query: str) -> str:
    """``snippet`` of a hit, rendered for its file's format."""
    return snippet(hit.text, query, path=hit.path)


def _body_lines(text: str, handler: str | None) -> list[tuple[str, bool]]:
    """The chunk's non-blank lines less its headings: ATX lines, adornment lines and the
    RST titles they underline (in AsciiDoc a line of ``----`` delimits a block and
    underlines nothing), and block markup lines; all of them when nothing else is left.
    Each with True where a fence holds it."""
    lines = text.splitlines()
    raw = [ln.strip() for ln in lines]
    code, markup = _blocks(lines, raw, handler)
    heading = markup | {i for i, ln in enumerate(raw) if i not in code and is_heading_markup(ln)}
    if handler != "asciidoc":
        underline = ADORNMENT if handler == "rst" else _SETEXT
        heading |= {i - 1 for i in heading if i and raw[i - 1] and underline.match(raw[i])
                    and not is_fence(raw[i])}  # a closing fence underlines no title
    body = [(ln, True) if i in code else (_run_in(ln, handler), False)
            for i, ln in enumerate(raw) if ln and i not in heading]
    if _markdown(handler):
        body = _definitions(body)
    return [(ln, fence) for ln, fence in body if ln] or \
        [(strip_heading_attrs(ln), False) for ln in raw if ln and not _renders_empty(ln, handler)]


def _renders_empty(line: str, handler: str | None) -> bool:
    """A line that renders to nothing: template tags (Hugo's ``{{< newtemplatesystem >}}``,
    Liquid's ``{% raw %}``: what the site renders there is not in the source) or, in
    Markdown, an empty anchor (Laravel's docs put ``<a name="…"></a>`` above each heading,
    so a section with no text of its own ends in the next one's). A chunk of only that
    shows no snippet rather than the markup."""
    return ("{{" in line or "{%" in line or _markdown(handler)) \
        and not markdown_text(line).strip()


def _definitions(body: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """A definition list (``Destination`` then ``: (string) The link destination.``,
    Hugo's and Pandoc's Markdown) reads "Destination: (string) The link destination."
    on one line: the term takes a colon and the definition loses its marker."""
    out: list[tuple[str, bool]] = []
    term = False  # the line before is a term (not code, not a definition itself)
    for line, code in body:
        marker = _DEFINITION.match(line) if not code else None
        if marker:
            line = line[marker.end():]
            if term and out[-1][0][-1:] not in ":.!?;,":
                out[-1] = (out[-1][0] + ":", False)
        term = bool(line) and not code and not marker
        out.append((line, code))
    return out


def _run_in(line: str, handler: str | None) -> str:
    """``line`` as rendered; a bold line that heads the paragraph below it ends with a
    period, as a run-in heading is set: joined on one line, "**Linking to a heading**"
    and "To link to a heading..." read as one run-on sentence without it."""
    text = rendered(line[:RENDER_CHARS], handler).strip()
    if (_markdown(handler) or handler == "rst") and _RUN_IN.match(line[:RENDER_CHARS]) \
            and text[-1:].isalnum():
        return text + "."
    return text


def _markdown(handler: str | None) -> bool:
    """The chunk's text is Markdown (None: a hook's output)."""
    return handler is None or handler in MARKDOWN_TEXT_HANDLERS


def _blocks(lines: list[str], raw: list[str], handler: str | None
            ) -> tuple[set[int], set[int]]:
    """(the lines a code block holds, shown as written: `![[x]]` in a fence is syntax;
    the lines that only open or close a block) of a chunk, by its format."""
    if handler == "rst":  # literal blocks are indented: read the lines as written
        from vq.core import rst_markup  # only a search with RST hits pays for its patterns

        return rst_markup.code_lines(lines), rst_markup.markup_lines(lines)
    code = fenced(raw)
    return code, {i for i, ln in enumerate(raw)
                  if i not in code and is_block_markup(ln, handler)}


def code_lines(text: str, first: int, query: str, most: int = 4, width: int = 100,
               extra: Sequence[tuple[int | None, str]] = (), name: str = "",
               piece: tuple[int, str] | None = None) -> list[tuple[int | None, str]]:
    """A code hit as a code search tool shows it: its head line (the one naming the
    definition ``name``, below any doc comment or decorator; else its first line) and
    the lines that match the most query terms, in file order, numbered as in the file
    (``first`` is the number of ``text``'s first line), indentation kept relative to
    each other; ``(None, "⋮")`` marks skipped lines. With no line matching: ``most``
    lines from the head. ``extra``: more numbered lines of the file to show after them
    (a class's outline; a ``None`` number is a note such as "+3 more"). Tabs become four
    spaces (Go, Makefiles: a tab is indentation to the reader, not a control character
    to escape). ``piece``: the (first line, text) of a later piece of the definition,
    the one that matched: its lines may be picked too (a 500-line Ruby module matched
    at line 212 shows its ``module`` line, a gap, then line 212)."""
    known = {first + i: line.expandtabs(4) for i, line in enumerate(text.splitlines())}
    filled = [n for n in known if known[n].strip()]
    if not filled:
        return []
    head = next((n for n in filled if names_definition(known[n], name)), filled[0])
    if piece is not None:
        known.update((piece[0] + i, line.expandtabs(4))
                     for i, line in enumerate(piece[1].splitlines()) if piece[0] + i not in known)
    words = terms(query)
    score = {n: sum(w in known[n].lower() for w in words) for n in known
             if known[n].strip() and n != head}
    matched = sorted((n for n in score if score[n]), key=lambda n: (-score[n], n))
    picked = sorted({head, *matched[:most - 1]}) if matched else \
        [n for n in filled if n >= head][:most]
    more = [(n, line.expandtabs(4)) for n, line in extra if n is None or n not in known]
    known.update((n, line) for n, line in more if n is not None)
    numbers = sorted({*picked, *(n for n, _ in more if n is not None)})
    indent = min(len(known[n]) - len(known[n].lstrip()) for n in numbers)
    out: list[tuple[int | None, str]] = []
    listed = {n for n, _ in more if n is not None}  # an outline: a list, no gaps within
    for k, n in enumerate(numbers):
        prev = numbers[k - 1] if k else None
        if prev is not None and not (prev in listed and n in listed) and any(
                j not in known or known[j].strip() for j in range(prev + 1, n)):
            out.append((None, "⋮"))
        line = known[n][indent:].rstrip()
        out.append((n, line if len(line) <= width else line[:width - 1] + "…"))
    out += [(None, f"⋮ {note}") for n, note in more if n is None]
    return out


def source_lines(hit: Hit, query: str) -> list[tuple[int | None, str]] | None:
    """``code_lines`` for a hit of source code (a chunk of the code handler, whose text
    is the file's lines from ``start_line``); None for prose, Markdown in a code vault
    and PDFs, which are shown as one line of text."""
    if not hit.language or hit.page:
        return None
    return code_lines(hit.text, hit.start_line, query, extra=hit.outline,
                      name=hit.symbol.rsplit(".", 1)[-1], piece=hit.piece)


def location(hit: Hit) -> str:
    """``vault:path:12-30``; a PDF hit is ``vault:file.pdf#page=4`` (its line numbers
    count extracted text, which no viewer shows). A definition shown from its head runs
    to the end of the piece that matched, so the range holds every line the hit shows."""
    if hit.page:
        return f"{hit.vault}:{hit.path}#page={hit.page}"
    end = hit.end_line
    if hit.piece is not None:
        end = max(end, hit.piece[0] + max(len(hit.piece[1].splitlines()), 1) - 1)
    return f"{hit.vault}:{hit.path}:{hit.start_line}-{end}"


def hit_json(hit: Hit, query: str, with_text: bool = False, stale: str = "") -> dict[str, Any]:
    """``stale``: why the hit's file may no longer say this (``Result.stale_hits``)."""
    out: dict[str, Any] = {
        "rank": hit.rank, "score": hit.score, "vault": hit.vault, "path": hit.path,
        "abs_path": hit.abs_path, "start_line": hit.start_line, "end_line": hit.end_line,
        "breadcrumb": hit.breadcrumb, "kind": hit.kind, "snippet": hit_snippet(hit, query),
        "signals": hit.signals,
    }
    numbered = source_lines(hit, query)
    if numbered:  # a code search tool's view: [line, text] pairs, [null, "⋮"] for a gap
        out["lines"] = [[n, line] for n, line in numbered]
    if hit.symbol:
        out["symbol"] = hit.symbol
    if hit.language:
        out["language"] = hit.language
    if hit.page:
        out["page"] = hit.page
    if hit.date:  # what --since reads: a decision record's or daily note's own date
        out["date"] = hit.date
    if hit.status:  # a decision record no longer in force: "Superseded by ADR-0020"
        out["status"] = hit.status
    if with_text:
        out["text"] = hit.text[:TEXT_CHARS]
        if len(hit.text) > TEXT_CHARS:
            out["text_chars"] = len(hit.text)  # what was cut: the whole text's length
    if stale:
        out["stale"] = stale
    return out


def explain_json(res: Result) -> dict[str, Any]:
    return {"method": res.method, "requested_method": res.requested_method, "model": res.model,
            "device": res.device or None, "encoder": res.encoder or None,
            "fusion": res.fusion or None,
            "filters": res.filters, "pools": res.pools, "notices": res.notices,
            "stale": res.stale, "seconds": round(res.seconds, 4)}


def unique_paths(res: Result) -> list[str]:
    seen: dict[str, None] = {}
    for hit in res.hits:
        seen.setdefault(hit.abs_path, None)
    return list(seen)


INDENT = 4  # a hit's lines under its rank line


def render(res: Result, query: str, explain: bool, console: Any) -> None:
    """The TTY list: rank, location, breadcrumb, a highlighted snippet, the score.

    Names and text come from the vaults, so each goes through ``shown``: an escape
    sequence in a file name or a note is printed, never obeyed."""
    from rich.markup import escape
    from rich.text import Text

    for hit in res.hits:
        head = Text.assemble((f"{hit.rank:>2}. ", "bold"), (shown(location(hit)), "cyan"),
                             (f"  {shown(hit.date)}" if hit.date else "", "dim"),
                             (f"  [{shown(hit.status)}]" if hit.status else "", "yellow"),
                             (f"  {hit.score:.4f}", "dim"))
        console.print(head, soft_wrap=True)  # the terminal folds it: never " 1." alone
        heading = _heading(hit) if hit.breadcrumb else ""
        if heading:  # a long breadcrumb or snippet wraps under itself, not at column 0,
            _print_indented(console, Text(shown(heading), style="green"))
        for body in _body(hit, query):  # where a "2." of its list would pass for a rank
            for word in terms(query):
                body.highlight_words([word], style="bold yellow", case_sensitive=False)
            _print_indented(console, body)
        if explain:
            _print_indented(console, Text(shown(_signals_line(hit)), style="dim"))
    if explain:
        info = explain_json(res)
        console.print(escape(shown(f"method={info['method']} model={info['model']} "
                                   f"device={info['device']} encoder={info['encoder']} "
                                   f"fusion={info['fusion']} "
                                   f"pools={info['pools']} filters={info['filters']} "
                                   f"{info['seconds']}s")), style="dim")


def _print_indented(console: Any, text: Any) -> None:
    """``text`` under its rank line, each line it wraps to as well (a wrapped line at
    column 0 that starts with a list's "2." reads as a rank); a code line is cut, not
    wrapped (``no_wrap``)."""
    from rich.text import Text

    pad = Text(" " * INDENT)
    if text.no_wrap:
        console.print(pad + text, no_wrap=True, overflow=text.overflow)
        return
    for line in text.wrap(console, max(console.width - INDENT, 20)):
        line.rstrip()
        console.print(pad + line, no_wrap=True)


def _heading(hit: Hit) -> str:
    """The line under the location: the breadcrumb, and the symbol in brackets where the
    breadcrumb does not already end with it. A source-code hit's breadcrumb starts with
    its path, which the location line just said: only ``Class :: method`` is left (none
    for a module-level chunk), so it fits one line (``a.rs :: Walk :: new`` wrapped)."""
    crumb = hit.breadcrumb
    if hit.language and crumb.startswith(hit.path):
        crumb = crumb[len(hit.path):].removeprefix(" :: ")
    said = hit.symbol and crumb.endswith(" :: ".join(hit.symbol.split(".")))
    return crumb + (f"  [{hit.symbol}]" if hit.symbol and not said else "")


def _body(hit: Hit, query: str) -> list[Any]:
    """The lines under a hit's heading: numbered source lines, else the best window of
    the text on one line."""
    from rich.text import Text

    numbered = source_lines(hit, query)
    if numbered is None:
        return [Text(shown(hit_snippet(hit, query)))]
    pad = max(len(str(n)) for n, _ in numbered if n is not None) if numbered else 0
    return [Text(f"{'' if n is None else n:>{pad}}  " + shown(line), no_wrap=True,
                 overflow="ellipsis") for n, line in numbered]


def _signals_line(hit: Hit) -> str:
    parts = []
    for name, sig in hit.signals.items():
        parts.append(f"{name}: " + " ".join(f"{k}={v}" for k, v in sig.items()))
    return "; ".join(parts)
