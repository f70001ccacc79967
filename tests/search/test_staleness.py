"""Issue 38, item 3: every search surface says when its answer may be stale.

A file changed after the last build: its hit carries ``stale`` in `--json`, the
note is among the notices of `--json --explain` and of MCP's ``search``; a
running watcher's not-yet-indexed files are named; a running build is said.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import write_config
from vq.core.build_progress import clear_record, write_record
from vq.core.lock import holder_file, write_holder
from vq.core.settings import load_settings
from vq.core.watching import WatchState, write_state
from vq.jobs.runner import locked_build
from vq.query.mcp.server import VqService


@pytest.fixture
def config(tmp_path, test_models, vault):
    path = write_config(tmp_path / "vq-stale.yaml", {
        "index_dir": str(tmp_path / "index"), "model": test_models,
        "vaults": {"notes": {"path": str(vault)}}})
    assert locked_build(load_settings(str(path))).outcome == "ok"
    return path


def search_json(cli, config, *extra):
    result = cli("--config", config, "search", "--json", "--method", "lexical", *extra,
                 "canary")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_fresh_index_says_nothing(cli, config):
    hits = search_json(cli, config)
    assert hits and not any("stale" in h for h in hits)
    assert search_json(cli, config, "--explain")["explain"]["stale"] is None


def test_a_file_changed_since_the_build_is_marked_in_json_and_mcp(cli, config, vault):
    deploy = vault / "deploy.md"
    deploy.write_text(deploy.read_text() + "\nA paragraph added after the build.\n")
    st = deploy.stat()
    os.utime(deploy, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    hits = search_json(cli, config)
    assert [h["stale"] for h in hits if h["path"] == "deploy.md"] == [
        "changed since it was indexed"]
    explained = search_json(cli, config, "--explain")["explain"]
    assert "notes/deploy.md" in explained["stale"]["changed"]
    assert any(n.startswith("results may be stale") for n in explained["notices"])
    answer = VqService(load_settings(str(config))).search("canary", method="lexical")
    assert any("notes/deploy.md" in n for n in answer["notices"])
    assert [h.get("stale") for h in answer["hits"] if h["path"] == "deploy.md"] == [
        "changed since it was indexed"]


def test_a_watchers_pending_files_and_a_running_build_are_said(cli, config):
    settings = load_settings(str(config))
    write_state(settings.index_dir, WatchState(pending=["notes/new-idea.md"], pending_count=1))
    note = search_json(cli, config, "--explain")["explain"]["stale"]["note"]
    assert "1 changed file(s) not yet indexed (notes/new-idea.md)" in note
    write_holder(settings.build_lock)
    try:
        stale = search_json(cli, config, "--explain")["explain"]["stale"]
        assert stale["building"].startswith("a build is running (pid")
        # a first build's results come from the files written so far: how many is said
        write_record(settings.build_lock, {"files_done": 40, "files_total": 88})
        stale = search_json(cli, config, "--explain")["explain"]["stale"]
        assert stale["building"].endswith("; 40 of 88 files read)"), stale
    finally:
        holder_file(settings.build_lock).unlink()
        clear_record(settings.build_lock)


def test_status_shows_the_watchers_state(cli, config):
    settings = load_settings(str(config))
    assert "watch  not running" in cli("--config", config, "status").stdout
    write_state(settings.index_dir, WatchState(vaults=["notes"], pending=["notes/a.md"],
                                               pending_count=1))
    line = next(ln for ln in cli("--config", config, "status").stdout.splitlines()
                if ln.startswith("watch"))
    assert f"pid {os.getpid()}, watching notes; 1 changed file(s) not yet indexed" in line
    data = json.loads(cli("--config", config, "status", "--json").stdout)
    assert data["watch"]["pending_count"] == 1 and data["watch"]["mode"] == "watching"
    from vq.query.doctor.checks import run_checks

    check = next(c for c in run_checks(str(config), model=False).checks if c.name == "watcher")
    assert check.status == "ok" and "watching notes; 1 changed file(s)" in check.detail


def test_a_build_older_than_the_schedule_says_what_to_run(cli, config, tmp_path):
    """Searching at the terminal with no scheduler, every search an hour later said only
    "longer than the schedule allows": it now says what runs builds on that schedule."""
    versions = tmp_path / "index" / "builds.lance" / "_versions"
    an_hour_ago = versions.stat().st_mtime - 3600
    os.utime(versions, (an_hour_ago, an_hour_ago))
    result = cli("--config", config, "search", "--method", "lexical", "canary")
    assert result.exit_code == 0, result.output
    assert ("results may be stale: the last build finished 60 min ago and schedule.cron asks "
            "for one every 5 min: is a scheduler running? (`vq schedule`, or `vq jobs cron` "
            "for crontab)") in result.stderr


def test_a_running_watcher_makes_an_old_build_a_quiet_vault(cli, config, tmp_path):
    """With `vq watch` running, every search said "is a scheduler running?" once the last
    change was ten minutes old: a watcher builds when files change, not on a clock. One
    that fell back to sweeping is judged by its sweep interval."""
    settings = load_settings(str(config))
    versions = tmp_path / "index" / "builds.lance" / "_versions"
    an_hour_ago = versions.stat().st_mtime - 3600
    os.utime(versions, (an_hour_ago, an_hour_ago))
    write_state(settings.index_dir, WatchState(vaults=["notes"]))
    assert search_json(cli, config, "--explain")["explain"]["stale"] is None
    write_state(settings.index_dir, WatchState(mode="sweeping", sweep_seconds=600.0))
    stale = search_json(cli, config, "--explain")["explain"]["stale"]
    assert stale["too_old"] and stale["note"].endswith(
        "the last build finished 60 min ago and the watcher sweeps every 10 min: see "
        "`vq status`")
