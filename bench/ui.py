"""`vq ui` server time at N chunks: page loads and searches through the dashboard.

The index is ``bench.latency.write_table``'s (real schema, generated chunk texts,
random unit vectors, FTS index built by the indexer; no files table, so the
vaults page has no per-file rows to count), with the ANN vector index a build
adds from ``maintenance.vector_index_min_rows`` (100k) chunks on. The dashboard runs in this process
on a free port (uvicorn in a thread, the real guard and pages); requests go over
real HTTP with the session cookie. Server time is the app's own
``Server-Timing: app;dur=`` header (request in to response head out: page
render, search, template); the client round trip is reported beside it. Every
request runs once untimed first; hybrid queries encode with the real MiniLM
in-process through the ONNX export a build leaves beside the tables (no torch,
no `vq serve`), as a search from the dashboard does.

``--served`` also measures the dashboard as the resident service serves it
(`vq serve --ui`): a ``Service`` started in this process, its model preloaded, the
same app with the service as its host, so searches run on the service's open index
and in-memory snapshot (``Ops.result``). Both are measured in the same run, on the
same index, under the same load. ``--flat`` leaves out the ANN index at 100k.

    python -m bench.ui [--rows 100000] [--queries 30] [--work DIR] [--reuse] [--served]
                       [--flat]
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.common import latency_ms, log, prepare_env, timed

RESULTS = Path(__file__).resolve().parent / "results"
PAGES = ("/", "/vaults", "/builds")


def start(config: Path, host: Any = None) -> tuple[Any, str, str]:
    """(server, base URL, cookie) for a dashboard over ``config``; ``host``: the resident
    service it runs inside (``vq.query.ui.hosted.ServiceHost``)."""
    from vq.query.ui.context import UiContext
    from vq.query.ui.guard import COOKIE
    from vq.query.ui.serve import bind, new_token, server

    ctx = UiContext(str(config), new_token(), host=host)
    bound = bind("127.0.0.1", 0)
    srv = server(ctx, bound)
    threading.Thread(target=srv.run, kwargs={"sockets": [bound.sock]}, daemon=True).start()
    deadline = time.monotonic() + 120
    while not srv.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the dashboard did not start")
        time.sleep(0.01)  # polling the server's started flag
    return srv, f"127.0.0.1:{bound.port}", f"{COOKIE}={ctx.session}"


def get(where: str, cookie: str, path: str) -> tuple[float, float, int]:
    """(server seconds, round-trip seconds, status) of one GET."""
    host, port = where.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    try:
        started = time.perf_counter()
        conn.request("GET", path, headers={"Cookie": cookie})
        reply = conn.getresponse()
        reply.read()
        total = time.perf_counter() - started
    finally:
        conn.close()
    timing = reply.headers.get("server-timing", "app;dur=nan")
    return float(timing.split("dur=")[1]) / 1000, total, reply.status


def measure(where: str, cookie: str, paths: list[str]) -> dict[str, Any]:
    server: list[float] = []
    client: list[float] = []
    for timed_pass in (False, True):
        for path in paths:
            s, c, status = get(where, cookie, path)
            if status != 200:
                raise RuntimeError(f"{path}: HTTP {status}")
            if timed_pass:
                server.append(s)
                client.append(c)
    return {"server": latency_ms(server), "round_trip": latency_ms(client)}


def prepare(work: Path, rows: int, reuse: bool, flat: bool = False
            ) -> tuple[Any, dict[str, Any]]:
    """(settings, timings) of the index to serve: written fresh, or with ``reuse`` the one
    a previous run left in ``work`` (the ANN index at 100k takes many minutes here)."""
    import shutil

    from bench.common import settings_for
    from bench.latency import add_vector_index, export_onnx, write_table
    from vq.core.settings import MaintenanceSettings

    case = work / f"ui-{rows}"
    if reuse and (case / "index" / "chunks.lance").is_dir():
        log(f"ui: reusing the {rows:,}-chunk index in {case}")
        return settings_for(case / "vq.yaml"), {"reused": str(case)}
    log(f"ui: writing a {rows:,}-chunk index")
    seconds, (settings, index, timings) = timed(lambda: write_table(case, rows))
    timings["index_s"] = round(seconds, 1)
    if not flat and rows >= MaintenanceSettings().vector_index_min_rows:  # a build makes it
        timings["vector_index_s"] = add_vector_index(settings, index)
    onnx = export_onnx(work)
    if onnx is not None:  # the build's ONNX export, as a real build leaves it
        shutil.copytree(onnx, Path(settings.index_dir) / onnx.name)
    return settings, timings


def run(work: Path, rows: int, n_queries: int, reuse: bool = False, served: bool = False,
        flat: bool = False) -> dict[str, Any]:
    settings, timings = prepare(work, rows, reuse, flat)
    out: dict[str, Any] = {"rows": rows, "queries": n_queries, "index": timings,
                           "pages": {}, "search": {}}
    measure_dashboard(settings, n_queries, out, "")
    if served:
        from vq.query.service.server import start as start_service
        from vq.query.service.server import stop as stop_service
        from vq.query.ui.hosted import ServiceHost

        service = start_service(settings)
        try:
            if service.preloading is not None:
                service.preloading.join()  # the model and snapshot, loaded before the clock
            measure_dashboard(settings, n_queries, out, "served", ServiceHost(service))
        finally:
            stop_service(service)
    return out


def measure_dashboard(settings: Any, n_queries: int, out: dict[str, Any], label: str,
                      host: Any = None) -> None:
    from bench.latency import bench_queries

    srv, where, cookie = start(settings.config_file, host)
    suffix = f", {label}" if label else ""
    try:
        for page in PAGES:
            key = page + suffix
            out["pages"][key] = measure(where, cookie, [page] * n_queries)
            log(f"ui: page {key}: {out['pages'][key]['server']}")
        for method in ("lexical", "hybrid"):
            paths = ["/?" + urlencode({"q": q, "method": method})
                     for q in bench_queries(n_queries)]
            out["search"][method + suffix] = measure(where, cookie, paths)
            log(f"ui: search {method}{suffix}: {out['search'][method + suffix]['server']}")
    finally:
        srv.should_exit = True


def markdown(result: dict[str, Any]) -> str:
    lines = [f"# vq ui at {result['rows']:,} chunks ({result['queries']} requests each)", "",
             "| request | server p50 ms | server p95 ms | round trip p50 ms |", "|---|---|---|---|"]
    rows = [(f"page `{p}`", r) for p, r in result["pages"].items()]
    rows += [(f"search ({m})", r) for m, r in result["search"].items()]
    for name, r in rows:
        lines.append(f"| {name} | {r['server']['p50_ms']} | {r['server']['p95_ms']} | "
                     f"{r['round_trip']['p50_ms']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--work", type=Path, default=Path("build/bench-ui"))
    ap.add_argument("--reuse", action="store_true",
                    help="serve the index a previous run left in --work instead of a new one")
    ap.add_argument("--served", action="store_true",
                    help="also measure the dashboard served by the resident service")
    ap.add_argument("--flat", action="store_true", help="no ANN vector index, even at 100k")
    args = ap.parse_args(argv)
    prepare_env()
    result = run(args.work.resolve(), args.rows, args.queries, args.reuse, args.served,
                 args.flat)
    tags = "".join(t for t, on in (("-flat", args.flat), ("-served", args.served)) if on)
    stem = RESULTS / f"{dt.date.today().isoformat()}-ui-{args.rows // 1000}k{tags}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    stem.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
