"""`vq doctor` while a build holds the lock: the build is the fix, so doctor says to wait
for it instead of "next: run `vq build`" beside its own "a build is running" line."""

from __future__ import annotations

from dataclasses import replace

from tests.conftest import lock_held_elsewhere as held
from tests.conftest import write_config


def test_stale_files_during_a_build_say_wait_not_build(settings, test_models, cli, vault):
    from vq.jobs.runner import locked_build

    settings = replace(settings, model=test_models)
    assert locked_build(settings).outcome == "ok"
    (vault / "new-note.md").write_text("# New\n\nWritten while a build runs.\n")
    config = write_config(settings.config_file, {
        "index_dir": settings.index_dir, "model": test_models,
        "vaults": {"notes": {"path": str(vault), "kind": "notes"}}})
    idle = cli("--config", config, "doctor", "--no-model")
    assert "next: run `vq build`" in idle.stdout  # the stale file, with nothing running
    with held(settings.build_lock) as pid:
        busy = cli("--config", config, "doctor", "--no-model")
    assert f"held by pid {pid}" in busy.stdout
    assert "run `vq build`" not in busy.stdout, busy.stdout
    freshness = busy.stdout.split("freshness", 1)[1].splitlines()
    assert freshness[0].lstrip().startswith("since the last build: 1 new")
    assert f"a build is running (pid {pid}" in freshness[1]


def test_no_index_yet_during_the_first_build_is_not_a_failure(tmp_path, vault, cli):
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "vaults": {"notes": str(vault)}})
    before = cli("--config", config, "doctor", "--no-model")
    assert before.exit_code == 1 and "✗ index" in before.stdout
    with held(tmp_path / "index" / "build.lock"):
        during = cli("--config", config, "doctor", "--no-model")
    assert "⚠ index" in during.stdout and "✗" not in during.stdout, during.stdout
    assert during.exit_code == 0
