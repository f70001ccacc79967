"""Issue 38, item 1: `vq watch` indexes changed paths without a walk, through the lock.

Real filesystem events (watchfiles on inotify), a real LanceDB index and the
real file lock; the torch-free test encoder. Every wait polls with a deadline,
never a fixed sleep, so a loaded machine only makes the tests slower.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from filelock import FileLock

from tests.conftest import write_config
from vq.core.manifest import read_manifest
from vq.core.settings import load_settings
from vq.core.store import open_for
from vq.jobs.runner import Skipped, locked_build
from vq.jobs.watch import Watcher

DEADLINE = 120.0


class ListLog:
    """The RunLog interface, kept in memory."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []

    def event(self, event: str, message: str, level: int = 0, **fields) -> None:
        self.events.append((event, message, fields))

    def notices(self, key: str) -> list[str]:
        return [m for _, m, f in self.events if f.get("notice") == key]


def poll(what, deadline: float = DEADLINE):
    """``what()`` once it is truthy; fails after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {deadline}s: {getattr(what, '__name__', what)}")


@pytest.fixture
def settings(tmp_path, test_models, vault):
    config = write_config(tmp_path / "vq-watch.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "watch_debounce_seconds": 0.2, "vaults": {"notes": {"path": str(vault)}}})
    loaded = load_settings(str(config))
    assert locked_build(loaded).outcome == "ok"
    return loaded


class Running:
    """A Watcher on its own thread, with every build result it reported."""

    def __init__(self, settings, **kwargs) -> None:
        self.results: list = []
        self.log = ListLog()
        self.stop = threading.Event()
        kwargs.setdefault("sweep", 0)
        self.watcher = Watcher(lambda: settings, self.log, stop=self.stop,
                               on_batch=self.results.append, **kwargs)
        self.thread = threading.Thread(target=self.watcher.run, daemon=True)
        self.thread.start()

    def batches(self) -> list:
        return [r for r in self.results if not isinstance(r, Skipped) and r.plan == "paths"]

    def ready(self, vault: Path) -> None:
        """Touch a file until a batch shows the watch is live (events before it are lost)."""
        probe = vault / "zz-ready.md"

        def seen() -> bool:
            probe.write_text(f"# ready {time.monotonic()}\n")
            return bool(poll_once(lambda: self.batches(), 1.0))

        poll(seen)
        self.results.clear()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(DEADLINE)
        assert not self.thread.is_alive()


def poll_once(what, seconds: float):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if got := what():
            return got
        time.sleep(0.05)
    return None


@pytest.fixture
def running(settings, vault):
    run = Running(settings)
    run.ready(vault)
    yield run
    run.close()


def manifest_paths(settings) -> set[str]:
    return {p for _, p in read_manifest(open_for(settings))}


def test_add_edit_delete_and_rename_reach_the_index_without_a_walk(running, settings, vault):
    before = len(manifest_paths(settings))
    (vault / "fresh.md").write_text("# Fresh\n\nA note written while watched.\n")
    # the manifest row lands with the text, before the vectors: wait for the batch itself
    added = poll(lambda: next((b for b in running.batches() if b.files_new == 1), None))
    assert "fresh.md" in manifest_paths(settings)
    assert added.plan == "paths"
    assert added.files_seen < before, "a path build stats the changed paths, not the vault"
    running.results.clear()
    (vault / "fresh.md").write_text("# Fresh\n\nEdited while watched, twice as long now.\n")
    poll(lambda: any(b.files_changed == 1 for b in running.batches()))
    running.results.clear()
    (vault / "fresh.md").rename(vault / "renamed.md")
    poll(lambda: "renamed.md" in manifest_paths(settings)
         and "fresh.md" not in manifest_paths(settings))
    running.results.clear()
    (vault / "renamed.md").unlink()
    poll(lambda: "renamed.md" not in manifest_paths(settings))
    assert all(b.plan == "paths" for b in running.batches())


def test_a_renamed_folder_moves_its_files(running, settings, vault):
    (vault / "adr").rename(vault / "decisions")
    poll(lambda: "decisions/0001-storage.md" in manifest_paths(settings)
         and "adr/0001-storage.md" not in manifest_paths(settings))


def test_a_burst_is_indexed_and_a_held_lock_queues_it(running, settings, vault):
    lock = FileLock(str(settings.build_lock))
    lock.acquire()
    try:
        for i in range(30):
            (vault / "burst" / f"n{i:02}.md").parent.mkdir(exist_ok=True)
            (vault / "burst" / f"n{i:02}.md").write_text(f"# Burst {i}\n\nnote {i}\n")
        poll(lambda: any(isinstance(r, Skipped) for r in running.results))
        assert not any(p.startswith("burst/") for p in manifest_paths(settings))
    finally:
        lock.release()
    poll(lambda: sum(p.startswith("burst/") for p in manifest_paths(settings)) == 30)
    assert all(b.plan == "paths" for b in running.batches())


def test_a_vanished_root_is_reported_not_pruned(running, settings, vault):
    before = manifest_paths(settings)
    shutil.rmtree(vault)
    poll(lambda: running.log.notices("missing"))
    poll(lambda: any("notes" in r.missing_roots for r in running.results
                     if not isinstance(r, Skipped)) or running.watcher.state.mode == "sweeping")
    assert manifest_paths(settings) == before


def test_an_overflowing_batch_falls_back_to_a_sweep_with_a_notice(settings, vault):
    run = Running(settings, overflow=10)
    try:
        run.ready(vault)
        for i in range(25):
            (vault / f"many-{i:02}.md").write_text(f"# Many {i}\n")
        poll(lambda: run.log.notices("overflow"))
        poll(lambda: any(not isinstance(r, Skipped) and r.plan != "paths"
                         for r in run.results))  # the sweep, not a path build
        poll(lambda: sum(p.startswith("many-") for p in manifest_paths(settings)) == 25)
    finally:
        run.close()


def test_a_failed_watch_falls_back_to_the_sweep_with_one_notice(settings, vault):
    def no_watches(*roots, **kwargs):
        raise OSError("OS file watch limit reached")
        yield  # a generator, like watchfiles.watch

    run = Running(settings, watch=no_watches, sweep=0.3)
    try:
        (vault / "swept.md").write_text("# Swept\n\nfound by the sweep\n")
        poll(lambda: "swept.md" in manifest_paths(settings))
        poll(lambda: len([r for r in run.results if not isinstance(r, Skipped)]) >= 2)
        assert len(run.log.notices("fallback")) == 1
        assert "watch limit" in run.log.notices("fallback")[0]
        assert run.watcher.state.mode == "sweeping"
    finally:
        run.close()


def test_a_vault_on_a_network_filesystem_is_swept_not_watched(settings, vault, tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nserver:/notes {vault} nfs4 rw 0 0\n")
    run = Running(settings, mounts=str(mounts), sweep=0.3)
    try:
        (vault / "remote.md").write_text("# Remote\n")
        poll(lambda: "remote.md" in manifest_paths(settings))
        assert "nfs4" in run.log.notices("remote")[0]
        assert run.watcher.state.mode == "sweeping"
    finally:
        run.close()


def test_serve_and_schedule_start_the_watcher_unless_watch_is_off(settings):
    """What `vq serve` and `vq schedule` call: a watcher thread when ``watch`` is on (the
    default), none when off; stopping it clears its state file."""
    import dataclasses

    from vq.cli.watch import start_watching
    from vq.core.watching import read_state

    off = dataclasses.replace(settings, watch=False)
    assert start_watching(lambda: off, ListLog(), sweep=0) is None
    on = dataclasses.replace(settings, watch=True)
    halt = start_watching(lambda: on, ListLog(), sweep=0)
    assert halt is not None
    try:
        poll(lambda: (state := read_state(on.index_dir)) is not None
             and state.mode == "watching" and state.vaults == ["notes"])
    finally:
        halt()
    assert read_state(on.index_dir) is None


def test_a_link_to_a_watched_file_is_not_indexed_twice(running, settings, vault):
    """zod's CLAUDE.md -> AGENTS.md: the path build skips the link as the sweep does, so a
    watched vault and a swept one agree (each hit once)."""
    (vault / "AGENTS.md").write_text("# Agents\n\nRun the tests before a commit.\n")
    (vault / "CLAUDE.md").symlink_to("AGENTS.md")
    (vault / "zz-after.md").write_text("# After\n\nWritten after the link.\n")
    # a batch reports when it is done (after its vectors): wait for it, not the manifest
    poll(lambda: any(b.skipped.get("symlink to an indexed file") for b in running.batches()))
    poll(lambda: {"AGENTS.md", "zz-after.md"} <= manifest_paths(settings))
    assert "CLAUDE.md" not in manifest_paths(settings)
    swept = locked_build(settings)
    assert swept.files_new == swept.files_deleted == 0  # the sweep agrees
    assert swept.skipped["symlink to an indexed file"] == 1


def test_a_change_a_vault_excludes_is_not_pending_for_it(tmp_path, test_models, vault):
    """Obsidian's help: a code vault at the project root leaves out en/; an edit there
    was listed as "code/en/Plugins/Canvas.md not yet indexed" on every surface, and
    asked the code vault for a build that found nothing to do."""
    (vault / "drafts").mkdir()
    config = write_config(tmp_path / "vq-ex.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {"notes": {"path": str(vault), "exclude": ["/drafts/", "*.tmp.md"]}}})
    watcher = Watcher(lambda: load_settings(str(config)), ListLog(), sweep=0)
    roots = watcher._roots()
    top = roots["notes"]
    watcher._take({(1, f"{top}/drafts/idea.md"), (1, f"{top}/a.tmp.md"),
                   (1, f"{top}/kept.md"), (1, f"{top}/sub/drafts.md")}, roots)
    assert watcher.pending == {"notes": {"kept.md", "sub/drafts.md"}}
    assert watcher.state.pending == ["notes/kept.md", "notes/sub/drafts.md"]
