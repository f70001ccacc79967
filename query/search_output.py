"""What `vq search` prints for a result: one function for the CLI and the service.

The in-process command and the resident service (which renders into a buffer
for the thin client) both call ``emit`` and ``talk``, so a search answered by
the service prints byte for byte what the same search in-process prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TextIO

from vq.core.display import shown
from vq.query.filters import Filters
from vq.query.output import explain_json, hit_json, render, unique_paths
from vq.query.search import Query, Result

TUPLE_FILTERS = ("vaults", "kinds", "paths", "exclude_paths", "tags", "languages", "symbols")


@dataclass(frozen=True)
class OutputOptions:
    as_json: bool = False
    files_only: bool = False
    explain: bool = False
    tty: bool = False  # stdout is a terminal: paths are shown with control characters escaped


def emit(res: Result, text: str, opts: OutputOptions, out: TextIO, console: Any = None
         ) -> None:
    """Hits on stdout: JSON, unique paths, or the readable list through ``console``
    (default: a rich console on stdout, imported only for that list)."""
    if opts.as_json:
        hits = [hit_json(h, text, opts.explain, res.stale_hits.get(h.id, ""))
                for h in res.hits]
        data: Any = {"hits": hits, "explain": explain_json(res)} if opts.explain else hits
        out.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")
    elif opts.files_only:  # data for xargs when piped; made terminal-safe on a terminal
        for path in unique_paths(res):
            out.write((shown(path) if opts.tty else path) + "\n")
    else:
        if console is None:
            from rich.console import Console

            console = Console(highlight=False)
        render(res, text, opts.explain, console)


def talk(res: Result) -> tuple[list[str], list[str]]:
    """The stderr lines before the hits (notices) and after them (why nothing matched)."""
    before = [f"notice: {shown(notice)}" for notice in res.notices]
    after = ([f"no results: the {res.empty_filter} filter matches nothing in the index"]
             if res.empty_filter else [])
    return before, after


def exit_code(res: Result) -> int:
    return 0 if res.hits else 1


def query_from(data: dict[str, Any]) -> Query:
    """The Query a request (or the CLI's options) describes; JSON lists become tuples."""
    raw = dict(data.get("filters") or {})
    fields: dict[str, Any] = {k: tuple(v) if k in TUPLE_FILTERS else v for k, v in raw.items()}
    filters = Filters(**fields)
    return Query(data["text"], data["method"], int(data["limit"]), filters,
                 bool(data.get("rerank")), bool(data.get("recency")), data.get("pool"),
                 bool(data.get("files")))
