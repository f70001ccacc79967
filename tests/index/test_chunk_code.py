"""Code chunking on realistic sources, with exact symbols and line ranges."""

from __future__ import annotations

import pytest

from vq.indexer.handlers import HANDLED_EXTENSIONS, Document, Limits, handler_for
from vq.indexer.handlers.code import code_handler, language_for
from vq.indexer.handlers.text import text_handler

PYTHON = '''\
"""Billing helpers."""

import os
from decimal import Decimal

TAX = Decimal("0.2")


@lru_cache(maxsize=None)
def rate(country: str) -> Decimal:
    return TAX


# Invoices are immutable once issued.
class Invoice:
    """An issued invoice."""

    currency = "EUR"

    def __init__(self, lines):
        self.lines = lines

    @property
    def total(self):
        return sum(line.amount for line in self.lines)


async def send(invoice):
    await invoice.post()


if __name__ == "__main__":
    print(rate("FR"))
'''

JAVASCRIPT = """\
import { api } from "./api.js";

/**
 * Fetch a user by id.
 */
export async function getUser(id) {
  return api.get(`/users/${id}`);
}

export const formatName = (user) => {
  return `${user.first} ${user.last}`;
};

class UserCache {
  constructor() {
    this.map = new Map();
  }
}

export default function () {
  return new UserCache();
}
"""

GO = """\
package server

import "net/http"

// Server serves the index over HTTP.
type Server struct {
\taddr string
}

// Start listens on addr.
func (s *Server) Start() error {
\treturn http.ListenAndServe(s.addr, nil)
}

func New(addr string) *Server {
\treturn &Server{addr: addr}
}
"""

Row = tuple[int, int, str, str, str]


def rows(document: Document) -> list[Row]:
    return [
        (c.start_line, c.end_line, c.symbol, c.symbol_kind, c.breadcrumb) for c in document.chunks
    ]


def test_registry_routes_code_and_text() -> None:
    assert handler_for("src/app.py") == ("code", code_handler)
    assert handler_for("build/Makefile") == ("code", code_handler)
    assert handler_for("Dockerfile") == ("code", code_handler)
    assert handler_for("README") == ("text", text_handler)
    assert handler_for("src/NEWS") == handler_for("CHANGELOG") == ("text", text_handler)
    assert handler_for("config/settings.YAML") == ("text", text_handler)
    assert handler_for("photo.jpg") is None
    assert handler_for(".bashrc") is None
    assert {".py", ".md", ".txt", ".tsx", ".r"} <= HANDLED_EXTENSIONS
    assert handler_for("analysis/report.qmd")[0] == handler_for("notes/a.Rmd")[0] == "markdown"


@pytest.mark.parametrize(
    ("path", "language"),
    [("a.py", "python"), ("b.tsx", "typescript"), ("c.hpp", "cpp"), ("x/Makefile", "make"),
     # named files and variants that were not read: a Dockerfile per environment, Ruby's
     # DSL files, Kotlin build scripts, make includes
     ("deploy/Dockerfile.prod", "dockerfile"), ("Containerfile", "dockerfile"),
     ("api.dockerfile", "dockerfile"), ("Gemfile", "ruby"), ("lib/tasks/db.rake", "ruby"),
     ("build.gradle.kts", "kotlin"), ("rules.mk", "make"), ("GNUmakefile", "make"),
     ("README", ""), ("Dockerfiles/readme.md", ""),
     # languages read by their definition patterns since session 24
     ("src/Data/Aeson.hs", "haskell"), ("src/list.mli", "ocaml"), ("src/Server.zig", "zig"),
     ("src/file.jl", "julia"), ("src/cowboy_req.erl", "erlang"), ("include/x.hrl", "erlang"),
     ("src/Mock.ps1", "powershell"), ("Pester.psm1", "powershell"), ("lib/client.dart", "dart"),
     ("build.gradle", "groovy"), ("Jenkinsfile", "groovy"), ("page.html.heex", "eex"),
     # the other names of languages vq read: C++'s .hxx/.ipp/.cu, Python's stubs,
     # TypeScript's module files, Perl's modules, Scala's build; and build languages
     ("itk/Image.hxx", "cpp"), ("boost/detail.ipp", "cpp"), ("kernels/add.cu", "cpp"),
     ("sketch.ino", "cpp"), ("typing/os.pyi", "python"), ("src/index.mts", "typescript"),
     ("lib/Foo/Bar.pm", "perl"), ("build.sbt", "scala"), ("test/run.bats", "shell"),
     ("CMakeLists.txt", "cmake"), ("cmake/deps.cmake", "cmake"), ("tools/BUILD", "starlark"),
     ("MODULE.bazel", "starlark"), ("rules/defs.bzl", "starlark"), ("plugin/fzf.vim", "vim"),
     ("src/Token.sol", "solidity"), ("src/solver.f90", "fortran"), ("flake.nix", "nix"),
     ("prisma/schema.prisma", "prisma"), ("api.thrift", "thrift"), ("src/os.nim", "nim"),
     ("notes/build.txt", "")],
)
def test_language_by_extension(path: str, language: str) -> None:
    assert language_for(path) == language
    if language:  # the walker claims it as code
        assert handler_for(path)[0] == "code"


