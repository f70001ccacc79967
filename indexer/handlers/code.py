"""Source code: one chunk per top-level definition, found by tree-sitter or by regexes.

Languages with an installed tree-sitter grammar are cut by ``treesitter``. The
others, and any language whose grammar wheel is missing, use the regexes below:
definitions are recognised only at the start of a line (column 0), so a block
runs from one definition's first line (its decorators and the comments directly
above it included) to the next definition. In most languages statements after a
definition stay in its block; in Python, where the tokenizer tells real
statements from string contents, a top-level statement ends the definition and
starts a symbol-less block. Python classes too large for one chunk are split
into their methods. Anything still too long is cut between lines, preferably at
blank lines. Each chunk's ``context`` (embedded, never part of ``text``) names
its kind, symbol and signature, plus the docstring on pieces cut from below it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, replace

from vq.core.filetypes import language_for
from vq.indexer.handlers import components, treesitter
from vq.indexer.handlers.base import (
    Chunk,
    Document,
    Limits,
    Span,
    file_stem,
    make_chunk,
    split_lines,
    split_span,
    trim,
)


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    kind: str  # "function" | "class" | ""


@dataclass(frozen=True)
class _Language:
    name: str
    patterns: tuple[_Pattern, ...]
    comment: re.Pattern[str] | None = None  # lines that attach to the definition below
    decorator: str = ""  # prefix of decorator/annotation lines above a definition
    # a block comment or docstring (opener, closer) ending right above a definition
    # joins it: Julia's docstrings, OCaml's (** *), Haskell's {-| -}, PowerShell's <# #>
    block_comment: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class _Block:
    span: Span
    head: int  # the line the definition pattern matched; == span[0] when symbol-less
    parts: tuple[str, ...] = ()  # ("Class", "method"): symbol and breadcrumb path
    kind: str = ""
    signature: str = ""  # "" = the head line
    doc: str = ""


_MODS = r"^(?:[a-z-]+\s+)*"  # any lowercase modifiers: export default async, public static
_RUST = r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern(?:\s+\"[^\"]*\")?)\s+)*"
_C_FUNC = r"^(?!(?:if|else|for|while|switch|return|do|typedef|case|goto)\b)[A-Za-z_][\w\s*&:<>,]*?"
_JS = "javascript typescript"
_DART_PARAMS = r"(?:[^;=]*$|[^;]*?\)\s*(?:async\*?\s*|sync\*\s*)?=>)"
_LISP_NAME = r"(?P<name>[^\s()\[\]'`,;\"]+)"  # a symbol: anything but delimiters

# (languages, kind, pattern): a line matching pattern at the block's indent starts a
# definition; group "name" (else "image") names it, and Go's "recv" makes it a method.
_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("python", "function", r"^(?:async\s+)?def\s+(?P<name>\w+)"),
    ("python", "class", r"^class\s+(?P<name>\w+)"),
    (_JS, "function", _MODS + r"function\b\s*\*?\s*(?P<name>[\w$]+)?"),
    (_JS, "class", _MODS + r"class\b\s*(?P<name>[\w$]+)?"),
    (
        _JS,
        "function",
        _MODS + r"(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*"
        r"(?:async\s+)?(?:\(|function\b|[\w$]+\s*=>)",
    ),
    ("typescript", "class", _MODS + r"(?:interface|enum)\s+(?P<name>[\w$]+)"),
    ("go", "function", r"^func\s+(?:\((?P<recv>[^)]*)\)\s*)?(?P<name>\w+)"),
    ("go", "class", r"^type\s+(?P<name>\w+)"),
    ("rust", "function", _RUST + r"fn\s+(?P<name>\w+)"),
    ("rust", "class", _RUST + r"(?:struct|enum|trait|union|mod)\s+(?P<name>\w+)"),
    ("rust", "class", r"^(?:unsafe\s+)?impl\b(?:<[^>]*>)?\s*(?:[\w:<>, ]+\s+for\s+)?(?P<name>\w+)"),
    ("java", "class", _MODS + r"(?:class|interface|enum|record|@interface)\s+(?P<name>\w+)"),
    ("c cpp", "class", r"^(?:typedef\s+)?(?:struct|union|enum|class)\s+(?P<name>\w+)[^;]*$"),
    ("c cpp", "function", _C_FUNC + r"\b(?P<name>~?[A-Za-z_][\w:~]*)\s*\([^;]*$"),
    ("csharp", "class", _MODS + r"(?:class|interface|struct|enum|record)\s+(?P<name>\w+)"),
    ("ruby", "function", r"^def\s+(?:self\.)?(?P<name>[\w?!=]+)"),
    ("ruby", "class", r"^(?:class|module)\s+(?P<name>[\w:]+)"),
    ("shell", "function", r"^function\s+(?P<name>[\w:.-]+)"),
    ("shell", "function", r"^(?P<name>[\w:.-]+)\s*\(\)"),
    ("php", "class", _MODS + r"(?:class|interface|trait|enum)\s+(?P<name>\w+)"),
    ("php", "function", r"^function\s+&?(?P<name>\w+)"),
    ("kotlin", "function", _MODS + r"fun\b\s*(?:<[^>]*>\s*)?(?:[\w.<>?]+\.)?(?P<name>\w+)"),
    ("kotlin", "class", _MODS + r"(?:class|interface|object)\s+(?P<name>\w+)"),
    ("swift", "function", _MODS + r"func\s+(?P<name>\w+)"),
    ("swift", "class", _MODS + r"(?:class|struct|enum|protocol|extension|actor)\s+(?P<name>\w+)"),
    ("scala", "function", _MODS + r"def\s+(?P<name>\w+)"),
    ("scala", "class", _MODS + r"(?:class|object|trait|enum)\s+(?P<name>\w+)"),
    ("lua", "function", r"^(?:local\s+)?function\s+(?P<name>[\w.:]+)"),
    ("elixir", "class", r"^(?:defmodule|defprotocol|defimpl)\s+(?P<name>[\w.]+)"),
    # Haskell: a top-level function starts at its type signature, its equations follow
    ("haskell", "function", r"^(?P<name>[a-z_][\w']*)\s*::"),
    ("haskell", "function", r"^\((?P<name>[!#$%&*+./<=>?@\\^|~:-]+)\)\s*::"),  # (.:?) :: ...
    ("haskell", "class", r"^(?:data|newtype|type|class)\s+(?:family\s+|instance\s+)?"
     r"(?:[^=]*=>\s*)?(?P<name>[A-Z][\w']*)"),
    # an instance is named by its class and type: `instance ToJSON a => ToJSON (Maybe a)`
    # is `ToJSON Maybe` (no type constructor, as for a tuple: the class alone)
    ("haskell", "", r"^(?:deriving\s+)?instance\s+(?:[^=]*=>\s*)?(?P<name>[A-Z][\w']*)"
     r"(?:\s+\(?(?:[A-Z][\w']*\.)*(?P<of>[A-Z][\w']*))?"),
    # OCaml: let-bindings (`and` for mutual recursion), types, modules; `val` in .mli
    ("ocaml", "function", r"^(?:let|and)\s+(?:rec\s+)?(?P<name>[a-z_][\w']*)"),
    ("ocaml", "function", r"^(?:val|external)\s+(?P<name>[a-z_][\w']*)"),
    ("ocaml", "class", r"^type\s+(?:nonrec\s+)?(?:'\w+\s+|\([^)]*\)\s+)?(?P<name>[a-z_][\w']*)"),
    ("ocaml", "class", r"^(?:module(?:\s+type)?|exception|class(?:\s+virtual)?)\s+"
     r"(?:rec\s+)?(?P<name>[A-Za-z_][\w']*)"),
    # Zig: functions, and containers bound to a name; a test starts a block of its own
    ("zig", "function", r"^(?:pub\s+)?(?:(?:export|extern(?:\s+\"\w+\")?|inline|noinline)\s+)*"
     r"fn\s+(?P<name>\w+)"),
    ("zig", "class", r"^(?:pub\s+)?const\s+(?P<name>\w+)\s*=\s*(?:extern\s+|packed\s+)?"
     r"(?:struct|enum|union|opaque)\b"),
    ("zig", "", r"^test\b"),
    # Julia: long and short function forms, macros, types, modules
    ("julia", "function", r"^(?:@\w+\s+)*function\s+(?P<name>[\w.!]+)"),
    ("julia", "function", r"^(?:@\w+\s+)*macro\s+(?P<name>\w+)"),
    # `f(x) = ...`, `f(x)::T where T = ...`: after the last `)`, no bracket before `=`
    ("julia", "function", r"^(?P<name>[A-Za-z_][\w.!]*)\s*(?:\{[^}]*\})?\([^=]*\)[^=()]*=(?!=)"),
    ("julia", "class", r"^(?:@\w+\s+)*(?:mutable\s+struct|struct|abstract\s+type|"
     r"primitive\s+type|module|baremodule)\s+(?P<name>\w+)"),
    # Erlang: each clause of a function starts at column 0; its -spec above it
    ("erlang", "function", r"^(?:-spec\s+)?(?P<name>[a-z][\w@]*)\s*\("),
    ("erlang", "class", r"^-(?:record|type|opaque)\s*\(\s*(?P<name>[a-z][\w@]*)"),
    ("powershell", "function", r"^(?:function|filter|workflow)\s+(?P<name>[\w:.-]+)"),
    ("powershell", "class", r"^(?:class|enum)\s+(?P<name>\w+)"),
    ("dart", "class", r"^(?:(?:abstract|base|final|sealed|interface|mixin)\s+)*"
     r"(?:class|mixin|enum|extension(?:\s+type)?)\s+(?P<name>\w+)"),
    ("dart", "class", r"^typedef\s+(?P<name>\w+)"),
    # a top-level function: a declaration, so no `=` or `;` before its parameters' line
    # ends, unless an arrow body follows them (`int twice(int x) => x * 2;`)
    ("dart", "function", r"^(?:external\s+)?(?:[\w<>?,. ]+?\s+)?(?P<name>[A-Za-z_$][\w$]*)\s*"
     r"(?:<[^>]*>)?\(" + _DART_PARAMS),
    ("vim", "function", r"^fu(?:nction)?!?\s+(?P<name>[\w:#.<>]+)"),
    ("vim", "", r"^com(?:mand)?!?\s+(?:-\S+\s+)*(?P<name>[A-Z]\w*)"),
    ("nim", "function", r"^(?:proc|func|method|iterator|converter|template|macro)\s+"
     r"(?P<name>\w+)"),
    ("solidity", "class", r"^(?:abstract\s+)?(?:contract|interface|library)\s+(?P<name>\w+)"),
    ("solidity", "function", r"^function\s+(?P<name>\w+)"),  # a free function
    ("fortran", "class", r"^(?:module|submodule|program|block\s+data)\s+(?!procedure\b)"
     r"(?P<name>\w+)"),
    ("fortran", "function", r"^(?:(?:pure|elemental|impure|recursive|module)\s+)*"
     r"(?:(?:integer|real|double\s+precision|complex|logical|character)\S*\s+)?"
     r"(?:subroutine|function)\s+(?P<name>\w+)"),
    ("cmake", "function", r"^(?:function|macro)\s*\(\s*(?P<name>[\w-]+)"),
    ("cmake", "", r"^(?:add_library|add_executable|add_custom_target)\s*\(\s*(?P<name>[\w.:-]+)"),
    ("prisma", "class", r"^(?:model|enum|type|view)\s+(?P<name>\w+)"),
    ("prisma", "", r"^(?:datasource|generator)\s+(?P<name>\w+)"),
    ("thrift", "class", r"^(?:struct|union|exception|service|enum)\s+(?P<name>\w+)"),
    ("groovy", "class", _MODS + r"(?:class|interface|enum|trait)\s+(?P<name>\w+)"),
    ("groovy", "function", _MODS + r"def\s+(?P<name>\w+)\s*\("),
    ("sql", "function", r"^create\s+(?:\w+\s+)*?(?:function|procedure)\s+(?P<name>[\w.\"]+)"),
    (
        "sql",
        "",
        r"^create\s+(?:\w+\s+)*?(?:table|view|index|trigger|type)\s+"
        r"(?:if\s+not\s+exists\s+)?(?P<name>[\w.\"]+)",
    ),
    ("r", "function", r"^(?P<name>[\w.]+)\s*(?:<-|=)\s*function\b"),
    ("perl", "function", r"^sub\s+(?P<name>\w+)"),
    ("perl", "class", r"^package\s+(?P<name>[\w:]+)"),
    ("elisp", "function", r"^\((?:cl-)?(?:defun|defmacro|defsubst|define-inline|defadvice|"
     r"define-advice|define-(?:minor|derived|globalized-minor)-mode)\*?\s+" + _LISP_NAME),
    ("elisp", "class", r"^\((?:cl-defstruct|defclass|defgroup)\s+\(?" + _LISP_NAME),
    ("elisp", "", r"^\((?:defvar|defvar-local|defcustom|defconst|defface|cl-defgeneric|"
     r"cl-defmethod|use-package!?)\s+" + _LISP_NAME),
    ("clojure", "function", r"^\((?:defn-?|defmacro|defmulti|defmethod)\s+(?:\^\S+\s+)?"
     + _LISP_NAME),
    ("clojure", "class", r"^\((?:ns|defprotocol|defrecord|deftype|definterface)\s+"
     r"(?:\^\S+\s+)?" + _LISP_NAME),
    ("clojure", "", r"^\((?:def|defonce)\s+(?:\^\S+\s+)?" + _LISP_NAME),
    ("lisp", "function", r"^\((?:defun|defmacro|defgeneric|defmethod)\s+" + _LISP_NAME),
    ("lisp", "class", r"^\((?:defclass|defstruct|defpackage|define-condition)\s+\(?"
     + _LISP_NAME),
    ("lisp", "", r"^\((?:defvar|defparameter|defconstant)\s+" + _LISP_NAME),
    ("scheme", "function", r"^\(define(?:-syntax|-record-type)?\s+\(?" + _LISP_NAME),
    ("protobuf", "class", r"^(?:message|service|enum)\s+(?P<name>\w+)"),
    ("graphql", "class", r"^(?:extend\s+)?(?:type|input|interface|enum|union|scalar)\s+"
     r"(?P<name>\w+)"),
    ("graphql", "function", r"^(?:query|mutation|subscription|fragment)\s+(?P<name>\w+)"),
    ("jinja", "function", r"^\{%-?\s*macro\s+(?P<name>\w+)"),  # Jinja, Nunjucks, Twig
    # style sheets: a block per top-level rule or at-rule, unnamed (a selector is no
    # symbol); SCSS and Less mixins and functions by name
    ("css scss less", "", r"^(?:[^\s{}/*@;][^{};]*|@(?:media|supports|layer|container|"
     r"font-face|keyframes|page|property|include)\b[^{;]*)\{"),
    ("scss", "function", r"^@(?:mixin|function)\s+(?P<name>[\w-]+)"),
    ("less", "function", r"^\.(?P<name>[\w-]+)\s*\([^)]*\)\s*(?:when\b[^{]*)?\{"),
    ("make", "", r"^(?P<name>[\w%$()/-][\w.%$()/-]*)\s*::?(?!=)"),
    ("dockerfile", "", r"^from\s+(?:--\S+\s+)*(?P<image>\S+)(?:\s+as\s+(?P<name>\S+))?"),
)
_HASH = r"^#"
_SLASH = r"^(?://|/\*|\s*\*)"
# language -> (comment lines that attach to the definition below, decorator prefix)
_ATTACHED: dict[str, tuple[str, str]] = {
    "python": (_HASH, "@"),
    "javascript": (_SLASH, "@"),
    "typescript": (_SLASH, "@"),
    "go": (r"^//", ""),
    "rust": (r"^//", "#["),
    "java": (_SLASH, "@"),
    "c": (_SLASH, ""),
    "cpp": (_SLASH, "template"),
    "csharp": (_SLASH, "["),
    "ruby": (_HASH, ""),
    "shell": (_HASH, ""),
    "php": (_SLASH, "#["),
    "kotlin": (_SLASH, "@"),
    "swift": (_SLASH, "@"),
    "scala": (_SLASH, "@"),
    "lua": (r"^--", ""),
    "elixir": (_HASH, "@"),
    "haskell": (r"^--", ""),
    "ocaml": (r"^\(\*", "[@@"),
    "zig": (r"^//", ""),
    "julia": (_HASH, ""),
    "erlang": (r"^%", ""),
    "powershell": (r"^#|^<#", ""),
    "dart": (r"^//", "@"),
    "groovy": (_SLASH, "@"),
    "vim": (r'^"', ""),
    "nim": (_HASH, ""),
    "solidity": (_SLASH, ""),
    "fortran": (r"^!", ""),
    "cmake": (_HASH, ""),
    "prisma": (r"^//", ""),
    "thrift": (r"^(?://|/\*|\s*\*|#)", ""),
    "sql": (r"^--", ""),
    "r": (_HASH, ""),
    "perl": (_HASH, ""),
    "protobuf": (r"^//", ""),
    "graphql": (_HASH, ""),
    "jinja": (r"^\{#", ""),
    "css": (r"^/\*|^\s*\*", ""),
    "scss": (_SLASH, ""),
    "less": (_SLASH, ""),
    "make": (_HASH, ""),
    "dockerfile": (_HASH, ""),
    "elisp": (r"^;", ""),
    "clojure": (r"^;", ""),
    "lisp": (r"^;", ""),
    "scheme": (r"^;", ""),
}
# a definition's closing line, in languages that write one: what follows is not its body
_CLOSERS = {"jinja": re.compile(r"\{%-?\s*endmacro\b")}
# brace languages whose column 0 holds only top-level statements: one after a definition
# ends it (Zig's `pub const Error = error{` is no part of the struct above it)
_TOP_LEVEL_STATEMENTS = frozenset({"zig"})
_BLOCK_COMMENTS = {"julia": ('"""', '"""'), "ocaml": ("(*", "*)"), "haskell": ("{-", "-}"),
                   "powershell": ("<#", "#>")}
_CASELESS = frozenset({"sql", "dockerfile", "powershell", "fortran", "cmake"})
# Languages whose functions are written as clauses (Erlang's `f(0) ->`, `f(N) ->`): a
# definition line naming the definition just above continues it
_CLAUSES = frozenset({"elixir", "erlang", "haskell"})


def _compile(name: str) -> _Language:
    flags = re.IGNORECASE if name in _CASELESS else 0
    patterns = tuple(
        _Pattern(re.compile(rx, flags), kind)
        for languages, kind, rx in _PATTERNS
        if name in languages.split()
    )
    comment, decorator = _ATTACHED[name]
    return _Language(name, patterns, re.compile(comment), decorator,
                     _BLOCK_COMMENTS.get(name, ("", "")))


_LANGUAGES: dict[str, _Language] = {name: _compile(name) for name in _ATTACHED}
_NO_LANGUAGE = _Language("", ())
_LAYOUT_TOKENS = frozenset(
    {
        tokenize.NL,
        tokenize.COMMENT,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
)
_MAX_HEAD = 400  # longer lines (minified code) are never definition heads
_METHOD = _Language(
    "python",
    (_Pattern(re.compile(r"^(?:async\s+)?def\s+(?P<name>\w+)"), "method"),),
    re.compile(_HASH),
    "@",
)
# Members of a class too long for one chunk, found at its body's indent (the regex
# chunker's languages whose classes hold their methods: Python's when no grammar is
# installed, Dart's, Groovy's, a Zig struct's, an OCaml module's functions)
_MEMBER = (r"^(?:(?:static|external|factory|const|abstract|public|private|protected|final|"
           r"synchronized)\s+)*(?:[\w<>?,.\[\] ]+?\s+)?(?:get\s+|set\s+|operator\s*)?"
           r"(?P<name>[A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\(" + _DART_PARAMS)
_MEMBER_PATTERNS = (_Pattern(re.compile(_MEMBER), "method"),)
_MEMBERS: dict[str, _Language] = {
    "python": _METHOD,
    "dart": replace(_LANGUAGES["dart"], patterns=_MEMBER_PATTERNS),
    "groovy": replace(_LANGUAGES["groovy"], patterns=_MEMBER_PATTERNS),
    "zig": replace(_LANGUAGES["zig"], patterns=tuple(
        replace(p, kind="method") for p in _LANGUAGES["zig"].patterns if p.kind == "function")),
    "ocaml": replace(_LANGUAGES["ocaml"], patterns=tuple(
        p for p in _LANGUAGES["ocaml"].patterns if p.kind == "function")),
    "solidity": replace(_LANGUAGES["solidity"], patterns=(_Pattern(re.compile(
        r"^(?:(?:function|modifier|event|struct|enum|error)\s+(?P<name>\w+)|"
        r"(?P<image>constructor|fallback|receive)\s*\()"), "method"),)),
}


def code_handler(text: str, relpath: str, limits: Limits) -> Document:
    """Chunk source code by definitions; unknown languages fall back to line packing."""
    lines = split_lines(text)
    language = language_for(relpath)
    grammar = treesitter.grammar_name(relpath, language)
    if language in components.LANGUAGES:
        found: list[treesitter.Definition] | None = components.definitions(
            lines, limits, language, file_stem(relpath))
    else:
        found = treesitter.definitions(lines, grammar, limits) if language else None
    if found is None:
        blocks = _regex_blocks(lines, language, limits)
    else:
        blocks = [_Block(d.span, d.head, d.parts, d.kind, d.signature, d.doc) for d in found]
    pieces = [
        replace(block, span=piece)
        for block in blocks
        for piece in split_span(lines, block.span, limits.max_chars)
    ]
    chunks = [_chunk(lines, block, relpath) for block in _merge_tiny(lines, pieces, limits)]
    return Document(chunks=tuple(chunks), title=file_stem(relpath), language=language)


def _regex_blocks(lines: Sequence[str], language: str, limits: Limits) -> list[_Block]:
    spec = _LANGUAGES.get(language, _NO_LANGUAGE)
    if language == "python":
        ends = _python_statements(lines)
    elif language in _CLOSERS:
        ends = _after_closers(lines, _CLOSERS[language], spec)
    elif language in _TOP_LEVEL_STATEMENTS:
        ends = _column0_statements(lines, spec)
    else:
        ends = frozenset()
    blocks = _blocks(lines, 0, len(lines), spec, ends=ends)
    if language in _MEMBERS:
        members = _MEMBERS[language]
        blocks = [part for block in blocks for part in _split_class(lines, block, limits,
                                                                    members)]
    return blocks


def _chunk(lines: Sequence[str], block: _Block, relpath: str) -> Chunk:
    breadcrumb = " :: ".join((relpath, *block.parts))
    chunk = make_chunk(lines, block.span, breadcrumb, ".".join(block.parts), block.kind)
    return replace(chunk, context=_context(lines, block))


def _context(lines: Sequence[str], block: _Block) -> str:
    """``method Invoice.total: def total(self)``; a piece cut from below the
    definition's first line also gets the docstring, since its text lacks it."""
    if not (block.parts or block.kind):
        return ""
    signature = block.signature or " ".join(lines[block.head].split()).rstrip("{: ")[:200]
    label = " ".join(filter(None, (block.kind, ".".join(block.parts))))
    context = f"{label}: {signature}" if signature else label
    if block.doc and block.span[0] > block.head:
        context += "\n" + block.doc
    return context


