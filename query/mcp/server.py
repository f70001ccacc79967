"""vq over the Model Context Protocol: ``search``, ``status`` and ``get`` for AI assistants.

``VqService`` is plain Python (tests call it directly); ``build_server`` wraps
its three methods as MCP tools. The server is read-only: it never imports the
indexer, never takes the build lock and never writes a table. It opens the
index once and reuses it; the store's connection sees the latest committed
version on every call, so a build running in another process shows up as soon
as it commits. ``get`` reads only files listed in the index's manifest, and
only when their real path stays inside the vault root.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

from pydantic import Field

from vq.core import store
from vq.core.errors import VqError
from vq.core.schema import IndexMeta
from vq.core.settings import Settings
from vq.core.settings_schema import Kind, Method
from vq.query.filters import Filters
from vq.query.mcp import files
from vq.query.mcp.files import MAX_BYTES, MAX_LINES
from vq.query.output import explain_json, hit_json
from vq.query.search import Query, Result, models_for, search
from vq.query.sources import LanceSources
from vq.query.status import read_status

log = logging.getLogger("vq.mcp")

MAX_K = 50
MODEL_RETRY_SECONDS = 300.0   # after a failed model load, search lexically this long
MAX_STALE = 50               # stale files listed by status(check=true)

INSTRUCTIONS = """\
vq searches the user's local index of notes, decision records, docs and code.
Call `search` first, then `get` to read the exact lines around a hit before quoting it.
The index is rebuilt by the user's scheduled `vq build`, not by you: `status` says how
fresh it is. Everything is read-only."""

SEARCH_DOC = """\
Search the user's indexed notes, docs and code: BM25 keywords and semantic vectors, fused.

