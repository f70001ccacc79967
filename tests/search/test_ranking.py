"""Ranking rules on a real index: heading boost, deterministic ties, code signals."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import write_config, write_tree
from vq.core.settings import load_settings
from vq.query import code_rank
from vq.query.search import Query, search

pytestmark = pytest.mark.model


def make(tmp_path, name, files, kind="notes", **search_keys):
    root = tmp_path / name
    write_tree(root, files)
    return load_settings(str(write_config(tmp_path / f"{name}.yaml", {
        "index_dir": str(tmp_path / f"{name}-index"),
        "vaults": {"v": {"path": str(root), "kind": kind}},
        **({"search": search_keys} if search_keys else {})})))


def with_search(settings, **keys):
    return dataclasses.replace(settings, search=dataclasses.replace(settings.search, **keys))


def paths(settings, text, method="lexical", limit=10):
    return [h.path for h in search(settings, Query(text, method=method, limit=limit)).hits]


HEADINGS = {
    "runbook.md": "# Runbook\n\n## Quarantine procedure\n\nIsolate the host and page "
                  "the on-call engineer.\n",
    "notes.md": "# Notes\n\n## Misc\n\nWe talked about the quarantine procedure, the "
                "quarantine procedure again, and whether a quarantine procedure is a "
                "procedure at all; quarantine, quarantine.\n",
}


def test_a_query_matching_only_a_heading_ranks_that_section_first(tmp_path, build):
    settings = make(tmp_path, "h", HEADINGS, heading_boost=1.0)
    assert build(settings).outcome == "ok"  # with a boost, the build indexes the breadcrumb
    unboosted = with_search(settings, heading_boost=0.0)
    assert paths(unboosted, "quarantine procedure")[0] == "notes.md"  # body words win alone
    assert paths(settings, "quarantine procedure")[0] == "runbook.md"
    hybrid = search(settings, Query("quarantine procedure")).hits
    assert hybrid[0].path == "runbook.md"


TIES = {f"same/n{i}.md": "# Same\n\nthe retention window for audit logs is ninety days\n"
        for i in range(1, 13)}


def _top_ids(settings, text, fusion):
    s = with_search(settings, fusion=fusion)
    return [h.id for h in search(s, Query(text, limit=10)).hits]


def test_tie_order_is_the_same_after_a_repair_as_after_a_clean_build(tmp_path, build):
    """Twelve files with one identical section tie in BM25; rewriting some of them
    changes the storage order, which must not change the top 10 under either fusion
    (the builds are the same for both: fusion happens at search time)."""
    clean = make(tmp_path, "clean", TIES)
    assert build(clean).outcome == "ok"
    repaired = make(tmp_path, "rep", TIES)
    assert build(repaired).outcome == "ok"
    root = tmp_path / "rep" / "same"
    for i in (1, 2, 3, 4):  # rewritten: their rows now come after the others on disk
        (root / f"n{i}.md").write_text(TIES[f"same/n{i}.md"] + "\nedited\n")
    assert build(repaired).outcome == "ok"
    for i in (1, 2, 3, 4):
        (root / f"n{i}.md").write_text(TIES[f"same/n{i}.md"])
    assert build(repaired).outcome == "ok"
    query = "audit log retention"
    for fusion in ("convex", "rrf"):
        assert _top_ids(repaired, query, fusion) == _top_ids(clean, query, fusion), fusion
    lexical = [h.id for h in search(repaired, Query(query, method="lexical", limit=12)).hits]
    assert lexical == sorted(lexical)  # all tied: by chunk id


CODE = {
    "app/config.py": '''
        """Configuration loading."""


        def parse_config(text):
            """Turn the config text into a dict of settings."""
            return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        ''',
    "app/server.py": '''
        from app.config import parse_config


        def start(path):
            # parse_config reads the file; parse_config errors stop the start;
            # we call parse_config again on reload (parse_config is cheap)
            settings = parse_config(open(path).read())
            fallback = parse_config("")
            return settings or fallback
        ''',
    "tests/test_config.py": '''
        from app.config import parse_config


        def test_parse_config_reads_pairs():
            assert parse_config("a=1") == {"a": "1"}
            assert parse_config("") == {}
            assert parse_config("b=2\\nc=3") == {"b": "2", "c": "3"}
        ''',
}


def test_a_query_naming_a_symbol_ranks_its_definition_first(tmp_path, build):
    settings = make(tmp_path, "c", CODE, kind="code")
    assert build(settings).outcome == "ok"
    for method in ("lexical", "hybrid", "dense"):
        hits = search(settings, Query("parse_config", method=method)).hits
        assert (hits[0].path, hits[0].symbol) == ("app/config.py", "parse_config"), method
        assert hits[0].signals["code"]["defines"] == code_rank.DEFINES


LISP = {
    "lisp/doom-lib.el": """\
