"""The health page: `vq doctor`'s own checks (``vq.query.doctor.run_checks``), with the
parts that run beside the index (the resident service, the scheduler, the watcher, the
build lock) shown first."""

from __future__ import annotations

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
    return render.page(request, "health.html", report=report, cards=cards(report.checks),
                       with_model=with_model)


def cards(checks: list[Any]) -> list[dict[str, Any]]:
    """One card per running part; a part doctor reports nothing about says so."""
    out = []
    for key, title in RUNNING.items():
        found = [c for c in checks if c.name == key]
        if found:
            out.append({"title": title, "key": key, "checks": found})
        else:
            detail = {"schedule": "no scheduled builds found (systemd user units, crontab)",
                      "watcher": "no file watcher reported"}.get(key, "not reported")
            out.append({"title": title, "key": key, "checks": [], "detail": detail})
    return out
