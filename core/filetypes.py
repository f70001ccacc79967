"""Which files vq indexes and with what, decided by name alone: the one file-type table.

Both sides need it: the walker (here in ``vq.core``) claims a file by its handler
name, ``vq status --check`` and ``vq doctor`` walk exactly as a build does, and the
indexer maps each handler name to its chunker (``vq.indexer.handlers``). Keeping
the table below both sides means a new extension is added once and nobody can
disagree about it. Extensions are lowercase with their leading dot; matching is
case-insensitive, exact file names (``Makefile``) are case-sensitive.
"""

from __future__ import annotations

import difflib
import zlib

# .qmd (Quarto) and .rmd (R Markdown): Markdown with executable code chunks
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdx", ".qmd", ".rmd"})
RST_EXTENSIONS = frozenset({".rst", ".rest"})
ASCIIDOC_EXTENSIONS = frozenset({".adoc", ".asciidoc"})  # not .asc: that is a PGP signature too
ORG_EXTENSIONS = frozenset({".org"})
LATEX_EXTENSIONS = frozenset({".tex"})
TEXT_EXTENSIONS = frozenset({".txt", ".csv", ".tsv", ".log", ".toml",
                             ".yaml", ".yml", ".json", ".ini", ".cfg"})
# Plain-text files a project names without an extension (GNU's conventions among them)
TEXT_FILENAMES = frozenset({"README", "LICENSE", "CHANGELOG", "CHANGES", "NEWS", "INSTALL",
                            "HACKING", "CONTRIBUTING", "TODO"})

_CODE_EXTENSIONS = (
    ("python", ".py .pyi .pyw"),  # .pyi: type stubs
    ("javascript", ".js .mjs .cjs .jsx"),
    ("typescript", ".ts .tsx .mts .cts"),  # .mts/.cts: TypeScript's ES and CommonJS modules
    ("go", ".go"),
    ("rust", ".rs"),
    ("java", ".java"),
    ("c", ".c .h"),
    # C++ by every name its projects use (ITK's .hxx, Boost's .ipp, C++20 modules), CUDA's
    # .cu (C++ with kernels) and Arduino's .ino sketches
    ("cpp", ".cc .cpp .cxx .c++ .hpp .hxx .hh .h++ .ipp .inl .tpp .cppm .ixx .cu .cuh .ino"),
    ("csharp", ".cs"),
    ("ruby", ".rb .rake .gemspec"),
    ("shell", ".sh .bash .zsh .ksh .bats"),
    ("php", ".php"),
    ("kotlin", ".kt .kts"),  # .kts: Kotlin scripts, Gradle's build.gradle.kts
    ("swift", ".swift"),
    ("scala", ".scala .sc .sbt"),  # .sc: Scala scripts (Ammonite, scala-cli); .sbt: sbt builds
    ("lua", ".lua"),
    ("elixir", ".ex .exs"),
    ("haskell", ".hs"),
    ("ocaml", ".ml .mli"),
    ("zig", ".zig"),
    ("julia", ".jl"),
    ("erlang", ".erl .hrl"),
    ("powershell", ".ps1 .psm1"),
    ("dart", ".dart"),
    ("groovy", ".groovy .gradle"),  # Gradle's build.gradle is Groovy
    # Terraform, Packer, Nomad; not .tfvars: variable values, often secrets, no definitions
    ("hcl", ".tf .hcl"),
    ("protobuf", ".proto"),
    ("graphql", ".graphql .gql"),
    # templates: the pages a web app renders, chunked by lines (Jinja's macros named)
    ("erb", ".erb"),
    ("eex", ".eex .heex .leex"),  # Elixir's EEx and Phoenix's HEEx
    ("ejs", ".ejs"),
    ("handlebars", ".hbs .handlebars .mustache"),
    ("jinja", ".jinja .jinja2 .j2 .njk .twig"),
    ("liquid", ".liquid"),
    ("css", ".css"),  # style sheets (.min.css is skipped as generated)
    ("scss", ".scss"),
    ("less", ".less"),
    ("vue", ".vue"),  # single-file components: the script parsed, the markup kept
    ("svelte", ".svelte"),
    ("astro", ".astro"),
    ("sql", ".sql"),
    ("r", ".r"),
    ("perl", ".pl .pm .t"),  # .pm: modules, .t: tests
    ("vim", ".vim"),  # Vim script: plugins' functions and commands
    ("nim", ".nim .nims"),
    ("solidity", ".sol"),
    ("fortran", ".f90 .f95 .f03 .f08 .f .for"),
    ("cmake", ".cmake"),
    ("starlark", ".bzl .star .bazel"),  # Bazel's and Buck's build language, read as Python
    ("prisma", ".prisma"),
    ("thrift", ".thrift"),
    ("nix", ".nix"),
    ("elisp", ".el"),
    ("clojure", ".clj .cljs .cljc"),
    ("lisp", ".lisp .lsp"),  # Common Lisp; not .cl, which is OpenCL as often
    ("scheme", ".scm .ss .rkt"),
    ("make", ".mk"),
    ("dockerfile", ".dockerfile"),
)
LANGUAGE_BY_EXTENSION: dict[str, str] = {
    ext: language for language, exts in _CODE_EXTENSIONS for ext in exts.split()
}
LANGUAGE_BY_FILENAME: dict[str, str] = {
    **dict.fromkeys(("Makefile", "makefile", "GNUmakefile"), "make"),
    **dict.fromkeys(("Dockerfile", "Containerfile"), "dockerfile"),
    "Jenkinsfile": "groovy",
    "CMakeLists.txt": "cmake",
    **dict.fromkeys(("BUILD", "WORKSPACE", "BUCK", "Tiltfile"), "starlark"),
    **dict.fromkeys(("vimrc", "_vimrc", "gvimrc"), "vim"),
    # Ruby's DSL files: Bundler, Rake, Vagrant, CocoaPods, fastlane, Homebrew, Capistrano
    **dict.fromkeys(("Gemfile", "Rakefile", "Vagrantfile", "Podfile", "Fastfile", "Brewfile",
                     "Capfile", "Guardfile"), "ruby"),
}
NAMED_VARIANTS = (("Dockerfile.", "dockerfile"),)  # a prefix and the language it names
LANGUAGES = frozenset(LANGUAGE_BY_EXTENSION.values()) | frozenset(LANGUAGE_BY_FILENAME.values())
# Names people type for a language that neither an extension nor spelling leads to.
LANGUAGE_ALIASES = {"golang": "go", "c++": "cpp", "cxx": "cpp", "c#": "csharp",
                    "node": "javascript", "nodejs": "javascript", "bash": "shell",
                    "emacs-lisp": "elisp", "common-lisp": "lisp", "racket": "scheme",
                    "terraform": "hcl", "tf": "hcl", "proto": "protobuf", "gql": "graphql",
                    "twig": "jinja", "nunjucks": "jinja", "mustache": "handlebars",
                    "pwsh": "powershell", "ps": "powershell", "gradle": "groovy",
                    "cuda": "cpp", "arduino": "cpp", "bazel": "starlark", "vimscript": "vim",
                    "viml": "vim", "sol": "solidity"}

