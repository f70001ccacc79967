"""Search the index: BM25 ‖ vectors → RRF → [recency] → [rerank] → hits.

Plain Python, no click: the CLI, the MCP server and the benchmarks call
``search()``. It never takes the build lock and never imports the indexer.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any

from vq.core import store
from vq.core.errors import VqError
from vq.core.settings import METHODS, Settings
from vq.query import fusion, warm
from vq.query.encoders import cross_encoder, query_encoder
from vq.query.filters import Filters, combine, explain_empty, predicates

COLUMNS = ["id", "vault", "path", "kind", "language", "breadcrumb", "symbol", "start_line",
           "end_line", "page", "text", "body_start", "doc_date", "mtime"]


@dataclass(frozen=True)
class Query:
    text: str
    method: str = "hybrid"
    limit: int = 10
    filters: Filters = Filters()
    rerank: bool = False
    recency: bool = False
    pool: int | None = None


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
    seconds: float = 0.0


def search(settings: Settings, q: Query, index: store.Index | None = None) -> Result:
    """Run one query; a model that cannot load degrades hybrid/dense to lexical, with a notice."""
    if q.method not in METHODS:
        raise VqError(f"unknown method {q.method!r}", f"use one of: {', '.join(METHODS)}")
    if not q.text.strip():
        raise VqError("empty query", "give some words to search for")
    started = time.perf_counter()
    index = index or store.open_for(settings)
    res = Result([], q.method, q.method, index.meta.model, filters=q.filters.active())
    preds = predicates(index, q.filters)
    where = combine(preds)
    pool = q.pool or max(settings.search.pool, 5 * q.limit)
    rows: dict[str, dict] = {}
    rankings: dict[str, list[str]] = {}
    if q.method in ("hybrid", "dense"):
        vector = _query_vector(settings, index, q.text, res)
        if vector is not None:
            rankings["dense"] = _collect(_dense(index, vector, where, pool), rows, "dense")
    if q.method == "lexical" or "dense" not in rankings:
        res.method = "lexical"
    if res.method in ("hybrid", "lexical"):
        rankings["bm25"] = _collect(_lexical(index, q.text, where, pool), rows, "bm25")
    res.pools = {name: len(ids) for name, ids in rankings.items()}
    ranked = _fuse(rankings, rows, settings, q)
    if q.rerank:
        ranked = _rerank(settings, q, ranked, rows, res)
    res.hits = [_hit(settings, rows[i], rank) for rank, i in enumerate(ranked[:q.limit], 1)]
    if not res.hits and preds:
        res.empty_filter = explain_empty(index, preds)
    res.seconds = time.perf_counter() - started
    return res


def _query_vector(settings: Settings, index: store.Index, text: str, res: Result) -> Any:
    """Ask the warm service first (no torch here); else encode in-process."""
    served = warm.encode(settings.index_dir, index.meta.model, [text])
    if served is not None:
        vectors, info = served
        res.device, res.encoder = info["device"] or "", f"service pid {info['pid']}"
        return vectors[0]
    res.encoder = "in-process"
    try:
        enc = query_encoder(index.meta.model, settings.device, index.location)
    except Exception as exc:  # noqa: BLE001 - search must answer even without the model
        reason = exc.message if isinstance(exc, VqError) else f"{type(exc).__name__}: {exc}"
        res.notices.append(f"model unavailable, searching lexically: {reason}")
        return None
    res.device = enc.device.name
    return enc.encode([text])[0]


def _lexical(index: store.Index, text: str, where: str | None, pool: int) -> Any:
    from lancedb.query import MatchQuery  # a match query never trips over query syntax

    query = index.chunks.search(MatchQuery(text, "text"), query_type="fts")
    if where:
        query = query.where(where, prefilter=True)
    return query.select([*COLUMNS, "_score"]).limit(pool).to_arrow()


def _dense(index: store.Index, vector: Any, where: str | None, pool: int) -> Any:
    query = (index.chunks.search(vector, vector_column_name="vector")
             .distance_type("cosine"))
    if where:
        query = query.where(where, prefilter=True)
    return query.select([*COLUMNS, "_distance"]).limit(pool).to_arrow()


def _collect(table: Any, rows: dict[str, dict], signal: str) -> list[str]:
    """Remember each row once; record this signal's rank and raw score on it."""
    ids = []
    for rank, row in enumerate(table.to_pylist(), 1):
        if "_score" in row:
            score = float(row.pop("_score"))
        else:
            score = 1.0 - float(row.pop("_distance"))
        row.pop("_relevance_score", None)
        rows.setdefault(row["id"], row).setdefault("_signals", {})[signal] = {
            "rank": rank, "score": round(score, 6)}
        ids.append(row["id"])
    return ids


def _fuse(rankings: dict[str, list[str]], rows: dict[str, dict], settings: Settings,
          q: Query) -> list[str]:
    if len(rankings) == 1:
        (signal, ids), = rankings.items()
        scores = {i: rows[i]["_signals"][signal]["score"] for i in ids}
    else:
        scores = fusion.rrf(rankings, settings.search.rrf_k)
    if q.recency:
        now = time.time()
        half_life = settings.search.recency_half_life_days
        for i in scores:
            factor = fusion.recency_factor(_age_days(rows[i], now), half_life)
            rows[i]["_signals"]["recency"] = {"factor": round(factor, 4)}
            scores[i] *= factor
    for i, s in scores.items():
        rows[i]["_score"] = s
    return sorted(scores, key=lambda i: (-scores[i], i))


def _age_days(row: dict, now: float) -> float:
    if row.get("doc_date"):
        try:
            day = dt.date.fromisoformat(row["doc_date"][:10])
            return (dt.date.today() - day).days
        except ValueError:
            pass
    return (now - (row.get("mtime") or now)) / 86400


def _rerank(settings: Settings, q: Query, ranked: list[str], rows: dict[str, dict],
            res: Result) -> list[str]:
    """Rerank the fused top-N by a cross-encoder over the full chunk text."""
    name = settings.search.rerank_model
    if not name:
        raise VqError("--rerank needs a reranker", "set search.rerank_model in the config")
    top = ranked[:settings.search.rerank_top]
    pairs = [(q.text, rows[i]["text"]) for i in top]
    scores = warm.rerank(settings.index_dir, name, [list(p) for p in pairs])
    if scores is None:
        try:
            model = cross_encoder(name, settings.device)
        except VqError as exc:
            res.notices.append(f"reranker unavailable, keeping the fused order: {exc.message}")
            return ranked
        scores = model.predict(pairs, show_progress_bar=False)
    for i, s in zip(top, scores, strict=True):
        rows[i]["_signals"]["rerank"] = {"score": round(float(s), 6)}
        rows[i]["_score"] = float(s)
    order = sorted(range(len(top)), key=lambda j: -float(scores[j]))
    return [top[j] for j in order] + ranked[len(top):]


def _hit(settings: Settings, row: dict, rank: int) -> Hit:
    vault = settings.vault(row["vault"])
    abs_path = str(vault.path / row["path"]) if vault else row["path"]
    return Hit(id=row["id"], vault=row["vault"], path=row["path"], abs_path=abs_path,
               start_line=row["start_line"], end_line=row["end_line"],
               breadcrumb=row["breadcrumb"], kind=row["kind"],
               text=row["text"][row["body_start"]:], symbol=row["symbol"] or "",
               language=row["language"] or "", page=row["page"],
               score=round(row["_score"], 6), rank=rank, signals=row["_signals"])
