"""Code results read like a code search tool's, on a real index with the real model:
a named definition first, one hit per definition, a per-file cap, no hit by fiat."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import write_config, write_tree
from vq.core.settings import load_settings
from vq.query.output import location, source_lines
from vq.query.search import Query, search

pytestmark = pytest.mark.model

LONG_LINES = 2000


def long_function() -> str:
    """A 2,000-line function: every piece of it carries its name in the embed header."""
    body = "".join(f"    obj = encode_part(obj, {n})\n" for n in range(LONG_LINES))
    return ('"""Encoders."""\n\n\ndef jsonable_encoder(obj):\n'
            '    """Turn any object into something json.dumps accepts."""\n'
            f"{body}    return obj\n")


def docstring_heavy() -> str:
    """A function that is mostly docstring about path parameters, in many pieces."""
    paragraphs = "\n\n".join(
        f"    Path parameter option {n}: declares how the path parameters of a route are\n"
        f"    read, documented and shown in the OpenAPI schema for path parameters."
        for n in range(60))
    return f'def Path(default=None):\n    """\n{paragraphs}\n    """\n    return default\n'


CODE = {
    "pkg/encoders.py": long_function(),
    "pkg/param_functions.py": docstring_heavy(),
    "pkg/routing.py": '''
        from pkg.encoders import jsonable_encoder


        def serialize_response(content):
            # every response body goes through jsonable_encoder first
            return jsonable_encoder(content)


        def render_error(exc):
            return jsonable_encoder({"detail": str(exc)})
        ''',
    "pkg/params.py": '''
        def validate_path_params(values, declared):
            """Check each path parameter against its declared type."""
            errors = []
            for name, kind in declared.items():
                if not isinstance(values.get(name), kind):
                    errors.append(name)
            return errors
        ''',
}


def make(tmp_path, files, **search_keys):
    root = tmp_path / "code"
    write_tree(root, files)
    return load_settings(str(write_config(tmp_path / "vq.yaml", {
        "index_dir": str(tmp_path / "index"),
        "vaults": {"v": {"path": str(root), "kind": "code"}},
        **({"search": search_keys} if search_keys else {})})))


def with_search(settings, **keys):
    return dataclasses.replace(settings, search=dataclasses.replace(settings.search, **keys))


def test_a_2000_line_function_is_one_hit_shown_from_its_def_line(tmp_path, build):
    """Every piece of the function matches its name (the embed header carries it): the
    definition is still one hit, the chunk holding its ``def`` line, ranked first."""
    settings = make(tmp_path, CODE)
    assert build(settings).outcome == "ok"
    for method in ("lexical", "hybrid", "dense"):
        hits = search(settings, Query("jsonable_encoder", method=method, limit=25)).hits
        first = hits[0]
        assert (first.path, first.symbol) == ("pkg/encoders.py", "jsonable_encoder"), method
        assert first.start_line <= 4 <= first.end_line, method  # the def line
        assert first.signals["code"]["defines"] > 1
        assert [h.symbol for h in hits].count("jsonable_encoder") == 1, method
        assert {"serialize_response", "render_error"} <= {h.symbol for h in hits}, method
    # a behaviour question reaches the body that does it past the docstring's pieces
    hits = search(settings, Query("where are path parameters validated", limit=5)).hits
    assert [h.symbol for h in hits].count("Path") == 1
    assert "validate_path_params" in [h.symbol for h in hits[:3]]
    # the hit shows the head; the piece that matched best is named beside it
    piece = search(settings, Query("encode_part obj 1500", method="lexical")).hits[0]
    assert piece.start_line <= 4 <= piece.end_line
    assert piece.signals["piece"]["start_line"] > 1000
    # and the lines shown are the def line, a gap, then the matched line itself
    shown = source_lines(piece, "encode_part obj 1500")
    assert shown[0][0] == 4 and (None, "⋮") in shown
    assert (1500 + 6, "    obj = encode_part(obj, 1500)") in shown
    # its location runs from the head to the matched piece's end: every line it shows
    assert location(piece).endswith(f":{piece.start_line}-{piece.signals['piece']['end_line']}")


def test_ranks_follow_the_fused_scores_no_hit_by_fiat(tmp_path, build):
    """``OAuth2`` reads as a symbol; its class is found by name and must rank by its
    score, not above the docs section that answers the question."""
    files = {
        "security/oauth2.py": '''
            class OAuth2:
                """Base class for the security schemes."""

                def __init__(self, flows):
                    self.flows = flows
            ''',
        "docs/tutorial.py": '''
            def password_flow_with_jwt_tokens(form):
                """OAuth2 password flow with JWT tokens: check the password, then
                issue a signed JWT access token for the user."""
                user = authenticate(form.username, form.password)
                return create_jwt_token(user)
            ''',
    }
    settings = make(tmp_path, files)
    assert build(settings).outcome == "ok"
    for method in ("lexical", "hybrid", "dense"):
        hits = search(settings, Query("OAuth2 password flow with JWT tokens",
                                      method=method)).hits
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), method
        if method != "dense":  # one raw cosine, doubled for the class, may lead alone
            assert hits[0].path == "docs/tutorial.py", method


def test_a_files_code_hits_are_capped_when_other_files_have_some(tmp_path, build):
    many = "".join(f"def retry_request_{n}(url):\n    return retry_request(url, {n})\n\n\n"
                   for n in range(8))
    others = {f"pkg/other_{n}.py": f"def retry_again_{n}(url):\n    return retry_request(url)\n"
              for n in range(4)}
    settings = make(tmp_path, {"pkg/many.py": many, **others}, per_file_cap=3)
    assert build(settings).outcome == "ok"
    hits = search(settings, Query("retry_request url", method="hybrid")).hits
    assert [h.path for h in hits[:7]].count("pkg/many.py") == 3
    assert [h.path for h in hits].count("pkg/many.py") == 6  # the rest follow, in order
    assert hits[7].signals["code"]["capped"] == 1.0
    uncapped = search(with_search(settings, per_file_cap=0),
                      Query("retry_request url", method="hybrid")).hits
    assert [h.score for h in uncapped] == sorted((h.score for h in uncapped), reverse=True)
    assert not any("capped" in h.signals.get("code", {}) for h in uncapped)


MODULES = {
    "pkg/validators.py": '''
        def validator_for(schema):
            """Pick the validators class for a schema: validators validate, validates."""
            return VALIDATORS.get(schema.get("$schema"), Draft7Validator)


        def validates(version):
            """Register the decorated class for a meta-schema version."""
            def register(cls):
                VALIDATORS[version] = cls
                return cls
            return register
        ''',
    "pkg/keywords.py": '''
        def validates(instance, validators):
            """Run the validators: validates the instance with validators, the validators
            each validating it, as validators do when the schema validates."""
            return all(v(instance) for v in validators)
        ''',
}


def test_a_module_qualified_name_ranks_that_module_s_definition_first(tmp_path, build):
    """``validators.validates`` names ``validates`` in validators.py: the namesake in
    another module that repeats both words does not come first."""
    settings = make(tmp_path, MODULES)
    assert build(settings).outcome == "ok"
    for method in ("lexical", "hybrid"):
        first = search(settings, Query("validators.validates", method=method)).hits[0]
        assert (first.path, first.symbol) == ("pkg/validators.py", "validates"), method
        assert first.signals["code"]["defines"] > 1


def test_a_code_hit_shows_numbered_source_lines_from_its_def_line(tmp_path, build, cli):
    """At the terminal a code hit reads like a code search tool's: the ``def`` line and
    the best-matching lines, numbered as in the file, indentation kept, a gap marked."""
    settings = make(tmp_path, CODE)
    assert build(settings).outcome == "ok"
    source = (tmp_path / "code" / "pkg" / "params.py").read_text().splitlines()
    number = {line.strip(): n for n, line in enumerate(source, 1)}
    result = cli("--config", tmp_path / "vq.yaml", "search", "-m", "lexical", "-n", "1",
                 "isinstance errors append")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "    validate_path_params"  # the path is on the line above
    head = number["def validate_path_params(values, declared):"]
    assert f"    {head}  def validate_path_params(values, declared):" in lines
    match = number["if not isinstance(values.get(name), kind):"]
    assert f"    {match}          if not isinstance(values.get(name), kind):" in lines
    assert f"    {match + 1}              errors.append(name)" in lines
    assert any(line.strip() == "⋮" for line in lines), "the skipped lines are not marked"
    prose = cli("--config", tmp_path / "vq.yaml", "search", "--json", "-n", "1",
                "isinstance errors append", "-m", "lexical")
    assert "\n" not in prose.stdout.split('"snippet": ')[1].split('",')[0]  # JSON: one line


def test_code_lines_keep_the_head_the_best_window_and_relative_indentation():
    from vq.query.output import code_lines

    text = "    def f(x):\n        a = 1\n\n        b = 2\n        return x.frobnicate()\n"
    assert code_lines(text, 10, "frobnicate") == [
        (10, "def f(x):"), (None, "⋮"), (14, "    return x.frobnicate()")]
    everything = [(10, "def f(x):"), (11, "    a = 1"), (13, "    b = 2"),
                  (14, "    return x.frobnicate()")]  # a blank line is no gap
    assert code_lines(text, 10, "nothing matches") == everything
    assert code_lines(text, 10, "frobnicate return", most=2) == [
        (10, "def f(x):"), (None, "⋮"), (14, "    return x.frobnicate()")]
    lines = "def g():\n" + "".join(f"    step_{n}()\n" for n in range(9)) + "    done()\n"
    assert [n for n, _ in code_lines(lines, 1, "step_2 step_7 done")] == [1, None, 4, None, 9,
                                                                         None, 11]
    assert code_lines("", 1, "x") == []
    outline = [(3, "\tdef f(self):"), (9, "\tdef g(self):"), (None, "+2 more")]
    assert code_lines("class A:\n", 1, "A", extra=outline) == [
        (1, "class A:"), (None, "⋮"), (3, "    def f(self):"), (9, "    def g(self):"),
        (None, "⋮ +2 more")]  # no gap marks inside the outline: it is a list
    go = "func f() {\n\tif ok {\n\t\treturn frobnicate()\n\t}\n}\n"
    assert code_lines(go, 7, "frobnicate") == [(7, "func f() {"), (None, "⋮"),
                                               (9, "        return frobnicate()")]


def big_class() -> str:
    """A class cut at its methods (too long for one chunk), with no docstring: its own
    chunk is the ``class`` line alone."""
    methods = "".join(
        f"    @property\n    def step_{n}(self):\n" + "".join(
            f"        value_{k} = self.compute({n}, {k})  # a long enough line of code\n"
            for k in range(12)) + f"        return value_{n % 12}\n\n"
        for n in range(9))
    return "import math\n\n\nclass Pipeline:\n" + methods


def test_a_header_only_class_hit_shows_its_members_first_lines(tmp_path, build, cli):
    settings = make(tmp_path, {"pkg/pipeline.py": big_class()})
    assert build(settings).outcome == "ok"
    source = (tmp_path / "code" / "pkg" / "pipeline.py").read_text().splitlines()
    hit = search(settings, Query("Pipeline", method="lexical", limit=20)).hits[0]
    assert (hit.symbol, hit.start_line, hit.end_line) == ("Pipeline", 4, 4)
    wanted = [(n, line) for n, line in enumerate(source, 1) if line.startswith("    def ")]
    assert len(wanted) == 9 and hit.outline == [*wanted[:6], (None, "+3 more")]
    result = cli("--config", tmp_path / "vq.yaml", "search", "-m", "lexical", "-n", "1",
                 "Pipeline")
    lines = result.stdout.splitlines()
    assert lines[2:] == [" " * 5 + "4  class Pipeline:", "        ⋮",  # @property skipped
                         *[f"    {n:>2}      def step_{k}(self):"
                           for k, (n, _) in enumerate(wanted[:6])],
                         "        ⋮ +3 more"], lines
    method = search(settings, Query("step_3", method="lexical")).hits[0]
    assert method.symbol == "Pipeline.step_3" and method.outline == []  # only bare classes


def test_only_a_header_only_class_asks_the_index_for_members():
    """A short function is not a class: the outline costs it no query."""
    from vq.query.outline import outlines

    class Counting:
        calls = 0

        def rows(self, where, k):
            import pyarrow as pa

            self.calls += 1
            return pa.table({"vault": [], "path": [], "breadcrumb": [], "start_line": [],
                             "text": [], "body_start": []})

    def row(kind: str, body: str) -> dict:
        context = f"v/a.py > a.py :: f\n{kind} f: def f()\n\n"
        return {"id": kind, "kind": "code", "symbol": "f", "language": "python", "page": None,
                "vault": "v", "path": "a.py", "breadcrumb": "a.py :: f", "start_line": 1,
                "text": context + body, "body_start": len(context)}

    sources = Counting()
    assert outlines(sources, [row("function", "def f(): return 1")]) == {}
    assert sources.calls == 0
    assert outlines(sources, [row("class", "class F:")]) == {} and sources.calls == 1


def test_a_guide_in_a_code_vault_ranks_as_prose_one_hit_per_section(tmp_path, build):
    """A repository indexed as one code vault (``vq init`` without a docs folder) holds
    its guides too: a long Markdown section is one hit, not a page of its pieces, its
    rows are notes for ``--kind``, and the source beside it stays code."""
    from vq.core.store import open_for
    from vq.query.filters import Filters

    section = "\n\n".join(
        f"Binary detection, case {n}: a file holding a NUL byte is treated as binary and "
        f"searching it stops at that byte unless the text flag asks for every byte."
        for n in range(40))
    guide = f"# User guide\n\n## Binary data\n\n{section}\n\n## Colors\n\nSet colors here.\n"
    settings = make(tmp_path, {"GUIDE.md": guide, **CODE})
    assert build(settings).outcome == "ok"
    kinds = {(r["path"], r["kind"]) for r in open_for(settings).chunks.search()
             .select(["path", "kind"]).limit(10_000).to_list()}
    assert ("GUIDE.md", "notes") in kinds and ("GUIDE.md", "code") not in kinds
    assert ("pkg/params.py", "code") in kinds
    hits = search(settings, Query("how is a binary file with a NUL byte detected",
                                  limit=10)).hits
    binary = [h for h in hits if h.path == "GUIDE.md" and h.breadcrumb.endswith("Binary data")]
    assert len(binary) == 1 and hits[0] is binary[0]
    code_only = search(settings, Query("binary NUL byte", limit=10,
                                       filters=Filters(kinds=("code",)))).hits
    assert code_only and all(h.path.endswith(".py") for h in code_only)
    notes = search(settings, Query("binary NUL byte", filters=Filters(kinds=("notes",)))).hits
    assert notes and {h.path for h in notes} == {"GUIDE.md"}


def test_a_member_whose_doc_comment_fills_its_first_piece_is_outlined_by_its_fn_line():
    """ripgrep's ``WalkBuilder::build_matchers`` has a doc comment longer than a piece:
    the outline shows its ``fn`` line from the next piece, not a comment line."""
    from vq.query.outline import _members

    def piece(crumb: str, start: int, body: str) -> dict:
        return {"vault": "v", "path": "walk.rs", "breadcrumb": crumb, "start_line": start,
                "text": "ctx\n\n" + body, "body_start": len("ctx\n\n")}

    cls = piece("walk.rs :: WalkBuilder", 1, "impl WalkBuilder {")
    found = [cls,
             piece("walk.rs :: WalkBuilder :: build_matchers", 10,
                   "    /// Build matchers for checking paths against ignore files.\n"
                   "    ///\n    /// This is a long comment."),
             piece("walk.rs :: WalkBuilder :: build_matchers", 13,
                   "    /// More of it.\n    pub fn build_matchers(&self) -> Vec<Ignore> {"),
             piece("walk.rs :: WalkBuilder :: new", 2, "    pub fn new() -> WalkBuilder {")]
    assert _members(cls, found) == [(2, "    pub fn new() -> WalkBuilder {"),
                                    (14, "    pub fn build_matchers(&self) -> Vec<Ignore> {")]


def test_a_rust_type_is_shown_from_its_declaration_not_its_impl_block(tmp_path, build):
    """ripgrep: ``pub struct Searcher`` and its ``impl Searcher`` blocks are one place
    (mod.rs :: Searcher); "Searcher" showed the one-line ``impl Searcher {`` piece (its
    methods are definitions of their own) and never the struct."""
    fields = "".join(f"    /// Setting {n}: when it is on, a line that matches is reported with "
                     f"its context, counted, and written to the sink.\n    setting_{n}: bool,\n"
                     for n in range(40))
    body = "".join(f"        let x{k} = self.setting_{k} && !self.setting_{k + 1};\n"
                   for k in range(30))
    methods = "".join(f"    /// Search with mode {n}.\n    pub fn search_{n}(&self) -> bool {{\n"
                      f"{body}        x0\n    }}\n\n" for n in range(6))
    source = ("/// A searcher executes searches over a haystack.\n"
              f"pub struct Searcher {{\n{fields}}}\n\nimpl Searcher {{\n{methods}}}\n")
    flag = ("/// -./--hidden\n#[derive(Debug)]\nstruct Hidden;\n\nimpl Flag for Hidden {\n"
            "    fn name_long(&self) -> &'static str {\n        \"hidden\"\n    }\n"
            "    fn doc_short(&self) -> &'static str {\n"
            "        r\"Search hidden files and directories.\"\n    }\n}\n")
    settings = make(tmp_path, {"src/searcher.rs": source, "src/defs.rs": flag})
    assert build(settings).outcome == "ok"
    hits = search(settings, Query("Searcher")).hits
    first = hits[0]
    assert first.symbol == "Searcher"
    assert first.start_line == 1, [(h.symbol, h.start_line, h.signals.get("piece")) for h in hits]
    # an impl with its body is where a behaviour question matches: shown from it
    first = search(settings, Query("search hidden files and directories")).hits[0]
    assert (first.path, first.start_line) == ("src/defs.rs", 5), first


def test_a_swift_class_is_shown_from_its_declaration_not_an_extension(tmp_path, build):
    """Alamofire: ``open class Session`` and its ``extension Session`` blocks are one
    place; "Session" showed the one-line ``extension Session: SessionStateProvider {``
    header, far below the class."""
    members = "".join(f"    /// Setting {n}: requests made by this session use it when they "
                      f"retry, redirect or cache a response.\n    public let setting{n}: Bool\n"
                      for n in range(40))
    methods = "".join(f"    /// State {n}.\n    func state{n}() -> Bool {{\n"
                      + "".join(f"        let x{k} = setting{k} && !setting{k + 1}\n"
                                for k in range(30)) + "        return x0\n    }\n\n"
                      for n in range(6))
    source = ("import Foundation\n\n/// A session creates and manages requests.\n"
              f"open class Session {{\n{members}}}\n\n"
              f"extension Session: SessionStateProvider {{\n{methods}}}\n")
    settings = make(tmp_path, {"Source/Session.swift": source})
    assert build(settings).outcome == "ok"
    first = search(settings, Query("Session")).hits[0]
    assert (first.symbol, first.start_line) == ("Session", 3), first


def test_chunks_that_write_the_identifier_carry_the_literal_prior(tmp_path, build):
    """On a real index: the hits whose own lines write ``authenticate_user!`` count
    double, the ``*_authentication`` methods that only share its stems do not."""
    files = {
        "lib/helpers.rb": '''
            module Helpers
              # Defines authenticate_user! and friends for each mapping, e.g.
              #   before_action :authenticate_user!
              def self.define_helpers(mapping)
                class_eval "def authenticate_#{mapping}!; warden.authenticate!; end"
              end
            end
            ''',
        "lib/authenticatable.rb": '''
            module Authenticatable
              # Called after a user is authenticated through the database.
              def after_database_authentication
              end

              def active_for_authentication?
                true
              end
            end
            '''}
    settings = make(tmp_path, files)
    assert build(settings).outcome == "ok"
    hits = search(settings, Query("authenticate_user!", limit=5)).hits
    holding = [h for h in hits if "authenticate_user!" in h.text]
    assert holding and all(h.signals["code"]["holds"] == 2.0 for h in holding)
    assert all("holds" not in h.signals.get("code", {}) for h in hits if h not in holding)
    assert hits[0] in holding
    # the query is nothing but the name: the methods lacking it count half
    assert all(h.signals["code"].get("lacks") == 0.5 for h in hits if h not in holding)
    asked = search(settings, Query("where is authenticate_user! written", limit=5)).hits
    assert all("lacks" not in h.signals.get("code", {}) for h in asked)
