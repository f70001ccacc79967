"""Issue 37, items 2 and 7: no one else's config runs as you, and no YAML bomb hangs vq.

A ``.vq.yaml`` another user planted in a parent folder (``/tmp/.vq.yaml``) made
`vq build` run its hooks as whoever built below it; a cloned repository's config
ran its hooks at the first `vq build`; a config of nine nested aliases hung
`vq status` while the config cache expanded it.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import subprocess
import sys

import pytest

from tests.conftest import run_vq, write_config
from vq.core import yaml_bounds
from vq.core.errors import ConfigError, VqError
from vq.core.settings import load_settings
from vq.core.trust import require_trusted

OTHER = "vqtestother"


@pytest.fixture(scope="module")
def other_uid():
    """A real second user when the suite runs as root, else skip: chown needs root."""
    if os.geteuid() != 0:
        pytest.skip("creating a second user (or chown to one) needs root")
    try:
        return pwd.getpwnam(OTHER).pw_uid
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER],
                       check=True, capture_output=True)
        return pwd.getpwnam(OTHER).pw_uid


def marker_hook(tmp_path):
    """A hook that leaves a file behind when it runs (the attack's payload)."""
    script = tmp_path / "payload.py"
    script.write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'RAN')!r}).touch()\n"
                      "print('# ran')\n")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{path}}"


def test_a_config_owned_by_another_user_is_refused_with_the_fix(tmp_path, other_uid, cli):
    planted = tmp_path / ".vq.yaml"
    write_config(planted, {"index_dir": str(tmp_path / "index"),
                           "hooks": {".md": marker_hook(tmp_path)}})
    os.chown(planted, other_uid, -1)
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    with pytest.raises(ConfigError) as info:
        load_settings(cwd=project)
    assert "belongs to another user" in info.value.message and info.value.fix
    doctor = json.loads(run_vq("doctor", "--json", "--no-model", cwd=project).stdout)
    config = next(c for c in doctor["checks"] if c["name"] == "config")
    assert config["status"] == "fail" and "another user" in config["detail"]
    assert not (tmp_path / "RAN").exists()


@pytest.mark.parametrize("mode", [0o646, 0o666])
def test_a_config_others_can_write_is_refused(tmp_path, mode):
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index")})
    cfg.chmod(mode)
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert "can write to it" in info.value.message and "chmod go-w" in info.value.fix


def test_group_writable_is_refused_unless_the_group_is_the_users_own(tmp_path, other_uid):
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index")})
    cfg.chmod(0o664)
    load_settings(str(cfg))  # root:root, root's own group (the umask 002 convention)
    os.chown(cfg, -1, pwd.getpwuid(other_uid).pw_gid)
    with pytest.raises(ConfigError, match="its group can write to it"):
        load_settings(str(cfg))


def test_a_hook_program_another_user_can_change_is_refused(tmp_path, test_models):
    hook = marker_hook(tmp_path)
    (tmp_path / "payload.py").chmod(0o666)
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                             "hooks": {".doc": hook}})
    with pytest.raises(VqError, match="anyone can write to it"):
        require_trusted(load_settings(str(cfg)))


def test_a_project_config_with_hooks_runs_them_only_after_hooks_allow(tmp_path, test_models):
    repo = tmp_path / "cloned-repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "a.doc").write_text("a document")
    write_config(repo / ".vq.yaml", {"index_dir": ".vq/index", "model": test_models,
                                     "hooks": {".doc": marker_hook(tmp_path)},
                                     "vaults": {"docs": {"path": "docs"}}})
    refused = run_vq("build", cwd=repo)
    assert refused.returncode == 2 and "not trusted yet" in refused.stderr
    assert "vq hooks allow" in refused.stderr and not (tmp_path / "RAN").exists()
    doctor = json.loads(run_vq("doctor", "--json", "--no-model", cwd=repo).stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "hooks trusted")
    assert check["status"] == "warn" and "vq hooks allow" in check["next"]
    allowed = run_vq("hooks", "allow", cwd=repo)
    assert allowed.returncode == 0 and "allowed .doc" in allowed.stdout
    assert run_vq("build", cwd=repo).returncode == 0 and (tmp_path / "RAN").exists()
    (tmp_path / "RAN").unlink()  # an edit must be allowed again: its hash changed
    (repo / ".vq.yaml").write_text((repo / ".vq.yaml").read_text() + "\n# edited\n")
    assert run_vq("build", "--rebuild", cwd=repo).returncode == 2
    assert not (tmp_path / "RAN").exists()


def test_an_explicit_config_with_hooks_needs_no_allow(tmp_path, test_models):
    cfg = write_config(tmp_path / "c.yaml", {"hooks": {".doc": marker_hook(tmp_path)}})
    require_trusted(load_settings(str(cfg)))  # --config / VQ_CONFIG: the user chose it


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n"
    for i in range(8))


def test_a_yaml_bomb_in_the_config_is_refused_quickly(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(BOMB + "index_dir: x\n")
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert "YAML bomb" in info.value.message
    status = run_vq("--config", cfg, "status", timeout=120)  # on main: never returns
    assert status.returncode == 2 and "YAML bomb" in status.stderr


def test_a_yaml_bomb_in_frontmatter_or_env_is_not_expanded():
    from vq.indexer.handlers.base import Limits
    from vq.indexer.handlers.markdown import markdown_handler

    note = "---\n" + BOMB + "tags: *i\n---\n# Title\n\nbody text\n"
    doc = markdown_handler(note, "n.md", Limits())
    assert doc.tags == () and doc.chunks[0].text.startswith("# Title")
    with pytest.raises(yaml_bounds.TooExpanded):
        yaml_bounds.check(BOMB)
    yaml_bounds.check("a: &a [1, 2]\nb: *a\nc: *a\n")  # ordinary anchors stay fine
    with pytest.raises(yaml_bounds.TooExpanded):
        yaml_bounds.check("a: &a [*a]\n")