def _blocks(
    lines: Sequence[str],
    start: int,
    end: int,
    spec: _Language,
    indent: str = "",
    ends: frozenset[int] = frozenset(),
) -> list[_Block]:
    """Cut ``[start, end)`` at the definitions found at exactly ``indent``.

    A line in ``ends`` that follows a definition closes it: what follows is
    a symbol-less block until the next definition.
    """
    defs = _definitions(lines, start, end, spec, indent, ends)
    bounds = [block.span[0] for block in defs] + [end]
    blocks = [_Block((start, bounds[0]), start)]
    for index, found in enumerate(defs):
        span = (found.span[0], bounds[index + 1])
        blocks.append(_Block(span, found.head, found.parts, found.kind))
    return blocks


def _definitions(
    lines: Sequence[str], start: int, end: int, spec: _Language, indent: str, ends: frozenset[int]
) -> list[_Block]:
    """Block starts (decorators and attached comments included), in order."""
    found: list[_Block] = []
    pending: int | None = None  # first line of a decorator run awaiting its definition
    floor = start
    for i in range(start, end):
        line = lines[i]
        if not line.strip():
            continue
        if not line.startswith(indent):
            pending = None  # dedented: we left the enclosing block's body
            continue
        rest = line[len(indent) :]
        if rest[0] in " \t":
            continue
        match = _match(rest, spec)
        if match is not None:
            parts, kind = match
            if parts and found and found[-1].parts == parts and spec.name in _CLAUSES:
                pending = None  # the next clause (or equation) of the function above
                continue
            first = _climb(lines, i if pending is None else pending, floor, spec, indent)
            found.append(_Block((first, i + 1), i, parts, kind))
            pending, floor = None, i + 1
        elif spec.decorator and rest.startswith(spec.decorator):
            pending = i if pending is None else pending
        elif i in ends and found and (found[-1].parts or found[-1].kind):
            found.append(_Block((_climb(lines, i, floor, spec, indent), i + 1), i))
            pending, floor = None, i + 1
        elif pending is not None and not (rest[0] in ")]}" or _is_comment(rest, spec)):
            pending = None
    return found


