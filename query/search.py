"""Search the index: BM25 ‖ vectors → fusion → code signals → one hit per place → [rerank] → hits.

Plain Python, no click: the CLI, the MCP server, the service and the benchmarks
call ``search()``. It is given where to read (``vq.query.sources``) and how to get
vectors (``vq.query.encoders.QueryModels``); it never touches a socket, never takes
the build lock and never imports the indexer.
"""

from __future__ import annotations

import datetime as dt
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from vq.core import store
from vq.core.attr_list import strip_breadcrumb
from vq.core.build_progress import embedding_notices, read_record, rows_pending
from vq.core.display import is_utf8_name
from vq.core.errors import VqError
from vq.core.filetypes import handler_name
from vq.core.inline_markup import rendered
from vq.core.schema import SECTION_VECTOR
from vq.core.settings import METHODS, Settings
from vq.query import code_rank, collapse, fusion, named_files, outline, record_status
from vq.query.encoders import QueryModels
from vq.query.filters import Filters, combine, explain_empty, predicates
from vq.query.sources import LanceSources, Sources

# With an ANN index (maintenance.vector_index_min_rows): the IVF partitions probed, and
# the pool re-ranked exactly from refine x pool candidates; chosen for recall against
# exact search, docs/decisions.md#ann-refine. The service re-ranks from memory.
ANN_REFINE = 10
# The section search asks for SECTION_FETCH x pool rows, so a smaller refine keeps the
# same candidates: the smallest refine whose recall matches the piece search's
# (docs/decisions.md#section-refine).
SECTION_REFINE = 5
DEFINITIONS = 20  # symbol definitions fetched when the query names a symbol
# Hybrid's third signal: each piece's section embedded whole
# (docs/decisions.md#section-vectors). Older indexes lack it.
SECTIONS = "sections"
SECTION_FETCH = 3  # pieces fetched per pooled section by the section-vector search


@dataclass(frozen=True)
class Query:
    text: str
    method: str = "hybrid"
    limit: int = 10
    filters: Filters = Filters()
    rerank: bool = False
    recency: bool = False
    pool: int | None = None
    files: bool = False  # one hit per file, so ``limit`` counts files (``--files``)


@dataclass
class Hit:
    id: str
    vault: str
    path: str
    abs_path: str
    start_line: int
    end_line: int
    breadcrumb: str
    kind: str
    text: str
    symbol: str = ""
    language: str = ""
    page: int | None = None
    score: float = 0.0
    rank: int = 0
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    mtime: float = 0.0           # the file's mtime when it was indexed (epoch seconds)
    date: str = ""               # the note's own date (frontmatter, file name, record header)
    status: str = ""             # a decision record's closed status (``vq.query.record_status``)
    # a header-only class hit: its members' first lines (``vq.query.outline``)
    outline: list[tuple[int | None, str]] = field(default_factory=list)
    # a definition shown from its head: the piece that matched, (first line, text)
    piece: tuple[int, str] | None = None


@dataclass
class Result:
    hits: list[Hit]
    method: str                  # the method that actually ran (after any fallback)
    requested_method: str
    model: str
    device: str = ""
    notices: list[str] = field(default_factory=list)
    filters: dict[str, Any] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)
    empty_filter: str | None = None
    encoder: str = ""            # "service pid N" | "in-process" | "" (no vector needed)
    fusion: str = ""             # how the signals were combined ("" for one signal)
    seconds: float = 0.0
    stale: dict[str, Any] | None = None  # why the answer may be stale (query/staleness.py)
    stale_hits: dict[str, str] = field(default_factory=dict)  # hit id -> why


def search(settings: Settings, q: Query, sources: Sources | None = None,
           models: QueryModels | None = None) -> Result:
    """Run one query; a model that cannot load degrades hybrid/dense to lexical, with a notice.
    ``sources`` defaults to the index on disk, ``models`` to encoding in this process.

    A data file that vanished under the query (a build's cleanup removed the version
    it was reading: ``maintenance.cleanup_grace_minutes: 0``) is read once more on
    the latest version, not reported as a damaged index."""
    try:
        return _search(settings, q, sources, models)
    except Exception as exc:
        if not _vanished(exc):
            raise
    return _search(settings, q, None, models)


