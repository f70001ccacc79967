"""`vq watch`: index what changed a second after it was saved, through the build lock.

watchfiles (the Rust ``notify`` crate: inotify, FSEvents, ReadDirectoryChangesW)
watches each vault root, not a repository root, so excluded trees cost nothing
but the events' prefilter. Events are gathered until none came for
``watch_debounce_seconds`` (a `git checkout` of 10k files is one batch; a file
written without pause is indexed at the latest after ``MAX_WAIT_DEBOUNCES``
debounces). The batch's paths go through ``locked_build(paths=...)``: the same
classification as the walk (``vq.core.walk_paths``), the same chunk, encode and
commit under the same lock, no walk. A held lock keeps the paths for the next
try; deletes and renames are in the batch like any change (a folder renamed
away takes its files' rows with it).

A periodic full sweep (the cron interval by default; the walk cache makes it
cost about a walk) catches what the OS never reported. When events cannot be
trusted the watcher says so once and relies on the sweep: a vault on a network
filesystem, a failed watch (the inotify watch limit), or a batch so large the
kernel queue may have overflowed (watchfiles does not report the overflow
itself). A vault root that disappears is reported, and its rows are kept, as
builds do.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from vq.core.errors import VqError
from vq.core.mounts import network_fs
from vq.core.settings import Settings
from vq.core.walk import CODE_VENDORED_DIRS, VENDORED_DIRS, exclude_spec
from vq.core.watching import WatchState, clear_state, write_state
from vq.jobs.runner import Skipped, locked_build

PUBLISHED_PATHS = 1000   # pending paths named in the state file; the count says the rest
STEP_MS = 50             # how often watchfiles looks for new events while gathering
ROOTS_RECHECK_SECONDS = 5.0  # with nothing to watch: how often a vanished root is looked for
MAX_WAIT_DEBOUNCES = 10  # a batch never waits longer than this many debounces
QUEUE_LIMIT = "/proc/sys/fs/inotify/max_queued_events"
FIX_WATCHES = ("raise the limit (sudo sysctl fs.inotify.max_user_watches=524288), "
               "or exclude large folders from the vault")

Changes = dict[str, set[str]]  # vault id -> paths relative to its root


def overflow_events() -> int:
    """Events in one batch past which the kernel's queue may have overflowed."""
    try:
        with open(QUEUE_LIMIT, encoding="ascii") as fh:
            return max(1, int(fh.read().strip()))
    except (OSError, ValueError):
        return 16384


def sweep_seconds(settings: Settings) -> float:
    """The cron interval: seconds between the schedule's next two ticks."""
    from datetime import datetime, timezone

    from vq.jobs.cron import cron_trigger

    trigger = cron_trigger(settings.schedule.cron)
    now = datetime.now(timezone.utc)
    first = trigger.get_next_fire_time(None, now)
    second = trigger.get_next_fire_time(first, first)
    return max(1.0, (second - first).total_seconds()) if first and second else 300.0


