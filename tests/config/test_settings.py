"""Config loading: precedence, sources, validation errors that name file, key and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO, write_config
from vq.core.errors import ConfigError
from vq.core.settings import load_settings


def test_example_config_loads_every_key():
    s = load_settings(str(REPO / "config.example.yaml"))
    assert {v.id for v in s.vaults} == {"notes", "code"}
    assert s.vault("notes").exclude == ("archive/**", "*.draft.md")
    assert s.vault("code").kind == "code"
    assert s.search.rrf_k == 60 and s.chunk.max_chars == 1500
    assert s.index_dir == str(REPO / ".vq")  # relative to the config file, not the cwd
    assert s.vault("notes").path == Path("~/notes").expanduser()


def test_precedence_flag_over_env_over_file(tmp_path, monkeypatch):
    cfg = write_config(tmp_path / "c.yaml", {"device": "cpu", "search": {"pool": 50}})
    assert load_settings(str(cfg)).device == "cpu"
    monkeypatch.setenv("VQ_DEVICE", "cuda")
    monkeypatch.setenv("VQ_SEARCH__POOL", "70")
    s = load_settings(str(cfg))
    assert (s.device, s.search.pool) == ("cuda", 70)
    assert s.sources["device"] == "env VQ_DEVICE"
    s = load_settings(str(cfg), {"device": "mps"})
    assert s.device == "mps" and s.sources["device"] == "flag --device"
    assert s.search.limit == 10 and "search.limit" not in s.sources  # untouched default


def test_config_discovery_walks_up_to_project_file(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / "a" / "b").mkdir(parents=True)
    write_config(project / ".vq.yaml", {"device": "cpu"})
    s = load_settings(cwd=project / "a" / "b")
    assert s.config_file == project / ".vq.yaml"
    assert s.index_dir == str(project / ".vq")


@pytest.mark.parametrize("data, key, words", [
    ({"colour": "red"}, "colour", "unknown key"),
    ({"batch_size": "many"}, "batch_size", "expected int"),
    ({"device": "tpu"}, "device", "not one of"),
    ({"search": {"poool": 3}}, "search.poool", "unknown key"),
    ({"vaults": {"n": {"kind": "notes"}}}, "vaults.n", "missing path"),
    ({"vaults": {"n": {"path": ".", "kind": "music"}}}, "vaults.n.kind", "not one of"),
    ({"vaults": {"n": {"path": ".", "include": "*.md", "colour": 1}}}, "vaults.n.colour",
     "unknown key"),
])
def test_invalid_config_names_file_key_and_fix(tmp_path, data, key, words):
    cfg = write_config(tmp_path / "bad.yaml", data)
    with pytest.raises(ConfigError) as err:
        load_settings(str(cfg))
    assert err.value.file == str(cfg) and err.value.key == key
    assert words in err.value.message and err.value.fix


def test_duplicate_vault_id_and_malformed_yaml(tmp_path):
    dup = tmp_path / "dup.yaml"
    dup.write_text("vaults:\n  n: {path: a}\n  n: {path: b}\n")
    with pytest.raises(ConfigError, match="duplicate key") as err:
        load_settings(str(dup))
    assert err.value.key == "n"
    bad = tmp_path / "bad.yaml"
    bad.write_text("vaults: [unclosed\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        load_settings(str(bad))


def test_cli_reports_config_error_with_exit_2(tmp_path, cli):
    cfg = write_config(tmp_path / "bad.yaml", {"colour": "red"})
    result = cli("--config", cfg, "status")
    assert result.exit_code == 2
    assert f"error: {cfg}: colour: unknown key" in result.stderr
    assert "next: remove it" in result.stderr
    missing = cli("--config", tmp_path / "nope.yaml", "status")
    assert missing.exit_code == 2 and "config file not found" in missing.stderr


def test_vault_add_remove_keeps_comments_and_validates(tmp_path, cli, vault):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("# my settings\ndevice: cpu  # no GPU here\n")
    assert cli("--config", cfg, "vault", "add", "n", vault, "--exclude", "adr/**").exit_code == 0
    text = cfg.read_text()
    assert "# my settings" in text and "# no GPU here" in text
    s = load_settings(str(cfg))
    assert s.vault("n").path == vault and s.vault("n").exclude == ("adr/**",)
    listed = cli("--config", cfg, "vault", "list", "--json")
    assert '"id": "n"' in listed.stdout
    again = cli("--config", cfg, "vault", "add", "n", vault)
    assert again.exit_code == 2 and "exists" in again.stderr
    assert cli("--config", cfg, "vault", "remove", "n").exit_code == 0
    assert load_settings(str(cfg)).vaults == () and "# no GPU here" in cfg.read_text()


def test_vault_add_refuses_missing_folder_and_leaves_file_intact(tmp_path, cli):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("device: cpu\n")
    result = cli("--config", cfg, "vault", "add", "n", tmp_path / "nope")
    assert result.exit_code == 2 and "not a folder" in result.stderr
    assert cfg.read_text() == "device: cpu\n"
    assert not list(tmp_path.glob("c.yaml.*.tmp"))


@pytest.mark.parametrize("where", ["root", "home"])
def test_vault_add_of_the_file_system_root_or_home_needs_force(tmp_path, cli, monkeypatch,
                                                                where):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    path = "/" if where == "root" else "~"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("device: cpu\n")
    refused = cli("--config", cfg, "vault", "add", "all", path)
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert cfg.read_text() == "device: cpu\n"
    forced = cli("--config", cfg, "vault", "add", "all", path, "--force")
    assert forced.exit_code == 0 and "warning:" in forced.stderr
    assert load_settings(str(cfg)).vault("all").path == (Path("/") if where == "root"
                                                         else home)
    (home / "notes").mkdir()
    fine = cli("--config", cfg, "vault", "add", "sub", home / "notes")  # below home is fine
    assert fine.exit_code == 0 and "warning" not in fine.stderr