def _vanished(exc: BaseException) -> bool:
    from vq.core.error_mapping import is_storage_error
    from vq.core.errors import IndexCorrupt

    return (is_storage_error(exc) or isinstance(exc, IndexCorrupt)) and "Not found" in str(exc)


def _search(settings: Settings, q: Query, sources: Sources | None,
            models: QueryModels | None) -> Result:
    if q.method not in METHODS:
        raise VqError(f"unknown method {q.method!r}", f"use one of: {', '.join(METHODS)}")
    if not q.text.strip():
        raise VqError("empty query", "give some words to search for")
    if not is_utf8_name(q.text):  # bytes the terminal could not decode, or a lone surrogate
        raise VqError("the query is not valid UTF-8",
                      "type it in UTF-8 (check the terminal's encoding, e.g. LANG=C.UTF-8)")
    started = time.perf_counter()
    sources = sources or LanceSources(store.open_for(settings))
    index = sources.index
    models = models or models_for(settings, index)
    res = Result([], q.method, q.method, index.meta.model, filters=q.filters.active())
    record = read_record(settings.build_lock)  # one read: the notices and the fusion's
    res.notices += embedding_notices(settings.build_lock, record)
    preds = predicates(index, q.filters)
    where = combine(preds)
    pool = q.pool or max(settings.search.pool, 5 * q.limit)
    rows: dict[str, dict] = {}
    rankings = _pools(settings, q, sources, models, where, pool, res, rows)
    res.pools = {name: len(ids) for name, ids in rankings.items()}
    if len(rankings) > 1:
        res.fusion = _fusion_label(settings, SECTIONS in rankings)
    ranked = _fuse(rankings, rows, settings, q, _pending(sources, rankings, rows_pending(record)))
    ranked = _code_signals(settings, q.text, ranked, rows)
    ranked = named_files.adjust(ranked, rows, q.text)
    ranked = collapse.one_per_place(ranked, rows)
    ranked = collapse.cap_per_file(ranked, rows, settings.search.per_file_cap)
    if q.files:
        ranked = collapse.one_per_file(ranked, rows)
    if q.rerank:
        ranked = _rerank(settings, models, q, ranked, rows, res)
    shown = collapse.show_heads(sources, ranked[:q.limit], rows)
    members = outline.outlines(sources, [rows[i] for i in shown])
    res.hits = [_hit(settings, rows[i], rank, members.get(i, []))
                for rank, i in enumerate(shown, 1)]
    record_status.fill(res.hits, settings)
    if not res.hits and preds:
        res.empty_filter = explain_empty(index, preds)
    _note_staleness(settings, index, res, record)
    res.seconds = time.perf_counter() - started
    return res


def models_for(settings: Settings, index: store.Index, service: bool = False) -> QueryModels:
    """The index's own model on the configured device; ``service``: ask the user's
    resident service to encode first (callers outside the service itself)."""
    return QueryModels(index.meta.model, settings.device, index.location, service)


def _pools(settings: Settings, q: Query, sources: Sources, models: QueryModels,
           where: str | None, pool: int, res: Result, rows: dict[str, dict]
           ) -> dict[str, list[str]]:
    """Each signal's candidates, ranked. For hybrid, BM25 runs on a second thread while
    the query is encoded and the vectors scanned: LanceDB, onnxruntime and numpy all
    release the GIL, so a two-core machine answers in the slower signal's time, not the sum.
    """
    boost = settings.search.heading_boost
    lexical = None
    if q.method == "hybrid":
        lexical = _background().submit(_lexical_pool, sources, q.text, where, pool, boost)
    rankings: dict[str, list[str]] = {}
    vector = None
    try:
        if q.method in ("hybrid", "dense"):
            vector = _query_vector(models, q.text, res)
            if vector is not None:
                near = collapse.pooled(
                    lambda n: sources.nearest(vector, "vector", where, n, ANN_REFINE), pool)
                rankings["dense"] = _collect(near, rows, "dense")
                if q.method == "hybrid" and store.has_sections(sources.index):
                    near = sources.nearest(vector, SECTION_VECTOR, where, SECTION_FETCH * pool,
                                           SECTION_REFINE)
                    rankings[SECTIONS] = _collect(near, rows, SECTIONS, _top_sections(pool))
    finally:
        found = lexical.result() if lexical is not None else None
    if q.method == "lexical" or "dense" not in rankings:
        res.method = "lexical"
    if res.method in ("hybrid", "lexical"):
        if found is None:
            found = _lexical_pool(sources, q.text, where, pool, boost)
        rankings["bm25"] = _collect(found, rows, "bm25")
    _named_definitions(sources, q.text, where, vector, boost, rankings, rows)
    if SECTIONS in rankings:
        rankings[SECTIONS] = _spread(rankings[SECTIONS], rows)
    return rankings


