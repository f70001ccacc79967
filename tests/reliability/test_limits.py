"""Issue 17, items 7 and 9: unbounded hook output, and values that used to crash.

On main a hook printing 200 MB passed `vq hooks check` and then took the build
to 1.6 GB RSS; `batch_size: 0` and `chunk.max_chars: 0` crashed instead of
failing as config errors, and `--since 9999999999999d` printed a traceback.
"""

from __future__ import annotations

import shlex
import sys
import tracemalloc

import pytest

from tests.conftest import write_config
from vq.core.errors import ConfigError, VqError
from vq.core.settings import load_settings
from vq.indexer.hooks import run_hook

FLOOD_MB = 40


def flood_hook(megabytes: int = FLOOD_MB) -> str:
    script = f"import sys\nfor _ in range({megabytes}): sys.stdout.write('x' * 2**20)\n"
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{path}}"


def test_a_flooding_hook_is_killed_at_hook_max_bytes_with_little_memory(tmp_path):
    target = tmp_path / "a.doc"
    target.write_text("anything")
    tracemalloc.start()
    try:
        run = run_hook(flood_hook(), target, timeout=120, max_bytes=2**20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "printed more than hook_max_bytes (1048576 bytes)" in run.problem
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.0f} MiB for a {FLOOD_MB} MiB flood"
    fine = run_hook(flood_hook(1), target, timeout=120, max_bytes=2 * 2**20)
    assert fine.ok and len(fine.stdout) == 2**20


@pytest.mark.model
def test_hooks_check_and_build_report_the_flood_as_one_files_error(tmp_path, vault, cli,
                                                                   build):
    (vault / "report.doc").write_text("binary-ish")
    cfg = write_config(tmp_path / "h.yaml", {
        "index_dir": str(tmp_path / "index"), "hook_max_bytes": 2**20,
        "hooks": {".doc": flood_hook()}, "vaults": {"notes": {"path": str(vault)}}})
    checked = cli("--config", cfg, "hooks", "check")
    assert checked.exit_code == 1 and "printed more than hook_max_bytes" in checked.stdout
    summary = build(load_settings(str(cfg)))
    assert summary.outcome == "ok" and summary.files_new == 4
    assert [(p["path"], "hook_max_bytes" in p["reason"]) for p in summary.problems] == [
        ("report.doc", True)]


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("batch_size", 0, "must be at least 1"),
    ("max_file_bytes", 0, "must be at least 1"),
    ("hook_max_bytes", 0, "must be at least 1"),
    ("chunk", {"max_chars": 0}, "must be at least 1"),
    ("search", {"limit": 0}, "must be at least 1"),
    ("search", {"pool": 0}, "must be at least 1"),
    ("search", {"recency_half_life_days": 0}, "must be more than 0"),
    ("hook_max_bytes", "lots", "expected int"),
    ("search", {"pool": 99999999999999}, "must be at most 1000000"),
    ("search", {"limit": 10**10}, "must be at most 1000000"),
])
def test_zero_and_nonsense_limits_are_config_errors_naming_the_key(tmp_path, key, value,
                                                                   problem):
    cfg = write_config(tmp_path / "c.yaml", {key: value})
    with pytest.raises(ConfigError) as info:
        load_settings(str(cfg))
    named = key if not isinstance(value, dict) else f"{key}.{next(iter(value))}"
    assert info.value.key == named and problem in info.value.message
    assert str(cfg) in info.value.message and info.value.fix


def test_zero_batch_size_from_the_environment_is_a_config_error(cli, config_file,
                                                                monkeypatch):
    monkeypatch.setenv("VQ_BATCH_SIZE", "0")
    result = cli("--config", config_file, "build")
    assert result.exit_code == 2 and "batch_size: must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("age", ["9999999999999d", "99999999999w", "3000000y"])
def test_a_huge_since_is_a_clear_error(age):
    from vq.query.filters import parse_since

    with pytest.raises(VqError) as info:
        parse_since(age)
    assert "too far back" in info.value.message and info.value.fix


def test_a_huge_since_on_the_command_line_is_one_error_line(built, cli, config_file):
    result = cli("--config", config_file, "search", "--method", "lexical", "--since",
                 "9999999999999d", "bread")
    assert result.exit_code == 2 and "too far back" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_huge_limit_on_the_command_line_is_a_usage_error(cli, config_file):
    result = cli("--config", config_file, "search", "--method", "lexical", "-n",
                 "99999999999999", "bread")
    assert result.exit_code == 2 and "not in the range" in result.stderr


def test_an_index_dir_that_is_a_file_is_named(cli, config_file, tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    result = cli("--config", config_file, "--index-dir", tmp_path / "afile", "build")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "is a file, not a folder" in result.stderr and "errno" in result.stderr