Writing the query: use the words you expect in the text itself - names, identifiers, error
codes, file or product names - or a short plain description of the idea ("how we roll back
a bad release"). No boolean syntax or quotes; they are treated as words. Several short,
focused queries beat one long one. Narrow with `vaults`, `kinds`, `paths` rather than by
adding words.

Reading results: hits are ranked best first with vault, path, start_line-end_line, the
heading breadcrumb, a snippet (a code hit: `lines`, its def line and matching lines with
their numbers), a note's own `date` when it has one (a decision record's, a daily note's:
weigh an old record against a newer one on the same question), a decision record's
`status` when it no longer holds ("Superseded by ADR-0020": follow it to the newer record)
and scores. `score` only
orders one result list; never compare it across queries. `signals` says which searches
found a hit: `bm25` means the words occur in it; `dense` alone means a semantic neighbour
(cosine score; below ~0.3 with the default model it is usually unrelated). Vector search
always returns neighbours, so a list of weak, dense-only hits means the index has nothing
on the topic: say so rather than stretch them. `method` is what actually ran; when
`notices` says the model is unavailable the search was keyword-only, so use exact terms.
`hint` flags empty or weak results.
Read a hit in full with `get` (path = "vault:path", start_line/end_line from the hit)."""

STATUS_DOC = """\
What the index holds and how fresh it is: per-vault file, chunk and error counts, the last
build (when, how long ago, outcome), whether a build is running now, and whether the search
model is loaded. With check=true it also compares the vaults on disk with the index and
lists new, changed and deleted files (`freshness.fresh`). Use it when results look stale or
empty, or to list the vault ids."""

GET_DOC = f"""\
Read lines of one indexed file. `path` is "vault:relative/path" as in search hits, or a
vault-relative path (with `vault` when several vaults hold it), or an absolute path under a
vault root. Only files in the index are readable: no "..", no paths outside the vaults, no
symlinks that lead out of them. Returns at most {MAX_LINES} lines / {MAX_BYTES // 1024} KB
from start_line (1-based, inclusive to end_line); `truncated` says when the cap cut the
range - call again from the next line. `changed_since_indexed` warns that line numbers from
search hits may have drifted."""



class VqService:
    """The three tools as plain methods that raise ``VqError`` with a fix line.

    Holds one open index (reopened when a rebuild changes its metadata or a call
    fails) and remembers a failed model load so later searches go straight to
    lexical instead of paying for the failure again.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._index: store.Index | None = None
        self._lock = threading.RLock()
        self._model_down: tuple[float, str] | None = None
        self._encoder_state = "not loaded yet (loads on the first hybrid or dense search)"

    def index(self) -> store.Index:
        with self._lock:
            if self._index is not None:
                meta = IndexMeta.from_metadata(self._index.chunks.schema.metadata)
                if meta != self._index.meta:
                    self._index = None
            if self._index is None:
                self._index = store.open_for(self.settings)
            return self._index

    def reset(self) -> None:
        """Drop the open index; the next call reopens it (after an unexpected failure)."""
        with self._lock:
            self._index = None

    def search(
        self,
        query: Annotated[str, Field(description="Words or a short phrase to find.")],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many hits.")] = 10,
        method: Annotated[Method | None, Field(
            description="hybrid (default): keywords + meaning; lexical: exact words only; "
                        "dense: meaning only.")] = None,
        vaults: Annotated[list[str] | None, Field(
            description="Only these vault ids (see status).")] = None,
        kinds: Annotated[list[Kind] | None, Field(
            description="Only this kind of content.")] = None,
        paths: Annotated[list[str] | None, Field(
            description="Only files matching these gitignore-style globs, relative to the "
                        "vault root, e.g. 'adr/**' or '*.py'.")] = None,
        exclude_paths: Annotated[list[str] | None, Field(
            description="Leave out files matching these globs.")] = None,
        since: Annotated[str | None, Field(
            description="Only notes dated or modified since YYYY-MM-DD or an age like "
                        "90m, 30d, 2w, 6mo (m is minutes, mo is months).")] = None,
        tags: Annotated[list[str] | None, Field(
            description="Only notes with one of these tags (frontmatter tags, or #tag in "
                        "the text), e.g. ['project/garden'].")] = None,
        languages: Annotated[list[str] | None, Field(
            description="Only code in these languages, e.g. ['python', 'typescript', "
                        "'vue', 'hcl'] (the names `vq search --lang` takes).")] = None,
        symbols: Annotated[list[str] | None, Field(
            description="Only the definitions of these names: 'parse' matches parse and "
                        "Class.parse.")] = None,
        full_text: Annotated[bool, Field(
            description="Include each hit's full chunk text, not just the snippet.")] = False,
    ) -> dict[str, Any]:
        self._check_vaults(vaults or [])
        filters = Filters(vaults=tuple(vaults or ()), kinds=tuple(kinds or ()),
                          paths=tuple(paths or ()), exclude_paths=tuple(exclude_paths or ()),
                          since=since, tags=tuple(tags or ()),
                          languages=tuple(lang.lower() for lang in languages or ()),
                          symbols=tuple(symbols or ()))
        requested = method or self.settings.search.method
        with self._lock:
            res = self._run(Query(query, requested, k, filters))
        out: dict[str, Any] = {"hits": [hit_json(h, query, full_text,
                                                 res.stale_hits.get(h.id, ""))
                                        for h in res.hits]}
        out.update(explain_json(res))
        out["empty_filter"] = res.empty_filter
        out["hint"] = _hint(res)
        return out

    def _run(self, q: Query) -> Result:
        """search(), skipping a model that failed recently and noting its state."""
        down = self._model_down
        if q.method != "lexical" and down and time.monotonic() - down[0] < MODEL_RETRY_SECONDS:
            res = search(self.settings, Query(q.text, "lexical", q.limit, q.filters),
                         LanceSources(self.index()))
            res.requested_method = q.method
            res.notices.insert(0, down[1])
            return res
        index = self.index()
        res = search(self.settings, q, LanceSources(index),
                     models_for(self.settings, index, service=True))
        if q.method != "lexical":
            if res.device:
                self._model_down = None
                self._encoder_state = f"loaded: {res.model} on {res.device}"
            else:
                reason = next((n for n in res.notices if n.startswith("model")),
                              "model unavailable, searching lexically")
                self._model_down = (time.monotonic(), reason)
                self._encoder_state = reason
        return res

    def _check_vaults(self, vaults: list[str]) -> None:
        known = {v.id for v in self.settings.vaults}
        unknown = [v for v in vaults if v not in known]
        if unknown:
            raise VqError(f"unknown vault {unknown[0]!r}",
                          f"use one of: {', '.join(sorted(known)) or '(no vaults configured)'}")

    def status(
        self,
        check: Annotated[bool, Field(
            description="Also walk the vaults and list files changed since the last build "
                        "(like `vq status --check`; slower on large vaults).")] = False,
    ) -> dict[str, Any]:
        out = read_status(self.settings).to_json()
        last = out.get("last_build")
        fresh: dict[str, Any] = {"build_running": out.get("lock") is not None}
        if last:
            finished = last["started_at"] + (last.get("seconds") or 0.0)
            fresh["last_build_age_seconds"] = round(max(0.0, time.time() - finished), 1)
        if check:
            fresh.update(self._check_freshness(last))
        else:
            fresh["fresh"] = None
            fresh["note"] = "not checked: call status with check=true to compare disk and index"
        out["freshness"] = fresh
        out["encoder"] = self._encoder_state
        return out

    def _check_freshness(self, last: dict[str, Any] | None) -> dict[str, Any]:
        """The stat walk `vq status --check` runs: the build's own walk and reconcile
        (``vq.core.freshness``), imported on demand; it reads no file."""
        from vq.core.freshness import check_freshness

        result = check_freshness(self.settings, self.index(), last)
        return {"fresh": result.fresh, "files_on_disk": result.files,
                "stale_count": len(result.stale),
                "stale": [asdict(s) for s in result.stale[:MAX_STALE]],
                "missing_roots": result.missing_roots}

    def get(
        self,
        path: Annotated[str, Field(
            description='"vault:relative/path" from a search hit, a relative path, or an '
                        "absolute path under a vault root.")],
        start_line: Annotated[int, Field(ge=1, description="First line, 1-based.")] = 1,
        end_line: Annotated[int | None, Field(
            ge=1, description=f"Last line, inclusive (default: start_line + {MAX_LINES - 1})."
        )] = None,
        vault: Annotated[str | None, Field(
            description="Vault id, when path is relative and not prefixed.")] = None,
    ) -> dict[str, Any]:
        if end_line is not None and end_line < start_line:
            raise VqError(f"end_line {end_line} is before start_line {start_line}",
                          "give end_line >= start_line, or leave it out")
        index = self.index()
        vault_id, rel = self._locate(index, path, vault)
        return files.read_indexed(self.settings, index, vault_id, rel, start_line, end_line)

    def _locate(self, index: store.Index, path: str, vault: str | None) -> tuple[str, str]:
        """(vault id, posix path relative to its root) for any accepted spelling of a path."""
        text = path.strip()
        if not text or "\x00" in text:
            raise VqError("empty or invalid path", 'give "vault:relative/path" from a hit')
        files.no_parent(text)
        vault_id: str | None
        if os.path.isabs(os.path.expanduser(text)):
            vault_id, rel = self._from_absolute(os.path.expanduser(text), vault)
        else:
            head, sep, tail = text.partition(":")
            known = self.settings.vault(head) is not None
            vault_id, rel = (head, tail) if sep and known else (vault, text)
            if sep and known and vault and vault != head:
                raise VqError(f"{path!r} names vault {head!r} but vault={vault!r} was given",
                              "give the vault once")
        rel = "/".join(p for p in files.no_parent(rel) if p not in ("", "."))
        if vault_id is None:
            vault_id = files.only_vault(index, rel)
        elif self.settings.vault(vault_id) is None:
            self._check_vaults([vault_id])
        return vault_id, rel

    def _from_absolute(self, path: str, vault: str | None) -> tuple[str, str]:
        target = os.path.normpath(path)
        candidates = [v for v in self.settings.vaults if vault in (None, v.id)]
        for v in sorted(candidates, key=lambda v: -len(str(v.path))):
            for root in {os.path.normpath(v.path), os.path.realpath(v.path)}:
                if target.startswith(root.rstrip(os.sep) + os.sep):
                    return v.id, os.path.relpath(target, root)
        raise VqError(f"{path} is outside every vault root",
                      "get reads only indexed files inside the configured vaults")


def _hint(res: Result) -> str | None:
    """One line for the model when the result is empty or only semantically related."""
    if not res.hits:
        if res.empty_filter:
            return f"no hits: the {res.empty_filter} filter matches nothing in the index"
        return "no hits: try other words (names, identifiers), fewer filters, or method=hybrid"
    if res.method == "hybrid" and not any("bm25" in h.signals for h in res.hits):
        return ("no hit contains the query words: these are semantic neighbours only; "
                "check that they are on topic before using them")
    return None


def _tool(service: VqService, fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Errors the model can act on become the SDK's ToolError (is_error, our message);
    anything unexpected is logged with its traceback on stderr and reported in one line."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def call(**kwargs: Any) -> dict[str, Any]:
        try:
            return fn(**kwargs)
        except VqError as exc:
            raise ToolError(f"{exc.message}. Next: {exc.fix}" if exc.fix else exc.message
                            ) from None
        except Exception as exc:  # noqa: BLE001 - a tool answers with a message, never a trace
            service.reset()
            from vq.core.error_mapping import classify

            known = classify(exc, service.settings.index_dir)  # a damaged index, a bad disk
            if known is not None:
                raise ToolError(f"{known.message}. Next: tell the user to {known.fix}"
                                ) from None
            log.exception("vq %s failed", fn.__name__)
            first = (str(exc).splitlines() or [""])[0][:300]
            raise ToolError(f"{fn.__name__} failed: {type(exc).__name__}: {first}") from None

    return call


def build_server(settings: Settings) -> Any:
    """The MCPServer with vq's three read-only tools bound to one ``VqService``."""
    from importlib.metadata import PackageNotFoundError, version

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    try:
        vq_version = version("vq")
    except PackageNotFoundError:
        vq_version = "0"
    service = VqService(settings)
    server = MCPServer("vq", instructions=INSTRUCTIONS, version=vq_version,
                       log_level="WARNING")
    hints = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    for name, method, doc in (("search", service.search, SEARCH_DOC),
                              ("status", service.status, STATUS_DOC),
                              ("get", service.get, GET_DOC)):
        server.add_tool(_tool(service, method), name=name, description=doc, annotations=hints)
    return server


def serve(settings: Settings, http: tuple[socket.socket, str] | None = None, token: str = "",
          allow_hosts: tuple[str, ...] = (), limits: Any = None) -> None:
    """Run until the client hangs up (stdio) or Ctrl-C (HTTP: ``http`` is the bound
    socket from ``mcp.http.listen`` and the host as given; token and Host checked on
    every request, see ``vq.query.mcp.http``)."""
    server = build_server(settings)
    if http is None:
        server.run("stdio")
        return
    if not token:
        raise VqError("HTTP needs a bearer token", "see `vq mcp --help`")
    from vq.query.mcp.http import serve_http

    serve_http(server, http[0], token, allow_hosts, host=http[1], limits=limits)