def test_python_definitions_with_decorators_and_comments() -> None:
    document = code_handler(PYTHON, "billing/invoice.py", Limits())
    assert (document.language, document.title) == ("python", "invoice")
    assert rows(document) == [
        (1, 6, "", "", "billing/invoice.py"),
        (9, 11, "rate", "function", "billing/invoice.py :: rate"),
        (14, 25, "Invoice", "class", "billing/invoice.py :: Invoice"),
        (28, 29, "send", "function", "billing/invoice.py :: send"),
        (32, 33, "", "", "billing/invoice.py"),
    ]
    assert document.chunks[1].text.startswith("@lru_cache(maxsize=None)\ndef rate")


def test_oversized_python_class_is_split_into_methods() -> None:
    document = code_handler(PYTHON, "billing/invoice.py", Limits(max_chars=120))
    assert rows(document)[2:5] == [
        (14, 18, "Invoice", "class", "billing/invoice.py :: Invoice"),
        (20, 21, "Invoice.__init__", "method", "billing/invoice.py :: Invoice :: __init__"),
        (23, 25, "Invoice.total", "method", "billing/invoice.py :: Invoice :: total"),
    ]
    assert document.chunks[4].text.startswith("    @property\n    def total")


def test_oversized_function_is_split_by_lines_and_keeps_its_symbol() -> None:
    body = "\n".join(f"    step_{i} = compute({i})" for i in range(12))
    text = f"def pipeline():\n{body}\n\n    return step_11\n"
    document = code_handler(text, "etl.py", Limits(max_chars=100))
    assert len(document.chunks) > 1
    assert {c.symbol for c in document.chunks} == {"pipeline"}
    assert all(len(c.text) <= 100 for c in document.chunks)
    assert document.chunks[0].start_line == 1
    assert document.chunks[-1].end_line == 15


def test_javascript_functions_arrows_classes_and_anonymous_default() -> None:
    document = code_handler(JAVASCRIPT, "web/users.js", Limits())
    assert document.language == "javascript"
    assert rows(document) == [
        (1, 1, "", "", "web/users.js"),
        (3, 8, "getUser", "function", "web/users.js :: getUser"),
        (10, 12, "formatName", "function", "web/users.js :: formatName"),
        (14, 18, "UserCache", "class", "web/users.js :: UserCache"),
        (20, 22, "", "function", "web/users.js"),
    ]


def test_go_types_functions_and_methods() -> None:
    document = code_handler(GO, "srv/server.go", Limits())
    assert document.language == "go"
    assert rows(document) == [
        (1, 3, "", "", "srv/server.go"),
        (5, 8, "Server", "class", "srv/server.go :: Server"),
        (10, 13, "Server.Start", "method", "srv/server.go :: Server :: Start"),
        (15, 17, "New", "function", "srv/server.go :: New"),
    ]


ELISP = """\
;;; doom-lib.el --- core library -*- lexical-binding: t; -*-

;;; Logging

(defvar doom-log-level 0
  "How verbosely to log.")

;; The one place that prints.
(defun doom-log (text &rest args)
  "Log TEXT with ARGS at the current level."
  (when (> doom-log-level 0)
    (message text args)))

(use-package! evil
  :init (setq evil-want-keybinding nil))
"""


