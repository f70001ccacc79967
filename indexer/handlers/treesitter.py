"""Code definitions from tree-sitter parse trees: exact spans, names, signatures, docs.

The per-language wheels (``tree-sitter-python``, ``-go``, ...) ship compiled
grammars, so parsing works offline; a language without an installed grammar
gets None and ``code.code_handler`` falls back to its regex chunker, as does a file
whose parse runs past a step budget (``_bounded_parse``: text that is no code of its
language can make error recovery quadratic).

What the caller can rely on: ``definitions`` returns blocks that tile
``[0, len(lines))`` in order, without gaps or overlaps, whatever the tree
holds (syntax errors included), because spans are whole lines and each
definition starts below the previous one's end. A definition's block takes
the comments, decorators and attributes directly above it. Top-level lines
outside definitions become symbol-less blocks, except lines that start no
statement (a namespace's closing brace, ``#endif``), which stay with the
block above. A definition longer than ``max_chars`` is cut at the
definitions in its body (methods of a big class, nested functions); the
caller cuts what is still too long by lines and repeats the signature.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from vq.indexer.handlers.base import Limits, Span

Node = Any  # tree_sitter.Node; the package is imported lazily


@dataclass(frozen=True)
class Definition:
    """A tile of the file: a definition (``parts`` names it) or the lines between them."""

    span: Span  # 0-based, half-open, attached comments and decorators included
    head: int  # first line of the definition itself (below its comments)
    parts: tuple[str, ...] = ()  # ("Invoice", "total"): symbol path
    kind: str = ""  # "function" | "class" | "method" | ""
    signature: str = ""
    doc: str = ""


@dataclass(frozen=True)
class _Grammar:
    module: str
    kinds: dict[str, str]  # definition node type -> kind
    function: str = "language"
    wrappers: frozenset[str] = frozenset()  # wrap one definition: decorators, export
    containers: frozenset[str] = frozenset()  # their children count as top-level items
    attached: frozenset[str] = frozenset({"comment"})  # siblings that join the definition below
    docstrings: bool = False  # a string opening the body documents the definition
    bodies: frozenset[str] = frozenset()  # child types that are the body, where no field is
    opener: str = ""  # a child type that ends the signature where the body leaves it out
    # Elixir's definitions are calls (`def name(args) do`): the callee's name -> kind
    calls: dict[str, str] = field(default_factory=dict)
    # ...and its docs are module attributes (`@doc "..."`): the names that document
    doc_attributes: frozenset[str] = frozenset()
    clauses: bool = False  # a function's consecutive clauses (same name) are one definition
    methods: bool = True  # a function in a class is a method (not in an Elixir module)
    targets: bool = False  # Starlark: a rule call's `name = "..."` names a build target


_F, _C = "function", "class"
_JS = {"function_declaration": _F, "generator_function_declaration": _F,
       "class_declaration": _C, "class": _C, "method_definition": _F,
       "function_expression": _F, "function": _F, "arrow_function": _F,
       "generator_function": _F}
_TS = {**_JS, "abstract_class_declaration": _C, "interface_declaration": _C,
       "enum_declaration": _C, "internal_module": _C, "module": _C, "function_signature": _F,
       "method_signature": _F, "abstract_method_signature": _F}
_TS_WRAP = frozenset({"export_statement", "ambient_declaration", "expression_statement"})
_C_KINDS = {"function_definition": _F, "struct_specifier": _C, "union_specifier": _C,
            "enum_specifier": _C, "type_definition": _C}
_PREPROC = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                      "preproc_elifdef"})
_SLASH = frozenset({"comment", "line_comment", "block_comment"})
_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar("tree_sitter_python", {"function_definition": _F, "class_definition": _C},
                       wrappers=frozenset({"decorated_definition"}), docstrings=True),
    "javascript": _Grammar("tree_sitter_javascript", _JS,
                           wrappers=frozenset({"export_statement"})),
    "typescript": _Grammar("tree_sitter_typescript", _TS, "language_typescript", _TS_WRAP),
    "tsx": _Grammar("tree_sitter_typescript", _TS, "language_tsx", _TS_WRAP),
    "go": _Grammar("tree_sitter_go", {"function_declaration": _F, "method_declaration": "method",
                                      "type_declaration": _C}),
    "rust": _Grammar("tree_sitter_rust",
                     {"function_item": _F, "function_signature_item": _F, "struct_item": _C,
                      "enum_item": _C, "union_item": _C, "trait_item": _C, "impl_item": _C,
                      "mod_item": _C, "macro_definition": _F},
                     attached=_SLASH | {"attribute_item"}),
    "java": _Grammar("tree_sitter_java",
                     {"class_declaration": _C, "interface_declaration": _C,
                      "enum_declaration": _C, "record_declaration": _C,
                      "annotation_type_declaration": _C, "method_declaration": _F,
                      "constructor_declaration": _F, "compact_constructor_declaration": _F},
                     attached=_SLASH),
    "c": _Grammar("tree_sitter_c", _C_KINDS, containers=_PREPROC),
    "cpp": _Grammar("tree_sitter_cpp", {**_C_KINDS, "class_specifier": _C},
                    wrappers=frozenset({"template_declaration"}),
                    containers=_PREPROC | {"namespace_definition", "linkage_specification"}),
    "ruby": _Grammar("tree_sitter_ruby", {"method": _F, "singleton_method": _F, "class": _C,
                                          "module": _C}),
    "shell": _Grammar("tree_sitter_bash", {"function_definition": _F}),
    "csharp": _Grammar("tree_sitter_c_sharp",
                       {"class_declaration": _C, "interface_declaration": _C,
                        "struct_declaration": _C, "record_declaration": _C,
                        "enum_declaration": _C, "delegate_declaration": _F,
                        "method_declaration": _F, "constructor_declaration": _F,
                        "destructor_declaration": _F, "local_function_statement": _F},
                       containers=frozenset({"namespace_declaration"})),
    "kotlin": _Grammar("tree_sitter_kotlin",
                       {"class_declaration": _C, "object_declaration": _C,
                        "function_declaration": _F},
                       attached=_SLASH,
                       bodies=frozenset({"class_body", "enum_class_body", "function_body"})),
    "swift": _Grammar("tree_sitter_swift",
                      {"class_declaration": _C, "protocol_declaration": _C,
                       "function_declaration": _F, "init_declaration": _F,
                       "protocol_function_declaration": _F},
                      attached=_SLASH | {"multiline_comment"}),
    "scala": _Grammar("tree_sitter_scala",
                      {"class_definition": _C, "object_definition": _C, "trait_definition": _C,
                       "package_object": _C, "given_definition": _C,
                       "enum_definition": _C, "function_definition": _F,
                       "function_declaration": _F},
                      attached=_SLASH),
    # Lua: `function M.setup()` and `M.setup = function()` are both definitions
    "lua": _Grammar("tree_sitter_lua", {"function_declaration": _F, "function_definition": _F}),
    # Terraform and other HCL: each block (resource, variable, module, ...) is a definition
    "hcl": _Grammar("tree_sitter_hcl", {"block": "block"}, containers=frozenset({"body"}),
                    bodies=frozenset({"body"}), opener="block_start"),  # `{` is no body
    # Elixir: modules, protocols and implementations hold functions, macros and guards;
    # `@doc`, `@spec` and `@impl` above a function join it, `@moduledoc` documents a module
    "elixir": _Grammar("tree_sitter_elixir", {},
                       calls={**dict.fromkeys(("defmodule", "defprotocol", "defimpl"), _C),
                              **dict.fromkeys(("def", "defp", "defmacro", "defmacrop",
                                               "defguard", "defguardp", "defdelegate",
                                               "defn", "defnp"), _F)},
                       attached=frozenset({"comment", "unary_operator"}),
                       bodies=frozenset({"do_block"}), doc_attributes=frozenset({"doc"}),
                       clauses=True, methods=False),
    "php": _Grammar("tree_sitter_php",
                    {"class_declaration": _C, "interface_declaration": _C,
                     "trait_declaration": _C, "enum_declaration": _C,
                     "function_definition": _F, "method_declaration": _F},
                    "language_php", containers=frozenset({"namespace_definition"})),
}
# Starlark (Bazel's BUILD and .bzl files, Buck's, Tilt's) is a dialect of Python
_GRAMMARS["starlark"] = replace(_GRAMMARS["python"], targets=True)
# A Vue component's options object (``export default { methods: { save() {} } }``, or
# wrapped in ``defineComponent(...)``): read through, so each option and method is a
# definition; a plain script (``<script setup>``) reads as JavaScript/TypeScript does.
_VUE_OPTIONS = frozenset({"export_statement", "call_expression", "arguments", "object", "pair"})
_GRAMMARS.update({f"vue-{name}": replace(_GRAMMARS[name],
                                         containers=_GRAMMARS[name].containers | _VUE_OPTIONS)
                  for name in ("javascript", "typescript")})
# a container's body whose items are top-level: C++ and C# namespaces, PHP's namespace {}
_CONTAINER_BODIES = frozenset({"declaration_list", "compound_statement"})
_ASSIGNMENTS = frozenset({"lexical_declaration", "variable_declaration", "field_definition",
                          "public_field_definition", "assignment_statement"})
# Lua's table fields and methods, `finders.new_table` and `Picker:find`: a symbol path
_LUA_INDEX = frozenset({"dot_index_expression", "method_index_expression"})
_BODY_REQUIRED = frozenset({"struct_specifier", "union_specifier", "enum_specifier",
                            "class_specifier"})
_MAX_SIGNATURE = 200
_MAX_DOC = 300
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|//[/!]?|#+|\*|---?)?\s?|\s*\*/\s*$")
_STRING_QUOTES = re.compile(r"^[rRbBuUfF]*(\"\"\"|'''|\"|')|(\"\"\"|'''|\"|')$")


def grammar_name(relpath: str, language: str) -> str:
    """``.tsx`` files need the TSX grammar; every other language has one grammar."""
    return "tsx" if language == "typescript" and relpath.lower().endswith(".tsx") else language


@cache
def _parser(name: str) -> Any | None:
    """A parser for ``name``, or None when its grammar wheel is missing or incompatible."""
    spec = _GRAMMARS.get(name)
    if spec is None:
        return None
    try:
        from tree_sitter import Language, Parser

        module = importlib.import_module(spec.module)  # noqa: TID251 - a grammar wheel, not vq
        return Parser(Language(getattr(module, spec.function)()))
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def available(name: str) -> bool:
    return _parser(name) is not None


# tree-sitter-bash 0.25.1 crashes the process (SIGSEGV, not an exception) on some text
# holding a code point from plane 3 up (`{` then U+FEA9C is enough): a shell script with
# one goes to the line chunker instead (docs/decisions.md#bash-high-planes)
_UNSAFE = {"shell": re.compile("[\U00030000-\U0010FFFF]")}


def definitions(lines: Sequence[str], name: str, limits: Limits) -> list[Definition] | None:
    """Tiles of the file (see the module docstring); None when ``name`` has no grammar,
    or its grammar is known to crash on this text (``_UNSAFE``)."""
    parser = _parser(name)
    if parser is None:
        return None
    text = "\n".join(lines)
    unsafe = _UNSAFE.get(name)
    if unsafe is not None and unsafe.search(text):
        return None
    if _longest_punctuation_run(lines) >= PUNCTUATION_RUN or \
            max(map(len, lines), default=0) > LONG_LINE:
        return None
    source = text.encode("utf-8", "replace")
    tree = _bounded_parse(parser, source)
    if tree is None or _mostly_errors(tree.root_node, len(lines)):
        return None
    try:
        return _Tiler(lines, source, _GRAMMARS[name], limits).tile(tree.root_node,
                                                                    (0, len(lines)), None)
    except RecursionError:  # definitions nested thousands deep (3,000 lines of `def x`)
        return None


# tree-sitter's error recovery can go quadratic on text that is no code of its language,
# and such a file goes to the line chunker instead:
# - past a step budget: 3,000 lines of `<!--` took 10.5 s as Go (270,269 progress steps,
#   18 per byte), where real sources take at most 0.02 per byte (site-packages Python
#   and JavaScript, /usr/include headers). It decides alike on every machine;
# - past a time budget, about 20x what a loaded machine needs at ~10 MB/s: the backstop
#   for recovery that takes few steps (4,000 lines of `/*` as Python: 7.3 s, 399 steps);
# - with a long run of lines without a letter, digit or quote, whose recovery at the end
#   of the file no callback interrupts (`/*` x 6,000 as Python: 20 s). Real sources come
#   close only with string tables (`"©",`: rich's Unicode data, 198 lines), which a quote
#   keeps out of the run;
# - with a line longer than LONG_LINE, whose recovery within the line no callback
#   interrupts either (one line of `\ ` x 50,000 as Ruby: over 10 s, 40 KB of it 2.8 s).
#   Of 38,247 sources in site-packages and /usr/include, 11 have a longer line, every
#   one generated: minified bundles, protobuf modules, a Cython .c file, lexer tables.
PUNCTUATION_RUN = 200
LONG_LINE = 20_000
PARSE_STEPS_FLOOR = 5_000
PARSE_STEPS_PER_BYTE = 0.25
PARSE_SECONDS_FLOOR = 2.0
PARSE_SECONDS_PER_MB = 2.0
_READ_CHUNK = 1 << 16
_WORDISH = re.compile(r"[^\W_]|[\"'`]")


def _longest_punctuation_run(lines: Sequence[str]) -> int:
    """The most consecutive non-blank lines without a letter, digit or quote."""
    longest = run = 0
    for line in lines:
        if line.strip() and not _WORDISH.search(line):
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    return longest


def _bounded_parse(parser: Any, source: bytes) -> Any | None:
    """The tree, or None when parsing ran past its budget (the parser is reset, so the
    next file starts afresh instead of resuming this one)."""
    budget = PARSE_STEPS_FLOOR + int(PARSE_STEPS_PER_BYTE * len(source))
    deadline = time.monotonic() + PARSE_SECONDS_FLOOR + PARSE_SECONDS_PER_MB * len(source) / 1e6
    steps = 0

    def progress(_offset: int, _has_error: bool) -> bool:
        nonlocal steps
        steps += 1
        return steps > budget or time.monotonic() > deadline

    try:
        return parser.parse(lambda byte, _point: source[byte:byte + _READ_CHUNK],
                            progress_callback=progress)
    except ValueError:  # "Parsing failed": the callback cancelled it
        parser.reset()
        return None


# A file whose syntax errors cover half its lines or more goes to the line chunker: an
# error region holds no definitions, and tree-sitter-kotlin 1.1.0 read lines 174-648 of
# moshi's JsonReader.kt (a use-site annotation it does not know) as one ERROR, which
# left the class's 470 lines without a symbol; the patterns still find `class JsonReader`.
ERROR_SHARE = 0.5


def _mostly_errors(root: Node, line_count: int) -> bool:
    """Whether ERROR nodes span at least ``ERROR_SHARE`` of the file's lines."""
    if not root.has_error or not line_count:
        return False
    rows: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            rows.update(range(node.start_point[0], node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(node.children)
    return len(rows) >= ERROR_SHARE * line_count


@dataclass
class _Found:
    definition: Definition
    node: Node  # the definition node itself (wrappers and declarations unwrapped)


class _Tiler:
    def __init__(self, lines: Sequence[str], source: bytes, grammar: _Grammar,
                 limits: Limits) -> None:
        self.lines, self.source, self.grammar, self.limits = lines, source, grammar, limits

    def tile(self, container: Node, span: Span, owner: Definition | None) -> list[Definition]:
        """Cut ``span`` at the definitions among ``container``'s items."""
        items = list(self._items(container))
        starts = {_first_row(item) for item in items if item.type not in self.grammar.attached}
        out: list[Definition] = []
        cursor = span[0]
        for found in self._found(items, span, owner):
            if found.definition.span[0] > cursor:
                self._gap(out, (cursor, found.definition.span[0]), starts, owner)
            out.extend(self._expand(found))
            cursor = found.definition.span[1]
        if cursor < span[1]:
            self._gap(out, (cursor, span[1]), starts, owner)
        return out

    def _items(self, node: Node) -> Iterator[Node]:
        """Named children, reading through containers (``#ifdef``, ``namespace``)."""
        for child in node.named_children:
            body = child.child_by_field_name("body")
            if child.type not in self.grammar.containers:
                yield child
            elif body is None or body.type in _CONTAINER_BODIES:
                yield from self._items(body or child)
            else:  # extern "C" int f() {...}: the one declaration is the item
                yield body

    def _gap(self, out: list[Definition], span: Span, starts: set[int],
             owner: Definition | None) -> None:
        """Lines between definitions: their own block, or the tail of the block above."""
        starts_statement = any(span[0] <= row < span[1] for row in starts)
        small = owner is not None and _size(self.lines, span) < self.limits.min_chars
        if out and (small or not starts_statement):
            out[-1] = replace(out[-1], span=(out[-1].span[0], span[1]))
        elif owner is None:
            out.append(Definition(span, span[0]))
        else:
            out.append(replace(owner, span=span, head=owner.head))

    def _found(self, items: list[Node], span: Span, owner: Definition | None) -> list[_Found]:
        """Definitions among ``items``, in order, each starting below the previous one."""
        found: list[_Found] = []
        floor = span[0]
        run: list[Node] = []  # attached nodes (comments, attributes) directly above
        for item in items:
            if item.type in self.grammar.attached:
                run = self._extend_run(run, item)
                continue
            hit = self._definition(item, owner)
            attached, run = run, []
            if hit is None:
                continue
            node, definition = hit
            first, last = _first_row(item), min(_last_row(item) + 1, span[1])
            if first < floor:  # starts on a line the previous definition ends on
                if found:
                    prev = found[-1]
                    end = max(prev.definition.span[1], last)
                    prev.definition = replace(prev.definition, span=(prev.definition.span[0], end))
                    floor = end  # the next definition starts below the merged end
                continue
            top = self._climb(attached, first, floor)
            doc = definition.doc or self._comment_doc(attached, top)
            definition = replace(definition, span=(top, max(last, first + 1)), doc=doc)
            if not self._next_clause(found, definition):
                found.append(_Found(definition, node))
            floor = definition.span[1]
        return found

    def _next_clause(self, found: list[_Found], definition: Definition) -> bool:
        """Whether ``definition`` is the next clause of the function above (Elixir's
        ``def put(conn, nil)`` under ``def put(conn, value)``): it then joins that
        definition while both fit one chunk, so a function's clauses read as one."""
        if not self.grammar.clauses or not found:
            return False
        prev = found[-1].definition
        span = (prev.span[0], definition.span[1])
        between = self.lines[prev.span[1]:definition.span[0]]
        if prev.parts != definition.parts or any(line.strip() for line in between) or \
                _size(self.lines, span) > self.limits.max_chars:
            return False
        found[-1].definition = replace(prev, span=span, doc=prev.doc or definition.doc)
        return True

    def _extend_run(self, run: list[Node], item: Node) -> list[Node]:
        """Keep a run of attached nodes only while they are contiguous and own their lines."""
        if not self._starts_line(item):
            return []
        if run and _first_row(item) > _last_row(run[-1]) + 1:
            return [item]
        return [*run, item]

    def _climb(self, attached: list[Node], first: int, floor: int) -> int:
        """The definition's first line, moved up over the attached run ending right above it."""
        if not attached or _last_row(attached[-1]) < first - 1:
            return first
        return max(floor, _first_row(attached[0]))

    def _expand(self, found: _Found) -> list[Definition]:
        """An oversized definition is cut at the definitions in its body, recursively."""
        definition, node = found.definition, found.node
        if _size(self.lines, definition.span) <= self.limits.max_chars:
            return [definition]
        body = self._body(node)
        if body is None:
            return [definition]
        inner = self.tile(body, definition.span, definition)
        if all(not d.parts or d.parts == definition.parts for d in inner):
            return [definition]
        return inner

    def _definition(self, item: Node, owner: Definition | None
                    ) -> tuple[Node, Definition] | None:
        """(definition node, its Definition without a span) when ``item`` defines something."""
        node = self._unwrap(item)
        if node is None:
            return None
        value = _assigned_value(node) if node.type in _ASSIGNMENTS else None
        kind = self.grammar.kinds.get((value or node).type) or self._callee_kind(node) or \
            ("target" if self.grammar.targets and node.type == "expression_statement" else _F)
        owner_parts = owner.parts if owner is not None else ()
        parts = (*owner_parts, *self._name(node))
        if kind == _F and self.grammar.methods and \
                (owner.kind == _C if owner is not None else len(parts) > 1):
            kind = "method"  # in a class, or qualified: Shape::area
        body = self._body(value if value is not None else node)
        head = _first_row(node)
        signature = self._signature(item, node, body)
        definition = Definition((head, head + 1), head, parts, kind, signature, self._doc(body))
        return node, definition

    def _body(self, node: Node) -> Node | None:
        """The definition's body: its ``body`` field, else (Kotlin) its child of a body type."""
        body = node.child_by_field_name("body")
        if body is None and self.grammar.bodies:
            body = next((c for c in node.named_children if c.type in self.grammar.bodies), None)
        return body

    def _unwrap(self, item: Node) -> Node | None:
        """The definition node inside ``item`` (itself, or inside a wrapper), else None."""
        node = item
        for _ in range(3):  # export default abstract class ...: wrappers nest a little
            if node.type in self.grammar.wrappers:
                inner = (node.child_by_field_name("definition")
                         or node.child_by_field_name("declaration")
                         or node.child_by_field_name("value"))
                candidates = [inner] if inner is not None else node.named_children
                node = next((c for c in candidates if self._defines(c)), None)
                if node is None:
                    return None
        return node if node.type not in self.grammar.wrappers and self._defines(node) else None

    def _defines(self, node: Node) -> bool:
        if node.type in self.grammar.wrappers:
            return True
        if self.grammar.calls and node.type == "call":
            return bool(self._callee_kind(node))
        if self.grammar.targets and node.type == "expression_statement":
            return bool(self._target(node))
        if node.type in _ASSIGNMENTS:
            value = _assigned_value(node)
            return value is not None and value.type in self.grammar.kinds
        if node.type not in self.grammar.kinds:
            return False
        if node.type in _BODY_REQUIRED:
            return node.child_by_field_name("body") is not None
        if node.type == "type_definition":
            inner = node.child_by_field_name("type")
            return inner is not None and inner.child_by_field_name("body") is not None
        return node.type != "type_declaration" or len(_type_specs(node)) == 1

    def _callee_kind(self, node: Node) -> str:
        """The kind a definition call makes (Elixir's ``def``, ``defmodule``), else ""."""
        if node.type != "call" or not self.grammar.calls:
            return ""
        return self.grammar.calls.get(self._text(node.child_by_field_name("target")), "")

    def _name(self, node: Node) -> tuple[str, ...]:
        """The symbol path a definition adds: ``("Shape", "area")`` for ``Shape::area``."""
        if self._callee_kind(node):
            return self._call_name(node)
        if self.grammar.targets and node.type == "expression_statement":
            return (self._target(node),)
        if node.type == "method_declaration" and node.child_by_field_name("receiver"):
            return (*_receiver(self._text(node.child_by_field_name("receiver"))),
                    *_split(self._text(node.child_by_field_name("name"))))
        if node.type == "impl_item":
            return _split(self._text(node.child_by_field_name("type")))[-1:]
        if node.type == "type_declaration":
            return _split(self._text(_type_specs(node)[0].child_by_field_name("name")))
        if node.type == "block":  # HCL: only its grammar names a definition "block"
            return _hcl_address([self._text(c) for c in node.named_children
                                 if c.type in ("identifier", "string_lit")])
        named = _assigned_target(node) if node.type in _ASSIGNMENTS else \
            node.child_by_field_name("name")
        if named is not None and named.type in _LUA_INDEX:
            return tuple(p for p in re.split(r"[.:]", self._text(named)) if p)
        if named is not None or node.type in _ASSIGNMENTS:
            return _split(self._text(named))
        return _split(self._text(_declarator_name(node.child_by_field_name("declarator"))))

    def _target(self, statement: Node) -> str:
        """Starlark: the target a rule call defines, ``py_binary(name = "cli", ...)`` ->
        ``cli`` (a call without a ``name`` string is no definition)."""
        call = statement.named_children[0] if statement.named_children else None
        arguments = call.child_by_field_name("arguments") if call is not None and \
            call.type == "call" else None
        for argument in arguments.named_children if arguments is not None else ():
            name, value = (argument.child_by_field_name("name"),
                           argument.child_by_field_name("value"))
            if argument.type == "keyword_argument" and self._text(name) == "name" and \
                    value is not None and value.type == "string":
                return _STRING_QUOTES.sub("", self._text(value))
        return ""

    def _call_name(self, node: Node) -> tuple[str, ...]:
        """Elixir: ``defmodule Plug.Conn`` -> ``("Plug", "Conn")``, ``def put(conn) when
        ...`` -> ``("put",)``, ``defimpl String.Chars, for: Money`` -> ``String.Chars.Money``
        (as Elixir names the implementation), ``def a <|> b`` -> ``("<|>",)``."""
        arguments = _arguments(node)
        if not arguments:
            return ()
        head = arguments[0]
        if head.type == "alias":
            implemented = [self._text(p.named_children[1]) for k in arguments[1:]
                           if k.type == "keywords" for p in k.named_children
                           if len(p.named_children) == 2
                           and self._text(p.named_children[0]).startswith("for:")]
            return tuple(".".join([self._text(head), *implemented[:1]]).split("."))
        if head.type == "binary_operator" and \
                self._text(head.child_by_field_name("operator")) == "when":
            head = head.child_by_field_name("left") or head
        if head.type == "call":
            head = head.child_by_field_name("target") or head
        if head.type == "binary_operator":
            head = head.child_by_field_name("operator") or head
        name = self._text(head)
        return (name,) if head.type in ("identifier", "operator") or \
            (name and not any(ch.isspace() or ch in "()" for ch in name)) else ()

    def _signature(self, item: Node, node: Node, body: Node | None) -> str:
        """The definition's header up to its body, on one line (decorators left out)."""
        if self.grammar.targets and node.type == "expression_statement":
            call = node.named_children[0]  # a target: its rule and name, `py_binary(name = "cli")`
            rule = self._text(call.child_by_field_name("function"))
            return f'{rule}(name = "{self._target(node)}")'[:_MAX_SIGNATURE]
        start = node.start_byte if item.type == "decorated_definition" else item.start_byte
        end = body.start_byte if body is not None and body.start_byte > start else node.end_byte
        if self.grammar.opener:
            opener = next((c for c in node.children if c.type == self.grammar.opener), None)
            end = opener.start_byte if opener is not None else end
        if body is None and self._callee_kind(node):  # `def f(x), do: x`: up to `, do:`
            end = next((k.start_byte for k in _arguments(node) if k.type == "keywords"), end)
        text = self.source[start:end].decode("utf-8", "replace")
        if body is None:
            text = text.split("\n", 1)[0].rstrip(", ")
        text = " ".join(text.split()).rstrip("{: ")
        return text[:_MAX_SIGNATURE]

    def _doc(self, body: Node | None) -> str:
        """A docstring: the string statement that opens the body (Python), or the
        module's ``@moduledoc`` (Elixir)."""
        if self.grammar.doc_attributes and body is not None:
            docs = (self._attribute_doc(c, "moduledoc") for c in body.named_children)
            return next((d for d in docs if d), "")
        if not self.grammar.docstrings:
            return ""
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is None or first.type != "expression_statement" or not first.named_children:
            return ""
        string = first.named_children[0]
        if string.type != "string":
            return ""
        return _paragraph(_STRING_QUOTES.sub("", self._text(string).strip()))

    def _attribute_doc(self, node: Node, name: str) -> str:
        """The text of ``@name "..."`` (or a heredoc, or a sigil) when ``node`` is one."""
        operand = node.child_by_field_name("operand") if node.type == "unary_operator" else None
        if operand is None or operand.type != "call" or \
                self._text(operand.child_by_field_name("target")) != name:
            return ""
        contents = [self._text(n) for n in _descendants(operand) if n.type == "quoted_content"]
        return _paragraph("\n".join(contents))

    def _comment_doc(self, attached: list[Node], top: int) -> str:
        for name in self.grammar.doc_attributes:
            docs = (self._attribute_doc(n, name) for n in attached if _first_row(n) >= top)
            if doc := next((d for d in docs if d), ""):
                return doc
        comments = [n for n in attached if n.type in _SLASH and _first_row(n) >= top]
        lines = [_COMMENT_MARKS.sub("", line) for n in comments
                 for line in self._text(n).split("\n")]
        return _paragraph("\n".join(lines))

    def _starts_line(self, node: Node) -> bool:
        line_start = node.start_byte - node.start_point[1]
        return not self.source[line_start:node.start_byte].strip()

    def _text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _arguments(call: Node) -> list[Node]:
    """An Elixir call's arguments: ``put(conn, key), do: x`` -> the call, the keywords."""
    arguments = next((c for c in call.named_children if c.type == "arguments"), None)
    return arguments.named_children if arguments is not None else []


def _descendants(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.named_children))


def _first_row(node: Node) -> int:
    return node.start_point[0]


def _last_row(node: Node) -> int:
    """The last line holding part of ``node`` (an end at column 0 is the line before)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


_VALUE_WRAPPERS = frozenset({"parenthesized_expression", "as_expression",
                             "satisfies_expression", "non_null_expression", "call_expression"})


def _assigned_value(node: Node) -> Node | None:
    """``const f = () => ...``: the value assigned (first declarator that has one), seen
    through parentheses, a TypeScript cast and a wrapping call: zustand's
    ``export const createStore = ((s) => ...) as CreateStore`` and React's
    ``const Button = forwardRef((props, ref) => ...)`` define functions too."""
    if node.type in ("field_definition", "public_field_definition"):
        value = node.child_by_field_name("value")
    elif (lua := _lua_assignment(node)) is not None:
        value = lua[1]
    else:
        declarator = _declarator(node)
        value = declarator.child_by_field_name("value") if declarator is not None else None
    for _ in range(3):
        if value is None or value.type not in _VALUE_WRAPPERS:
            break
        if value.type == "call_expression":
            arguments = value.child_by_field_name("arguments")
            inner = arguments.named_children[0] if arguments is not None and \
                arguments.named_children else None
        else:
            inner = value.named_children[0] if value.named_children else None
        if inner is None:
            break
        value = inner
    return value


def _assigned_target(node: Node) -> Node | None:
    if node.type in ("field_definition", "public_field_definition"):
        return node.child_by_field_name("property") or node.child_by_field_name("name")
    lua = _lua_assignment(node)
    if lua is not None:
        return lua[0]
    declarator = _declarator(node)
    return declarator.child_by_field_name("name") if declarator is not None else None


def _lua_assignment(node: Node) -> tuple[Node, Node] | None:
    """Lua's ``name = value`` with one name and one value (``local f = function()`` wraps
    it in a ``variable_declaration``): (name, value), else None."""
    if node.type == "variable_declaration":
        node = next((c for c in node.named_children if c.type == "assignment_statement"), node)
    if node.type != "assignment_statement":
        return None
    lists: dict[str, list[Node]] = {c.type: c.named_children for c in node.named_children}
    names, values = lists.get("variable_list", []), lists.get("expression_list", [])
    return (names[0], values[0]) if len(names) == 1 and len(values) == 1 else None


def _declarator(node: Node) -> Node | None:
    return next((d for d in node.named_children if d.type == "variable_declarator"
                 and d.child_by_field_name("value") is not None), None)


def _type_specs(node: Node) -> list[Node]:
    """Go: ``type Server struct`` has one spec; a ``type ( ... )`` group has several."""
    return [c for c in node.named_children if c.type in ("type_spec", "type_alias")]


def _declarator_name(node: Node | None) -> Node | None:
    """C/C++: ``static int *make(int n)`` -> the ``make`` node, through pointers and calls."""
    while node is not None and node.child_by_field_name("declarator") is not None:
        node = node.child_by_field_name("declarator")
    return node


def _receiver(text: str) -> tuple[str, ...]:
    """Go: ``(s *Server)`` or ``(p Pair[K, V])`` -> ``("Server",)`` / ``("Pair",)``."""
    words = text.strip("()").split(None, 1)
    if not words:
        return ()
    type_text = words[-1].lstrip("*").split("[")[0].strip()
    return (type_text,) if type_text.isidentifier() else ()


def _split(name: str) -> tuple[str, ...]:
    """``geo::Shape`` -> ``("geo", "Shape")``; template arguments and blanks dropped."""
    text = name
    while _TEMPLATE_ARGS.search(text):
        text = _TEMPLATE_ARGS.sub("", text)
    parts = (" ".join(p.strip("\"'`").split()) for p in text.split("::"))
    return tuple(p.replace(".", "_") for p in parts if p)


def _hcl_address(words: Sequence[str]) -> tuple[str, ...]:
    """A block's type and labels as Terraform addresses it: ``resource "aws_instance"
    "web"`` -> ``aws_instance.web``, ``variable "region"`` -> ``var.region``,
    ``module "vpc"`` -> ``module.vpc``, ``locals`` -> ``locals``."""
    if not words:  # a block the parser recovered without its type
        return ()
    kind, labels = words[0], [w.strip('"').replace(".", "_") for w in words[1:]]
    prefix = {"resource": (), "variable": ("var",)}.get(kind, (kind,))
    return tuple(p for p in (*prefix, *labels) if p)


def _paragraph(text: str) -> str:
    """The first paragraph, on one line, capped: enough to say what the code is for."""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(para.split())[:_MAX_DOC]


def _size(lines: Sequence[str], span: Span) -> int:
    return sum(len(line) + 1 for line in lines[span[0] : span[1]]) - 1
