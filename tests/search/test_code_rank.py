"""The code-ranking rules on hand-made rows: no index, no model."""

from __future__ import annotations

import pytest

from vq.query import code_rank


def rows(*specs):
    """(id, path, symbol, score) -> the fused order and the rows ``adjust`` reads."""
    return [s[0] for s in specs], {
        doc_id: {"kind": "code", "path": path, "symbol": symbol, "_score": score,
                 "_signals": {}} for doc_id, path, symbol, score in specs}


def test_tests_are_halved_and_a_named_definition_counts_double():
    order, table = rows(("t", "tests/test_a.py", "test_f", 0.9), ("m", "a.py", "g", 0.6),
                        ("d", "b.py", "parse_config", 0.4))
    got = code_rank.adjust(order, table, "where is parse_config", ["parse_config"])
    assert got == ["d", "m", "t"]
    assert table["t"]["_score"] == 0.9 * code_rank.SECONDARY
    assert table["d"]["_score"] == 0.4 * code_rank.DEFINES
    assert table["d"]["_signals"]["code"] == {"defines": code_rank.DEFINES}


def test_a_test_beside_the_code_it_tests_is_known_by_its_symbol():
    """Rust keeps tests in the module (``mod tests``, ``fn test_max_columns``): ripgrep's
    flag tests outranked the flag's definition for "max-columns"."""
    specs = (("t", "src/flags.rs", "test_max_columns", 0.9),
             ("u", "src/flags.rs", "tests.parses_max_columns", 0.85),
             ("d", "src/flags.rs", "MaxColumns", 0.6),
             ("k", "src/latest.rs", "latest_version", 0.5),
             ("c", "src/contest.rs", "contest.run", 0.4))
    assert code_rank.adjust(*rows(*specs), "max-columns", []) == ["d", "k", "t", "u", "c"]
    assert code_rank.adjust(*rows(*specs), "max-columns tests", []) == ["t", "u", "d", "k", "c"]


def test_a_class_name_names_the_class_not_its_constructor():
    """gson: "TypeAdapter" is the class; ``TypeAdapter.TypeAdapter`` (its one-line
    constructor) scored higher in the fusion and took rank 1 by the same x2."""
    order, table = rows(("ctor", "TypeAdapter.java", "TypeAdapter.TypeAdapter", 0.9),
                        ("cls", "TypeAdapter.java", "TypeAdapter", 0.6),
                        ("m", "Gson.java", "Gson.getAdapter", 0.5))
    assert code_rank.adjust(order, table, "TypeAdapter", ["TypeAdapter"]) == ["cls", "ctor", "m"]
    assert code_rank.names("TypeAdapter.TypeAdapter", ["TypeAdapter.TypeAdapter"])
    assert code_rank.names("Outer.Inner", ["Inner"])  # a member still counts


def test_a_named_definition_that_no_signal_scored_stays_below_every_scored_hit():
    order, table = rows(("m", "a.py", "g", 0.01), ("d", "b.py", "OAuth2", 0.0))
    assert code_rank.adjust(order, table, "OAuth2 password flow", ["OAuth2"]) == ["m", "d"]


def test_a_named_definition_does_not_jump_a_hit_scoring_more_than_twice_it():
    order, table = rows(("m", "a.py", "g", 0.9), ("d", "b.py", "parse_config", 0.3))
    assert code_rank.adjust(order, table, "where is parse_config", ["parse_config"]) == ["m", "d"]
    # the query is nothing but the name, and `g` does not write it: it counts half
    order, table = rows(("m", "a.py", "g", 0.9), ("d", "b.py", "parse_config", 0.3))
    assert code_rank.adjust(order, table, "parse_config", ["parse_config"]) == ["d", "m"]


def test_a_module_qualified_name_names_the_definition_in_that_module_only():
    """``validators.validates`` is ``validates`` in validators.py (or under validators/):
    the one in another module, and a definition merely in that module, are not named."""
    order, table = rows(("other", "pkg/_keywords.py", "validates", 0.5),
                        ("near", "pkg/validators.py", "validator_for", 0.45),
                        ("d", "pkg/validators.py", "validates", 0.3),
                        ("pkg", "lib/validators/core.py", "Validator.validates", 0.2))
    got = code_rank.adjust(order, table, "validators.validates", ["validators.validates"])
    assert got[0] == "d"
    assert "code" not in table["other"]["_signals"] and "code" not in table["near"]["_signals"]
    assert table["pkg"]["_signals"]["code"] == {"defines": code_rank.DEFINES}
    where = code_rank.symbol_filter(["validators.validates"])
    assert "symbol = 'validates'" in where and "path LIKE '%/validators.%'" in where


def test_module_splits_read_each_prefix_as_a_module_path():
    assert code_rank.module_splits("a.b.C.f") == [("a", "b.C.f"), ("a/b", "C.f"),
                                                  ("a/b/C", "f")]
    assert code_rank.module_splits("plain") == []


def test_test_folders_of_every_ecosystem_are_secondary():
    """Jest's ``__tests__/`` and ``__mocks__/``, Playwright's ``e2e/`` (VitePress keeps its
    fixture site there) are tests as ``tests/`` is; a folder that only starts like one
    (``testimonials/``, ``contest.rs``) is not."""
    for path in ("src/__tests__/parse.ts", "__tests__/e2e/routes/[id].md",
                 "packages/x/__mocks__/fs.js", "e2e/login.ts", "Tests/data.json",
                 "pkg/testdata/a.go", "src/parse.spec.ts", "pkg/a_test.go", "conftest.py"):
        assert code_rank.secondary(path, "parse the routes"), path
    for path in ("src/testimonials/a.ts", "src/contest.rs", "docs/latest/a.md", "e2e.ts"):
        assert not code_rank.secondary(path, "parse the routes"), path
    assert not code_rank.secondary("e2e/login.ts", "the login e2e test")


