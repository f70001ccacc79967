"""The builds page: the builds log with a chart of durations and chunks encoded, the
lock's holder, and "Build now" with live progress over server-sent events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse

from vq.core.settings import Settings
from vq.query.ui import render

HISTORY = 100     # rows listed
CHART = 40        # newest builds charted
POLL = 0.5        # seconds an event stream waits for news before it checks the client


def history(settings: Settings) -> list[dict[str, Any]]:
    """The newest ``HISTORY`` builds, newest first, with their summaries parsed."""
    from vq.core import store

    if not store.exists_for(settings):
        return []
    index = store.open_for(settings)
    if index.builds is None or not index.builds.count_rows():
        return []
    rows = index.builds.search().limit(None).to_list()
    rows.sort(key=lambda r: r["started_at"], reverse=True)
    out = []
    for row in rows[:HISTORY]:
        summary = json.loads(row.get("summary") or "{}")
        out.append({"started": row["started_at"], "seconds": row["seconds"],
                    "finished": row["started_at"] + (row["seconds"] or 0.0),
                    "outcome": row["outcome"], "device": row.get("device") or "",
                    "files": summary.get("files_seen", 0),
                    "changed": sum(summary.get(k, 0) for k in
                                   ("files_new", "files_changed", "files_deleted")),
                    "chunks": summary.get("chunks_encoded", 0),
                    "error": summary.get("error", "")})
    return out


def chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Bar heights (0-100) for the newest ``CHART`` builds, oldest on the left, newest at
    the right edge."""
    recent = list(reversed(rows[:CHART]))
    top_s = max((r["seconds"] or 0.0 for r in recent), default=0.0) or 1.0
    top_c = max((r["chunks"] for r in recent), default=0) or 1
    offset = CHART - len(recent)  # a short history sits at the right, bars keep their width
    bars = [{"x": (offset + i) * 10, "s": round(100 * (r["seconds"] or 0.0) / top_s, 1),
             "c": round(100 * r["chunks"] / top_c, 1), "row": r} for i, r in enumerate(recent)]
    return {"bars": bars, "width": 10 * CHART, "top_s": top_s, "top_c": top_c}


def page(request: Request) -> Response:
    from vq.core.lock import lock_state

    settings = request.app.state.ctx.settings()
    rows = history(settings)
    runner = request.app.state.runner
    current = runner.current
    return render.page(request, "builds.html", rows=rows, chart=chart(rows),
                       holder=lock_state(settings.build_lock), current=current,
                       vaults=len(settings.vaults))


def run(request: Request) -> Response:
    """Start a build (or join the running one). JSON for the page's script, a redirect
    for a browser without it."""
    started = request.app.state.runner.start()
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"run": started.id})
    return RedirectResponse(f"/builds?run={started.id}", status_code=303)


async def events(request: Request) -> Response:
    """``text/event-stream`` of one run's events, from its first; ends after ``done``."""
    try:
        run_id = int(request.query_params.get("run", ""))
    except ValueError:
        return Response("no such build run\n", status_code=404, media_type="text/plain")
    found = request.app.state.runner.get(run_id)
    if found is None:
        return Response("no such build run\n", status_code=404, media_type="text/plain")

    async def stream() -> Any:
        sent = 0
        while True:
            news = await asyncio.to_thread(found.since, sent, POLL)
            for event in news:
                yield f"data: {json.dumps(event)}\n\n"
            sent += len(news)
            if news and news[-1].get("kind") == "done":
                return
            if await request.is_disconnected():
                return
            if not news:
                yield ": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})
