"""Build progress on stderr: a rich bar on a TTY, nothing otherwise (cron, CI, pipes)."""

from __future__ import annotations

import os
import sys
from typing import Any


class NullProgress:
    """What non-interactive builds get: the summary line says it all at the end."""

    def stage(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class RichProgress(NullProgress):
    """One bar per stage (discover, chunk, encode) with counts and rate."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(TextColumn("{task.description:>8}"), BarColumn(),
                                  MofNCompleteColumn(), TaskProgressColumn(),
                                  TimeElapsedColumn(),
                                  console=Console(stderr=True), transient=True)
        self._progress.start()
        self._tasks: dict[str, Any] = {}
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        """Switch to the bar ``name``; a known bar's total grows by ``total`` (per batch)."""
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(name, total=total)
        elif total:
            task = self._progress.tasks[self._tasks[name]]
            self._progress.update(self._tasks[name], total=(task.total or 0) + total)
        self._task = self._tasks[name]

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)

    def close(self) -> None:
        self._progress.stop()


class LineProgress(NullProgress):
    """One JSON object per line on stderr (``{"stage", "done", "total"}``) for a program
    that reads the build's progress (`vq ui`'s "Build now"). Like the bars, each stage
    keeps its own counts across batches. A switch of stage and a stage's last step are
    always written; other steps at most every ``every`` seconds."""

    def __init__(self, stream: Any = None, every: float = 0.2) -> None:
        self.stream, self.every = stream or sys.stderr, every
        self.counts: dict[str, list[int]] = {}  # stage -> [done, total]
        self.name, self.last = "", 0.0

    def stage(self, name: str, total: int | None = None) -> None:
        self.name = name
        self.counts.setdefault(name, [0, 0])[1] += total or 0
        self._emit(force=True)

    def advance(self, n: int = 1) -> None:
        if not self.name:
            return
        counts = self.counts[self.name]
        counts[0] += n
        self._emit(force=counts[1] > 0 and counts[0] >= counts[1])

    def _emit(self, force: bool) -> None:
        import json
        import time

        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        done, total = self.counts[self.name]
        self.stream.write(json.dumps({"stage": self.name, "done": done, "total": total}) + "\n")
        self.stream.flush()


def make_progress(enabled: bool | str | None = None) -> NullProgress:
    """Rich only on an interactive stderr, outside CI, unless told otherwise;
    ``"lines"``: JSON lines for a reading program."""
    if enabled == "lines":
        return LineProgress()
    if enabled is None:
        enabled = sys.stderr.isatty() and not os.environ.get("CI")
    return RichProgress() if enabled else NullProgress()