def _after_closers(lines: Sequence[str], closer: re.Pattern[str], spec: _Language
                   ) -> frozenset[int]:
    """The first line of what follows each closing line (Jinja's ``{% endmacro %}``),
    blank lines and comments skipped: the markup after a macro is no part of it."""
    rows: set[int] = set()
    for row, line in enumerate(lines):
        if closer.search(line):
            after = (n for n in range(row + 1, len(lines))
                     if lines[n].strip() and not _is_comment(lines[n], spec))
            if (first := next(after, None)) is not None:
                rows.add(first)
    return frozenset(rows)


def _column0_statements(lines: Sequence[str], spec: _Language) -> frozenset[int]:
    """Lines starting a top-level statement in a brace language that writes nothing
    else at column 0: not a closing bracket, a comment, an attribute or a line of a
    multiline string (Zig's ``\\``)."""
    return frozenset(row for row, line in enumerate(lines)
                     if line[:1].strip() and line[0] not in "}])\\" and
                     not _is_comment(line, spec) and
                     not (spec.decorator and line.startswith(spec.decorator)))


def _python_statements(lines: Sequence[str]) -> frozenset[int]:
    """Lines where a top-level Python statement starts (not string or bracket contents).

    A file that does not tokenize to the end keeps the rows found before the
    error: tokenizing is sequential, so those are still right.
    """
    rows: set[int] = set()
    at_start = True
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
            if token.type in _LAYOUT_TOKENS:
                continue
            if at_start and token.start[1] == 0:
                rows.add(token.start[0] - 1)
            at_start = token.type == tokenize.NEWLINE
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return frozenset(rows)


