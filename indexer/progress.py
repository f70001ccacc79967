"""Build progress: one account of the whole build, shown on a TTY bar, as a line every
30 s off a TTY (cron, CI logs), and in the record `vq status` reads.

The unit is the chunk with its vectors: after reconcile the build knows how many
bytes it will read, so ``Tracker`` estimates the chunks they make (and the rows an
earlier build left without vectors), refines the estimate from what chunking has
seen so far, and never lets the total shrink while files are still being read: a
percentage that goes backwards is worse than none. Once every file is read the total
is known, and it is that number, smaller or not: a folder of notebooks is megabytes of
outputs and images that make few chunks, and its byte-based estimate (92,000 chunks for
6,400) kept an ETA of an hour on a five-minute build.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vq.core.build_progress import chunks_of, write_record

BYTES_PER_CHUNK = 900  # the prior until the first files are chunked (chunk.max_chars 1,500)
LINE_EVERY = 30.0      # seconds between progress lines off a TTY


@dataclass
class View:
    """What a display shows: chunks with vectors of the estimated total, rate, ETA."""

    phase: str
    done: int
    total: int
    rate: float           # chunks given vectors per second, over the embedding so far
    eta: float | None     # seconds, None until there is a rate
    files_done: int
    files_total: int
    exact: bool = False   # every file is read and the total is what they made

    def line(self) -> str:
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        rate = f", {self.rate:,.1f} chunks/s" if self.rate else ""
        eta = f", ETA {clock(self.eta)}" if self.eta is not None else ""
        return (f"{self.phase}: {chunks_of(self.done, self.total, self.exact)} embedded{pct}, "
                f"{self.files_done:,} of {self.files_total:,} files read{rate}{eta}")


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}h{rest // 60:02d}m" if h else f"{rest // 60}m{rest % 60:02d}s"


class NullProgress:
    """No display (``--no-progress``); the summary line says it all at the end."""

    def update(self, view: View) -> None:
        pass

    def close(self) -> None:
        pass


class LineProgress(NullProgress):
    """Off a TTY: one line on ``stream`` every ``LINE_EVERY`` seconds, never more."""

    def __init__(self, stream: TextIO | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.now = stream or sys.stderr, now
        self.last = now()

    def update(self, view: View) -> None:
        if self.now() - self.last >= LINE_EVERY:
            self.last = self.now()
            print(f"vq build: {view.line()}", file=self.stream, flush=True)


class RichProgress(NullProgress):
    """One bar for the whole build: chunks embedded of the estimate, rate and ETA."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        self._progress = Progress(TextColumn("{task.description:>8}"), BarColumn(),
                                  TextColumn("{task.fields[info]}"),
                                  console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task("build", total=None, info="")

    def update(self, view: View) -> None:
        pct = f"{100 * view.done / view.total:3.0f}% " if view.total else ""
        rate = f"  {view.rate:,.1f}/s" if view.rate else ""
        eta = f"  ETA {clock(view.eta)}" if view.eta is not None else ""
        info = (f"{pct}{view.done:,}/{view.total:,} chunks  "
                f"{view.files_done:,}/{view.files_total:,} files{rate}{eta}")
        self._progress.update(self._task, description=view.phase, total=view.total or None,
                              completed=view.done, info=info)

    def close(self) -> None:
        self._progress.stop()