def test_lisp_definitions_are_forms_at_column_zero() -> None:
    """Emacs Lisp, Clojure and Scheme had no code handler: Doom Emacs' 635 ``.el`` files
    were left out of its code vault."""
    document = code_handler(ELISP, "lisp/doom-lib.el", Limits(min_chars=0))
    assert document.language == "elisp"
    assert rows(document) == [
        (1, 3, "", "", "lisp/doom-lib.el"),  # a heading comment, a blank line away
        (5, 6, "doom-log-level", "", "lisp/doom-lib.el :: doom-log-level"),
        (8, 12, "doom-log", "function", "lisp/doom-lib.el :: doom-log"),  # its comment too
        (14, 15, "evil", "", "lisp/doom-lib.el :: evil"),
    ]
    clojure = code_handler("(ns app.core)\n\n(defn- parse-int\n  [s]\n  (Integer. s))\n",
                           "src/app/core.clj", Limits(min_chars=0))
    assert [(c.symbol, c.symbol_kind) for c in clojure.chunks] == [
        ("app.core", "class"), ("parse-int", "function")]
    scheme = code_handler("(define (square x)\n  (* x x))\n", "lib/math.rkt", Limits())
    assert (scheme.language, scheme.chunks[0].symbol) == ("scheme", "square")
    assert language_for("kernel.cl") == ""  # OpenCL as often as Common Lisp


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("api/billing.proto", 'syntax = "proto3";\n\n// An invoice.\nmessage Invoice {\n'
     "  string id = 1;\n}\n\nservice Billing {\n  rpc Send(Invoice) returns (Receipt);\n}\n",
     [(1, 1, "", ""), (3, 6, "Invoice", "class"), (8, 10, "Billing", "class")]),
    ("schema.graphql", "# A user.\ntype User {\n  id: ID!\n}\n\nextend type Query {\n  me: User\n}"
     "\n\nquery CurrentUser {\n  me { id }\n}\n",
     [(1, 4, "User", "class"), (6, 8, "Query", "class"), (10, 12, "CurrentUser", "function")]),
    # the markup after {% endmacro %} is no part of the macro
    ("templates/forms.j2", "{# A field and its errors. #}\n{% macro field(f) %}\n  {{ f() }}\n"
     "{% endmacro %}\n\n<form>\n  {{ field(form.name) }}\n</form>\n",
     [(1, 4, "field", "function"), (6, 8, "", "")]),
    ("styles/vars.css", "/* Brand colors */\n:root {\n  --brand: #3451b2;\n}\n\n"
     ".dark {\n  --brand: #a8b1ff;\n}\n", [(1, 4, "", ""), (6, 8, "", "")]),  # cut at rules
    ("b.scss", "@mixin button-variant($bg) {\n  background: $bg;\n}\n\n.btn {\n"
     "  @include button-variant(blue);\n}\n", [(1, 3, "button-variant", "function"),
                                             (5, 7, "", "")]),
    ("app/views/users/new.html.erb", "<%= form_for @user do |f| %>\n  <%= f.text_field :name %>\n"
     "<% end %>\n", [(1, 3, "", "")]),
])
def test_schemas_and_templates_are_code(path: str, text: str, expected: list) -> None:
    """Protobuf and GraphQL schemas name their types; templates (ERB, EJS, Handlebars,
    Jinja, Liquid) and style sheets were not read at all, and are now code, cut by lines
    (templates) and at top-level rules (CSS, SCSS and Less, their mixins named)."""
    document = code_handler(text, path, Limits(max_chars=80, min_chars=5))
    assert [(c.start_line, c.end_line, c.symbol, c.symbol_kind) for c in document.chunks] \
        == expected
    assert handler_for(path)[0] == "code"


