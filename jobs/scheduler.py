"""`vq schedule`: a BlockingScheduler that runs one locked incremental build per cron tick.

Each tick reloads the settings, so vaults added or removed (and a changed
``schedule.cron``) apply at the next tick without a restart. The build is the
same ``locked_build`` that `vq build` runs: a tick that finds the lock held by
cron, CI or a person logs "skipped" and waits for the next tick.

Stopping: the first SIGTERM/SIGINT stops scheduling and asks a running build to
stop after its current write batch (``should_stop``), waits up to
``schedule.stop_timeout_seconds`` for it, and exits 0. A second signal exits at
once; the kernel drops the lock with the process and the next build repairs
whatever was half-written (chunks are written before the manifest rows that
vouch for them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from vq.core.errors import NoVaults, VqError
from vq.core.settings import Settings
from vq.jobs.cron import cron_trigger
from vq.jobs.runlog import RunLog
from vq.jobs.runner import Skipped, locked_build

JOB_ID = "vq-build"


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


class BuildJob:
    """What runs on each tick; counts running builds so a stop can wait for them."""

    def __init__(self, load: Callable[[], Settings], log: RunLog, encoder: Any = None,
                 on_settings: Callable[[Settings], None] | None = None) -> None:
        self.load = load
        self.log = log
        self.encoder = encoder
        self.on_settings = on_settings
        self.stop = threading.Event()
        self._cond = threading.Condition()
        self._running = 0

    def __call__(self) -> None:
        with self._cond:
            if self.stop.is_set():
                return
            self._running += 1
        try:
            self.run_once()
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def request_stop(self) -> bool:
        """Ask running and future builds to stop; True for the first request only."""
        with self._cond:
            first = not self.stop.is_set()
            self.stop.set()
        return first

    def wait_idle(self, timeout: float) -> bool:
        """True once no build is running; False if one still is after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self._running == 0, timeout)

    def run_once(self) -> None:
        """One tick: never raises, always logs exactly one "run" line."""
        started = time.time()
        try:
            settings = self.load()
            if self.on_settings:
                self.on_settings(settings)
            if not settings.vaults:
                raise NoVaults(settings.config_file)
            # No encoder given: the build takes the process-wide shared model, loaded on
            # the first tick that has something to encode and reused by later ticks.
            result = locked_build(settings, should_stop=self.stop.is_set, encoder=self.encoder)
        except Exception as exc:  # noqa: BLE001 - a daemon outlives one bad tick
            self._error(exc, started)
            return
        self._report(result, started)

    def _error(self, exc: Exception, started: float) -> None:
        known = isinstance(exc, VqError)
        text = str(exc) if known else f"{type(exc).__name__}: {exc}"
        self.log.event("run", f"run {_iso(started)}: error: {text}", logging.ERROR,
                       exc_info=not known, outcome="error", started_at=_iso(started),
                       seconds=round(time.time() - started, 3), error=text)

    def _report(self, result: Any, started: float) -> None:
        head = f"run {_iso(started)}: {result.line()}"
        if isinstance(result, Skipped):
            self.log.event("run", head, outcome="skipped", started_at=_iso(started),
                           seconds=round(time.time() - started, 3), holder=result.holder)
            return
        data = result.to_json()
        stages = data.pop("seconds")
        data.pop("problems")
        data.pop("skipped")
        level = logging.INFO if result.outcome == "ok" else logging.WARNING
        self.log.event("run", head, level, started_at=_iso(started),
                       seconds=stages.get("total", 0.0), stage_seconds=stages, **data)


