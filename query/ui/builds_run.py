""""Build now": one `vq build` subprocess at a time, its progress kept for the browser.

The build runs as its own process (``python -m vq ... build --progress-lines --json``)
so it takes the index's build lock like any other build (cron, `vq schedule`), and the
dashboard never imports the write side. Its stderr carries one JSON object per
progress step; each becomes an event the page receives over server-sent events.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from vq.query.ui.context import UiContext


@dataclass
class BuildRun:
    """One "Build now": its events in order and, once it ended, how."""

    id: int
    started: float
    events: list[dict[str, Any]] = field(default_factory=list)
    finished: float | None = None
    outcome: str = ""          # ok | skipped | failed | interrupted
    changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, event: dict[str, Any]) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def since(self, n: int, timeout: float) -> list[dict[str, Any]]:
        """Events after the first ``n``; waits up to ``timeout`` for one to arrive."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.events) > n or self.finished is not None,
                                  timeout)
            return self.events[n:]


class BuildRunner:
    """At most one build started from this dashboard; a second click joins the first."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.current: BuildRun | None = None
        self._lock = threading.Lock()
        self._count = 0

    def start(self) -> BuildRun:
        with self._lock:
            if self.current is not None and self.current.finished is None:
                return self.current
            self._count += 1
            run = self.current = BuildRun(self._count, time.time())
        argv = [sys.executable, "-m", "vq", *self.ctx.cli_args(), "build", "--progress-lines",
                "--json"]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace")
        run.add({"kind": "started", "pid": proc.pid})
        threading.Thread(target=self._follow, args=(run, proc), name="vq-ui-build",
                         daemon=True).start()
        return run

    def get(self, run_id: int) -> BuildRun | None:
        run = self.current
        return run if run is not None and run.id == run_id else None

    def _follow(self, run: BuildRun, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        out: list[str] = []
        reader = threading.Thread(target=_read_all, args=(proc.stdout, out), daemon=True)
        reader.start()
        for line in proc.stderr:
            run.add(_stderr_event(line.rstrip("\n")))
        code = proc.wait()
        reader.join()
        proc.stdout.close()
        proc.stderr.close()
        summary = _summary("".join(out))
        outcome = summary.get("outcome") or ("ok" if code == 0 else "failed")
        if code == 130:
            outcome = "interrupted"
        elif code != 0:
            outcome = "failed"
        run.add({"kind": "done", "outcome": outcome, "exit_code": code, "summary": summary})
        with run.changed:
            run.outcome, run.finished = outcome, time.time()
            run.changed.notify_all()


def _read_all(stream: Any, out: list[str]) -> None:
    out.append(stream.read())


def _stderr_event(line: str) -> dict[str, Any]:
    """A progress step (``{"stage", "done", "total"}``) or a line of text for the log."""
    if line.startswith("{"):
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if isinstance(data, dict) and "stage" in data:
            return {"kind": "progress", **data}
    return {"kind": "line", "text": line}


def _summary(stdout: str) -> dict[str, Any]:
    try:
        data = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