CLAUSE_LANGUAGES = [
    # Erlang: each clause starts at column 0; a function's clauses and its -spec are one
    ("src/cowboy_req.erl", "%% Request.\n-module(cowboy_req).\n\n%% The URI's port.\n"
     "-spec uri_port(binary(), integer()) -> binary().\nuri_port(_, undefined) -> <<>>;\n"
     "uri_port(<<\"http\">>, 80) -> <<>>;\nuri_port(_, Port) -> integer_to_binary(Port).\n\n"
     "uri_qs(Qs) ->\n\t<<\"?\", Qs/binary>>.\n",
     [(1, 2, "", ""), (4, 8, "uri_port", "function"), (10, 11, "uri_qs", "function")]),
    # Haskell: a function starts at its signature (its Haddock comment above), its
    # equations follow; an instance is a block of its own, named by class and type
    ("src/Types.hs", "module Types where\n\n-- | Parse an index.\nparseIndex :: Int -> Value\n"
     "parseIndex 0 = Null\nparseIndex n = Number n\n\n{-| A value. -}\ndata Value = Null\n"
     "\ninstance Show Value where\n  show _ = \"v\"\n\n(.:?) :: Object -> Key -> Parser a\n"
     "(.:?) = explicitParseFieldMaybe parseJSON\n",
     [(1, 1, "", ""), (3, 6, "parseIndex", "function"), (8, 9, "Value", "class"),
      (11, 12, "Show Value", ""), (14, 15, ".:?", "function")]),  # an operator, by its signature
]
DOC_ABOVE_LANGUAGES = [
    # Julia: a docstring right above joins the definition; short and long function forms
    ("src/file.jl", 'getname(f::File) = f.name\n\n"""\n    CSV.File(input)\n\nRead a CSV.\n'
     '"""\nfunction File(input)\n    parse(input)\nend\n\nmutable struct Row\n    i::Int\nend\n',
     [(1, 1, "getname", "function"), (3, 10, "File", "function"), (12, 14, "Row", "class")]),
    # OCaml: (** docs *) over several lines join the binding below; a trailing comment
    # on a line of code is no doc
    ("src/list.ml", "open! Import\n\n(** [hd l] is the first element,\n    or None. *)\n"
     "let hd = function\n  | [] -> None\n  | x :: _ -> Some x\n\nlet x = 1 (* one *)\n"
     "let rec length = function [] -> 0 | _ :: t -> 1 + length t\n\nmodule Assoc = struct\n"
     "  let find = ()\nend\n",
     [(1, 1, "", ""), (3, 7, "hd", "function"), (9, 9, "x", "function"),
      (10, 10, "length", "function"), (12, 14, "Assoc", "class")]),
    # Zig: functions and containers bound to names; a test is a block of its own
    ("src/Server.zig", "const std = @import(\"std\");\n\n/// The client's capabilities.\n"
     "pub const ClientCapabilities = struct {\n    hover: bool = false,\n};\n\n"
     "pub fn showMessage(server: *Server) void {\n    _ = server;\n}\n\ntest \"show\" {\n}\n",
     [(1, 1, "", ""), (3, 6, "ClientCapabilities", "class"), (8, 10, "showMessage", "function"),
      (12, 13, "", "")]),
    # PowerShell: keywords in any case; comment-based help above joins the function
    ("src/Mock.ps1", "<#\n.SYNOPSIS\nMocks a command.\n#>\nFunction New-Mock ($name) {\n"
     "    $name\n}\n\nclass Behavior {\n}\n",
     [(1, 7, "New-Mock", "function"), (9, 10, "Behavior", "class")]),
    # Dart: classes and top-level functions (a call or an initialiser is neither)
    ("lib/http.dart", "import 'src/client.dart';\n\nfinal client = Client();\n\n"
     "/// Sends a POST.\nFuture<Response> post(Uri url,\n    {Object? body}) =>\n"
     "    _withClient((c) => c.post(url, body: body));\n\nabstract interface class Client {\n"
     "  void close();\n}\n",
     [(1, 3, "", ""), (5, 8, "post", "function"), (10, 12, "Client", "class")]),
    # Vim script's functions and commands; CMake's functions and macros, in any case
    ("plugin/fzf.vim", '" Opens fzf.\nfunction! fzf#run(...) abort\n  return 1\nendfunction\n\n'
     "command! -nargs=* -bang FZF call fzf#run()\n",
     [(1, 4, "fzf#run", "function"), (6, 6, "FZF", "")]),
    ("CMakeLists.txt", "project(demo)\n\n# Adds a test.\nFUNCTION(add_demo_test name)\n"
     "  add_test(${name} demo)\nendfunction()\n\nadd_executable(demo main.cpp)\n",
     [(1, 1, "", ""), (3, 6, "add_demo_test", "function"), (8, 8, "demo", "")]),  # targets
    # Starlark (Bazel) is parsed as Python; a rule call is the target its name names
    ("rules/defs.bzl",
     '"""Rules."""\n\ndef my_rule(name, srcs):\n    native.genrule(name = name)\n',
     [(1, 1, "", ""), (3, 4, "my_rule", "function")]),
    ("tools/BUILD", 'load("@rules_python//python:defs.bzl", "py_binary")\n\n# The tool.\n'
     'py_binary(\n    name = "cli",\n    srcs = ["cli.py"],\n)\n\nexports_files(["a.md"])\n',
     [(1, 1, "", ""), (3, 7, "cli", "target"), (9, 9, "", "")]),
    # Groovy (Gradle's build files, Jenkinsfiles): classes and def'd functions
    ("vars/deploy.groovy", "import groovy.json.JsonSlurper\n\n// Deploys one service.\n"
     "def call(String service) {\n  sh \"deploy ${service}\"\n}\n\nclass Release {\n}\n",
     [(1, 1, "", ""), (3, 6, "call", "function"), (8, 9, "Release", "class")]),
]