class Daemon:
    """The scheduler loop around one BuildJob, with the two-signal stop protocol."""

    def __init__(self, load: Callable[[], Settings], log: RunLog, cron: str | None = None,
                 encoder: Any = None) -> None:
        from apscheduler.schedulers.blocking import BlockingScheduler

        settings = load()  # a broken config fails at start, not at the first tick
        self.log = log
        self.pinned_cron = cron
        self.plan = self._plan(settings)
        self.trigger = cron_trigger(self.plan[0], self.plan[1])
        self.stop_timeout = float(settings.schedule.stop_timeout_seconds)
        self.config = str(settings.config_file.absolute()) if settings.config_file else "-"
        self.job = BuildJob(load, log, encoder, on_settings=self._follow_config)
        self.scheduler = BlockingScheduler()
        self._signals = 0

    def _plan(self, settings: Settings) -> tuple[str, int, int]:
        s = settings.schedule
        return (self.pinned_cron or s.cron, s.jitter_seconds, s.misfire_grace_seconds)

    def run(self, install_signals: bool = True) -> int:
        """Block until stopped. 0: stopped cleanly; 1: a build did not stop in time."""
        from apscheduler.events import (
            EVENT_JOB_MAX_INSTANCES,
            EVENT_JOB_MISSED,
            EVENT_SCHEDULER_STARTED,
        )

        self.scheduler.add_job(self.job, self.trigger, id=JOB_ID, name="vq build",
                               max_instances=1, coalesce=True,
                               misfire_grace_time=self.plan[2])
        self.scheduler.add_listener(self._on_tick_lost, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        # Signal handlers go in once the scheduler runs: shutdown() needs a running one.
        self.scheduler.add_listener(lambda _: self._started(install_signals),
                                    EVENT_SCHEDULER_STARTED)
        self.scheduler.start()
        return self._drain()

    def _started(self, install_signals: bool) -> None:
        if install_signals:
            signal.signal(signal.SIGTERM, self._on_signal)
            signal.signal(signal.SIGINT, self._on_signal)
        job = self.scheduler.get_job(JOB_ID)
        nxt = job.next_run_time.isoformat() if job and job.next_run_time else "-"
        cron, jitter, grace = self.plan
        self.log.event("start", f"scheduler started (pid {os.getpid()}): cron {cron!r}, "
                       f"jitter {jitter}s, config {self.config}; next run {nxt}",
                       pid=os.getpid(), cron=cron, jitter_seconds=jitter,
                       misfire_grace_seconds=grace, config=self.config, next_run=nxt)

    def request_stop(self, reason: str = "stop requested") -> None:
        """Stop scheduling; a running build stops after its current write batch."""
        from apscheduler.schedulers import SchedulerNotRunningError

        if not self.job.request_stop():
            return
        self.log.event("stopping", f"{reason}: no new runs; waiting up to "
                       f"{self.stop_timeout:g}s for a running build", reason=reason)
        with contextlib.suppress(SchedulerNotRunningError):
            self.scheduler.shutdown(wait=False)

    def _on_signal(self, signum: int, frame: Any) -> None:
        """Runs in the main thread between bytecodes: take no lock the loop may hold."""
        self._signals += 1
        name = signal.Signals(signum).name
        if self._signals > 1:
            self.log.event("abort", f"{name} again: aborting now; the next build repairs "
                           "what this one left half-done", logging.WARNING, signal=name)
            os._exit(128 + signum)
        threading.Thread(target=self.request_stop, args=(f"{name} received",),
                         name="vq-stop", daemon=True).start()

    def _drain(self) -> int:
        if not self.job.wait_idle(self.stop_timeout):
            self.log.event("stopped", f"a build did not stop within {self.stop_timeout:g}s; "
                           "exiting without it (the next build repairs it)", logging.ERROR,
                           clean=False)
            return 1
        self.log.event("stopped", "scheduler stopped; lock released", clean=True)
        return 0

    def _on_tick_lost(self, event: Any) -> None:
        from apscheduler.events import EVENT_JOB_MAX_INSTANCES

        times = getattr(event, "scheduled_run_times", None) or [event.scheduled_run_time]
        when = times[0].isoformat()
        if event.code == EVENT_JOB_MAX_INSTANCES:
            why = "the previous run is still going"
        else:
            why = f"missed by more than misfire_grace_seconds ({self.plan[2]}s)"
        self.log.event("run", f"tick {when} skipped: {why}", outcome="skipped",
                       scheduled_for=when, reason=why)

    def _follow_config(self, settings: Settings) -> None:
        """Apply an edited ``schedule`` section from the next tick on (unless --cron pins it)."""
        plan = self._plan(settings)
        if plan == self.plan or self.job.stop.is_set():
            return
        try:
            trigger = cron_trigger(plan[0], plan[1])
        except VqError as exc:
            self.log.event("schedule", f"keeping cron {self.plan[0]!r}: {exc}", logging.WARNING)
            return
        self.scheduler.modify_job(JOB_ID, misfire_grace_time=plan[2])
        self.scheduler.reschedule_job(JOB_ID, trigger=trigger)
        self.plan = plan
        self.log.event("schedule", f"schedule changed: cron {plan[0]!r}, jitter {plan[1]}s",
                       cron=plan[0], jitter_seconds=plan[1], misfire_grace_seconds=plan[2])