class JsonLinesProgress(NullProgress):
    """One JSON object per line on stderr (``{"stage", "done", "total"}``) for a program
    that reads the build's progress (`vq ui`'s "Build now"): a change of phase and the
    last step are always written, other updates at most every ``every`` seconds."""

    def __init__(self, stream: Any = None, every: float = 0.2,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.every, self.now = stream or sys.stderr, every, now
        self.phase, self.last = "", 0.0

    def update(self, view: View) -> None:
        import json

        complete = view.total > 0 and view.done >= view.total  # the last step: always
        if view.phase == self.phase and not complete and self.now() - self.last < self.every:
            return
        self.phase, self.last = view.phase, self.now()
        self.stream.write(json.dumps({"stage": view.phase, "done": view.done,
                                      "total": view.total}) + "\n")
        self.stream.flush()


def make_progress(enabled: bool | str | None = None) -> NullProgress:
    """A bar on an interactive stderr outside CI; else a line every 30 s; none when
    ``enabled`` is False; ``"lines"``: JSON lines for a reading program."""
    if enabled == "lines":
        return JsonLinesProgress()
    if enabled is False:
        return NullProgress()
    if enabled or (sys.stderr.isatty() and not os.environ.get("CI")):
        return RichProgress()
    return LineProgress()


class Tracker:
    """The build's numbers, fed by ``build.Builder``; every change goes to the display
    and to the record beside the lock (``vq.core.build_progress``): changes come a
    commit at a time, seconds apart, so each is written."""

    def __init__(self, display: Any = None, lock_path: Path | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.display = display or NullProgress()
        self.lock_path, self.now = lock_path, now
        self.started, self.wall_started = now(), time.time()
        self.phase_name = "discover"
        self.files_total = self.files_done = self.bytes_total = self.bytes_done = 0
        self.pending_before = self.chunks_seen = self.done = self.total = 0
        self.embedded_rows = 0
        self.embed_started: float | None = None
        self.table_rows = self.table_pending = 0
        self.staged = self.pending_possible = False

    def planned(self, files: int, nbytes: int, pending: int) -> None:
        """After reconcile: the files to read, their bytes, the rows waiting for vectors."""
        self.files_total, self.bytes_total, self.pending_before = files, nbytes, pending
        self._grow(pending + nbytes / BYTES_PER_CHUNK)
        self._changed()

    def chunked(self, files: int, nbytes: int, rows: int, with_vectors: int) -> None:
        """A text batch committed: ``rows`` new chunk rows, ``with_vectors`` of them reused."""
        self.files_done += files
        self.bytes_done += nbytes
        self.chunks_seen += rows
        self.done += with_vectors
        if self.files_done >= self.files_total:  # known now, whatever was estimated
            self.total = max(self.done, self.pending_before + self.chunks_seen)
        else:
            per_byte = self.chunks_seen / self.bytes_done if self.bytes_done else \
                1 / BYTES_PER_CHUNK
            left = max(0, self.bytes_total - self.bytes_done)
            self._grow(self.pending_before + self.chunks_seen + left * per_byte)
        self._changed()

    def embedded(self, rows: int) -> None:
        if self.embed_started is None:
            self.embed_started = self.now()
        self.embedded_rows += rows
        self.done += rows
        self.table_pending = max(0, self.table_pending - rows)
        self._grow(self.done)
        self._changed()

    def phase(self, name: str) -> None:
        if name == "embed" and self.embed_started is None:
            self.embed_started = self.now()
        self.phase_name = name
        self._changed()

    def finish(self) -> None:
        """Done: the bar ends full, whatever the estimate said."""
        self.total = self.done = max(self.done, self.chunks_seen + self.pending_before)
        self._changed()

    def _grow(self, estimate: float) -> None:
        self.total = max(self.total, round(estimate), self.done)

    def view(self) -> View:
        took = 0.0 if self.embed_started is None else self.now() - self.embed_started
        rate = self.embedded_rows / took if took > 0 and self.embedded_rows else 0.0
        eta = (self.total - self.done) / rate if rate else None
        exact = (self.files_done >= self.files_total
                 and self.total == self.pending_before + self.chunks_seen)
        return View(self.phase_name, self.done, self.total, rate, eta, self.files_done,
                    self.files_total, exact)

    def record(self) -> dict[str, Any]:
        v = self.view()
        return {"pid": os.getpid(), "started_at": self.wall_started, "updated_at": time.time(),
                "phase": v.phase, "done": v.done, "total": v.total, "rate": round(v.rate, 3),
                "eta_s": None if v.eta is None else round(v.eta, 1),
                "files_done": v.files_done, "files_total": v.files_total, "exact": v.exact,
                "table_rows": self.table_rows, "table_pending": self.table_pending,
                "staged": self.staged, "pending_possible": self.pending_possible}

    def _changed(self) -> None:
        self.display.update(self.view())
        if self.lock_path is not None:
            write_record(self.lock_path, self.record())
