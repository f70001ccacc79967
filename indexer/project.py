"""`vq init`'s judgement: look at a project folder and propose vaults, each with a reason.

The build's own stat walk (``vq.core.walk.discover``: no file is read except the
first line of ``.vault`` notes, to spot frontmatter, a notes app's settings, the
first pages of PDFs, to spot drawings, and the first 4 KB of pages named like a
language, to hear whether they are English), which honours
``.gitignore`` and skips hidden, vendored and generated folders, then a few
plain rules:

- ``.vault/`` (decision records: ADRs, research, plans) is a ``notes`` vault;
- top-level Markdown folders (``docs/``, or any folder that is mostly Markdown)
  are ``notes`` vaults, and so are a monorepo's docs below a code folder
  (``packages/docs/content/``);
- the source tree is one ``code`` vault at the root that excludes the folders
  above and generated folders (a folder with no code at all is one ``notes``
  vault instead);
- PDFs and other documents are a ``docs`` vault, less PDFs with no text in their first
  pages (a logo, a brand kit: ``vq.indexer.pdf_probe``), which would be an error at
  every build;
- docs translated into languages the model does not read are left out
  (``vq.indexer.translations``), and the plan says so;
- so are the folders a notes app keeps among the notes: Obsidian's templates, Logseq's
  settings and backups (``vq.indexer.note_apps``).

``vq.indexer.estimate.size_plan`` then estimates the first build.

Writing the config (``write_config``) reuses ``vq.core.configedit.save_document``,
so the file is validated by the same loader as every command and replaced
atomically; an existing config is never replaced without ``force``.
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import posixpath
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pathspec

from vq.core import confined, filetypes, paths
from vq.core.settings import DEFAULT_MODEL, Vault
from vq.core.settings_schema import MAX_DOCUMENT_BYTES
from vq.core.test_paths import is_secondary, secondary_folder
from vq.core.walk import (
    CODE_VENDORED_DIRS,
    UNCAPPED,
    discover,
    ignored,
    read_gitignore,
)
from vq.indexer import copies
from vq.indexer.note_apps import app_folders, notes_app
from vq.indexer.pdf_probe import PAGES, probe_pdfs
from vq.indexer.translations import (
    Translations,
    find_translations,
    folders_of,
    model_languages,
)

VAULT_DIR = ".vault"
INDEX_DIR = ".vq"
MARKDOWN = filetypes.MARKDOWN_EXTENSIONS
DOCUMENTS = frozenset({".pdf", ".ipynb", ".docx", ".doc", ".odt", ".rtf", ".epub", ".pptx",
                       ".odp"})
HTML = frozenset({".html", ".htm"})  # read for a generator's mark (copies.generated_html)
# Folder names that hold prose by convention, even when they also hold a few scripts.
PROSE_DIRS = frozenset({"docs", "doc", "documentation", "notes", "wiki", "adr", "adrs",
                        "decisions", "rfcs", "handbook", "guides", "manual"})
# Build output and vendored code (the code vault's walk skips the latter too) that a
# .gitignore often forgets; excluded from `code`.
GENERATED_DIRS = CODE_VENDORED_DIRS | frozenset({
    "build", "dist", "target", "out", "coverage", "htmlcov", "_build", "site", "venv", "env"})
GENERATED_GLOBS = (*(f"{d}/" for d in sorted(GENERATED_DIRS)), "*.egg-info/")
# Output names that are also module names (VitePress' src/node/build/, pip's
# operations/build/): output only where a build tool writes it, at the project root or
# beside a package's manifest (packages/x/dist/ beside package.json); elsewhere, sources.
OUTPUT_OR_MODULE_DIRS = frozenset({"build", "dist", "out", "target"})
MANIFESTS = ("package.json", "deno.json", "pyproject.toml", "setup.py",
             "setup.cfg", "Cargo.toml", "go.mod", "pom.xml", "build.gradle",
             "build.gradle.kts", "build.sbt", "CMakeLists.txt", "meson.build", "Makefile",
             "composer.json", "Gemfile", "mix.exs", "Package.swift")
# Names that are build output for one tool and sources for another: MkDocs writes its
# HTML to site/, while Hugo and Jekyll projects keep their Markdown pages in site/.
# Such a folder is looked into, and kept as sources when it is mostly Markdown.
SOURCE_OR_OUTPUT_DIRS = frozenset({"site"})
# A monorepo keeps its docs below a code folder (zod: packages/docs/content/, 18 MDX
# pages and a test of them): a folder there of at least this many prose pages, and three
# times as many as code files, is a notes vault too, unless it is test data
# (``vq.core.test_paths``); a generic name (content/) takes its parent's.
NESTED_PROSE_PAGES = 5
GENERIC_DIRS = frozenset({"content", "pages", "src", "source"})
MANY_LANGUAGES = 8  # a vault's reason names up to this many left-out languages, else counts
MANY_NAMES = 12  # a reason or a note names up to this many folders, then "and N more"
# How ``vq init`` names each prose reader's pages (``filetypes.PROSE_HANDLERS``).
PROSE_FORMATS = {"markdown": "Markdown", "rst": "RST", "asciidoc": "AsciiDoc", "org": "Org",
                 "latex": "LaTeX"}


@dataclass
class Folder:
    """What one top-level folder (``""`` for files directly at the root) holds."""

    code: Counter = field(default_factory=Counter)      # language -> files
    pages: Counter = field(default_factory=Counter)     # prose format (PROSE_FORMATS) -> files
    documents: Counter = field(default_factory=Counter)  # extension -> files

    @property
    def markdown(self) -> int:
        return self.pages["Markdown"]

    @property
    def prose(self) -> int:
        return sum(self.pages.values())

    def prose_kind(self) -> str:
        """``Markdown``, ``RST``, ``Markdown and AsciiDoc``: the formats it holds."""
        kinds = [k for k in PROSE_FORMATS.values() if self.pages[k]]
        return " and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)

    def prose_files(self) -> str:
        """``37 Markdown files``, ``59 RST files, 3 AsciiDoc files``."""
        return ", ".join(_n(self.pages[k], f"{k} file")
                         for k in PROSE_FORMATS.values() if self.pages[k])


@dataclass
class Scan:
    root: Path
    folders: dict[str, Folder] = field(default_factory=dict)
    vault_notes: int = 0
    vault_frontmatter: int = 0
    vault_sections: list[str] = field(default_factory=list)
    has_vault_dir: bool = False
    generated: list[str] = field(default_factory=list)  # rel dirs to exclude from code
    why: dict[str, str] = field(default_factory=dict)  # generated dir -> why, if not by name
    vendored: Counter = field(default_factory=Counter)
    pages: list[str] = field(default_factory=list)      # every prose page's path, from the root
    pdfs: list[str] = field(default_factory=list)       # every PDF's path, from the root
    html: list[str] = field(default_factory=list)       # every HTML page's path, from the root
    generated_html: list[str] = field(default_factory=list)  # such folders below a docs folder
    code_in: Counter = field(default_factory=Counter)   # every folder -> code files below it
    files: int = 0  # files a reader takes
    unclaimed: Counter = field(default_factory=Counter)  # extension -> files no reader takes
    unclaimed_sample: dict[str, str] = field(default_factory=dict)  # extension -> one of them
    names_in: dict[str, set[str]] = field(default_factory=dict)  # folder -> its files' names

    def folder(self, top: str) -> Folder:
        return self.folders.setdefault(top, Folder())


@dataclass(frozen=True)
class Proposal:
    """One vault ``vq init`` proposes; ``path`` is relative to the project root."""

    id: str
    path: str
    kind: str
    why: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass
class Plan:
    root: Path
    vaults: list[Proposal]
    git_root: Path | None
    notes: list[str] = field(default_factory=list)
    model: str = DEFAULT_MODEL
    pin_model: bool = False        # write ``model:`` into the config (`vq init --model`)
    max_document_bytes: int = MAX_DOCUMENT_BYTES  # PDFs larger are not looked into
    translations: list[Translations] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"root": str(self.root), "git": self.git_root is not None,
                "vaults": [asdict(v) for v in self.vaults], "notes": self.notes,
                "translations": [{"where": t.where, "files": t.files,
                                  "left_out": list(t.left_out)} for t in self.translations]}


def inspect_project(root: Path, model: str = DEFAULT_MODEL,
                    max_document_bytes: int = MAX_DOCUMENT_BYTES) -> Plan:
    """The vaults vq proposes for ``root``, and why; reads names and stats, and PDFs'
    first pages. ``model`` decides which languages of a translated docs tree are
    proposed; a PDF over ``max_document_bytes`` is not opened."""
    root = root.resolve()
    scan = scan_project(root)
    stub_notes = _leave_out_copies(scan)
    plan = Plan(root, [], find_git_root(root), model=model,
                max_document_bytes=max_document_bytes)
    taken: set[str] = set()
    if scan.has_vault_dir:
        plan.vaults.append(_vault_dir_proposal(scan, taken))
    prose = _prose_folders(scan)
    code_files = sum(sum(f.code.values()) for top, f in scan.folders.items() if top not in prose)
    doc_globs = tuple(f"*{ext}" for ext in sorted(_documents(scan)))
    if code_files:
        prose += _nested_prose_folders(scan, prose)
        names = _folder_names(prose)
        for top in prose:
            plan.vaults.append(_prose_proposal(scan, top, doc_globs, taken, names))
        plan.vaults.append(_code_proposal(scan, prose, doc_globs, taken))
    elif any(f.prose for f in scan.folders.values()) or not scan.has_vault_dir:
        plan.vaults.append(_root_notes_proposal(scan, doc_globs, taken))
    if doc_globs:
        documents = _documents_proposal(scan, taken, _textless_pdfs(plan, scan))
        plan.vaults.extend([documents] if documents else [])
    for folder in scan.generated_html:
        plan.vaults[:] = [_excluding(v, folder, "generated HTML") for v in plan.vaults]
    _leave_out_translations(plan, scan)
    _leave_out_app_folders(plan)
    plan.notes += _unread_note(scan)
    indexed = {f: n for f, n in scan.names_in.items() if _indexed(plan.vaults, f)}
    plan.notes += stub_notes + copies.copy_notes(indexed)
    return plan


def scan_project(root: Path) -> Scan:
    """Count code, Markdown and document files per top-level folder: the build's walk of
    the whole project, with generated folders pruned (and named) instead of walked."""
    scan = Scan(root, has_vault_dir=(root / VAULT_DIR).is_dir())
    if scan.has_vault_dir:
        _scan_vault_dir(root / VAULT_DIR, scan)
    _scan_tree(scan, "")
    scan.generated.sort()
    return scan


def _scan_tree(scan: Scan, top: str) -> None:
    """Count the files below ``top`` (``""``: the root), generated folders pruned;
    a pruned folder that holds sources after all is counted in turn."""
    found = discover([Vault("project", scan.root / top, exclude=GENERATED_GLOBS)],
                     UNCAPPED, hooked=DOCUMENTS, unclaimed=True)
    prefix = f"{top}/" if top else ""
    scan.files += len(found.files)
    for entry in found.files:
        _count_file(scan, prefix + entry.path)
    for rel in found.unclaimed or ():
        if is_secondary(rel):
            continue  # a test's fixtures (aeson's 558 .tok files) leave nothing unsearchable
        key = filetypes.suffix(rel) or rel.rpartition("/")[2]
        scan.unclaimed[key] += 1
        scan.unclaimed_sample.setdefault(key, prefix + rel)
    for _, rel, why in found.pruned:
        rel = prefix + rel
        name = rel.rsplit("/", 1)[-1]
        if why == "vendored":
            scan.vendored[name] += 1
        elif name in SOURCE_OR_OUTPUT_DIRS and _markdown_sources(scan, rel):
            continue  # counted as the sources it holds
        elif name in OUTPUT_OR_MODULE_DIRS and _a_module(scan.root, rel):
            _scan_tree(scan, rel)  # a module named build/: sources
        elif name in GENERATED_DIRS or name.endswith(".egg-info"):
            scan.generated.append(rel)  # pruned by GENERATED_GLOBS (or also .gitignore)


def _a_module(root: Path, rel: str) -> bool:
    """``rel`` (a build/, dist/, out/ or target/ folder the scan pruned) holds sources:
    it is not where a build tool writes (the project root, beside a package's
    manifest), and no ``.gitignore`` on the way down leaves it out."""
    parent = posixpath.dirname(rel)
    if not parent or any((root / parent / name).is_file() for name in MANIFESTS):
        return False
    ignores = sum((read_gitignore(root / folder, folder) for folder in ["", *folders_of(rel)]),
                  ())
    return not ignored(rel, True, None, ignores)


def _markdown_sources(scan: Scan, rel: str) -> bool:
    """Count ``rel``'s files into ``scan`` when they are Markdown sources (more Markdown
    than HTML and code: a Hugo or Jekyll site's pages), not a generator's output."""
    found = discover([Vault("site", scan.root / rel, exclude=GENERATED_GLOBS)], UNCAPPED,
                     hooked=DOCUMENTS)
    paths = [f"{rel}/{entry.path}" for entry in found.files]
    markdown = sum(filetypes.suffix(p) in MARKDOWN for p in paths)
    other = sum(filetypes.handler_name(p) in ("html", "code") for p in paths)
    if markdown <= other:
        return False
    for path in paths:
        _count_file(scan, path)
    return True


def _count_file(scan: Scan, rel: str) -> None:
    top = rel.split("/", 1)[0] if "/" in rel else ""
    folder, _, name = rel.rpartition("/")
    scan.names_in.setdefault(folder, set()).add(name)
    suffix = filetypes.suffix(rel)
    language = filetypes.language_for(rel)
    prose = PROSE_FORMATS.get(filetypes.handler_name(rel) or "")
    if prose and secondary_folder(posixpath.dirname(rel)):
        return  # a test's fixtures (a Markdown parser's 500 cases) are not docs: left to code
    if prose:
        scan.folder(top).pages[prose] += 1
        scan.pages.append(rel)
    elif language:
        scan.folder(top).code[language] += 1
        scan.code_in.update(folders_of(rel))
    elif suffix in DOCUMENTS:
        scan.folder(top).documents[suffix] += 1
        if suffix == ".pdf":
            scan.pdfs.append(rel)
    elif suffix in HTML:
        scan.html.append(rel)


def _scan_vault_dir(folder: Path, scan: Scan) -> None:
    found = discover([Vault("notes", folder)], UNCAPPED)
    sections = {f.path.split("/", 1)[0] for f in found.files if "/" in f.path}
    scan.vault_sections = sorted(sections)
    for entry in found.files:
        if filetypes.suffix(entry.path) in MARKDOWN:
            scan.vault_notes += 1
            scan.vault_frontmatter += _has_frontmatter(entry.abs_path)


def _has_frontmatter(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip() == "---"
    except OSError:
        return False


def _prose_folders(scan: Scan) -> list[str]:
    """Top-level folders that are prose by name, or mostly prose pages by content."""
    out = []
    for top, f in sorted(scan.folders.items()):
        if not top or not f.prose or top in scan.generated:
            continue
        if top.lower() in PROSE_DIRS or (f.prose >= 3 and f.prose > sum(f.code.values())):
            out.append(top)
    return out


def _nested_prose_folders(scan: Scan, tops: list[str]) -> list[str]:
    """Folders below a code folder that hold prose (``NESTED_PROSE_PAGES`` pages or more,
    three times their code files), the outermost of each such tree."""
    pages: Counter = Counter()
    for page in scan.pages:
        if page.split("/", 1)[0] not in (*tops, *scan.generated):
            pages.update(folders_of(page)[1:])
    chosen: list[str] = []
    for folder in sorted(pages, key=lambda f: (f.count("/"), f)):
        if (pages[folder] >= max(NESTED_PROSE_PAGES, 3 * scan.code_in[folder])
                and not secondary_folder(folder)
                and not _inside(folder, chosen)):
            chosen.append(folder)
    return chosen


def _documents(scan: Scan) -> Counter:
    total: Counter = Counter()
    for top, f in scan.folders.items():
        if top not in scan.generated:  # nostarch/docx/: the print edition's manuscripts
            total.update(f.documents)
    return total


def _unique(taken: set[str], *candidates: str) -> str:
    for name in candidates:
        slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-.")
        if slug and slug not in taken:
            taken.add(slug)
            return slug
    n = 2
    while f"{candidates[0]}-{n}" in taken:
        n += 1
    taken.add(f"{candidates[0]}-{n}")
    return f"{candidates[0]}-{n}"


def _vault_dir_proposal(scan: Scan, taken: set[str]) -> Proposal:
    sections = ", ".join(s + "/" for s in scan.vault_sections) or "no subfolders"
    why = (f"decision records in {VAULT_DIR}/ ({_n(scan.vault_notes, 'Markdown file')}, "
           f"{scan.vault_frontmatter} with frontmatter; {sections})")
    return Proposal(_unique(taken, "notes", "vault"), VAULT_DIR, "notes", why)


def _prose_proposal(scan: Scan, top: str, doc_globs: tuple[str, ...], taken: set[str],
                    names: dict[str, str]) -> Proposal:
    f = scan.folders[top] if "/" not in top else _pages_in(scan, top)
    why = f"{f.prose_kind()} folder {top}/ ({f.prose_files()})"
    name = names.get(top, top)
    return Proposal(_unique(taken, name, f"notes-{name}"), top, "notes", why, exclude=doc_globs)


def _folder_names(folders: list[str]) -> dict[str, str]:
    """A vault name for each prose folder: its own (a generic ``content/`` its parent's:
    ``packages/docs/content/`` is docs), qualified by the folder above where two would
    share one (``packages/cli/docs/``, ``packages/core/docs/``: cli-docs, core-docs)."""
    def parts(folder: str) -> list[str]:
        out = folder.split("/")
        return out[:-1] if len(out) > 1 and out[-1].lower() in GENERIC_DIRS else out

    plain = {f: parts(f)[-1] for f in folders}
    shared = Counter(plain.values())
    return {f: (f"{parts(f)[-2]}-{name}" if shared[name] > 1 and len(parts(f)) > 1 else name)
            for f, name in plain.items()}


def _pages_in(scan: Scan, folder: str) -> Folder:
    """The prose pages below ``folder``, by format."""
    formats = (PROSE_FORMATS.get(filetypes.handler_name(p) or "") for p in scan.pages
               if _inside(p, [folder]))
    return Folder(pages=Counter(f for f in formats if f))


def _code_proposal(scan: Scan, prose: list[str], doc_globs: tuple[str, ...], taken: set[str]
                   ) -> Proposal:
    languages: Counter = Counter()
    for top, f in scan.folders.items():
        if top not in prose and top not in scan.generated:
            languages.update(f.code)
    top3 = ", ".join(f"{lang} {n}" for lang, n in languages.most_common(3))
    more = f", {_n(len(languages) - 3, 'more language')}" if len(languages) > 3 else ""
    parts = [f"source: {_n(sum(languages.values()), 'code file')} ({top3}{more})",
             "honours .gitignore"]
    if scan.vendored:
        parts.append("skips vendored " + ", ".join(f"{d}/" for d in sorted(scan.vendored)))
    exclude = tuple(f"/{d}/" for d in (*prose, *scan.generated)) + doc_globs
    if prose or scan.generated:
        left_out = [f"{d}/" for d in prose] + \
            [f"{d}/ ({_why_left_out(scan, d)})" for d in scan.generated]
        parts.append("leaves out " + _listed(left_out))
    return Proposal(_unique(taken, "code", "src"), ".", "code", "; ".join(parts),
                    exclude=exclude)


def _why_left_out(scan: Scan, folder: str) -> str:
    """"vendored" for other people's code (the code vault's walk skips it anyway), what
    ``vq.indexer.copies`` found, else "generated"."""
    if folder.rsplit("/", 1)[-1].lower() in CODE_VENDORED_DIRS:
        return "vendored"
    return scan.why.get(folder, "generated")


def _leave_out_copies(scan: Scan) -> list[str]:
    """Top-level folders of generated copies or moved-page stubs (``vq.indexer.copies``)
    join the folders every vault leaves out; stubs, being a guess, are said in the note
    that comes back."""
    read = functools.cache(lambda rel: _first_words(scan.root, rel, copies.HEAD_BYTES))
    # stubs are a docs site's, in a repository: a notes app's daily notes can be mostly
    # their template, and are the user's own
    docs_site = not (scan.has_vault_dir or notes_app(scan.root)) and \
        any(f.code for f in scan.folders.values())
    stubs = []
    for top, pages in sorted(copies.by_top(scan.pages, scan.generated).items()):
        if copies.generated(pages, read):
            scan.generated.append(top)
        elif docs_site and copies.stubs(pages, read):
            scan.generated.append(top)
            scan.why[top] = "moved-page stubs"
            stubs.append(f"{top}/")
    if docs_site:
        _leave_out_generated_html(scan)
    return [f"left out {_listed(stubs)}: their pages mostly repeat one text (moved-page "
            "stubs?); add one as a vault if it is not"] if stubs else []


def _leave_out_generated_html(scan: Scan) -> None:
    """A repository's folder of generated HTML with no pages of its own below it (an API
    reference built from the source's doc comments) is left out: at the top level it
    joins the generated folders; below a docs folder (TypeDoc's ``docs/api/`` beside
    ``docs/*.md``) every vault that walks it excludes it (``Scan.generated_html``)."""
    ends = functools.cache(lambda rel: _first_words(scan.root, rel, copies.END_BYTES,
                                                    confined.read_ends))
    prose_below = {folder for page in scan.pages for folder in folders_of(page)}
    trees: dict[str, list[str]] = {}
    for page in scan.html:
        tree = next((f for f in folders_of(page) if f not in prose_below), None)
        if tree is not None and tree.split("/", 1)[0] not in scan.generated:
            trees.setdefault(tree, []).append(page)
    for tree, pages in sorted(trees.items()):
        if not copies.generated_html(pages, ends):
            continue
        if "/" in tree:
            scan.generated_html.append(tree)
        else:
            scan.generated.append(tree)
            scan.why[tree] = "generated HTML"


def _root_notes_proposal(scan: Scan, doc_globs: tuple[str, ...], taken: set[str]) -> Proposal:
    every = Folder(pages=sum((f.pages for f in scan.folders.values()), Counter()))
    why = (f"no source code found; the folder itself is notes ({every.prose_files()})"
           if every.prose else "nothing recognisable yet: indexing the whole folder as notes")
    exclude = tuple(f"/{d}/" for d in scan.generated) + doc_globs
    return Proposal(_unique(taken, "notes", scan.root.name), ".", "notes", why, exclude=exclude)


def _textless_pdfs(plan: Plan, scan: Scan) -> list[str]:
    """The PDFs with no text in their first pages, said in a note (the other vaults keep
    excluding every PDF: a document is the docs vault's, or no vault's)."""
    probe = probe_pdfs(scan.root, scan.pdfs, plan.max_document_bytes)
    if probe.unprobed:
        plan.notes.append(f"{_n(probe.unprobed, 'PDF')} not looked into for text in time: "
                          "proposed as documents")
    if probe.textless:
        where = sorted({(posixpath.dirname(p) or ".") + "/" for p in probe.textless})
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more folders"
                                         if len(where) > 3 else "")
        plan.notes.append(f"left out {_n(len(probe.textless), 'PDF')} with no text in their "
                          f"first {PAGES} pages ({shown}): drawings or scans; an OCR hook "
                          "indexes scans (docs/documents-and-code.md)")
    return list(probe.textless)


def _without_pdfs(scan: Scan, textless: list[str]) -> list[str]:
    """Excludes for ``textless``: a folder's PDFs as one glob when none of them has text."""
    if not textless:
        return []
    left_out = Counter(posixpath.dirname(p) for p in textless)
    every = Counter(posixpath.dirname(p) for p in scan.pdfs)
    whole = {f for f, n in left_out.items() if n == every[f]}  # folders of drawings only
    out = [f"/{f}/*.pdf" if f else "/*.pdf" for f in sorted(whole)]
    return out + [f"/{p}" for p in textless if posixpath.dirname(p) not in whole]


def _documents_proposal(scan: Scan, taken: set[str], textless: list[str]) -> Proposal | None:
    """Every document, less the PDFs with no text; None when nothing is left."""
    counts = _documents(scan)
    counts[".pdf"] -= len(textless)
    counts = +counts  # drops what reached zero
    if not counts:
        return None
    listed = ", ".join(f"{ext} {n}" for ext, n in counts.most_common())
    why = f"documents: {_n(sum(counts.values()), 'file')} ({listed})"
    unread = sorted(ext for ext in counts if filetypes.handler_name("x" + ext) is None)
    if unread:
        why += (f"; this vq has no text extractor for {', '.join(unread)} yet: the vault is "
                "ready for when it does")
    include = tuple(f"*{ext}" for ext in sorted(counts))
    exclude = tuple(f"/{d}/" for d in scan.generated) + tuple(_without_pdfs(scan, textless))
    return Proposal(_unique(taken, "docs", "documents"), ".", "docs", why, include, exclude)


def _leave_out_translations(plan: Plan, scan: Scan) -> None:
    """Exclude the translated docs the model does not read from every vault that would
    walk them, and say what was left out (in the vault's reason and a note)."""
    plan.translations = find_translations(scan.pages, plan.model,
                                          read=lambda rel: _first_words(scan.root, rel))
    reads = "every language" if model_languages(plan.model) is None else "English"
    for tree in plan.translations:
        where = f"{tree.where}/" if tree.where else "the project"
        kept = [_lang(k) for k in tree.files if k not in tree.left_out]
        if not tree.left_out:
            plan.notes.append(f"translations in {where}: {len(tree.files)} languages, all "
                              f"kept ({plan.model} reads {reads})")
            continue
        names = _listed([_lang(k) for k in tree.left_out])
        kept_part = f"kept {', '.join(kept)}; " if kept else ""  # else: the pages beside
        plan.notes.append(
            f"translations in {where}: {kept_part}left out {names} "
            f"({_n(tree.left_out_files, 'page')}): {plan.model} reads {reads}; "
            "a multilingual model keeps them (docs/init-doctor.md)")
        plan.vaults[:] = [_without(v, tree, scan.pages) for v in plan.vaults]
    _drop_translation_only(plan, scan)


def _leave_out_app_folders(plan: Plan) -> None:
    """Exclude what a notes app keeps among the notes (``vq.indexer.note_apps``) from
    every vault that would walk it, and say so."""
    app, folders = app_folders(plan.root)
    left_out = []
    for found in folders:
        before = list(plan.vaults)
        kept = [v for v in plan.vaults  # a vault proposed for the folder itself goes
                if not _inside(f"{v.path.rstrip('/')}/", [found.folder])]
        plan.vaults[:] = [_excluding(v, found.folder) for v in kept]
        if plan.vaults != before:
            left_out.append(f"{found.folder}/ ({found.why})")
    if left_out:
        plan.notes.append(f"{app}: left out {'; '.join(left_out)}")


UNREAD_MIN_FILES = 3  # fewer files of a format than this are not worth a note
UNREAD_SHARE = 0.1  # ...nor a format with fewer files than this share of those read
UNREAD_SHOWN = 4
# keys and certificates: never read, and no note invites anyone to
CREDENTIAL_FORMATS = frozenset({".pem", ".key", ".cer", ".crt", ".der", ".csr", ".p12",
                                ".pfx", ".jks", ".keystore", ".gpg", ".asc", ".kdbx"})


def _unread_note(scan: Scan) -> list[str]:
    """A note naming the text formats no reader takes that make up much of the project
    (an Objective-C project's ``.m`` files), most files first: `vq init` said "nothing
    recognisable yet" of one and search silently missed its files. Binary formats
    (images, fonts, archives: one file of each is read to tell), credentials, and
    formats that are a small share beside what vq reads (a code base's few ``.xml``
    and ``.plist`` files) are left out of it."""
    floor = max(UNREAD_MIN_FILES, UNREAD_SHARE * scan.files)
    common = [(ext, n) for ext, n in scan.unclaimed.most_common()
              if n >= floor and ext.lower() not in CREDENTIAL_FORMATS
              and _looks_like_text(scan.root, scan.unclaimed_sample[ext])]
    if not common:
        return []
    listed = ", ".join(f"{ext} ({_n(n, 'file')})" for ext, n in common[:UNREAD_SHOWN])
    more = f" and {_n(len(common) - UNREAD_SHOWN, 'more format')}" \
        if len(common) > UNREAD_SHOWN else ""
    return [f"not read: {listed}{more}: vq has no reader for these formats, so search "
            "will not find them (hooks: can convert a document format to text)"]


def _looks_like_text(root: Path, rel: str) -> bool:
    """Whether a file's first bytes are UTF-8 text (no NUL byte)."""
    head = _first_bytes(root, rel)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head or b"", final=False)
    except UnicodeDecodeError:
        return False
    return head is not None and b"\0" not in head


def _first_words(root: Path, rel: str, size: int = 4096,
                 read: Callable[[int, int], bytes] = confined.read_head) -> str:
    """The first ``size`` bytes of a page as text (``read``: which bytes, as
    ``confined.read_head`` reads them); "" when it cannot be read."""
    return (_first_bytes(root, rel, size, read) or b"").decode("utf-8", errors="replace")


def _first_bytes(root: Path, rel: str, size: int = 4096,
                 read: Callable[[int, int], bytes] = confined.read_head) -> bytes | None:
    """``size`` bytes of a file, read beneath ``root`` without following links; None
    when it cannot be read."""
    try:
        return read(confined.open_beneath(str(root), rel.split("/")), size)
    except (OSError, ValueError):
        return None


def _walked(vault: Proposal, folder: str) -> str | None:
    """``folder`` (relative to the project root) as ``vault`` walks it, relative to the
    vault; None when the vault does not hold it or already excludes it."""
    base = "" if vault.path == "." else vault.path.rstrip("/") + "/"
    if not (folder + "/").startswith(base) or _covered(vault.exclude, folder[len(base):]):
        return None
    return folder[len(base):]


def _indexed(vaults: list[Proposal], folder: str) -> bool:
    """True when some proposed vault walks ``folder``: a copy note about a folder left
    out (a translation, generated output) would be noise."""
    return any(_walked(vault, folder) is not None for vault in vaults)


def _excluding(vault: Proposal, folder: str, because: str = "") -> Proposal:
    """``vault`` with ``folder`` (relative to the project root) excluded where it walks
    it, and said in its reason (with ``because``, when given)."""
    rel = _walked(vault, folder)
    if rel is None:
        return vault
    said = f"{rel}/ ({because})" if because else f"{rel}/"
    return replace(vault, exclude=(*vault.exclude, f"/{rel}/"),
                   why=f"{vault.why}; leaves out {said}")


def _drop_translation_only(plan: Plan, scan: Scan) -> None:
    """A notes vault that would hold nothing but left-out languages is not proposed."""
    left = [k for t in plan.translations for k in t.left_out]
    folders = [k for k in left if not _is_glob(k)]
    globs = [k for k in left if _is_glob(k)]
    dropped = []
    for vault in [v for v in plan.vaults if v.kind == "notes" and v.path != "."]:
        inside = [p for p in scan.pages if _inside(p, [vault.path])]
        if left and inside and all(_inside(p, folders) or _named(p, globs) for p in inside):
            plan.vaults.remove(vault)  # nothing but left-out languages (i18n/fr/...)
            dropped.append(f"{vault.path}/")
    if dropped:  # one line, however many languages (a help vault has 30 folders)
        plan.notes.append(f"no vault for {_listed(dropped)}: "
                          + ("it holds" if len(dropped) == 1 else "they hold")
                          + " only translations left out above")


def _inside(path: str, folders: list[str]) -> bool:
    return any(path.startswith(f.rstrip("/") + "/") for f in folders)


def _is_glob(key: str) -> bool:
    """A left-out key is a page-name glob (``*.fr.md``, ``*-de.adoc``) or a folder."""
    return key.startswith("*")


def _named(path: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], g) for g in globs)


def _lang(key: str) -> str:
    """``docs/es`` -> ``es``; ``*.fr.md``, ``*-de.adoc``, ``*_zh-CN.md`` -> the code;
    ``pages.pt_BR`` (tldr) -> ``pt_BR``."""
    if _is_glob(key):
        return key[1:].rsplit(".", 1)[0].lstrip("._-")
    return key.rsplit("/", 1)[-1].rpartition(".")[2]


def _listed(names: list[str], most: int = MANY_NAMES) -> str:
    """``a, b, c``; past ``most`` names, ``a, b, …, and 30 more``."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown}, and {len(names) - most} more"


def _without(vault: Proposal, tree: Translations, pages: list[str]) -> Proposal:
    """``vault`` with the tree's left-out languages excluded, where it would walk them: a
    folder inside it, or a page-name glob that one of its ``pages`` matches."""
    if vault.kind == "docs":
        return vault
    base = "" if vault.path == "." else vault.path.rstrip("/") + "/"
    walked = [p[len(base):] for p in pages if p.startswith(base)]
    walked = [p for p in walked if not _covered(vault.exclude, p.rsplit("/", 1)[0])]
    added: dict[str, str] = {}  # left-out key -> the exclude it adds
    for key in tree.left_out:
        if _is_glob(key):
            if any(_named(p, [key]) for p in walked):
                added[key] = key
        elif key.startswith(base) and not _covered(vault.exclude, key):
            added[key] = f"/{key[len(base):]}/"
    if not added:
        return vault
    langs = [_lang(k) for k in added]
    named = ", ".join(langs) if len(langs) <= MANY_LANGUAGES else f"{len(langs)} languages"
    return replace(vault, exclude=vault.exclude + tuple(added.values()),
                   why=f"{vault.why}; leaves out translations ({named})")


def _covered(excludes: tuple[str, ...], folder: str) -> bool:
    """True when an anchored folder exclude (``/docs/``) already holds ``folder``."""
    return any(e.startswith("/") and e.endswith("/") and (folder + "/").startswith(e[1:])
               for e in excludes)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def find_git_root(start: Path) -> Path | None:
    """The enclosing git work tree (``.git`` is a folder, or a file in worktrees)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


# --- writing ---------------------------------------------------------------------------


@dataclass
class InitResult:
    plan: Plan
    config: Path
    written: bool = False          # False: an existing config was kept (no --force)
    existed: bool = False
    gitignore: Path | None = None  # the .gitignore that gained ".vq/", if any
    shadowed_by: str | None = None  # another config vq would read instead, and why
    estimate: dict[str, Any] | None = None  # ``Estimate.to_json()``; None with --no-estimate
    suggestions: list[str] = field(default_factory=list)  # excludes for a long estimate

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "config": str(self.config), "written": self.written,
                "existed": self.existed,
                "gitignore": str(self.gitignore) if self.gitignore else None,
                "shadowed_by": self.shadowed_by, "estimate": self.estimate,
                "suggested_excludes": self.suggestions}


def config_target(root: Path, global_: bool) -> Path:
    return paths.user_config_file() if global_ else root.resolve() / paths.PROJECT_CONFIG


def write_config(plan: Plan, target: Path, global_: bool = False, force: bool = False,
                 dry_run: bool = False) -> InitResult:
    """Write ``plan`` to ``target`` (never over an existing file unless ``force``).

    A project config keeps vault paths relative to itself (the checkout can
    move) and its index in ``.vq/`` beside it, which is added to the
    project's ``.gitignore`` when it is a git repository. A global config
    gets absolute paths and ids prefixed with the project name.
    """
    result = InitResult(plan, target, existed=target.exists())
    if dry_run or (result.existed and not force):
        return result
    from vq.core.configedit import save_document

    save_document(target, _document(plan, global_))
    result.written = True
    if not global_ and plan.git_root is not None:
        result.gitignore = ensure_gitignored(plan.root, INDEX_DIR + "/")
    return result


def _document(plan: Plan, global_: bool) -> Any:
    from ruamel.yaml.comments import CommentedMap

    doc = CommentedMap()
    where = "the user data folder" if global_ else f"{INDEX_DIR}/ beside this file"
    doc.yaml_set_start_comment(
        f"vq config for {plan.root}, written by `vq init`; edit freely.\n"
        f"The index lives in {where} (set index_dir to move it).\n"
        "Relative paths are relative to this file. `vq doctor` checks this setup.")
    if plan.pin_model:
        doc["model"] = plan.model
    vaults = doc["vaults"] = CommentedMap()
    prefix = _unique(set(), plan.root.name) + "-" if global_ else ""
    for v in plan.vaults:
        spec = CommentedMap(path=str((plan.root / v.path).resolve()) if global_ else v.path,
                            kind=v.kind)
        if v.include:
            spec["include"] = list(v.include)
        if v.exclude:
            spec["exclude"] = list(v.exclude)
        vaults[prefix + v.id] = spec
        vaults.yaml_set_comment_before_after_key(prefix + v.id, before=v.why, indent=2)
    return doc


def ensure_gitignored(root: Path, entry: str) -> Path | None:
    """Append ``entry`` to ``root/.gitignore`` unless it is already ignored there."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if pathspec.GitIgnoreSpec.from_lines(text.splitlines()).match_file(entry):
        return None
    sep = "" if not text or text.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"{sep}# vq's search index (vq init)\n{entry}\n")
    return path