def _match(line: str, spec: _Language) -> tuple[tuple[str, ...], str] | None:
    """(symbol path, kind) when ``line`` starts a definition.

    Very long lines (minified code) are never definition heads; skipping them
    also keeps the backtracking C pattern linear in practice.
    """
    if len(line) > _MAX_HEAD:
        return None
    for pattern in spec.patterns:
        m = pattern.regex.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        name = groups.get("name") or groups.get("image") or ""
        if groups.get("of"):  # the type an instance is of: `ToJSON Maybe`
            name = f"{name} {groups['of']}"
        receiver = (groups.get("recv") or "").split()
        if receiver and name:  # Go method: func (s *Server) Start()
            owner = receiver[-1].lstrip("*").split("[")[0]
            return ((owner, name) if owner else (name,)), "method"
        return ((name,) if name else ()), pattern.kind
    return None


def _is_comment(rest: str, spec: _Language) -> bool:
    return spec.comment is not None and spec.comment.match(rest) is not None


def _climb(lines: Sequence[str], first: int, floor: int, spec: _Language, indent: str) -> int:
    """Move a definition's start up over the comment lines directly above it."""
    while first - 1 >= floor:
        above = lines[first - 1]
        if not above.strip() or not above.startswith(indent):
            break
        opened = _block_comment_start(lines, first - 1, floor, spec)
        if opened is not None:
            first = opened
            continue
        if not _is_comment(above[len(indent) :], spec):
            break
        first -= 1
    return first