@pytest.mark.parametrize(("path", "text", "expected"), CLAUSE_LANGUAGES + DOC_ABOVE_LANGUAGES)
def test_more_languages_cut_at_their_definitions(path: str, text: str, expected: list) -> None:
    """Haskell, OCaml, Zig, Julia, Erlang, PowerShell, Dart and Groovy were not read at
    all (an Erlang project's `vq init` counted no code); their definitions are found by
    patterns: clauses of one function stay together, docs written above (block comments
    and docstrings) join the definition."""
    document = code_handler(text, path, Limits(min_chars=0))
    assert [(c.start_line, c.end_line, c.symbol, c.symbol_kind) for c in document.chunks] \
        == expected


FLUTTER = """\
import 'package:flutter/material.dart';

/// A counter page.
class CounterPage extends StatefulWidget {
  const CounterPage({super.key, required this.title});

  final String title;

  @override
  State<CounterPage> createState() => _CounterPageState();

  /// Resets the count.
  void reset(BuildContext context) {
    ScaffoldMessenger.of(context).showSnackBar(const SnackBar(content: Text('reset')));
  }
}
"""


def test_a_long_class_is_cut_at_its_members_in_pattern_languages() -> None:
    """A Flutter widget was one definition cut by lines, each piece named by its class;
    a class too long for one chunk is now its header plus one block per member (its
    annotation and doc comment with it), as a Python class without its grammar is."""
    document = code_handler(FLUTTER, "lib/counter.dart", Limits(max_chars=200, min_chars=0))
    assert [(c.start_line, c.end_line, c.symbol, c.symbol_kind) for c in document.chunks] == [
        (1, 1, "", ""), (3, 7, "CounterPage", "class"),
        (9, 10, "CounterPage.createState", "method"),  # an arrow body: `=> ...;`
        (12, 16, "CounterPage.reset", "method")]
    zig = ("const std = @import(\"std\");\n\npub const Server = struct {\n    name: []const u8,\n\n"
           "    /// Frees the server.\n    pub fn deinit(self: *Server) void {\n        _ = self;\n"
           "    }\n};\n\npub const Error = error{\n    ParseError,\n};\n")
    document = code_handler(zig, "src/Server.zig", Limits(max_chars=120, min_chars=0))
    assert [(c.start_line, c.end_line, c.symbol) for c in document.chunks] == [
        (1, 1, ""), (3, 4, "Server"), (6, 10, "Server.deinit"),
        (12, 14, "")]  # a top-level statement ends the struct above it
    solidity = ("pragma solidity ^0.8.0;\n\n/// A token.\ncontract Token is ERC20 {\n"
                "    uint256 public total;\n\n    /// Mints tokens.\n"
                "    function mint(address to) external {\n        _mint(to, 1);\n    }\n\n"
                "    constructor() ERC20(\"T\", \"T\") {}\n}\n")
    document = code_handler(solidity, "contracts/Token.sol", Limits(max_chars=150, min_chars=0))
    assert [(c.start_line, c.end_line, c.symbol, c.symbol_kind) for c in document.chunks] == [
        (1, 1, "", ""), (3, 5, "Token", "class"), (7, 10, "Token.mint", "method"),
        (12, 13, "Token.constructor", "method")]
    groovy = ("class Release {\n    String name\n\n    // Tags the release.\n"
              "    def tag(String version) {\n        sh \"git tag ${version}\"\n    }\n}\n")
    assert [c.symbol for c in code_handler(groovy, "src/Release.groovy",
                                           Limits(max_chars=100, min_chars=0)).chunks] == [
        "Release", "Release.tag"]


