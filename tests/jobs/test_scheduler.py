"""`vq schedule`: a real BlockingScheduler running real builds on a seconds-level cron."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from filelock import FileLock

from tests.conftest import write_config, write_tree
from vq.core.errors import VqError
from vq.core.settings import load_settings

FAST = {"cron": "* * * * * *", "jitter_seconds": 0, "misfire_grace_seconds": 5}


def poll(predicate, what: str, timeout: float = 90.0, proc: subprocess.Popen | None = None):
    """Call ``predicate`` until it returns something truthy, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"process exited ({proc.returncode}) while waiting for {what}")
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what}")


def records(log_file: Path) -> list[dict]:
    if not log_file.exists():
        return []
    return [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]


def next_record(log_file: Path, after: int, match, what: str) -> tuple[int, dict]:
    """The first record past line ``after`` that ``match``es, and its line number."""
    def find():
        for n, rec in enumerate(records(log_file)[after:], start=after):
            if match(rec):
                return n, rec
        return None
    return poll(find, what)


def chunk_texts(settings, vault: str) -> list[str]:
    from vq.core import store

    index = store.open_index(settings.index_dir)
    rows = index.chunks.search().where(f"vault = '{vault}'").select(["text"]).limit(None)
    return rows.to_arrow().to_pydict()["text"]


def manifest_count(settings) -> int:
    from vq.core import store

    return store.open_index(settings.index_dir).files.count_rows()


@pytest.mark.model
def test_ticks_index_pick_up_edits_skip_a_held_lock_and_follow_the_config(
        tmp_path, vault, code_vault, encoder):
    from vq.core.lock import lock_state, write_holder
    from vq.jobs.runlog import RunLog
    from vq.jobs.scheduler import Daemon

    log_file = tmp_path / "schedule.log"
    config = {"index_dir": str(tmp_path / "index"),
              "vaults": {"notes": {"path": str(vault)}}, "schedule": FAST}
    cfg = write_config(tmp_path / "vq.yaml", config)
    settings = load_settings(str(cfg))
    log = RunLog(json_lines=True, log_file=str(log_file), stream=io.StringIO())
    daemon = Daemon(lambda: load_settings(str(cfg)), log, encoder=encoder)
    exit_code: list[int] = []
    thread = threading.Thread(target=lambda: exit_code.append(daemon.run(install_signals=False)))
    thread.start()
    try:
        # The first tick indexes the vault.
        n, first = next_record(log_file, 0, lambda r: r.get("outcome") == "ok",
                               "the first build")
        assert (first["files_new"], first["files_seen"]) == (4, 4)
        assert first["event"] == "run" and first["seconds"] >= 0 and first["started_at"]

        # An edit is picked up by a later tick.
        (vault / "deploy.md").write_text("# Deploying\n\nThe blue-green switch flips at noon.\n")
        n, edited = next_record(log_file, n + 1, lambda r: r.get("files_changed") == 1,
                                "the tick that picks up the edit")
        assert edited["outcome"] == "ok" and edited["files_new"] == 0
        assert any("blue-green switch" in t for t in chunk_texts(settings, "notes"))

        # A tick that finds the lock held by someone else is skipped and says who.
        lock = FileLock(str(settings.build_lock), timeout=60)
        with lock:
            write_holder(settings.build_lock)
            held_from = len(records(log_file))
            n, skipped = next_record(log_file, held_from, lambda r: "holder" in r,
                                     "a tick skipped for the held lock")
            assert skipped["outcome"] == "skipped" and "skipped" in skipped["message"]
            assert skipped["holder"].startswith(f"pid {os.getpid()} ")
            assert not [r for r in records(log_file)[held_from:] if r.get("outcome") == "ok"]

        # Config edits apply at a later tick without a restart: a vault added, one
        # removed, and a new cron.
        config["vaults"] = {"code": {"path": str(code_vault), "kind": "code"}}
        config["schedule"] = {**FAST, "cron": "*/2 * * * * *"}
        write_config(cfg, config)
        n, moved = next_record(log_file, n + 1, lambda r: r.get("pruned_vaults") == ["notes"],
                               "the tick that applies the config edit")
        assert (moved["files_new"], moved["outcome"]) == (1, "ok")
        assert any("backoff_delays" in t for t in chunk_texts(settings, "code"))
        assert chunk_texts(settings, "notes") == []
        assert [r for r in records(log_file) if r["event"] == "schedule"][0]["cron"] == \
            "*/2 * * * * *"
    finally:
        daemon.request_stop("test finished")
        thread.join(120)
        log.close()
    assert not thread.is_alive() and exit_code == [0]
    assert records(log_file)[-1]["event"] == "stopped" and records(log_file)[-1]["clean"]
    assert lock_state(settings.build_lock) is None