def _block_comment_start(lines: Sequence[str], end: int, floor: int, spec: _Language
                         ) -> int | None:
    """The line a block comment (or docstring) ending on line ``end`` opens on, else None."""
    opener, closer = spec.block_comment
    last = lines[end].strip()
    if not closer or not last.endswith(closer) or opener in last[:-len(closer)].lstrip()[1:]:
        return None  # no closer, or a comment trailing code: `let x = 1 (* one *)`
    if last.startswith(opener) and len(last) >= len(opener) + len(closer):
        return end  # opened and closed on one line
    for row in range(end - 1, floor - 1, -1):
        if lines[row].lstrip().startswith(opener):
            return row
    return None


def _split_class(lines: Sequence[str], block: _Block, limits: Limits, spec: _Language
                 ) -> list[_Block]:
    """A too-long class becomes its header plus one block per member found by ``spec``
    at the class body's indent."""
    span = trim(lines, *block.span)
    if block.kind != "class" or span is None:
        return [block]
    if _size(lines, span) <= limits.max_chars:
        return [block]
    indent = _body_indent(lines, block.head + 1, block.span[1])
    if not indent:
        return [block]
    members = _blocks(lines, block.head + 1, block.span[1], spec, indent)
    if len(members) == 1:
        return [block]
    header = _Block((block.span[0], members[1].span[0]), block.head, block.parts, block.kind)
    methods = [_Block(m.span, m.head, (*block.parts, *m.parts), m.kind) for m in members[1:]]
    return [header, *methods]


def _body_indent(lines: Sequence[str], start: int, end: int) -> str:
    for line in lines[start:end]:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


def _merge_tiny(lines: Sequence[str], blocks: Sequence[_Block], limits: Limits) -> list[_Block]:
    """Join neighbouring small symbol-less blocks (imports, anonymous functions).

    A named definition always stays on its own, so its symbol is never diluted.
    """
    merged: list[_Block] = []
    for block in blocks:
        previous = merged[-1] if merged else None
        if previous is not None and _tiny(lines, previous, limits) and _tiny(lines, block, limits):
            joined = (previous.span[0], block.span[1])
            if _size(lines, joined) <= limits.max_chars:
                kind = previous.kind if previous.kind == block.kind else ""
                merged[-1] = _Block(joined, previous.head, (), kind)
                continue
        merged.append(block)
    return merged


def _tiny(lines: Sequence[str], block: _Block, limits: Limits) -> bool:
    return not block.parts and _size(lines, block.span) < limits.min_chars


def _size(lines: Sequence[str], span: Span) -> int:
    return sum(len(line) + 1 for line in lines[span[0] : span[1]]) - 1
