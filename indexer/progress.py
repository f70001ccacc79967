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
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total)
        self._task = self._progress.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)

    def close(self) -> None:
        self._progress.stop()


def make_progress(enabled: bool | None = None) -> NullProgress:
    """Rich only on an interactive stderr, outside CI, unless told otherwise."""
    if enabled is None:
        enabled = sys.stderr.isatty() and not os.environ.get("CI")
    return RichProgress() if enabled else NullProgress()
