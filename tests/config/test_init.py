"""`vq init`: a generated project tree → config → real build → search from a subfolder."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import run_vq, write_tree
from vq.core.settings import load_settings
from vq.core.walk import SizeCap, discover
from vq.indexer.project import inspect_project

PROJECT = {
    ".vault/adr/0001-storage-engine.md": """\
        ---
        title: Storage engine
        date: 2026-11-02
        tags: [adr]
        ---
        # ADR 1: Storage engine

        We keep the search index in LanceDB, embedded, one directory per index,
        because a quokka-sized team cannot run a search server.
        """,
    ".vault/research/embedding-models.md": """\
        ---
        title: Embedding models
        ---
        # Embedding models

        MiniLM is small enough for a laptop CPU.
        """,
    "src/app/__init__.py": "",
    "src/app/retry.py": '''\
        """Retries with exponential backoff."""


        def backoff(attempt):
            return 0.5 * 2 ** attempt
        ''',
    "src/app/cli.py": "def main():\n    print('hello')\n",
    "docs/deploy.md": "# Deploying\n\nWe roll out with a canary release.\n",
    "docs/architecture.md": "# Architecture\n\nReaders never lock.\n",
    "README.md": "# Demo project\n",
    "node_modules/leftpad/index.js": "module.exports = function () {};\n",
    "build/generated.py": "GENERATED = True\n",
    "vendor/lib/thing.py": "VENDORED = True\n",
    "papers/spec.pdf": "%PDF-1.4 not really a pdf\n",
    ".gitignore": "build/\n",
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "demo"
    write_tree(root, PROJECT)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    else:
        (root / ".git").mkdir()  # what find_git_root looks for
    return root


def _config(root):
    return yaml.safe_load((root / ".vq.yaml").read_text(encoding="utf-8"))


def test_init_proposes_vaults_with_reasons_and_writes_project_config(project, cli):
    result = cli("init", project)
    assert result.exit_code == 0, result.output
    vaults = _config(project)["vaults"]
    assert {k: (v["path"], v["kind"]) for k, v in vaults.items()} == {
        "notes": (".vault", "notes"), "docs": ("docs", "notes"),
        "code": (".", "code"), "documents": (".", "docs")}
    assert "/docs/" in vaults["code"]["exclude"] and "/vendor/" in vaults["code"]["exclude"]
    assert vaults["documents"]["include"] == ["*.pdf"]
    out = result.stdout
    assert "decision records in .vault/ (2 Markdown files, 2 with frontmatter; adr/, research/)" \
        in out
    assert "skips vendored node_modules/" in out and "vendor/ (vendored)" in out
    assert 'next:    cd demo && vq build && vq search "your question"' in out
    gitignore = (project / ".gitignore").read_text().splitlines()
    assert gitignore.count(".vq/") == 1 and gitignore[0] == "build/"
    settings = load_settings(cwd=project / "src" / "app")
    assert settings.config_file == project / ".vq.yaml"
    assert settings.index_dir == str(project / ".vq")
    assert "project .vq.yaml" in settings.sources["config_file"]


def test_code_vault_sees_source_only(project, cli):
    """Discovery with the written config: no vendored, generated, ignored or duplicate files."""
    cli("init", project)
    found = discover(load_settings(cwd=project).vaults, SizeCap(5_000_000, 5_000_000))
    by_vault = {}
    for f in found.files:
        by_vault.setdefault(f.vault, set()).add(f.path)
    assert by_vault["code"] == {"README.md", "src/app/__init__.py", "src/app/retry.py",
                                "src/app/cli.py"}
    assert by_vault["notes"] == {"adr/0001-storage-engine.md", "research/embedding-models.md"}
    assert by_vault["docs"] == {"deploy.md", "architecture.md"}


def test_init_is_idempotent_and_never_overwrites_without_force(project, cli):
    cli("init", project)
    config = project / ".vq.yaml"
    config.write_text("vaults:\n  mine: {path: docs}\n", encoding="utf-8")
    again = cli("init", project)
    assert again.exit_code == 0 and "kept" in again.stdout and "--force" in again.stdout
    assert config.read_text(encoding="utf-8") == "vaults:\n  mine: {path: docs}\n"
    forced = cli("init", project, "--force")
    assert forced.exit_code == 0 and "wrote" in forced.stdout
    assert "code" in _config(project)["vaults"]
    assert (project / ".gitignore").read_text().splitlines().count(".vq/") == 1


def test_dry_run_and_json_write_nothing(project, cli):
    result = cli("init", project, "--dry-run", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["written"] is False and data["git"] is True
    assert [v["id"] for v in data["vaults"]] == ["notes", "docs", "code", "documents"]
    assert not (project / ".vq.yaml").exists()
    assert ".vq/" not in (project / ".gitignore").read_text()


def test_global_writes_user_config_with_absolute_paths(project, cli, tmp_path):
    result = cli("init", project, "--global")
    assert result.exit_code == 0, result.output
    user = tmp_path / "xdg-config" / "vq" / "config.yaml"
    vaults = yaml.safe_load(user.read_text(encoding="utf-8"))["vaults"]
    assert vaults["demo-code"]["path"] == str(project)
    assert vaults["demo-notes"]["path"] == str(project / ".vault")
    assert not (project / ".vq.yaml").exists()
    assert ".vq/" not in (project / ".gitignore").read_text()
    assert load_settings(cwd=project).config_file == user


def test_a_folder_of_notes_is_one_notes_vault(tmp_path):
    write_tree(tmp_path / "kb", {"a.md": "# A\n", "topics/b.md": "# B\n", "img/x.txt": "x\n"})
    plan = inspect_project(tmp_path / "kb")
    assert [(v.id, v.path, v.kind) for v in plan.vaults] == [("notes", ".", "notes")]
    assert plan.git_root is None


def test_a_sphinx_docs_folder_of_rst_pages_is_a_notes_vault(tmp_path):
    """Flask-style: docs/ holds RST pages (and conf.py); they are prose, not code."""
    write_tree(tmp_path / "app", {
        **{f"docs/{n}.rst": f"{n.title()}\n{'=' * len(n)}\n\nText.\n"
           for n in ("index", "quickstart", "api", "config")},
        "docs/conf.py": "project = 'app'\n", "src/app/__init__.py": "",
        "src/app/views.py": "def view():\n    pass\n", "CHANGES.rst": "Changes\n=======\n"})
    plan = inspect_project(tmp_path / "app")
    assert [(v.id, v.path, v.kind) for v in plan.vaults] == [("docs", "docs", "notes"),
                                                             ("code", ".", "code")]
    assert plan.vaults[0].why == "RST folder docs/ (4 RST files)"
    assert "leaves out docs/" in plan.vaults[1].why


def test_an_antora_docs_folder_of_asciidoc_pages_is_a_notes_vault(tmp_path):
    """Asciidoctor-style: docs/modules/*/pages/*.adoc; translated READMEs beside the
    English one are left out of the vault that walks them, and only there."""
    write_tree(tmp_path / "app", {
        **{f"docs/modules/ROOT/pages/{n}.adoc": f"= {n.title()}\n\nText.\n"
           for n in ("index", "install", "usage")},
        "docs/modules/ROOT/nav.adoc": "* xref:index.adoc[]\n",
        "lib/app.rb": "def run\nend\n", "README.adoc": "= App\n",
        "README-fr.adoc": "= App\n", "README-de.adoc": "= App\n"})
    plan = inspect_project(tmp_path / "app")
    docs, code = plan.vaults
    assert (docs.id, docs.path, docs.kind) == ("docs", "docs", "notes")
    assert docs.why == "AsciiDoc folder docs/ (4 AsciiDoc files)"
    assert (code.path, code.kind) == (".", "code")
    assert {"*-fr.adoc", "*-de.adoc"} <= set(code.exclude)
    assert code.why.endswith("leaves out translations (de, fr)")
    assert not any(e.endswith(".adoc") for e in docs.exclude)  # no such page there
    note = next(n for n in plan.notes if n.startswith("translations in the project"))
    assert "left out de, fr (2 pages)" in note


def test_config_discovery_warns_when_another_config_wins(project, cli, tmp_path):
    other = tmp_path / "elsewhere.yaml"
    other.write_text("vaults: {}\n", encoding="utf-8")
    result = cli("init", project, env={"VQ_CONFIG": str(other)})
    assert result.exit_code == 0
    assert f"vq reads {other}" in result.stderr


@pytest.mark.model
def test_init_build_search_from_a_subfolder(project, cli, build, monkeypatch):
    """The whole first-run path: init, a real build, a real search from deep inside."""
    from tests.index.test_documents import make_pdf

    (project / "papers" / "spec.pdf").write_bytes(make_pdf([["Paper about sensor calibration"]]))
    assert cli("init", project).exit_code == 0
    summary = build(load_settings(cwd=project))
    assert summary.outcome == "ok" and summary.files_errored == 0, summary.problems
    monkeypatch.chdir(project / "src" / "app")
    result = cli("search", "why LanceDB quokka", "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits[0]["vault"] == "notes" and hits[0]["path"] == "adr/0001-storage-engine.md"
    code = cli("search", "exponential backoff", "--vault", "code", "--json")
    assert json.loads(code.stdout)[0]["path"] == "src/app/retry.py"


@pytest.mark.slow
def test_shell_completion_lists_vault_ids(project, cli):
    """Click's bash completion for `vq search --vault <TAB>`, from a project subfolder."""
    cli("init", project)
    env = {"_VQ_COMPLETE": "bash_complete", "COMP_WORDS": "vq search --vault ",
           "COMP_CWORD": "3"}
    out = run_vq(env=env, cwd=project / "src")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["plain,notes", "plain,docs", "plain,code", "plain,documents"]
    env["COMP_WORDS"] = "vq build --vault do"
    out = run_vq(env=env, cwd=project)
    assert out.stdout.split() == ["plain,docs", "plain,documents"]



def test_a_site_folder_of_markdown_pages_is_docs_and_one_of_html_is_output(tmp_path, cli):
    """site/ is MkDocs' output (HTML) or a Hugo/Jekyll site's sources (Markdown pages)."""
    pages = {f"site/content/{name}.md": f"# {name}\n\nHow to {name}.\n"
             for name in ("install", "completions", "docgen")}
    hugo, mkdocs = tmp_path / "hugo", tmp_path / "mkdocs"
    write_tree(hugo, {"main.go": "package main\n\nfunc main() {}\n", **pages})
    write_tree(mkdocs, {"app.py": "def main():\n    pass\n",
                        "site/index.html": "<html><body>Home</body></html>\n",
                        "site/install/index.html": "<html><body>Install</body></html>\n",
                        "site/README.md": "# Built by MkDocs\n"})
    assert cli("init", hugo, "--no-estimate").exit_code == 0
    vaults = _config(hugo)["vaults"]
    assert vaults["site"] == {"path": "site", "kind": "notes"}
    assert "/site/" in vaults["code"]["exclude"]
    result = cli("init", mkdocs, "--no-estimate")
    assert result.exit_code == 0 and "site/ (generated)" in result.stdout
    assert set(_config(mkdocs)["vaults"]) == {"code"}


def test_pdfs_with_no_text_are_not_proposed_and_the_build_has_no_error(tmp_path, cli, build):
    """A logo in four colours is a drawing: proposed as a document it was an error at every
    build. A folder of drawings is excluded as one glob; a scan beside a paper by name."""
    from tests.index.test_documents import make_pdf

    drawing, paper = make_pdf([[], []], outline=False), make_pdf([[], ["Rope care"]])
    write_tree(tmp_path / "p", {"src/app.py": "def main():\n    pass\n"})
    for rel, data in {"logo/Logo.pdf": drawing, "logo/Logo White.pdf": drawing,
                      "papers/manual.pdf": paper, "papers/scan.pdf": drawing}.items():
        (tmp_path / "p" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "p" / rel).write_bytes(data)
    result = cli("init", tmp_path / "p")
    assert result.exit_code == 0, result.output
    assert "left out 3 PDFs with no text in their first 5 pages (logo/, papers/)" in result.stderr
    vaults = _config(tmp_path / "p")["vaults"]
    assert vaults["docs"]["include"] == ["*.pdf"]
    assert vaults["docs"]["exclude"] == ["/logo/*.pdf", "/papers/scan.pdf"]
    assert "*.pdf" in vaults["code"]["exclude"]
    summary = build(load_settings(cwd=tmp_path / "p"))
    assert summary.outcome == "ok" and summary.files_errored == 0, summary.problems
    assert summary.files_seen == summary.files_new == 2  # app.py and the manual

    for rel in ("papers/manual.pdf", "papers/scan.pdf"):
        (tmp_path / "p" / rel).unlink()
    plan = inspect_project(tmp_path / "p")
    assert [v.kind for v in plan.vaults] == ["code"]  # nothing left to propose as documents
    assert "*.pdf" in plan.vaults[0].exclude


def test_the_pdf_probe_stops_at_its_time_budget(tmp_path):
    """Init answers in seconds however many PDFs: what was not looked into stays proposed."""
    from tests.index.test_documents import make_pdf
    from vq.indexer.pdf_probe import probe_pdfs

    for n in range(3):
        (tmp_path / f"{n}.pdf").write_bytes(make_pdf([[]], outline=False))
    ticks = iter(range(100))
    probe = probe_pdfs(tmp_path, ["0.pdf", "1.pdf", "2.pdf"], 10**6, budget_s=2.5,
                       clock=lambda: next(ticks))
    assert probe.textless == ("0.pdf", "1.pdf") and probe.unprobed == 1
    assert probe_pdfs(tmp_path, ["0.pdf"], 100).textless == ()  # over the size cap: not read


def test_a_monorepos_docs_below_a_code_folder_are_a_notes_vault(tmp_path, cli):
    """zod keeps its docs in packages/docs/content/ (18 MDX pages and one test of them)
    beside the docs site's own code: that folder is proposed, named for its parent; test
    fixtures of Markdown are not docs."""
    pages = {f"packages/docs/content/{n}.mdx": f"# Page {n}\n\nText.\n" for n in "abcdef"}
    fixtures = {f"packages/core/{d}/{n}.md": "# Fixture\n" for n in "abcdef"
                for d in ("tests/fixtures", "__tests__/e2e/markdown", "__e2e__/site")}
    write_tree(tmp_path / "p", {**pages, **fixtures,
                                "packages/docs/content/api.test.ts": "test('x', () => {});\n",
                                **{f"packages/docs/app/{n}.tsx": "export default function P() {}\n"
                                   for n in ("page", "layout", "nav")},
                                **{f"packages/core/src/{n}.ts": "export const z = 1;\n"
                                   for n in range(20)}})
    result = cli("init", tmp_path / "p")
    assert result.exit_code == 0, result.output
    vaults = _config(tmp_path / "p")["vaults"]
    assert {k: v["path"] for k, v in vaults.items()} == {"docs": "packages/docs/content",
                                                        "code": "."}
    assert "/packages/docs/content/" in vaults["code"]["exclude"]
    found = discover(load_settings(cwd=tmp_path / "p").vaults, SizeCap(10**6, 10**6))
    by_vault = {}
    for f in found.files:
        by_vault.setdefault(f.vault, set()).add(f.path)
    assert by_vault["docs"] == {f"{n}.mdx" for n in "abcdef"} | {"api.test.ts"}
    assert "packages/core/tests/fixtures/a.md" in by_vault["code"]
    assert not any(p.startswith("packages/docs/content/") for p in by_vault["code"])
    for package in ("cli", "core"):  # docs per package: each named for its package
        write_tree(tmp_path / "p", {f"packages/{package}/docs/{n}.md": "# P\n" for n in "abcde"})
        write_tree(tmp_path / "p", {f"packages/{package}/src/{n}.ts": "export const a = 1;\n"
                                    for n in range(5)})
    plan = inspect_project(tmp_path / "p")
    assert {v.id: v.path for v in plan.vaults if v.kind == "notes"} == {
        "packages-docs": "packages/docs/content", "cli-docs": "packages/cli/docs",
        "core-docs": "packages/core/docs"}


def test_a_markdown_parsers_test_cases_are_not_docs(tmp_path):
    """markdown-it and remark keep hundreds of Markdown cases in test/: a folder that is
    mostly Markdown by count, and test data all the same, left to the code vault."""
    write_tree(tmp_path, {**{f"test/fixtures/{n}.md": "# Case\n\n*a*\n" for n in range(12)},
                          **{f"src/__tests__/cases/{n}.md": "# Case\n" for n in range(6)},
                          **{f"lib/{n}.js": "module.exports = 1;\n" for n in range(3)},
                          "README.md": "# Parser\n"})
    plan = inspect_project(tmp_path)
    assert [(v.id, v.kind, v.path) for v in plan.vaults] == [("code", "code", ".")]


def test_a_module_named_build_is_source_and_a_packages_dist_is_output(tmp_path):
    """VitePress' src/node/build/ (render.ts, bundle.ts) is its build step's source, and
    pip has operations/build/; a tool writes build/ at the root, dist/ beside a package's
    package.json, and a .gitignore that names a folder wins."""
    write_tree(tmp_path, {
        "src/node/tsconfig.json": "{}\n",  # a compiler's settings, not a package
        **{f"src/node/build/{n}.ts": "export function render() {}\n" for n in ("a", "b")},
        "src/node/index.ts": "export {}\n",
        "build/bundle.js": "var a = 1;\n",
        "packages/ui/package.json": "{}\n", "packages/ui/dist/ui.js": "var b = 2;\n",
        "packages/ui/src/out/ignored.ts": "export {}\n", "packages/ui/.gitignore": "out/\n",
    })
    plan = inspect_project(tmp_path)
    code = next(v for v in plan.vaults if v.kind == "code")
    assert code.why.startswith("source: 3 code files (typescript 3)"), code.why
    assert set(code.exclude) == {"/build/", "/packages/ui/dist/", "/packages/ui/src/out/"}


def test_a_folder_that_copies_the_one_it_is_named_after_is_said(tmp_path):
    """The Python Data Science Handbook keeps its first edition in notebooks_v1/ beside
    notebooks/: every hit came twice. vq cannot know which is current; it says so."""
    names = [f"0{n}.00-Chapter.md" for n in range(6)]
    write_tree(tmp_path, {**{f"notebooks/{n}": "# Now\n" for n in names},
                          **{f"notebooks_v1/{n}": "# Then\n" for n in names},
                          **{f"notebooks-tools/{n}.py": "x = 1\n" for n in range(6)},
                          **{f"docs/{n}": "# Docs\n" for n in names[:4]},
                          **{f"docs.old/{n}": "# Docs\n" for n in names[:4]}})
    notes = [n for n in inspect_project(tmp_path).notes if "older copy" in n]
    assert notes == ['notebooks_v1/ has 6 of the 6 file names of notebooks/ (an older copy?): '
                     'both are indexed, so each hit may come twice; exclude one '
                     '("/notebooks_v1/") if so']  # docs.old/: 4 files, too few to say


def test_a_copy_note_names_only_folders_that_are_indexed(tmp_path):
    """Obsidian's help keeps one vault per language (en/, pt/, pt-br/, ...): pt-br/
    shares pt/'s file names, but both are translations left out, so a note saying
    "both are indexed" was false."""
    names = [f"Page {n}.md" for n in range(7)]
    write_tree(tmp_path, {**{f"en/{n}": "# Page\n\nThe text of the page.\n" for n in names},
                          **{f"pt/{n}": "# Página\n\nO texto da página.\n" for n in names},
                          **{f"pt-br/{n}": "# Página\n\nO texto da página.\n" for n in names},
                          "scripts/build.ts": "export {}\n"})
    plan = inspect_project(tmp_path)
    assert [t.left_out for t in plan.translations] == [("pt", "pt-br")], plan.translations
    assert not [n for n in plan.notes if "older copy" in n], plan.notes


def test_a_folder_of_pages_marked_generated_is_left_out(tmp_path):
    """The Rust book's nostarch/ holds the print edition's chapters, each opening with
    "<!-- DO NOT EDIT THIS FILE. ... generated from the content in the /src/ directory":
    proposed as a vault beside src/, every hit came twice. Its documents (docx/) go
    with it; one hand-written page among them does not keep the folder."""
    chapter = "<!-- DO NOT EDIT THIS FILE.\n\nThis file is periodically generated.\n-->\n\n# Ch\n"
    write_tree(tmp_path, {**{f"src/ch0{n}.md": f"# Chapter {n}\n\nText.\n" for n in range(5)},
                          **{f"nostarch/chapter0{n}.md": chapter for n in range(5)},
                          "nostarch/preface.md": "# Preface\n\nWritten by hand.\n",
                          "nostarch/docx/chapter01.docx": "PK",
                          "listings/main.rs": "fn main() {}\n",
                          "notes/a.md": "# A\n\n@generated is a word here, not a mark.\n"})
    plan = inspect_project(tmp_path)
    assert sorted(v.path for v in plan.vaults if v.kind == "notes") == ["notes", "src"]
    code = next(v for v in plan.vaults if v.kind == "code")
    assert "/nostarch/" in code.exclude and "nostarch/ (generated)" in code.why, code
    assert not [v for v in plan.vaults if v.kind == "docs"]


def test_a_folder_of_generated_html_is_left_out(tmp_path):
    """Alamofire checks in docs/: 332 Jazzy pages (a docset holds them again) restating
    its Swift doc comments, ten times the source's embedding work. Generated HTML names
    its generator in a meta tag or a "Generated by" line at the foot; a folder with
    pages of its own, or HTML with no such mark, is kept, and a notes folder of saved
    pages (no code: no repository's API reference) is never judged."""
    footer = "<p>Generated by <a href='https://github.com/realm/jazzy'>jazzy</a></p>"
    jazzy = "<html><head><title>{0}</title></head><body>" + "<p>Docs of {0}.</p>" * 300 + \
        footer + "</body></html>\n"
    doxygen = '<html><head><meta name="generator" content="Doxygen 1.9.8"/></head>' \
        "<body>{0}</body></html>\n"
    write_tree(tmp_path / "repo", {
        "Source/Session.swift": "final class Session {}\n",
        **{f"docs/Classes/{n}.html": jazzy.format(n) for n in ("Session", "Request", "Route")},
        **{f"api/{n}.html": doxygen.format(n) for n in ("a", "b", "c")},
        **{f"manual/{n}.html": doxygen.format(n) for n in ("a", "b", "c")},
        "manual/guide.md": "# Guide\n\nWritten by hand.\n",
        **{f"web/{n}.html": f"<html><body>{n}, by hand</body></html>\n" for n in "abc"}})
    plan = inspect_project(tmp_path / "repo")
    code = next(v for v in plan.vaults if v.kind == "code")
    assert {"/docs/", "/api/"} <= set(code.exclude), code
    assert "docs/ (generated HTML)" in code.why
    assert "/web/" not in code.exclude and "manual/ (generated" not in code.why  # no mark;
    assert [v.path for v in plan.vaults if v.kind == "notes"] == ["manual"]  # pages of its own
    # below a docs folder of pages: TypeDoc's docs/api/ beside docs/*.md
    typedoc = "<html><body><p>{0}</p><footer>Generated using TypeDoc</footer></body></html>\n"
    write_tree(tmp_path / "ts", {
        "src/index.ts": "export const x = 1;\n",
        **{f"docs/{n}.md": f"# {n}\n\nHow to {n}.\n" for n in ("install", "usage")},
        **{f"docs/api/classes/{n}.html": typedoc.format(n) for n in ("Client", "Pool", "Url")}})
    [docs] = [v for v in inspect_project(tmp_path / "ts").vaults if v.path == "docs"]
    assert docs.exclude == ("/api/",) and "api/ (generated HTML)" in docs.why, docs
    write_tree(tmp_path / "saved", {f"articles/{n}.html": doxygen.format(n) for n in "abc"})
    assert not any("generated" in v.why for v in inspect_project(tmp_path / "saved").vaults)


def test_a_folder_of_moved_page_stubs_is_left_out_and_said(tmp_path):
    """The Rust book keeps 2018-edition/ as 102 stubs under real chapter titles ("The 2018
    edition of the book is no longer distributed ... check out the current version"):
    "what is ownership" ranked two stubs above the chapter. Pages that share a footer,
    or a short status line, are not stubs."""
    stub = ("# {t}\n\nThe 2018 edition of the book is no longer distributed with Rust's "
            "documentation.\n\nIf you came here via a link or web search, you may want to "
            "check out [the current version of the book](../{n}.html) instead.\n")
    footer = "\n\nThis page is licensed under the Creative Commons Attribution 4.0 licence.\n"
    body = "Words about {t} that only this page holds, in a paragraph of its own, " * 4
    words = ["ownership", "borrowing", "slices", "structs", "enums", "modules"]
    write_tree(tmp_path, {
        **{f"2018-edition/ch0{n}.md": stub.format(t=f"Chapter {n}", n=n) for n in range(6)},
        **{f"src/ch0{n}.md": f"# Chapter {n}\n\n{body.format(t=w)}{footer}"
           for n, w in enumerate(words)},
        **{f"decisions/000{n}-x.md": f"# {n}. Use X{n}\n\n## Status\n\nAccepted\n\n"
           f"## Context\n\n{body.format(t=w)}\n" for n, w in enumerate(words)},
        "tools/build.rs": "fn main() {}\n"})
    plan = inspect_project(tmp_path)
    assert sorted(v.path for v in plan.vaults if v.kind == "notes") == ["decisions", "src"]
    code = next(v for v in plan.vaults if v.kind == "code")
    assert "2018-edition/ (moved-page stubs)" in code.why and "/2018-edition/" in code.exclude
    assert "left out 2018-edition/: their pages mostly repeat one text (moved-page stubs?); " \
           "add one as a vault if it is not" in plan.notes


def test_daily_notes_that_are_mostly_their_template_are_kept(tmp_path):
    """In a notes app's vault, a folder of daily notes can be mostly the template's text:
    they are the user's own, never taken for moved-page stubs."""
    template = ("# {d}\n\nMorning pages: write three pages by hand before looking at a "
                "screen, whatever comes to mind.\n\n- [ ] {d}\n")
    write_tree(tmp_path, {".obsidian/app.json": "{}\n",
                          **{f"Daily/2026-01-0{n}.md": template.format(d=f"day {n}")
                             for n in range(1, 8)},
                          "scripts/tool.py": "x = 1\n"})
    plan = inspect_project(tmp_path)
    assert not [n for n in plan.notes if "stubs" in n], plan.notes
    assert [v.path for v in plan.vaults if v.kind == "notes"] == ["Daily"], plan.vaults


def test_text_formats_no_reader_takes_are_named_in_a_note(tmp_path):
    """An Objective-C project's ``.m`` files were silently left out ("nothing
    recognisable yet"); a note names each text format no reader takes, most files
    first, and leaves out binary ones (images), credentials (``.pem``: never read, and no
    note invites anyone to), test fixtures, and formats with a file or two."""
    files = {f"Sources/A{i}.m": f"@implementation A{i}\n- (void)run {{}}\n@end\n" for i in range(4)}
    files |= {f"Sources/B{i}.xib": "<document/>\n" for i in range(3)}
    files |= {f"certs/c{i}.pem": "-----BEGIN CERTIFICATE-----\n" for i in range(5)}
    files |= {f"tests/cases/t{i}.tok": "[1, 2]\n" for i in range(6)}  # a test's fixtures
    files |= {"one.zzz": "stray\n", "README.md": "# App\n"}
    write_tree(tmp_path, files)
    for i in range(5):
        (tmp_path / "img" / f"icon{i}.png").parent.mkdir(exist_ok=True)
        (tmp_path / "img" / f"icon{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    plan = inspect_project(tmp_path)
    notes = [n for n in plan.notes if n.startswith("not read:")]
    assert notes == ["not read: .m (4 files), .xib (3 files): vq has no reader for these "
                     "formats, so search will not find them (hooks: can convert a document "
                     "format to text)"]