def _lexical_pool(sources: Sources, text: str, where: str | None, pool: int,
                  boost: float) -> list[dict]:
    return collapse.pooled(lambda n: sources.lexical(text, where, n, boost), pool)


def _named_definitions(sources: Sources, text: str, where: str | None, vector: Any,
                       boost: float, rankings: dict[str, list[str]], rows: dict[str, dict]
                       ) -> None:
    """Definitions the query names by symbol (``code_rank.symbol_terms``) that the pools
    missed join them, scored by the same BM25 and piece-vector searches restricted to
    those symbols: they enter the fusion like any candidate, never above it."""
    if not any(row.get("kind") == "code" for row in rows.values()):
        return  # no code among the candidates: a notes/docs index, nothing to do
    wanted = code_rank.symbol_filter(code_rank.symbol_terms(text))
    if not wanted:
        return
    both = " AND ".join(f"({p})" for p in (where, wanted) if p)
    if "bm25" in rankings:
        found = sources.lexical(text, both, DEFINITIONS, boost)
        rankings["bm25"] = _merge(rankings["bm25"], found, rows, "bm25")
    if "dense" in rankings and vector is not None:
        found = sources.nearest(vector, "vector", both, DEFINITIONS, ANN_REFINE)
        rankings["dense"] = _merge(rankings["dense"], found, rows, "dense")


def _merge(ranked: list[str], table: Any, rows: dict[str, dict], signal: str) -> list[str]:
    """``ranked`` plus the rows of ``table`` it lacks, ranked again by the signal's score."""
    fresh: dict[str, dict] = {}
    _collect(table, fresh, signal)
    for i, row in fresh.items():
        if i not in rows:
            rows[i] = row
        else:
            rows[i]["_signals"].setdefault(signal, row["_signals"][signal])
    ids = list(dict.fromkeys([*ranked, *fresh]))
    ids.sort(key=lambda i: (-rows[i]["_signals"][signal]["score"], i))
    for rank, i in enumerate(ids, 1):
        rows[i]["_signals"][signal]["rank"] = rank
    return ids


def _top_sections(pool: int) -> Any:
    """The pieces of the ``pool`` best sections: a section's pieces share its vector, so
    the search fetched ``SECTION_FETCH`` x pool pieces to hold them whole, and the pool
    counts sections, as the signal was measured (docs/decisions.md#section-vectors)."""
    def keep(found: list[dict]) -> list[dict]:
        return collapse.first_keys(found, _section, pool)
    return keep


def _spread(ranked: list[str], rows: dict[str, dict]) -> list[str]:
    """Every candidate piece of a section the section-vector search found carries that
    section's cosine (the search returns some of its pieces; BM25 or the piece vectors
    may have found others). Ranked again, best first, ties by id."""
    best: dict[tuple[str, ...], float] = {}
    for i in ranked:
        best.setdefault(_section(rows[i]), rows[i]["_signals"][SECTIONS]["score"])
    for row in rows.values():
        signals = row["_signals"]
        if SECTIONS not in signals and _section(row) in best:
            signals[SECTIONS] = {"rank": 0, "score": best[_section(row)]}
    scored = [i for i, row in rows.items() if SECTIONS in row["_signals"]]
    scored.sort(key=lambda i: (-rows[i]["_signals"][SECTIONS]["score"], i))
    for rank, i in enumerate(scored, 1):
        rows[i]["_signals"][SECTIONS]["rank"] = rank
    return scored


_EXECUTOR: ThreadPoolExecutor | None = None


def _background() -> ThreadPoolExecutor:
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="vq-bm25")
    return _EXECUTOR


