"""`ui.editor_url` (the dashboard's "open in editor" link) and `edit_vault`, the config
editor's third verb (the dashboard's vault form uses it)."""

from __future__ import annotations

import pytest

from tests.conftest import write_config
from vq.core.errors import ConfigError, VqError
from vq.core.settings import load_settings


def test_the_editor_link_defaults_to_vscode_and_can_be_set(tmp_path):
    path = write_config(tmp_path / "vq.yaml", {})
    assert load_settings(str(path)).ui.editor_url == "vscode://file/{path}:{line}"
    write_config(path, {"ui": {"editor_url": "idea://open?file={path}&line={line}"}})
    assert load_settings(str(path)).ui.editor_url.startswith("idea://")


@pytest.mark.parametrize("template", [
    "vscode://file/:{line}",                # no {path}
    "javascript:alert(1)//{path}",          # a script, not an editor
    "data:text/html,{path}",
    "{path}:{line}",                        # no scheme
    "vscode://file/{path}:{line}:{column}",  # an unknown placeholder
])
def test_a_bad_editor_link_is_a_config_error_naming_the_key(tmp_path, template):
    path = write_config(tmp_path / "vq.yaml", {"ui": {"editor_url": template}})
    with pytest.raises(ConfigError) as exc:
        load_settings(str(path))
    assert "ui.editor_url" in str(exc.value.message)


def test_edit_vault_replaces_path_kind_and_globs_and_keeps_the_rest(tmp_path):
    from vq.core.configedit import edit_vault

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = tmp_path / "vq.yaml"
    path.write_text(f"""\
# my config
vaults:
  notes:   # the main one
    path: {tmp_path / 'a'}
    include: ["*.md"]
    gitignore: false
  other: {tmp_path / 'a'}
""")
    settings = edit_vault(path, "notes", str(tmp_path / "b"), (), ("drafts/**",), "docs")
    notes = settings.vault("notes")
    assert (notes.path, notes.kind) == (tmp_path / "b", "docs")
    assert (notes.include, notes.exclude, notes.gitignore) == ((), ("drafts/**",), False)
    text = path.read_text()
    assert text.startswith("# my config") and "# the main one" in text
    assert edit_vault(path, "other", str(tmp_path / "b"), ("*.txt",)).vault("other").include \
        == ("*.txt",)  # the short form `id: path` becomes a mapping


def test_edit_vault_refuses_and_leaves_the_file_alone(tmp_path):
    from vq.core.configedit import edit_vault

    (tmp_path / "a").mkdir()
    path = write_config(tmp_path / "vq.yaml", {"vaults": {"notes": str(tmp_path / "a")}})
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="no such vault"):
        edit_vault(path, "nope", str(tmp_path / "a"))
    with pytest.raises(VqError, match="is not a folder"):
        edit_vault(path, "notes", str(tmp_path / "missing"))
    with pytest.raises(ConfigError):
        edit_vault(path, "notes", str(tmp_path / "a"), kind="poems")
    assert path.read_bytes() == before
