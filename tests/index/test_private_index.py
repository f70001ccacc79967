"""Issue 37, item 4: the index is owner-only, so a mode-600 note is not readable from it.

On main the index folder, its tables and the extract cache were created with
the caller's umask (022): any user could read a private note's text out of the
Lance files.
"""

from __future__ import annotations

import json
import os
import stat

from tests.conftest import run_vq, write_config
from vq.core.settings import load_settings
from vq.jobs.runner import locked_build


def open_to_others(root) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files, ""]:
            path = os.path.join(folder, name) if name else folder
            mode = os.lstat(path).st_mode
            if mode & 0o077 and not stat.S_ISLNK(mode):
                out.append(f"{path} {stat.filemode(mode)}")
    return out


def private_vault(tmp_path, test_models):
    root = tmp_path / "v"
    root.mkdir()
    note = root / "diary.md"
    note.write_text("# Diary\n\nOnly I may read this.\n")
    note.chmod(0o600)
    (root / "page.html").write_text("<h1>Page</h1><p>extracted once, then cached</p>")
    return write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                              "model": test_models,
                                              "vaults": {"v": {"path": str(root)}}})


def test_vq_build_writes_the_index_owner_only(tmp_path, test_models):
    cfg = private_vault(tmp_path, test_models)
    old = os.umask(0o022)
    try:
        result = run_vq("--config", cfg, "build")
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "index" / "extract-cache").is_dir()
    assert open_to_others(tmp_path / "index") == []


def test_an_in_process_build_is_owner_only_and_restores_the_umask(tmp_path, test_models):
    cfg = private_vault(tmp_path, test_models)
    old = os.umask(0o022)
    try:
        assert locked_build(load_settings(str(cfg))).outcome == "ok"
        assert os.umask(0o022) == 0o022  # the caller's umask is back
    finally:
        os.umask(old)
    assert open_to_others(tmp_path / "index") == []


def test_doctor_flags_an_index_readable_by_others(tmp_path, test_models):
    cfg = private_vault(tmp_path, test_models)
    assert run_vq("--config", cfg, "build").returncode == 0
    check = _privacy(cfg)
    assert check["status"] == "ok" and "owner-only" in check["detail"]
    os.chmod(tmp_path / "index", 0o755)
    check = _privacy(cfg)
    assert check["status"] == "warn" and check["next"].startswith("chmod -R go-rwx")


def _privacy(cfg) -> dict:
    doctor = json.loads(run_vq("--config", cfg, "doctor", "--json", "--no-model").stdout)
    return next(c for c in doctor["checks"] if c["name"] == "index private")
