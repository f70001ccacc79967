"""The search page: the library's ``search()`` in-process, hits with their signals, a
preview read through MCP ``get``'s confined reader, a link into the user's editor."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import Response

from vq.core.errors import VqError
from vq.core.settings import KINDS, METHODS, Settings
from vq.query.ui import render

LIMIT = 20
CONTEXT_LINES = 6      # lines shown above and below a hit in its preview
SIGNAL_ORDER = ("bm25", "dense", "sections")
# signals that are no score: the fused shares (drawn in each bar), and the lines of the
# piece that matched (shown in the hit's own lines)
NOT_BARS = frozenset({"fused", "piece"})


@dataclass(frozen=True)
class Form:
    """The query string, as typed: re-filled into the form on every page."""

    q: str = ""
    method: str = "hybrid"
    vault: str = ""
    kind: str = ""
    path: str = ""
    since: str = ""
    language: str = ""

    @classmethod
    def read(cls, params: Any, settings: Settings) -> Form:
        method = params.get("method") or settings.search.method
        return cls(**{name: (params.get(name) or "").strip()
                      for name in ("q", "vault", "kind", "path", "since", "language")},
                      method=method if method in METHODS else "hybrid")

    def query(self) -> Any:
        from vq.query.filters import Filters
        from vq.query.search import Query

        filters = Filters(vaults=_one(self.vault), kinds=_one(self.kind),
                          paths=_one(self.path), since=self.since or None,
                          languages=_one(self.language.lower()))
        return Query(self.q, method=self.method, limit=LIMIT, filters=filters)


def _one(value: str) -> tuple[str, ...]:
    return (value,) if value else ()


def page(request: Request) -> Response:
    ctx = request.app.state.ctx
    settings = ctx.settings()
    form = Form.read(request.query_params, settings)
    result, error = None, None
    if form.q:
        from vq.query.search import search

        try:  # inside the resident service: its open index and loaded model
            result = (ctx.host.result if ctx.host else search)(settings, form.query())
        except VqError as exc:
            error = exc
    hits = [hit_view(h, form.q, settings) for h in result.hits] if result else []
    return page_response(request, settings, form, result, hits, error)


def page_response(request: Request, settings: Settings, form: Form, result: Any,
                  hits: list[dict[str, Any]], error: VqError | None) -> Response:
    status = 400 if error is not None and getattr(error, "exit_code", 2) == 2 else 200
    return render.page(request, "search.html", status=status, form=form, result=result, hits=hits,
                error=error, methods=METHODS, kinds=KINDS,
                vaults=[v.id for v in settings.vaults])


def hit_view(hit: Any, query: str, settings: Settings) -> dict[str, Any]:
    """What the template shows for one hit: escaped, highlighted, with its signal bars."""
    from vq.query.output import hit_snippet, location

    start = max(1, hit.start_line - CONTEXT_LINES)
    preview = "/preview?" + urlencode({"vault": hit.vault, "path": hit.path, "start": start,
                                       "end": hit.end_line + CONTEXT_LINES,
                                       "hit_start": hit.start_line, "hit_end": hit.end_line})
    return {"hit": hit, "location": location(hit), "snippet": highlight(hit_snippet(hit, query),
                                                                        query),
            "code": code_view(hit, query), "bars": signal_bars(hit.signals),
            "preview": preview,
            "editor": editor_link(settings.ui.editor_url, hit.abs_path, hit.start_line)}


def code_view(hit: Any, query: str) -> list[dict[str, Any]] | None:
    """A source-code hit's numbered lines, as `vq search` shows them (``code_lines``);
    None for prose, which keeps its one-line snippet."""
    from vq.query.output import source_lines

    numbered = source_lines(hit, query)
    if numbered is None:
        return None
    return [{"n": "" if n is None else n, "text": highlight(line, query)} for n, line in numbered]


def highlight(text: str, query: str) -> Markup:
    """``text`` escaped, with each query term (``vq search``'s terms) as a whole word in
    <mark>."""
    from vq.query.output import terms

    words = sorted(set(terms(query)), key=len, reverse=True)
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b",
                         re.IGNORECASE)
    out, last = [], 0
    for match in pattern.finditer(text):
        out += [escape(text[last:match.start()]), Markup("<mark>"), escape(match.group()),
                Markup("</mark>")]
        last = match.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


def signal_bars(signals: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """One bar per signal: its share of the fused score when the fusion is convex (what
    ``--explain`` prints as ``fused``), else its raw score; with its rank in that pool."""
    fused = signals.get("fused") or {}
    names = [n for n in SIGNAL_ORDER if n in signals]
    names += [n for n in signals if n not in names and n not in NOT_BARS]
    out = []
    for name in names:
        sig = signals[name]
        value = fused.get(name, sig.get("score", sig.get("factor", _factor(sig))))
        width = max(0.0, min(1.0, float(value)))
        label = ", ".join(k if v is True else f"{k} {v:g}" if isinstance(v, (int, float))
                          else f"{k} {v}" for k, v in sig.items())  # vectors: pending
        out.append({"name": name, "width": round(100 * width, 1), "value": float(value),
                    "detail": label})
    return out


def _factor(notes: dict[str, Any]) -> float:
    """A prior's notes (``code``: ``{"secondary": 0.5, "defines": 2.0}``) as the one factor
    they multiply the score by; 0 for notes that are no numbers (a flag)."""
    numbers = [v for v in notes.values() if isinstance(v, (int, float)) and v is not True]
    return math.prod(numbers) if numbers else 0.0


def editor_link(template: str, abs_path: str, line: int) -> str:
    """The configured ``ui.editor_url`` filled in (settings check its scheme). VS Code's
    (and its forks') ``://file/{path}`` takes the path without its leading slash on POSIX:
    ``vscode://file/home/me/a.md``, not ``vscode://file//home/me/a.md``."""
    path = quote(abs_path, safe="/:\\")
    if path.startswith("/") and "://file/{path}" in template:
        path = path[1:]
    return template.replace("{path}", path).replace("{line}", str(line))


def preview(request: Request) -> Response:
    """Lines around a hit, read by MCP ``get``'s reader: only indexed files, only beneath
    their vault's real root, following no symlink, capped in lines and bytes."""
    from vq.core import store
    from vq.query.mcp.files import no_parent, read_indexed

    ctx = request.app.state.ctx
    params = request.query_params
    fragment = params.get("fragment") == "1"
    try:
        start, end = _line(params.get("start"), 1), _line(params.get("end"), None)
        hit = (_line(params.get("hit_start"), 0), _line(params.get("hit_end"), 0))
        vault, rel = params.get("vault", ""), params.get("path", "")
        if not rel or "\x00" in rel or rel.startswith("/"):
            raise VqError("no such file in the index", "use a search hit's preview link")
        rel = "/".join(p for p in no_parent(rel) if p not in ("", "."))
        settings = ctx.settings()
        got = read_indexed(settings, store.open_for(settings), vault, rel, start, end)
    except VqError as exc:
        return render.page(request, "preview.html", status=404, error=exc, fragment=fragment)
    lines = [{"n": got["start_line"] + i, "text": text, "hit": hit[0] <= got["start_line"] + i
              <= hit[1]} for i, text in enumerate(got["text"].split("\n"))]
    return render.page(request, "preview.html", got=got, lines=lines, fragment=fragment,
                editor=editor_link(settings.ui.editor_url, got["abs_path"], hit[0] or start))


def _line(value: str | None, default: int | None) -> Any:
    if value is None or value == "":
        return default
    if not value.isdigit() or not 0 < int(value) < 10**9:
        raise VqError(f"line {value!r} is not a line number", "use a search hit's preview link")
    return int(value)