def test_tiny_symbol_less_blocks_merge() -> None:
    text = 'import x from "x";\n\nexport default function () {\n  return x;\n}\n'
    assert rows(code_handler(text, "web/index.js", Limits())) == [(1, 5, "", "", "web/index.js")]


def test_unknown_language_falls_back_to_symbol_less_paragraphs() -> None:
    text = "step one\nstep two\n\nstep three\n"
    document = code_handler(text, "tools/run.unknown", Limits(max_chars=20))
    assert document.language == ""
    assert rows(document) == [
        (1, 2, "", "", "tools/run.unknown"),
        (4, 4, "", "", "tools/run.unknown"),
    ]


def test_code_without_definitions_is_one_symbol_less_block() -> None:
    text = "#!/bin/sh\nset -eu\n\necho building\nmake all\n"
    assert rows(code_handler(text, "scripts/build.sh", Limits())) == [
        (1, 5, "", "", "scripts/build.sh")
    ]


def test_python_that_does_not_tokenize_still_chunks() -> None:
    """Statements found before the tokenizer gives up still end definitions."""
    text = 'def ok():\n    return 1\n\nx = """never closed\ndef inside():\n'
    document = code_handler(text, "broken.py", Limits())
    assert [(c.start_line, c.end_line, c.symbol) for c in document.chunks] == [
        (1, 2, "ok"),
        (4, 4, ""),
        (5, 5, "inside"),
    ]


def test_text_handler_packs_paragraphs() -> None:
    text = "alpha beta\ngamma\n\n\ndelta\n"
    document = text_handler(text, "notes/plain.txt", Limits(max_chars=12))
    assert document.title == "plain"
    assert [(c.start_line, c.end_line, c.breadcrumb) for c in document.chunks] == [
        (1, 1, "notes/plain.txt"),
        (2, 2, "notes/plain.txt"),
        (5, 5, "notes/plain.txt"),
    ]


def test_every_handler_name_in_the_core_table_has_a_handler():
    from vq.core import filetypes
    from vq.indexer.handlers import HANDLERS
    from vq.indexer.project import PROSE_FORMATS

    names = set(filetypes.HANDLER_BY_EXTENSION.values()) | set(
        filetypes.HANDLER_BY_FILENAME.values())
    assert names == set(HANDLERS) == filetypes.HANDLER_NAMES
    assert names >= filetypes.BINARY_HANDLERS | filetypes.PROSE_HANDLERS
    assert set(PROSE_FORMATS) == filetypes.PROSE_HANDLERS  # vq init names every one
    assert filetypes.language_for("src/App.TSX") == "typescript"
    assert filetypes.suffix("docs/a.Report.DOCX") == ".docx" and filetypes.suffix(".bashrc") == ""


def test_a_files_kind_is_its_vaults_except_code_anywhere_and_prose_in_code():
    from vq.core.filetypes import content_kind

    assert [content_kind("notes", h) for h in ("code", "markdown", "pdf", "text")] == \
        ["code", "notes", "notes", "notes"]
    in_code = {h: content_kind("code", h) for h in ("markdown", "rst", "asciidoc", "org",
                                                  "latex", "html", "pdf", "notebook",
                                                  "text", "hook:pandoc")}
    assert in_code == {"markdown": "notes", "rst": "notes", "asciidoc": "notes",
                       "org": "notes", "latex": "notes", "html": "docs", "pdf": "docs",
                       "notebook": "docs", "text": "code", "hook:pandoc": "code"}


def test_a_bazel_target_reads_as_its_rule_and_name() -> None:
    """A multi-line rule call's first line (``py_binary(``) said nothing of the target."""
    text = 'py_binary(\n    name = "cli",\n    srcs = ["cli.py"],\n)\n'
    chunk = code_handler(text, "tools/BUILD", Limits(min_chars=0)).chunks[0]
    assert (chunk.symbol, chunk.context) == ("cli", 'target cli: py_binary(name = "cli")')
