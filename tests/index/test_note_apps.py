"""`vq init` on an Obsidian vault or a Logseq graph leaves out what the app keeps among
the notes: templates, settings, backup copies of pages."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_tree
from vq.indexer.note_apps import MAX_SETTINGS_BYTES, app_folders
from vq.indexer.project import inspect_project

NOTE = "# Weekly review\n\nEvery Friday, review the active projects.\n"
TEMPLATE = "---\ndate: {{date}}\n---\n# {{title}}\n\n## Review\n\n<% tp.file.cursor() %>\n"


@pytest.fixture
def obsidian(tmp_path):
    root = tmp_path / "vault"
    write_tree(root, {"Review.md": NOTE, "Projects/Garden.md": "# Garden\n\nBeds.\n",
                      "Meta/Templates/Daily.md": TEMPLATE, "Tpl/Meeting.md": TEMPLATE,
                      ".obsidian/templates.json": json.dumps({"folder": "Meta/Templates/"}),
                      ".obsidian/plugins/templater-obsidian/data.json":
                          json.dumps({"templates_folder": "Tpl", "trigger_on_file_creation": 1})})
    return root


def test_an_obsidian_vaults_templates_are_left_out(obsidian):
    plan = inspect_project(obsidian)
    [notes] = [v for v in plan.vaults if v.kind == "notes"]
    assert {"/Meta/Templates/", "/Tpl/"} <= set(notes.exclude)
    assert any(n.startswith("Obsidian vault: left out Meta/Templates/ (templates") and
               "Tpl/" in n for n in plan.notes)


@pytest.mark.parametrize("settings", [
    json.dumps({"folder": "../outside"}), json.dumps({"folder": 3}), "{not json",
    json.dumps({"folder": "Tpl", "pad": "x" * MAX_SETTINGS_BYTES}), json.dumps({"folder": "Nope"}),
])
def test_odd_obsidian_settings_propose_nothing(tmp_path, settings):
    write_tree(tmp_path / "v", {"a.md": NOTE, "Tpl/t.md": TEMPLATE,
                                ".obsidian/templates.json": settings})
    assert app_folders(tmp_path / "v") == ("Obsidian vault", [])


def test_a_logseq_graphs_settings_and_backups_are_left_out(tmp_path):
    root = tmp_path / "graph"
    write_tree(root, {"pages/Garden.md": "- # Garden\n\t- Beds.\n",
                      "journals/2024_01_15.md": "- Planted beds.\n",
                      "logseq/config.edn": "{:preferred-format :markdown}\n",
                      "logseq/bak/pages/Garden/2024-01-15T10_00_00.000Z.Desktop.md":
                          "- # Garden\n\t- Beds.\n"})
    plan = inspect_project(root)
    assert all("/logseq/" in v.exclude for v in plan.vaults)
    assert any(n.startswith("Logseq graph: left out logseq/") for n in plan.notes)


@pytest.mark.model
def test_init_then_build_never_indexes_the_templates(obsidian, cli, monkeypatch):
    """The real path: `vq init` writes the config, `vq build` reads it; a search for the
    template's words finds the notes, never the template."""
    monkeypatch.chdir(obsidian)
    assert cli("init", str(obsidian), "--no-estimate").exit_code == 0
    built = cli("--config", obsidian / ".vq.yaml", "build", "--no-progress")
    assert built.exit_code == 0, built.output
    found = cli("--config", obsidian / ".vq.yaml", "search", "--json", "-n", "10", "review")
    paths = {h["path"] for h in json.loads(found.stdout)}
    assert "Review.md" in paths and not any("Tpl" in p or "Templates" in p for p in paths)


def test_vault_add_leaves_out_a_logseq_graphs_backups_unless_told(tmp_path, cli):
    from vq.core.settings import load_settings

    root = tmp_path / "graph"
    write_tree(root, {"pages/Garden.md": "- # Garden\n", "logseq/config.edn": "{}\n",
                      "logseq/bak/pages/Garden.md": "- # Garden\n"})
    cfg = tmp_path / "vq.yaml"
    cfg.write_text(f"index_dir: {tmp_path / 'index'}\n", encoding="utf-8")
    added = cli("--config", cfg, "vault", "add", "graph", root)
    assert added.exit_code == 0 and "leaving out logseq/" in added.stderr
    assert load_settings(str(cfg)).vaults[0].exclude == ("/logseq/",)
    cli("--config", cfg, "vault", "remove", "graph")
    assert cli("--config", cfg, "vault", "add", "graph", root, "--exclude", "x/").exit_code == 0
    assert load_settings(str(cfg)).vaults[0].exclude == ("x/",)


def test_a_docusaurus_sites_versioned_docs_are_left_out(tmp_path, cli):
    """Jest keeps docs/ and website/versioned_docs/version-29.7/ … copies of it: each hit
    about an API came four times. `vq init` and `vq vault add` leave the copies out."""
    page = "# expect\n\nUse `expect` to test values.\n"
    write_tree(tmp_path / "p", {"docs/ExpectAPI.md": page, "docs/GettingStarted.md": NOTE,
                                "website/versions.json": '["30.0", "29.7"]',
                                "website/versioned_docs/version-30.0/ExpectAPI.md": page,
                                "website/versioned_docs/version-29.7/ExpectAPI.md": page,
                                "website/blog/2024-01-01-jest-30.md": NOTE,
                                **{f"packages/expect/src/{n}.ts": "export const x = 1;\n"
                                   for n in range(8)}})
    plan = inspect_project(tmp_path / "p")
    website = next(v for v in plan.vaults if v.path == "website")
    assert "/versioned_docs/" in website.exclude
    assert "Docusaurus site: left out website/versioned_docs/ (2 released versions, each a " \
        "copy of the docs)" in plan.notes
    added = cli("--config", tmp_path / "vq.yaml", "vault", "add", "site", tmp_path / "p/website")
    assert added.exit_code == 0, added.output
    assert "leaving out versioned_docs/" in added.stderr
    assert app_folders(tmp_path / "p" / "docs") == ("", [])


def test_a_hugo_sites_archetypes_are_left_out_not_a_vault(tmp_path):
    """Hugo's docs keep archetypes/, the templates `hugo new` fills in: `vq init` made it
    a notes vault of five pages of placeholders beside content/."""
    template = '---\ntitle: "{{ replace .File.ContentBaseName "-" " " | title }}"\n---\n'
    write_tree(tmp_path / "p", {"hugo.toml": "baseURL = 'https://example.org/'\n",
                                **{f"archetypes/{n}.md": template for n in "abcde"},
                                **{f"content/en/{w}.md": f"# {w}\n\nHow {w} works.\n"
                                   for w in ("menus", "taxonomies", "bundles", "hooks")},
                                "assets/js/main.js": "export const x = 1;\n"})
    plan = inspect_project(tmp_path / "p")
    assert [v.path for v in plan.vaults if v.kind == "notes"] == ["content"], plan.vaults
    code = next(v for v in plan.vaults if v.kind == "code")
    assert "/archetypes/" in code.exclude
    assert "Hugo site: left out archetypes/ (templates `hugo new` fills in: placeholders, " \
        "not pages)" in plan.notes
    write_tree(tmp_path / "q", {"archetypes/a.md": template, "content/a.md": NOTE})
    assert app_folders(tmp_path / "q") == ("", [])  # no Hugo config: not a Hugo site