# Handlers that take the file's bytes, not decoded text: their format says how to decode.
BINARY_HANDLERS = frozenset({"pdf", "html", "notebook", "canvas", "docx"})
HANDLER_BY_EXTENSION: dict[str, str] = {
    **dict.fromkeys(TEXT_EXTENSIONS, "text"),
    **dict.fromkeys(LANGUAGE_BY_EXTENSION, "code"),
    **dict.fromkeys(MARKDOWN_EXTENSIONS, "markdown"),
    **dict.fromkeys(RST_EXTENSIONS, "rst"),
    **dict.fromkeys(ASCIIDOC_EXTENSIONS, "asciidoc"),
    **dict.fromkeys(ORG_EXTENSIONS, "org"),
    **dict.fromkeys(LATEX_EXTENSIONS, "latex"),
    ".pdf": "pdf", ".html": "html", ".htm": "html", ".ipynb": "notebook", ".canvas": "canvas",
    ".docx": "docx",
}
HANDLER_BY_FILENAME: dict[str, str] = {
    **dict.fromkeys(TEXT_FILENAMES, "text"),
    **dict.fromkeys(LANGUAGE_BY_FILENAME, "code"),
}
HANDLED_EXTENSIONS: frozenset[str] = frozenset(HANDLER_BY_EXTENSION)
# A reader's revision, bumped when it reads files it already read differently (new
# metadata, new structure) but chunk boundaries stay for everything the judged sets hold,
# so no chunker version bump (a re-encode of every index) is called for. The manifest
# records ``reader_tag`` ("markdown@2"); a file recorded under an older revision is
# stale as "new reader" and re-read once, its unchanged chunks keeping their vectors.
# markdown 2, org 2, asciidoc 2: aliases, #tags, dates from file names, Logseq outlines,
# inline markup leaving Org and AsciiDoc breadcrumbs; markdown 3 (never released) and 4:
# decision records' headers, dates written as numbers, link definitions blanked;
# markdown 5: <script> and <style> blocks blanked; code 1: C#, PHP, Kotlin and Swift parsed
# by tree-sitter (methods, delegates and namespace blocks were the regex chunker's lines),
# and a file mostly of syntax errors chunked by the patterns; markdown 6: a section of
# nothing but its child's anchor merges into it; code 2: Lua and Scala parsed by tree-sitter;
# text 1: Vim help files cut at their sections and tagged entries; asciidoc 3, rst 1: a
# section of nothing but its child's anchor or target merges into it; then every text
# reader once more (markdown 7, org 3, asciidoc 4, rst 2, code 3, text 2, latex 1): a
# private key's body is blanked; code 4: a Vue options object's methods are the component's
# (`Cart.clear`), and a Jinja macro ends at its `{% endmacro %}`.
READER_REVISIONS: dict[str, int] = {"markdown": 7, "org": 3, "asciidoc": 4, "rst": 2, "code": 4,
                                     "text": 2, "latex": 1}