def _query_vector(models: QueryModels, text: str, res: Result) -> Any:
    """The query's vector, or None (and a notice) when the model cannot load."""
    try:
        vector, res.device, res.encoder = models.encode(text)
    except Exception as exc:  # noqa: BLE001 - search must answer even without the model
        reason = exc.message if isinstance(exc, VqError) else f"{type(exc).__name__}: {exc}"
        res.notices.append(f"model unavailable, searching lexically: {reason}")
        return None
    return vector



def _collect(table: Any, rows: dict[str, dict], signal: str, keep: Any = None) -> list[str]:
    """Remember each row once; record this signal's rank and raw score on it.
    ``table``: an Arrow table or its rows; ``keep`` narrows the ranked rows
    (``_top_sections``)."""
    ids = []
    found = table if isinstance(table, list) else table.to_pylist()
    for row in found:
        score = float(row.pop("_score")) if "_score" in row else 1.0 - float(row.pop("_distance"))
        row["_raw"] = score
        row.pop("_relevance_score", None)
    found.sort(key=lambda r: (-r["_raw"], r["id"]))  # ties by id: storage order must not count
    if keep is not None:
        found = keep(found)
    for rank, row in enumerate(found, 1):
        score = row.pop("_raw")
        rows.setdefault(row["id"], row).setdefault("_signals", {})[signal] = {
            "rank": rank, "score": round(score, 6)}
        ids.append(row["id"])
    return ids


def _pending(sources: Sources, rankings: dict[str, list[str]], waiting: int) -> set[str]:
    """The BM25 candidates whose vectors a build has not written yet; none is looked for
    when the build's record says no row is ``waiting``."""
    if "bm25" not in rankings or len(rankings) < 2 or not waiting:
        return set()
    return sources.without_vectors(rankings["bm25"])


def _fuse(rankings: dict[str, list[str]], rows: dict[str, dict], settings: Settings,
          q: Query, pending: set[str] | None = None) -> list[str]:
    if len(rankings) == 1:
        (signal, ids), = rankings.items()
        scores = {i: rows[i]["_signals"][signal]["score"] for i in ids}
    elif settings.search.fusion == "rrf":
        scores = fusion.rrf(rankings, settings.search.rrf_k)
    else:
        scores = _convex(rankings, rows, settings.search.lexical_weight)
    if pending and len(rankings) > 1:
        _stand_in(scores, rankings, rows, pending, settings)
    if q.recency:
        now = time.time()
        half_life = settings.search.recency_half_life_days
        for i in scores:
            factor = fusion.recency_factor(_age_days(rows[i], now), half_life)
            rows[i]["_signals"]["recency"] = {"factor": round(factor, 4)}
            scores[i] *= factor
    for i, s in scores.items():
        rows[i]["_score"] = s
    return fusion.ranked(scores)


def _stand_in(scores: dict[str, float], rankings: dict[str, list[str]], rows: dict[str, dict],
              pending: set[str], settings: Settings) -> None:
    """A chunk whose vectors are not written yet is scored as if the vector signals
    agreed with its BM25 one: unknown is not far. Counted as absent, every chunk that a
    first build had not embedded yet ranked below the few it had, whatever its words."""
    weight = convex_weights(settings.search.lexical_weight, SECTIONS in rankings)["bm25"]
    for rank, i in enumerate(rankings["bm25"], 1):
        if i not in pending:
            continue
        if settings.search.fusion == "rrf":
            scores[i] = len(rankings) / (settings.search.rrf_k + rank)
        else:
            scores[i] = rows[i]["_signals"]["fused"]["bm25"] / weight
        rows[i]["_signals"]["vectors"] = {"pending": True}


def _fusion_label(settings: Settings, sections: bool = False) -> str:
    if settings.search.fusion == "rrf":
        return f"rrf k={settings.search.rrf_k}"
    weights = convex_weights(settings.search.lexical_weight, sections)
    return "convex min-max: " + " + ".join(f"{w:g}·{name}" for name, w in weights.items())


def convex_weights(lexical_weight: float, sections: bool) -> dict[str, float]:
    """Each signal's weight: BM25 ``lexical_weight``, the vectors the rest, split equally
    between piece and section vectors when the index has both."""
    dense = 1.0 - lexical_weight
    if not sections:
        return {"bm25": lexical_weight, "dense": dense}
    return {"bm25": lexical_weight, "dense": dense / 2, SECTIONS: dense / 2}