IMPORT_BLOCKS = [
    "using System.Threading;\n\nnamespace MediatR.Pipeline;\n\nusing System.Threading.Tasks;\n",
    "from __future__ import annotations\n\nimport typing\nfrom ._config import (\n"
    "    DEFAULT_LIMITS,\n    Timeout,\n)\nfrom ._urls import URL\n",
    'package net\n\nimport (\n\t"fmt"\n\t"hash/crc32"\n)\n',
    "use std::io;\nuse crate::{\n    flags,\n    search::Searcher,\n};\nmod hiargs;\n",
    "#pragma once\n#include <vector>\n#include \"list.h\"\n",
    "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Jobs;\n\n"
    "use Illuminate\\Bus\\Queueable;\n",
    "'use strict';\nimport { readFile,\n  writeFile } from 'node:fs';\n",
    "# frozen_string_literal: true\n",  # Devise: each file's first line, a block of its own
    "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport sys\n",
    "//go:build linux\n// +build linux\n\npackage net\n",
    "const fs = require('fs');\nconst { join } = require('node:path');\n",  # CommonJS
    'local util = require("telescope.utils")\nlocal M = require "x"\n',  # Lua
    '<script setup lang="ts">\nimport { computed } from "vue"\n',  # a component's script
]
NOT_IMPORTS = [
    '"""HTTP client."""\n\nimport typing\n',  # a module docstring is prose
    "import typing\n\nDEFAULT_TIMEOUT = 5.0\n",  # a statement after the imports
    "// Import the settings first.\nusing System;\n",  # a comment is prose
    "#!/bin/sh\nset -eu\n",  # a script's first statement
    "const config = requireConfig();\n",  # a call, not an import
    "<script>\nlet count = 0\n",
    "",
]


def test_a_block_of_nothing_but_imports_is_secondary():
    """MediatR: each file's ``using`` block matched "pipeline behavior" by its path and
    ranked above the definition; it is halved unless the query asks about imports."""
    for text in IMPORT_BLOCKS:
        assert code_rank.imports_only({"symbol": "", "text": text}), text
    for text in NOT_IMPORTS:
        assert not code_rank.imports_only({"symbol": "", "text": text}), text
    header = "code/a.cs > a.cs\n\n"
    assert code_rank.imports_only({"symbol": "", "text": header + IMPORT_BLOCKS[0],
                                   "body_start": len(header)})
    assert not code_rank.imports_only({"symbol": "Widget", "text": IMPORT_BLOCKS[0]})
    order, table = rows(("u", "src/Pipeline/RequestPreProcessorBehavior.cs", "", 0.6),
                        ("d", "src/IPipelineBehavior.cs", "IPipelineBehavior", 0.45))
    table["u"]["text"] = IMPORT_BLOCKS[0]
    assert code_rank.adjust(order, table, "pipeline behavior", []) == ["d", "u"]
    assert table["u"]["_signals"]["code"] == {"imports": code_rank.SECONDARY}
    order, table = rows(("u", "a.cs", "", 0.6), ("d", "b.cs", "B", 0.45))
    table["u"]["text"] = IMPORT_BLOCKS[0]
    assert code_rank.adjust(order, table, "which files import System.Threading", []) == ["u", "d"]


def test_a_chunk_holding_the_identifier_as_written_counts_double():
    """Devise: ``authenticate_user!`` is generated at run time, so only the chunks that
    write it hold it; the stemmed index matched every ``*_authentication`` method too."""
    order, table = rows(("m", "lib/models/database_authenticatable.rb",
                         "after_database_authentication", 0.9),
                        ("h", "lib/controllers/helpers.rb", "", 0.5),
                        ("l", "lib/controllers/later.rb", "", 0.5))
    table["m"]["text"] = "def after_database_authentication\nend\n"
    table["h"]["text"] = "# before_action :authenticate_user!\n"
    table["l"]["text"] = "authenticate_user_later!  # a longer name\n"
    terms = code_rank.symbol_terms("authenticate_user!")
    assert code_rank.adjust(order, table, "authenticate_user!", terms) == ["h", "m", "l"]
    assert table["h"]["_signals"]["code"] == {"holds": code_rank.DEFINES}
    # the whole query is the name: what lacks it counts half (identifier-lookups)
    assert table["m"]["_signals"]["code"] == {"lacks": code_rank.SECONDARY}
    assert code_rank.is_lookup("authenticate_user!", terms)
    assert not code_rank.is_lookup("where is authenticate_user! defined",
                                   code_rank.symbol_terms("where is authenticate_user! defined"))
    assert not code_rank.is_lookup("kettles", ["kettles"])  # a word, not an identifier
    assert code_rank.literal_patterns(["validators.validates", "parseConfig"])[0].pattern \
        .endswith("parseConfig(?![\\w$])")  # dotted names are the definition rule's


@pytest.mark.parametrize(("query", "terms"), [
    ("DNS records for the load balancer", []),  # an acronym in prose: no literal prior
    ("sign a JWT with the AWS key", []),
    ("send a body with a DELETE request", ["DELETE"]),  # four letters or more: a CONSTANT
    ("retry up to MAX_RETRIES times", ["MAX_RETRIES"]),
    ("where is parseConfig called", ["parseConfig"]),
    ("load the AWSConfig", ["AWSConfig"]),
    ("JWT", ["JWT"]),  # a one-word query names what it asks for
])
def test_short_capitals_in_prose_are_acronyms_not_identifiers(query, terms) -> None:
    """govuk-aws: "DNS" doubled every Terraform block whose description said "DNS"
    (docs/decisions.md#short-acronyms)."""
    assert code_rank.symbol_terms(query) == terms