def test_a_bad_cron_fails_at_start_with_the_fix(cli, config_file):
    result = cli("--config", config_file, "schedule", "--cron", "*/5 * *")
    assert result.exit_code == 2
    assert "expected 5 or 6 fields" in result.output and "next:" in result.output


@pytest.mark.parametrize(("expr", "weekdays"), [
    ("0 3 * * 0", {6}),                    # cron's 0 is Sunday (APScheduler's is Monday)
    ("0 3 * * 7", {6}),
    ("0 3 * * 1-5", {0, 1, 2, 3, 4}),
    ("0 3 * * sat,sun", {5, 6}),
    ("30 6 * * */2", {6, 1, 3, 5}),        # every other day from Sunday: sun, tue, thu, sat
])
def test_cron_weekdays_mean_what_cron_means(expr, weekdays):
    from vq.jobs.cron import cron_trigger

    trigger = cron_trigger(expr, timezone="UTC")
    now, seen = datetime.fromisoformat("2026-01-01T00:00:00+00:00"), set()
    for _ in range(14):
        fire = trigger.get_next_fire_time(None, now)
        seen.add(fire.weekday())
        now = fire + timedelta(seconds=1)
    assert seen == weekdays


def test_cron_refuses_day_and_weekday_together():
    from vq.jobs.cron import cron_trigger

    with pytest.raises(VqError, match="both the day of month and the weekday"):
        cron_trigger("0 3 1 * 1")


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="watches /proc for torch")
def test_sigterm_during_a_build_stops_after_the_batch_and_the_next_build_converges(
        tmp_path, vault, config_file, built, build):
    """The daemon's build is caught as it starts encoding (its text is committed first):
    SIGTERM lets it finish the vector batch in hand only; the next build embeds the rest
    and encodes nothing twice."""
    from vq.core import store
    from vq.core.freshness import check_freshness
    from vq.core.lock import lock_state
    from vq.indexer.embed import FIRST_BATCH, PENDING

    files = 2 * FIRST_BATCH + 8  # one chunk each: the vectors take three batches at least
    write_tree(vault, {f"bulk/{i:04d}.md": f"# Note {i}\n\nItem {i} of the bulk: "
                       f"{' '.join(str(i * k) for k in range(1, 30))}.\n"
                       for i in range(files)})
    data = {"index_dir": built.index_dir, "vaults": {"notes": {"path": str(vault)}},
            "write_batch_files": 24, "schedule": {**FAST, "stop_timeout_seconds": 300}}
    write_config(config_file, data)
    err = (tmp_path / "daemon.err").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "vq", "--config", str(config_file),
                             "schedule", "--no-serve"], stdout=subprocess.DEVNULL, stderr=err)
    try:
        # torch loads only inside the first vector batch's encode, past its stop check.
        maps = Path(f"/proc/{proc.pid}/maps")
        poll(lambda: "libtorch" in maps.read_text(), "the build to start encoding",
             timeout=180, proc=proc)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        err.close()
    log = (tmp_path / "daemon.err").read_text()
    assert code == 0, log
    assert "interrupted:" in log and "SIGTERM received" in log
    assert "scheduler stopped; lock released" in log
    assert lock_state(built.build_lock) is None
    assert manifest_count(built) == 4 + files  # every file's text, committed first
    index = store.open_index(built.index_dir)
    waiting = index.chunks.count_rows(PENDING)
    assert 0 < waiting < files, "the batch in hand was not kept, or nothing was left"
    assert check_freshness(built, index, None).fresh  # the manifest vouches for the text

    summary = build(built)
    assert (summary.outcome, summary.files_new, summary.files_changed) == ("ok", 0, 0)
    assert summary.chunks_encoded == waiting  # the rest, and nothing embedded before
    index = store.open_index(built.index_dir)
    assert index.chunks.count_rows(PENDING) == 0
    ids = index.chunks.search().select(["id"]).limit(None).to_arrow()["id"].to_pylist()
    assert len(ids) == len(set(ids)) == index.chunks.count_rows()
