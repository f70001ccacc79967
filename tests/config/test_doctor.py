"""`vq doctor`: ✓/⚠/✗ lines with a next step, exit 1 only on ✗, JSON, no torch with --no-model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from filelock import FileLock

from tests.conftest import lock_held_elsewhere, write_config, write_tree


def lines(result) -> dict[str, str]:
    """Check name → its line (first word after the symbol), for the text output."""
    out = {}
    for line in result.stdout.splitlines():
        if line[:1] in "✓⚠✗–":
            name = line[2:].split("  ")[0].strip()
            out.setdefault(name, line)
    return out


def next_after(result, name: str) -> str:
    text = result.stdout.splitlines()
    for i, line in enumerate(text):
        if line[:1] in "⚠✗" and line[2:].split("  ")[0].strip() == name:
            return text[i + 1].strip()
    raise AssertionError(f"no ⚠/✗ line for {name}:\n{result.stdout}")


@pytest.mark.model
def test_healthy_index_then_a_stale_file(built, config_file, cli, vault):
    result = cli("--config", config_file, "doctor")
    assert result.exit_code == 0, result.stdout
    checks = lines(result)
    assert "✗" not in result.stdout
    for name in ("config", "model loads", "device in use", "vault notes", "index",
                 "index model", "full-text index", "freshness", "build lock", "last build"):
        assert checks[name].startswith("✓"), checks.get(name, result.stdout)
    assert f"{config_file} (flag --config)" in checks["config"]
    assert "loads offline (bundled package), dim 384" in checks["model loads"]
    assert "default (.vq beside the config)" not in checks["index_dir"]  # set in the file
    assert f"file {config_file}" in checks["index_dir"] and "← default" in checks["device"]
    assert checks["build lock"].startswith("✓ build lock") and "free" in checks["build lock"]

    (vault / "new-note.md").write_text("# New\n\nSomething fresh.\n", encoding="utf-8")
    (vault / "cooking.md").unlink()
    stale = cli("--config", config_file, "doctor", "--no-model", "--json")
    assert stale.exit_code == 0
    data = json.loads(stale.stdout)
    fresh = next(c for c in data["checks"] if c["name"] == "freshness")
    assert fresh["status"] == "warn" and "1 new, 1 deleted" in fresh["detail"]
    assert fresh["next"] == "run `vq build`"
    assert data["ok"] is True
    assert {c["status"] for c in data["checks"]} <= {"ok", "warn", "skip"}
    assert all(c["next"] for c in data["checks"] if c["status"] in ("warn", "fail"))


@pytest.mark.model
def test_fts_index_from_an_older_vq_is_a_warning_until_the_next_build(built, config_file, cli,
                                                                       build):
    from lancedb.index import FTS

    from vq.core import store

    store.open_index(built.index_dir).chunks.create_index("text", config=FTS(), replace=True)
    result = cli("--config", config_file, "doctor", "--no-model")
    assert result.exit_code == 0
    assert lines(result)["full-text index"].startswith("⚠ full-text index")
    assert "rebuilds only the full-text index" in next_after(result, "full-text index")
    build(built)
    again = cli("--config", config_file, "doctor", "--no-model")
    assert lines(again)["full-text index"].startswith("✓ full-text index")


@pytest.mark.model
def test_model_mismatch_fails_with_rebuild_hint(built, config_file, tmp_path, cli):
    config = write_config(tmp_path / "other.yaml", {
        "index_dir": built.index_dir, "model": "some/other-model",
        "vaults": {"notes": str(built.vault("notes").path)}})
    result = cli("--config", config, "doctor", "--no-model")
    assert result.exit_code == 1
    assert lines(result)["index model"].startswith("✗ index model")
    assert "vq build --rebuild" in next_after(result, "index model")
    assert next_after(result, "index model").startswith("next:")


def test_missing_vault_root_and_missing_index(tmp_path, vault, cli):
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"notes": str(vault), "gone": str(tmp_path / "unmounted")}})
    result = cli("--config", config, "doctor", "--no-model")
    assert result.exit_code == 1
    checks = lines(result)
    assert checks["vault notes"].startswith("✓")
    assert checks["vault gone"].startswith("✗") and "does not exist" in checks["vault gone"]
    assert "vq vault remove gone" in next_after(result, "vault gone")
    assert checks["index"].startswith("✗")
    assert next_after(result, "index") == "next: run `vq build` to create it"
    assert checks["device in use"].startswith("–") and checks["model loads"].startswith("–")


def test_broken_config_is_a_failed_check_not_a_traceback(tmp_path, cli):
    config = tmp_path / "vq.yaml"
    config.write_text("vaults:\n  notes: {path: x, colour: blue}\n", encoding="utf-8")
    result = cli("--config", config, "doctor", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    first = data["checks"][0]
    assert first["name"] == "config" and first["status"] == "fail"
    assert "vaults.notes.colour" in first["detail"] and "valid keys" in first["next"]
    assert any(c["name"] == "python" for c in data["checks"])


def test_sources_env_and_project_config_from_a_subfolder(tmp_path, vault, cli, monkeypatch):
    project = tmp_path / "proj"
    write_tree(project, {"notes/a.md": "# A\n", "src/deep/x.py": "X = 1\n"})
    write_config(project / ".vq.yaml", {"vaults": {"notes": "notes"}})
    monkeypatch.chdir(project / "src" / "deep")
    result = cli("doctor", "--no-model", env={"VQ_DEVICE": "cpu"})
    checks = lines(result)
    assert f"{project / '.vq.yaml'} (project .vq.yaml)" in checks["config"]
    assert "env VQ_DEVICE" in checks["device"]
    assert f"{project / '.vq'}  ← default (.vq beside the config)" in checks["index_dir"]


def test_no_config_warns_and_points_at_init(cli):
    result = cli("doctor", "--no-model")
    checks = lines(result)
    assert checks["config"].startswith("⚠")
    assert "vq init" in next_after(result, "config")
    assert checks["vaults"].startswith("✓ vaults") and "none  ← default" in checks["vaults"]
    assert checks["vaults configured"].startswith("✗")
    assert "vq init" in next_after(result, "vaults configured")
    assert result.exit_code == 1


def test_held_lock_names_its_holder(tmp_path, vault, cli):
    config = write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"), "vaults": {"notes": str(vault)}})
    lock_path = tmp_path / "index" / "build.lock"
    with lock_held_elsewhere(lock_path) as pid:
        result = cli("--config", config, "doctor", "--no-model")
        assert f"held by pid {pid} since" in lines(result)["build lock"]
    lock = FileLock(str(lock_path), timeout=0)
    lock.acquire()  # released with its holder
    lock.release()


@pytest.mark.slow
def test_no_model_never_imports_torch(config_file):
    probe = ("import runpy, sys; sys.argv = ['vq'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('vq', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "print('TORCH', 'torch' in sys.modules, 'sentence_transformers' in sys.modules, "
             "'WRITE', sorted(m for m in sys.modules if m.startswith(('vq.indexer', "
             "'vq.jobs'))), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe, "--config", str(config_file), "doctor",
                          "--no-model", "--json"], capture_output=True, text=True, timeout=120,
                         env={**os.environ})
    assert "TORCH False False WRITE []" in out.stderr, out.stderr[-800:]
    data = json.loads(out.stdout)
    assert data["ok"] is False  # no index built in this test
    assert {c["name"] for c in data["checks"] if c["status"] == "skip"} == {
        "device in use", "model loads", "warm service", "watcher"}  # no `vq serve`, no watcher
