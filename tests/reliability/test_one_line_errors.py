"""Issue 37, item 10: each of these printed a traceback (or ran on silently) on main.

Now each is one ``error:`` line and one ``next:`` line, exit 2, or a config
error naming the key and where the value came from.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import one_note_index, run_vq, write_config
from vq.core.errors import ConfigError
from vq.core.settings import load_settings
from vq.indexer.hooks import run_hook


@pytest.fixture
def indexed(tmp_path, test_models, index_templates):
    return one_note_index(tmp_path, "hello world", vault="notes", templates=index_templates)


def one_line_error(result, *words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-2].startswith("error: ") and lines[-1].startswith("next: "), lines
    for word in words:
        assert word in result.stderr


def test_a_query_that_is_not_utf8_is_one_line(indexed):
    result = subprocess.run([sys.executable, "-m", "vq", "--config", str(indexed), "search",
                             b"caf\xe9 \xff"], capture_output=True, text=True, timeout=300)
    one_line_error(result, "not valid UTF-8")


def test_a_dangling_backslash_glob_is_one_line(indexed):
    one_line_error(run_vq("--config", indexed, "search", "hello", "--path", "\\"),
                   "--path '\\\\' is not a valid glob")


def test_a_deleted_versions_folder_says_rebuild_and_rebuild_repairs(indexed, tmp_path):
    shutil.rmtree(tmp_path / "index" / "chunks.lance" / "_versions")
    for command in (["search", "hello"], ["status"], ["build"]):
        one_line_error(run_vq("--config", indexed, *command), "_versions", "--rebuild")
    assert run_vq("--config", indexed, "build", "--rebuild").returncode == 0
    assert run_vq("--config", indexed, "search", "hello", "--method", "lexical"
                  ).returncode == 0


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("schedule", {"misfire_grace_seconds": 0}, "must be at least 1"),
    ("hook_timeout_seconds", math.nan, "must be a finite number"),
    ("hook_timeout_seconds", math.inf, "must be a finite number"),
    ("hook_timeout_seconds", -5, "must not be negative"),
    ("search", {"recency_half_life_days": math.nan}, "must be a finite number"),
    ("serve", {"idle_minutes": math.inf}, "must be a finite number"),
    ("maintenance", {"cleanup_grace_minutes": -1}, "must not be negative"),
])
def test_zero_negative_infinite_and_nan_limits_are_config_errors(tmp_path, key, value,
                                                                 problem):
    cfg = write_config(tmp_path / "c.yaml", {key: value})
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert problem in info.value.message and info.value.fix


def test_a_bad_env_value_is_blamed_on_the_variable_not_the_file(tmp_path, monkeypatch):
    cfg = write_config(tmp_path / "c.yaml", {"batch_size": 8})
    monkeypatch.setenv("VQ_BATCH_SIZE", "lots")
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert info.value.message.startswith("env VQ_BATCH_SIZE: batch_size: expected int")
    assert str(cfg) not in info.value.message


def test_an_index_dir_that_is_a_vault_root_is_refused(tmp_path):
    (tmp_path / "notes").mkdir()
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "notes"),
                                             "vaults": {"n": {"path": "notes"}}})
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert info.value.key == "index_dir" and "index its own files" in info.value.message


@pytest.mark.parametrize(("command", "refused"), [
    ("sh -c 'cat {path}'", True),
    ("bash -ec 'pandoc {path} | head'", True),
    ("python3 -c 'print(open(\"{path}\").read())'", True),
    ("sh -c 'cat \"$1\"' sh {path}", False),
    ("pandoc -t gfm {path}", False),
])
def test_a_path_inside_a_shell_script_is_refused(tmp_path, command, refused):
    cfg = write_config(tmp_path / "c.yaml", {"hooks": {".doc": command}})
    if not refused:
        assert load_settings(str(cfg)).hooks == {".doc": command}
        return
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    assert "inside a shell script" in info.value.message and "sh {path}" in info.value.fix


def _alive(tag: str) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if tag.encode() in fh.read():
                    out.append(int(pid))
        except OSError:
            continue
    return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the child through /proc")
@pytest.mark.parametrize("hook_waits", [True, False])
def test_a_hooks_setsid_child_dies_with_it(tmp_path, hook_waits):
    target = tmp_path / "a.doc"
    target.write_text("x")
    tag = f"{os.getpid() % 1000 + 1000}.{int(hook_waits)}17"
    daemon = f"setsid {shlex.quote(sys.executable)} -c 'import time; time.sleep({tag})' &"
    script = daemon + (" sleep 30" if hook_waits else " exit 0")
    run = run_hook(f"sh -c {shlex.quote(script)} sh {{path}}", target, timeout=1.0)
    assert "timed out" in run.problem
    deadline = time.monotonic() + 30
    while _alive(f"time.sleep({tag})") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(f"time.sleep({tag})") == []
