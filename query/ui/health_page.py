"""The health page: `vq doctor`'s own checks (``vq.query.doctor.run_checks``), with the
parts that run beside the index (the resident service, the scheduler, the watcher, the
build lock) shown first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from vq.query.ui import render

# Doctor check names that describe something running beside the index, shown as cards.
RUNNING = {"warm service": "Resident service", "schedule": "Scheduler",
           "build lock": "Build lock", "watcher": "Watcher"}


def page(request: Request) -> Response:
    from vq.query.doctor.checks import run_checks

    ctx = request.app.state.ctx
    with_model = request.query_params.get("model") == "1"
    report = run_checks(ctx.config, ctx.overrides, model=with_model)
    inside = [host_check(ctx.host.info())] if ctx.host is not None else []
    return render.page(request, "health.html", report=report,
                       cards=cards(report.checks, inside), with_model=with_model)


def host_check(info: dict[str, Any]) -> Any:
    """The service this dashboard runs in, as it knows itself (not asked over its socket)."""
    from vq.query.doctor.checks import OK, Check

    held = ", ".join(f"{slot['index_dir']} ({slot.get('rows')} rows"
                     + (", in memory)" if slot.get("loaded") else ", evicted)")
                     for slot in info.get("indexes") or []) or "no index yet"
    models = ", ".join(f"{m['model']} ({m['encoder']} on {m['device']})"
                       for m in info.get("models") or []) or "none loaded yet"
    idle = info.get("idle_minutes") or 0
    parts = [f"pid {info.get('pid')}", f"models {models}", f"holds {held}",
             f"exits after {idle:g} idle minutes" if idle else "no idle exit"]
    return Check("this dashboard", OK, "served by the resident service itself: "
                 + "; ".join(parts))


def cards(checks: list[Any], inside: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """One card per running part; a part doctor reports nothing about says so. ``inside``:
    the service this dashboard runs in, first on its card."""
    out = []
    for key, title in RUNNING.items():
        found = [*(inside if key == "warm service" else ()), *(c for c in checks if c.name == key)]
        if found:
            out.append({"title": title, "key": key, "checks": found})
        else:
            detail = {"schedule": "no scheduled builds found (systemd user units, crontab)",
                      "watcher": "no file watcher reported"}.get(key, "not reported")
            out.append({"title": title, "key": key, "checks": [], "detail": detail})
    return out