class Watcher:
    """Watch the vaults of ``load()``'s settings until ``stop`` is set.

    ``sweep``: seconds between full sweeps (None: the cron interval; 0: never, as in
    `vq schedule`, whose ticks are the sweep). ``log``: a ``RunLog`` (``event``).
    ``watch``, ``mounts`` and ``overflow``: the event source, the mount table and
    the overflow threshold, for tests and benchmarks to set.
    """

    def __init__(self, load: Callable[[], Settings], log: Any, *, encoder: Any = None,
                 stop: threading.Event | None = None, sweep: float | None = None,
                 watch: Callable[..., Iterable[set[tuple[Any, str]]]] | None = None,
                 mounts: str | None = None, overflow: int | None = None,
                 on_batch: Callable[[Any], None] | None = None) -> None:
        self.load, self.log, self.encoder = load, log, encoder
        self.stop = stop or threading.Event()
        self.settings = load()
        self.sweep_every = sweep_seconds(self.settings) if sweep is None else sweep
        self._watch = watch
        self.mounts = mounts
        self.overflow = overflow or overflow_events()
        self.on_batch = on_batch
        self.pending: Changes = {}
        self.first_pending = 0.0
        self.sweep_due = time.monotonic() + self.sweep_every if self.sweep_every else None
        self.sweep_now = False
        self.fallen_back = ""
        self.noticed: set[str] = set()
        self.excludes: dict[str, Any] = {}  # vault id -> its compiled exclude globs
        self.state = WatchState(sweep_seconds=self.sweep_every or None)

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        """Block until ``stop`` is set; never raises for one bad batch."""
        try:
            while not self.stop.is_set():
                roots = self._roots()
                if roots and not self.fallen_back:
                    self._watch_roots(roots)
                else:
                    self._publish("sweeping", self.fallen_back or "no vault root to watch")
                    self.stop.wait(min(self._until_sweep(), ROOTS_RECHECK_SECONDS))
                    self._maybe_sweep()
                    if not self.sweep_every:  # `vq schedule`: its ticks changed the config
                        self.settings = self._reload()
        finally:
            self._publish("stopped", "")
            clear_state(self.settings.index_dir, os.getpid())

    def _watch_roots(self, roots: dict[str, str]) -> None:
        source = self._watch or _watchfiles()
        debounce_ms = max(1, int(self.settings.watch_debounce_seconds * 1000))
        self._publish("watching", "")
        try:
            for changes in source(*sorted(set(roots.values())), watch_filter=None,
                                  debounce=debounce_ms * MAX_WAIT_DEBOUNCES, step=STEP_MS,
                                  stop_event=self.stop, rust_timeout=debounce_ms,
                                  yield_on_timeout=True, raise_interrupt=False,
                                  ignore_permission_denied=True):
                self._take(changes, roots)
                quiet = not changes
                waited = self.pending and time.monotonic() - self.first_pending > \
                    self.settings.watch_debounce_seconds * MAX_WAIT_DEBOUNCES
                if self.pending and (quiet or waited) and not self.sweep_now:
                    self._flush()
                if self._maybe_sweep() or self._roots() != roots:
                    return  # settings or roots changed: watch the new set
        except (OSError, RuntimeError) as exc:  # watch limit, a failed watch in the backend
            self._fall_back(f"watching the vaults failed ({type(exc).__name__}: {exc}); "
                            f"{FIX_WATCHES}")

    def _take(self, changes: set[tuple[Any, str]], roots: dict[str, str]) -> None:
        """Add a batch's paths to the pending set; a ``.gitignore`` change or a batch
        that may have overflowed the kernel queue asks for a sweep instead."""
        if len(changes) >= self.overflow:
            self._notice("overflow", f"{len(changes)} changes at once: the kernel may have "
                         "dropped events; a full sweep checks every file instead", once=False)
            self.sweep_now = True
            return
        for _, path in changes:
            for vault_id, top in roots.items():
                if path.startswith(top + os.sep):
                    rel = path[len(top) + 1:].replace(os.sep, "/")
                    self._add(vault_id, rel)
        if changes:
            self._publish()  # once per batch: a burst of 10k events is not 10k writes

    def _add(self, vault_id: str, rel: str) -> None:
        parts = rel.split("/")
        if parts[-1] == ".gitignore":
            self.sweep_now = True  # it can include or drop any file beneath it
            return
        if any(p.startswith(".") or p in VENDORED_DIRS for p in parts) or \
                any(p in CODE_VENDORED_DIRS for p in parts[:-1]):
            return  # never walked (.git, node_modules): no build for their churn
        exclude = self.excludes.get(vault_id)
        if exclude is not None and exclude.match_file(rel):
            return  # the vault leaves it out (a code vault at the root, less docs/)
        if not self.pending:
            self.first_pending = time.monotonic()
        self.pending.setdefault(vault_id, set()).add(rel)

    # -- builds -----------------------------------------------------------------------------

    def _flush(self) -> None:
        """One path build of everything pending; a held lock keeps it for the next try."""
        batch = {v: set(p) for v, p in self.pending.items()}
        self.state.building = True
        self._publish()
        result = self._build(paths=batch)
        self.state.building = False
        if result is None or not isinstance(result, Skipped) and result.outcome == "ok":
            for vault_id, rels in batch.items():  # an error: the next sweep catches them
                left = self.pending.get(vault_id, set()) - rels
                if left:
                    self.pending[vault_id] = left
                else:
                    self.pending.pop(vault_id, None)
            self.state.last_batch_at = time.time()
        self._publish()

    def _maybe_sweep(self) -> bool:
        """Run the full sweep when due (or asked for); True when it ran."""
        due = self.sweep_due is not None and time.monotonic() >= self.sweep_due
        if not (due or self.sweep_now) or self.stop.is_set():
            return False
        self.sweep_now = False
        if self.sweep_every:
            self.sweep_due = time.monotonic() + self.sweep_every
        before = {v: set(p) for v, p in self.pending.items()}
        self.state.building = True
        self._publish()
        result = self._build(paths=None)
        self.state.building = False
        if result is not None and not isinstance(result, Skipped) and result.outcome == "ok":
            for vault_id, rels in before.items():  # the walk saw them all
                left = self.pending.get(vault_id, set()) - rels
                self.pending[vault_id] = left
                if not left:
                    self.pending.pop(vault_id)
        self.settings = self._reload()
        self._publish()
        return True

    def _build(self, paths: Changes | None) -> Any:
        try:
            result = locked_build(self.settings, should_stop=self.stop.is_set,
                                  encoder=self.encoder, paths=paths)
        except Exception as exc:  # noqa: BLE001 - a watcher outlives one bad batch
            known = isinstance(exc, VqError)
            text = str(exc) if known else f"{type(exc).__name__}: {exc}"
            self.log.event("watch", f"{'batch' if paths else 'sweep'} failed: {text}",
                           logging.ERROR, exc_info=not known)
            return None
        kind = "batch" if paths else "sweep"
        self.log.event("watch", f"{kind}: {result.line()}", kind=kind)
        if self.on_batch is not None:
            self.on_batch(result)
        return result

    # -- roots, notices, state --------------------------------------------------------------

    def _roots(self) -> dict[str, str]:
        """Vault id -> real root path, for the vaults whose events can be trusted."""
        roots = {}
        for vault in self.settings.vaults:
            top = os.path.realpath(vault.path)
            if not os.path.isdir(top):
                self._notice(f"missing:{vault.id}", f"vault {vault.id}: root {vault.path} is "
                             "missing; its rows stay (not pruned) until it is back")
                continue
            self.noticed.discard(f"missing:{vault.id}")
            remote = network_fs(top, self.mounts) if self.mounts else network_fs(top)
            if remote:
                self._notice(f"remote:{vault.id}", f"vault {vault.id} is on {remote}, where "
                             "changes made elsewhere raise no events: the full sweep "
                             f"every {self.sweep_every:g}s indexes it")
                continue
            roots[vault.id] = top
        self.excludes = {vault.id: exclude_spec(vault) for vault in self.settings.vaults}
        self.state.vaults = sorted(roots)
        return roots

    def _fall_back(self, why: str) -> None:
        self.fallen_back = why
        every = f"every {self.sweep_every:g}s" if self.sweep_every else "on the schedule"
        self._notice("fallback", f"{why}; falling back to the full sweep {every}")

    def _notice(self, key: str, message: str, once: bool = True) -> None:
        if once and key in self.noticed:
            return
        self.noticed.add(key)
        self.log.event("watch", message, logging.WARNING, notice=key.split(":")[0])

    def _until_sweep(self) -> float:
        if self.sweep_due is None:
            return 3600.0
        return max(0.0, self.sweep_due - time.monotonic())

    def _reload(self) -> Settings:
        try:
            return self.load()
        except VqError as exc:
            self.log.event("watch", f"keeping the previous settings: {exc}", logging.WARNING)
            return self.settings

    def _publish(self, mode: str | None = None, reason: str | None = None) -> None:
        state = self.state
        if mode is not None:
            state.mode = mode
        if reason is not None:
            state.reason = reason
        every = sorted(f"{v}/{p}" for v, rels in self.pending.items() for p in rels)
        state.pending, state.pending_count = every[:PUBLISHED_PATHS], len(every)
        write_state(self.settings.index_dir, state)


def _watchfiles() -> Callable[..., Iterable[set[tuple[Any, str]]]]:
    from watchfiles import watch

    return watch