(defvar doom-log-level 0
  "How verbosely to log: doom-log prints at this level or below.")

(defun doom-log-file (name)
  "The file doom-log writes NAME's log to."
  (expand-file-name name doom-log-directory))

(defun doom-log (text &rest args)
  "Print TEXT with ARGS when logging is on."
  (when (> doom-log-level 0)
    (message text args)))

(defmacro log! (text)
  "Log TEXT: a shorthand for doom-log that map! and log calls expand to."
  `(doom-log ,text))
""",
    "lisp/doom-cli.el": """\
(defun doom-cli-log (text)
  "Send TEXT to doom-log, then to the CLI's own log."
  (doom-log text)
  (doom-log text))

(defun doom-cli-log-rotate ()
  "Rotate the log: the log file's old log lines go to a log archive."
  (rename-file "log" "log.1"))
""",
}


def test_a_kebab_case_or_bang_name_is_a_symbol_and_ranks_its_definition_first(tmp_path,
                                                                             build):
    """Lisp names are kebab-case: "doom-log" was two words to the symbol rule, and four
    definitions that mention it outranked its own (Doom Emacs)."""
    settings = make(tmp_path, "l", LISP, kind="code")
    assert build(settings).outcome == "ok"
    for method in ("lexical", "hybrid"):
        hits = search(settings, Query("doom-log", method=method)).hits
        assert (hits[0].path, hits[0].symbol) == ("lisp/doom-lib.el", "doom-log"), method
        assert hits[0].signals["code"]["defines"] == code_rank.DEFINES
    bang = search(settings, Query("log!")).hits[0]
    assert bang.symbol == "log!" and bang.signals["code"]["defines"] == code_rank.DEFINES
    assert code_rank.symbol_terms("why does it crash?") == []


def test_tests_rank_below_the_implementation_unless_asked_for(tmp_path, build, monkeypatch):
    settings = make(tmp_path, "t", CODE, kind="code")
    assert build(settings).outcome == "ok"
    files = files_in_order(settings, "config parsing")  # a file's later chunks may follow it
    assert files == ["app/config.py", "app/server.py", "tests/test_config.py"]
    asked = paths(settings, "test that parse config reads pairs", method="hybrid")
    assert asked[0] == "tests/test_config.py"
    monkeypatch.setattr(code_rank, "SECONDARY", 1.0)  # without the rule the test file is 2nd
    assert files_in_order(settings, "config parsing")[1] == "tests/test_config.py"


def files_in_order(settings, text):
    return list(dict.fromkeys(paths(settings, text, method="hybrid")))


FIXTURE_SITE = {
    "src/routes.ts": "export function resolveRoutes(pages: string[]) {\n"
                     "  return pages.map((p) => p.replace(/\\.md$/, ''));\n}\n",
    "README.md": "# Router\n\n## Dynamic routes\n\nA page named `[id].md` is a dynamic "
                 "route: its params come from a paths loader.\n",
    "__tests__/e2e/dynamic-routes/[id].md": "# Dynamic routes\n\nDynamic routes with "
                                            "params: {{ $params.id }}\n",
}


def test_markdown_fixtures_of_a_code_vault_rank_below_its_docs(tmp_path, build):
    """VitePress keeps a fixture site under __tests__/e2e/: its pages are notes chunks of
    the code vault, and the tests rule reaches them as it reaches test code."""
    settings = make(tmp_path, "f", FIXTURE_SITE, kind="code")
    assert build(settings).outcome == "ok"
    hits = search(settings, Query("dynamic routes with params", limit=5)).hits
    fixture = next(h for h in hits if h.path.startswith("__tests__/"))
    assert fixture.signals["code"] == {"secondary": code_rank.SECONDARY}
    assert hits[0].path == "README.md"
    notes = make(tmp_path, "n", FIXTURE_SITE, kind="notes")  # a notes vault: as fused
    assert build(notes).outcome == "ok"
    assert all("code" not in h.signals
               for h in search(notes, Query("dynamic routes with params", limit=5)).hits)
