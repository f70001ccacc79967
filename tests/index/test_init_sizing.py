"""`vq init` on a project with translated docs: only the model's languages are proposed,
what was left out is said, and the first build is sized from a sample of real chunks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.conftest import write_tree
from vq.core.settings import Settings
from vq.core.walk import UNCAPPED, discover
from vq.indexer.estimate import biggest_folders, size_plan, suggest_excludes
from vq.indexer.project import inspect_project
from vq.indexer.translations import find_translations, model_languages

PAGE = "# {title}\n\n{title}: {body}\n\n## Details\n\n{body}\n"  # pages of one text are stubs
BODY = "The server retries each request with exponential backoff and jitter. " * 6
FRENCH = "# {title}\n\nLe serveur relance chaque requête avec un délai qui croît. " * 3
GERMAN = "# {title}\n\nDer Server wiederholt jede Anfrage mit wachsender Wartezeit. " * 3
MULTILINGUAL = "paraphrase-multilingual-MiniLM-L12-v2"


def page(title: str) -> str:
    return PAGE.format(title=title, body=BODY)


@pytest.fixture
def framework(tmp_path):
    """A web framework's repository: its package, and docs in three languages (the
    FastAPI layout: docs/<lang>/docs/...)."""
    root = tmp_path / "framework"
    files = {"framework/__init__.py": "def app():\n    return 1\n",
             "framework/routing.py": "def route(path):\n    return path\n",
             "README.md": "# Framework\n"}
    for lang, n in (("en", 4), ("es", 3), ("pt-BR", 3), ("zh", 2)):
        for i in range(n):
            files[f"docs/{lang}/docs/page{i}.md"] = page(f"Page {i} ({lang})")
    write_tree(root, files)
    return root


def vault(plan, vid):
    return next(v for v in plan.vaults if v.id == vid)


def test_only_the_models_language_is_proposed_and_the_rest_is_named(framework):
    plan = inspect_project(framework)
    docs = vault(plan, "docs")
    assert set(docs.exclude) >= {"/es/", "/pt-BR/", "/zh/"}
    assert "/en/" not in docs.exclude
    assert "leaves out translations (es, pt-BR, zh)" in docs.why
    note = next(n for n in plan.notes if n.startswith("translations in docs/"))
    assert "kept en; left out es, pt-BR, zh (8 pages)" in note
    found = discover([replace_vault(framework, docs)], UNCAPPED)
    assert {f.path.split("/")[0] for f in found.files} == {"en"}


def replace_vault(root, proposal):
    from vq.core.settings import Vault

    return Vault(proposal.id, root / proposal.path, proposal.include, proposal.exclude,
                 proposal.kind)


def test_a_multilingual_model_keeps_every_language(framework):
    assert model_languages(MULTILINGUAL) is None
    assert model_languages("all-MiniLM-L6-v2") == {"en"}
    plan = inspect_project(framework, model=MULTILINGUAL)
    assert not any(e.startswith("/es") for e in vault(plan, "docs").exclude)
    assert any("4 languages, all kept" in n for n in plan.notes)


def test_docusaurus_i18n_and_mkdocs_suffix_layouts(tmp_path):
    root = tmp_path / "site"
    write_tree(root, {
        "docs/intro.md": page("Intro"), "docs/guide.md": page("Guide"),
        "docs/faq.md": page("FAQ"), "docs/faq.fr.md": FRENCH.format(title="FAQ"),
        "docs/guide.fr.md": FRENCH.format(title="Guide"),
        "docs/api.de.mdx": GERMAN.format(title="API"),
        "i18n/fr/docusaurus-plugin-content-docs/current/intro.md": page("Intro"),
        "i18n/fr/docusaurus-plugin-content-docs/current/guide.md": page("Guide"),
        "i18n/fr/docusaurus-plugin-content-docs/current/faq.md": page("FAQ"),
        "src/index.js": "export const x = 1;\n"})
    plan = inspect_project(root)
    by_id = {v.id: v for v in plan.vaults}
    assert "i18n" not in by_id  # a vault of nothing but French is not proposed
    assert {"*.fr.md", "*.de.mdx"} <= set(by_id["docs"].exclude)
    assert {"/i18n/", "/i18n/fr/"} & set(by_id["code"].exclude)  # French never reaches code
    assert any(n.startswith("no vault for i18n/") for n in plan.notes)


def test_folders_named_like_codes_are_not_translations():
    assert find_translations(["src/js/a.md", "src/ts/b.md", "web/go/c.md"], "m") == []
    assert find_translations(["docs/de/a.md", "docs/api/b.md"], "m") == []  # one lone de/
    [tree] = find_translations(["docs/de/a.md", "docs/en/b.md", "docs/en/c.md"], "m")
    assert tree.left_out == ("docs/de",) and tree.files == {"docs/de": 1, "docs/en": 2}


def test_a_code_among_many_other_folders_is_no_translation():
    """Doom Emacs: modules/lang/ holds a module per programming language, one named hy
    (Hy, and Armenian's code); a real lang/ or docs/ tree is mostly languages."""
    modules = [f"modules/lang/{m}/README.org" for m in
               ("hy", "python", "rust", "clojure", "haskell", "ocaml", "nim")]
    assert find_translations(modules, "m") == []
    [tree] = find_translations(["site/lang/de/a.md", "site/lang/en/a.md",
                                "site/lang/assets/x.md"], "m")
    assert tree.left_out == ("site/lang/de",)
    assert find_translations(["docs/de/a.md", "docs/en/b.md", "docs/api/c.md",
                              "docs/guide/d.md", "docs/faq/e.md"], "m") == []


def test_a_lone_region_coded_folder_or_page_is_a_translation():
    """commander.js: English pages in docs/, Chinese ones in docs/zh-CN/ with their own
    names, and Readme_zh-CN.md beside Readme.md; a region written as people write it is
    unambiguous, where a lone ``de/`` or ``use-as-is.md`` is not."""
    pages = ["docs/options.md", "docs/zh-CN/术语表.md", "docs/zh-CN/可变参数的选项.md",
             "Readme.md", "Readme_zh-CN.md", "README-pt-BR.md", "docs/use-as-is.md"]
    folder, suffixed = find_translations(pages, "all-MiniLM-L6-v2")
    assert (folder.where, folder.files, folder.left_out) == \
        ("docs", {"docs/zh-CN": 2}, ("docs/zh-CN",))
    assert suffixed.files == {"*-pt-BR.md": 1, "*_zh-CN.md": 1}
    assert set(suffixed.left_out) == {"*-pt-BR.md", "*_zh-CN.md"}
    assert find_translations(pages, "paraphrase-multilingual-MiniLM-L12-v2")[0].left_out == ()


def test_a_page_in_two_or_more_languages_by_a_bare_code_is_a_translation():
    """Asciidoctor keeps README-fr.adoc and README-de.adoc beside README.adoc, and
    data/locale/attributes-<code>.adoc; one page named like a code (``intro-to.md``,
    ``what-is.md``) is a name, not a language."""
    pages = ["README.adoc", "README-fr.adoc", "README-de.adoc", "README-jp.adoc",
             "data/locale/attributes-en.adoc", "data/locale/attributes-pt_BR.adoc",
             "data/locale/attributes-sv.adoc", "docs/intro-to.md", "docs/what-is.md"]
    [tree] = find_translations(pages, "all-MiniLM-L6-v2")
    assert tree.files == {"*-de.adoc": 1, "*-en.adoc": 1, "*-fr.adoc": 1,
                          "*-pt_BR.adoc": 1, "*-sv.adoc": 1}
    assert set(tree.left_out) == {"*-de.adoc", "*-fr.adoc", "*-pt_BR.adoc", "*-sv.adoc"}
    assert find_translations(["docs/intro-to.md", "docs/what-is.md", "README-fr.adoc"],
                             "m") == []


def test_a_page_by_a_code_in_capitals_beside_its_original_is_a_translation():
    """``README_ZH.md`` and ``README_KO.md`` (zod), ``README_CN.md`` beside ``README.md``:
    capitals after an underscore, and a country written for its language (CN, JP)."""
    [tree] = find_translations(["docs-v3/README_ZH.md", "docs-v3/README_KO.md",
                                "README.md", "README_CN.md", "CONTRIBUTING_EN.md",
                                "CONTRIBUTING.md", "docs/GUIDE_IT.md"], "all-MiniLM-L6-v2")
    assert tree.files == {"*_CN.md": 1, "*_EN.md": 1, "*_KO.md": 1, "*_ZH.md": 1}
    assert set(tree.left_out) == {"*_CN.md", "*_KO.md", "*_ZH.md"}  # English is read
    assert find_translations(["README.md", "README_JP.md"], "multilingual-e5")[0].left_out == ()


def test_pages_named_like_codes_that_read_as_english_are_no_translation():
    """tldr names its pages for commands: ``git-rm.md`` beside ``git-am.md``, and
    ``docker-ps.md`` beside ``docker-rm.md``, end in Romansh, Amharic and Pashto by their
    names. Read, they are English; a French README beside a German one is not."""
    texts = {"pages/git-am.md": "# git am\n\n> Apply patch files and create a commit.",
             "pages/git-rm.md": "# git rm\n\n> Remove files from the repository index.",
             "pages/docker-ps.md": "# docker ps\n\n> List all of the containers that run.",
             "pages/docker-rm.md": "# docker rm\n\n> Remove containers, with their volumes.",
             "README-fr.md": "# Démarrer\n\nInstallez le paquet avec la commande suivante.",
             "README-de.md": "# Loslegen\n\nInstallieren Sie das Paket mit dem Befehl."}
    [tree] = find_translations([*texts, "pages/git.md"], "all-MiniLM-L6-v2", read=texts.get)
    assert tree.files == {"*-de.md": 1, "*-fr.md": 1}
    unread = find_translations(list(texts), "all-MiniLM-L6-v2")[0]  # names alone
    assert unread.files["*-rm.md"] == 2 and "*-ps.md" in unread.left_out


def test_dendron_hierarchy_names_that_read_as_english_are_no_translation(tmp_path):
    """Dendron names notes by their place in a hierarchy: ``publish.config.ga.md`` is the
    Google Analytics setting and ``giscus.id.md`` an id, not Irish and Indonesian pages;
    a page that is French by its name and its words still is."""
    root = tmp_path / "site"
    write_tree(root, {
        "vault/dendron.topic.publish.config.md": page("Publishing config"),
        "vault/dendron.topic.publish.config.ga.md": page("Google Analytics"),
        "vault/dendron.topic.publish.config.giscus.id.md": page("Giscus id"),
        "vault/dendron.topic.publish.md": page("Publishing"),
        "vault/root.md": page("Root"), "vault/root.fr.md": FRENCH.format(title="Racine")})
    plan = inspect_project(root)
    [notes] = plan.vaults
    assert set(notes.exclude) == {"*.fr.md"}


def test_folders_named_for_a_language_beside_the_original_are_translations():
    """tldr keeps pages.fr/, pages.pt_BR/ and pages.ml/ (Malayalam, though ml is no code
    for a folder of its own) beside pages/."""
    pages = ["pages/common/ls.md", "pages.fr/common/ls.md", "pages.pt_BR/common/ls.md",
             "pages.ml/common/ls.md", "pages.en/common/ls.md", "scripts.fr/a.md"]
    [tree] = find_translations(pages, "all-MiniLM-L6-v2")
    assert set(tree.files) == {"pages.fr", "pages.pt_BR", "pages.ml", "pages.en"}
    assert set(tree.left_out) == {"pages.fr", "pages.pt_BR", "pages.ml"}


def test_estimate_counts_the_chunks_a_build_writes(framework, tmp_path, test_models):
    """The sample holds every file here, so the estimate is the build's own count."""
    from vq.jobs.runner import locked_build

    plan = inspect_project(framework)
    settings = Settings(index_dir=str(tmp_path / "index"), model=test_models)
    plan.model = test_models
    estimate = size_plan(plan, replace(settings, device="cpu"))
    vaults = tuple(replace_vault(framework, v) for v in plan.vaults)
    summary = locked_build(replace(settings, vaults=vaults))
    assert estimate.files == summary.files_seen
    assert estimate.chunks == summary.chunks_written
    assert estimate.texts == summary.chunks_encoded + summary.sections_encoded
    assert estimate.device == "cpu" and estimate.rate > 0
    assert estimate.minutes == pytest.approx(estimate.texts / estimate.rate / 60)


def test_a_long_estimate_names_the_biggest_folders_as_excludes(framework, monkeypatch):
    from vq.indexer import estimate as sizing

    plan = inspect_project(framework)
    monkeypatch.setattr(sizing, "CPU_TEXTS_PER_CORE", 0.001)  # a very slow machine
    est = size_plan(plan, Settings(index_dir="unused", device="cpu"))
    assert est.long
    lines = suggest_excludes(plan, est)
    assert lines and lines[0].startswith("docs/en/docs/ (4 files")
    assert 'add "/en/docs/" to vaults.docs.exclude' in lines[0]
    monkeypatch.setattr(sizing, "CPU_TEXTS_PER_CORE", 10.0**6)
    fast = size_plan(plan, Settings(index_dir="unused", device="cpu"))
    assert not fast.long and suggest_excludes(plan, fast) == []


def test_biggest_folders_descend_while_one_folder_holds_most():
    chunks = {"docs/ref/a.md": 50.0, "docs/ref/b.md": 40.0, "docs/guide/c.md": 5.0,
              "src/x.py": 5.0, "top.md": 1.0}
    assert biggest_folders(chunks) == [("docs/ref", 2, 90), ("docs/guide", 1, 5)]
    assert biggest_folders({"a/x.md": 1.0, "b/y.md": 1.0}) == [("a", 1, 1), ("b", 1, 1)]
    tutorial = {f"tests/tutorial/t{n}/test_{k}.py": 10.0 for n in range(40) for k in range(3)}
    assert biggest_folders({**tutorial, "tests/unit/a.py": 100.0, "src/a.py": 100.0})[0] == \
        ("tests/tutorial", 120, 1200)  # its 40 folders hold 2.5% each: not worth naming


def test_init_prints_the_estimate_and_what_it_left_out(framework, cli, monkeypatch):
    from vq.indexer import estimate as sizing

    monkeypatch.setattr(sizing, "CPU_TEXTS_PER_CORE", 0.001)  # long: suggest excludes
    result = cli("init", framework, "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    estimate = next(ln for ln in out.splitlines() if ln.startswith("estimate "))
    assert "files, ~" in estimate and "texts to embed" in estimate and " on cpu (" in estimate
    assert "leaves out translations (es, pt-BR, zh)" in out
    assert 'exclude? docs/en/docs/ (4 files' in out
    assert "note: translations in docs/: kept en; left out es, pt-BR, zh" in result.stderr


def test_init_model_flag_keeps_every_language_and_is_written(framework, cli):
    import json

    import yaml

    result = cli("init", framework, "--model", MULTILINGUAL, "--no-estimate", "--json")
    data = json.loads(result.stdout)
    assert data["estimate"] is None and data["translations"][0]["left_out"] == []
    written = yaml.safe_load((framework / ".vq.yaml").read_text())
    assert written["model"] == MULTILINGUAL
    assert not any("/es/" in e for v in written["vaults"].values() for e in v.get("exclude", []))


def test_language_folders_left_out_are_named_in_one_note(tmp_path):
    """A help vault keeps each language in a top-level folder (en/, fr/, de/ ...): the
    folders that hold only left-out languages are named together, not a note each."""
    root = tmp_path / "help"
    pages = ("Start", "Sync", "Links")
    write_tree(root, {f"{lang}/{name}.md": page(name)
                      for lang in ("en", "fr", "de") for name in pages}
               | {"scripts/build.ts": "export const x = 1;\n"})
    plan = inspect_project(root)
    assert [v.path for v in plan.vaults] == ["en", "."]
    dropped = [n for n in plan.notes if n.startswith("no vault for")]
    assert dropped == ["no vault for de/, fr/: they hold only translations left out above"]


def test_a_big_folder_that_is_a_vault_is_not_suggested_to_another_vault(tmp_path):
    """tldr: pages/ is a notes vault of its own; the root's code vault already leaves it
    out, so "add /pages/ to vaults.code.exclude" was a suggestion that changed nothing."""
    from vq.indexer.estimate import Estimate

    write_tree(tmp_path, {**{f"pages/common/{n}.md": "# x\n\nWords.\n" for n in range(6)},
                          **{f"scripts/{n}.py": "x = 1\n" for n in range(3)}})
    plan = inspect_project(tmp_path)
    assert {v.id: v.path for v in plan.vaults} == {"pages": "pages", "code": "."}
    est = Estimate(files=9, chunks=9, texts=9, rate=0.001, device="cpu",
                   folders=[("pages", 6, 6), ("scripts", 3, 3), ("tiny", 1, 0)])
    assert est.long
    assert suggest_excludes(plan, est) == [
        "pages/ (6 files, ~6 chunks, ~100 min): the whole of vault pages: remove vaults.pages",
        'scripts/ (3 files, ~3 chunks, ~50 min): add "/scripts/" to vaults.code.exclude']
    # tiny/ would save seconds: not suggested