# Which reader reads what, as one number: a no-op build's record holds it, so the first
# build after an upgrade that changed it reconciles in full and re-reads those files.
READERS_ID = zlib.crc32(repr((sorted(HANDLER_BY_EXTENSION.items()),
                              sorted(HANDLER_BY_FILENAME.items()), NAMED_VARIANTS,
                              sorted(READER_REVISIONS.items()))).encode())
HANDLER_NAMES = frozenset(HANDLER_BY_EXTENSION.values()) | frozenset(HANDLER_BY_FILENAME.values())
# The readers that cut pages at their own section syntax (headings, titles, sectioning
# commands), and the extensions they claim; translation detection and `vq init` read them.
PROSE_HANDLERS = frozenset({"markdown", "rst", "asciidoc", "org", "latex"})
PROSE_EXTENSIONS = frozenset(e for e, h in HANDLER_BY_EXTENSION.items() if h in PROSE_HANDLERS)
# The readers whose chunk text is Markdown (HTML, notebooks and Word render to it): its
# fences are kept whole when a chunk is cut, and a snippet shows it as Markdown renders.
MARKDOWN_TEXT_HANDLERS = frozenset({"markdown", "html", "notebook", "docx"})
# The readers whose chunks number the file's own lines; binary ones number extracted text.
FILE_LINE_HANDLERS = HANDLER_NAMES - BINARY_HANDLERS


def reader_tag(handler: str) -> str:
    """What the manifest records of the reader that read a file: its name and revision
    (``markdown@2``); a hook's name as it is."""
    revision = READER_REVISIONS.get(handler)
    return f"{handler}@{revision}" if revision else handler


def reader_of(tag: str) -> str:
    """The reader's name in a manifest's tag (``markdown@2`` -> ``markdown``)."""
    return tag.split("@", 1)[0]


def content_kind(vault_kind: str, handler: str) -> str:
    """The kind a file's rows carry: its vault's, except that source code is "code" in
    any vault and a Markdown, RST, AsciiDoc, Org or LaTeX text, HTML page, notebook or
    PDF inside a code vault is prose.

    Why: ranking reads the row's kind (a prose section's pieces collapse into one hit
    and carry a section vector; code gets definition hits and code signals), and so does
    ``--kind``. A repository indexed as one code vault, as ``vq init`` proposes for a
    project without a docs folder, holds its README and guides too: ranked as code, one
    long guide section filled the first hits piece by piece. Plain text and config files
    keep the vault's kind (they have no structure either way)."""
    if handler == "code":
        return "code"
    if vault_kind != "code" or handler == "text" or handler not in HANDLER_NAMES:
        return vault_kind  # a hook's output keeps its vault's kind
    return "docs" if handler in BINARY_HANDLERS else "notes"


def file_name(relpath: str) -> str:
    """The last part of a posix or Windows relative path."""
    return relpath.replace("\\", "/").rsplit("/", 1)[-1]


def suffix(relpath: str) -> str:
    """``docs/a.Report.DOCX`` -> ``.docx``; "" without an extension (or for ``.bashrc``)."""
    stem, dot, ext = file_name(relpath).rpartition(".")
    return "." + ext.lower() if dot and stem else ""


def handler_name(relpath: str) -> str | None:
    """The handler that chunks this file ("markdown", "code", ...), None when unclaimed."""
    name = file_name(relpath)
    if name in HANDLER_BY_FILENAME:
        return HANDLER_BY_FILENAME[name]
    if _named_variant(name):
        return "code"
    return HANDLER_BY_EXTENSION.get(suffix(name))


def language_for(relpath: str) -> str:
    """The language name for a path, "" when it is not code."""
    name = file_name(relpath)
    return (LANGUAGE_BY_FILENAME.get(name) or _named_variant(name)
            or LANGUAGE_BY_EXTENSION.get(suffix(name), ""))


def _named_variant(name: str) -> str:
    """``Dockerfile.prod``, ``Dockerfile.dev``: one image's variants, named by prefix."""
    return next((lang for prefix, lang in NAMED_VARIANTS if name.startswith(prefix)), "")


def closest_language(name: str) -> str | None:
    """The known language ``name`` most likely means: by extension (``py``, ``.rs``), by
    a common alias (``golang``), or by spelling (``pyhton``); None when nothing is close."""
    lowered = name.strip().lower()
    if lowered in LANGUAGES:
        return lowered
    guess = (LANGUAGE_BY_EXTENSION.get("." + lowered.lstrip("."))
             or LANGUAGE_ALIASES.get(lowered))
    if guess:
        return guess
    close = difflib.get_close_matches(lowered, sorted(LANGUAGES), n=1, cutoff=0.6)
    return close[0] if close else None