def _convex(rankings: dict[str, list[str]], rows: dict[str, dict], lexical_weight: float
            ) -> dict[str, float]:
    """The convex fusion; each hit's signals gain ``fused``: what each signal added."""
    pools = {name: {i: rows[i]["_signals"][name]["score"] for i in ids}
             for name, ids in rankings.items()}
    weights = convex_weights(lexical_weight, SECTIONS in pools)
    scores = fusion.convex(pools, weights, zero_floor=False)
    for name, pool in pools.items():
        part = fusion.convex({name: pool}, weights, zero_floor=False)
        for i, value in part.items():
            rows[i]["_signals"].setdefault("fused", {})[name] = round(value, 6)
    return scores


def _section(row: dict) -> tuple[str, ...]:
    """Pieces of one split section share this key (the section vector's signal); each
    code chunk has a vector of its own, so it stands alone here."""
    if row.get("kind") == "code":
        return (row["id"],)
    return (row["vault"], row["path"], row["breadcrumb"])


def _code_signals(settings: Settings, text: str, ranked: list[str],
                  rows: dict[str, dict]) -> list[str]:
    """Definitions named by the query up, tests/examples down (``vq.query.code_rank``):
    code chunks, and prose in a code vault (a test's Markdown fixtures)."""
    code_vaults = frozenset(v.id for v in settings.vaults if v.kind == "code")
    if not any(rows[i].get("kind") == "code" or rows[i].get("vault") in code_vaults
               for i in ranked):
        return ranked
    return code_rank.adjust(ranked, rows, text, code_rank.symbol_terms(text), code_vaults)


def _age_days(row: dict, now: float) -> float:
    if row.get("doc_date"):
        try:
            day = dt.date.fromisoformat(row["doc_date"][:10])
            return (dt.date.today() - day).days
        except ValueError:
            pass
    return (now - (row.get("mtime") or now)) / 86400


def _rerank(settings: Settings, models: QueryModels, q: Query, ranked: list[str],
            rows: dict[str, dict], res: Result) -> list[str]:
    """Rerank the fused top-N by a cross-encoder over the full chunk text."""
    name = settings.search.rerank_model
    if not name:
        raise VqError("--rerank needs a reranker", "set search.rerank_model in the config")
    top = ranked[:settings.search.rerank_top]
    pairs = [(q.text, rows[i]["text"]) for i in top]
    try:
        scores = models.rerank(name, pairs)
    except VqError as exc:
        res.notices.append(f"reranker unavailable, keeping the fused order: {exc.message}")
        return ranked
    for i, s in zip(top, scores, strict=True):
        rows[i]["_signals"]["rerank"] = {"score": round(float(s), 6)}
        rows[i]["_score"] = float(s)
    order = sorted(range(len(top)), key=lambda j: -float(scores[j]))
    return [top[j] for j in order] + ranked[len(top):]


def _note_staleness(settings: Settings, index: store.Index, res: Result,
                    record: dict | None) -> None:
    from vq.query.staleness import staleness

    stale = staleness(settings, index, res.hits, record)
    res.stale, res.stale_hits = stale.to_json(), stale.hits
    if res.stale:
        res.notices.append(res.stale["note"])


def _breadcrumb(row: dict) -> str:
    """The hit's breadcrumb as its headings read rendered (links as their text)."""
    handler = handler_name(row["path"])
    return strip_breadcrumb(row["breadcrumb"], render=lambda part: rendered(part, handler))


def _hit(settings: Settings, row: dict, rank: int,
         members: list[tuple[int | None, str]] | None = None) -> Hit:
    vault = settings.vault(row["vault"])
    abs_path = str(vault.path / row["path"]) if vault else row["path"]
    return Hit(id=row["id"], vault=row["vault"], path=row["path"], abs_path=abs_path,
               start_line=row["start_line"], end_line=row["end_line"],
               breadcrumb=_breadcrumb(row), kind=row["kind"],
               text=row["text"][row["body_start"]:], symbol=row["symbol"] or "",
               language=row["language"] or "", page=row["page"],
               score=round(row["_score"], 6), rank=rank, signals=row["_signals"],
               mtime=row.get("mtime") or 0.0, date=row.get("doc_date") or "",
               outline=members or [], piece=row.get("_piece"))
