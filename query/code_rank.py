"""Code ranking signals, applied to the fused scores of code chunks before top-k.

Every rule here multiplies a fused score; none places a hit by fiat, so a hit
the signals scored 0 stays below every hit they scored above 0.

* **Definitions named by the query count double.** An identifier-like query
  term (``parse_config``, ``Index.open``, ``camelCase``, ``name()``, or a
  one-word query) that names a chunk's symbol (or its last dotted part), or
  names it qualified by its module (``validators.validates``: ``validates`` in
  ``validators.py`` or under ``validators/``), multiplies that definition's
  score by ``DEFINES``. Definitions the pools
  missed are looked up by symbol and scored by the same signals
  (``vq.query.search``), so they join the fusion, not the top.
* **Chunks that hold the query's identifier as written count double.** An
  identifier-like term without dots (``authenticate_user!``, ``parseConfig``, a one-word
  query) that a chunk holds as written, not inside a longer name, multiplies its score
  by ``DEFINES``: the full-text index splits and stems it, so every
  ``after_database_authentication`` matched ``authenticate_user!`` as well, where a code
  search tool matches the name (docs/decisions.md#literal-identifiers). Prose in a code
  vault counts too (Devise's README is where its generated helpers are written).
* **A lookup counts what lacks the name half.** When the whole query is one such
  identifier, a code chunk (or prose in a code vault) that neither holds it as written
  nor defines it is multiplied by ``SECONDARY``: the stemmed full-text match of
  ``authentication`` is no answer to ``authenticate_user!``
  (docs/decisions.md#identifier-lookups).
* **Tests, examples and vendored code below the implementation**, unless the
  query asks for them ("test", "example", "spec", ...): their score is
  multiplied by ``SECONDARY``. A test is known by its file (``tests/``,
  ``__tests__/``, ``test_*.py``, ``*_test.go``, ``*.spec.ts``: ``vq.core.test_paths``,
  the list ``vq init`` reads too) or, where tests live beside the
  code (Rust's ``mod tests``, a ``test_*`` function in the module it tests), by
  its symbol.

* **A block of nothing but imports below the code too** (a file's ``using`` or
  ``import`` lines, which the chunker keeps as a block of their own, or its shebang and
  magic comments, ``# frozen_string_literal: true``): its embedded text
  is mostly its path, so it matched a query on the path's words. Multiplied by
  ``SECONDARY`` unless the query says "import" (docs/decisions.md#import-preambles).

Pieces of one definition collapse into one hit and a file's hits are capped
(``search.per_file_cap``, when set) after these rules, in ``vq.query.collapse``.
Only ``kind == "code"`` rows are touched, and prose in a code vault by the tests rule:
notes and docs vaults rank as fused.
``SECONDARY`` is a fixed prior from semble's ranking, not fitted; switching it off
ranked worse on the judged code set. ``DEFINES`` is its mirror (x2 where that is
x0.5), a prior too, which that set could not judge (docs/decisions.md#code-hits).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vq.core.store import sql_str
from vq.core.test_paths import is_secondary

SECONDARY = 0.5
DEFINES = 2.0
MAX_LITERALS = 32  # identifiers a query's text is searched for (a pasted snippet has many)
# A name: dotted or ``::`` paths, Lisp's kebab-case (``doom-log``, ``use-package!``) and
# bang names (``map!``; a ``?`` only after kebab-case: it ends questions)
_WORD = r"[A-Za-z_][A-Za-z0-9_]*(?:(?:-[A-Za-z0-9_]+)+[!?]?|!)?"
_IDENT = re.compile(rf"{_WORD}(?:(?:\.|::){_WORD})*(\(\))?")
_TEST_SYMBOL = re.compile(r"(^|\.)(tests?\.|test_)")
_ASKS_SECONDARY = re.compile(r"\b(tests?|testing|spec|specs|examples?|samples?|fixtures?|"
                             r"vendor(ed)?|demo)\b", re.IGNORECASE)
# An import statement's first line, in the languages vq reads (docs/decisions.md#import-preambles)
_IMPORT = re.compile(r"(?:from\s+\S+\s+import\b|import\s|using\s|global\s+using\s|package\s|"
                     r"namespace\s+[\w.\\]+\s*;|use\s|require(?:_relative|_once)?\b|"
                     r"#\s*include\b|#\s*pragma\s+once|extern\s+crate\s|(?:pub\s+)?mod\s+\w+\s*;|"
                     r"<\?php|declare\s*\(|['\"]use strict['\"]|"
                     # CommonJS and Lua import by assignment; a component's script tag
                     r"(?:const|let|var|local)\s+[\w$\s{},:]+=\s*require\b|<script\b[^<>]*>$|"
                     # and the lines a file opens with that are no code: a shebang, a magic
                     # comment (Ruby, Python), a Go build constraint
                     r"#!|#\s*(?:frozen_string_literal|encoding|coding|warn_indent)\s*:|"
                     r"#.*-\*-.*-\*-|//\s*(?:go:build|\+build)\b)")
_ASKS_IMPORTS = re.compile(r"\bimport(s|ed)?\b", re.IGNORECASE)


def symbol_terms(query: str) -> list[str]:
    """Query terms that read as identifiers; a one-word query counts as one."""
    found = [m.group(0).removesuffix("()").replace("::", ".") for m in _IDENT.finditer(query)]
    if len(found) == 1 and len(found[0]) >= 3:
        return found
    return [t for t in found if len(t) >= 3 and _identifier_like(t)]


def _identifier_like(term: str) -> bool:
    """snake_case, dotted, camelCase, CONSTANT, or kebab-case: a prose word with a hyphen
    (``built-in``) only matches a definition of that name, which only Lisp or CSS has. A
    CONSTANT has four letters or more: a shorter one (``DNS``, ``JWT``) is an acronym in
    prose (docs/decisions.md#short-acronyms)."""
    return ("_" in term or "." in term or "-" in term
            or term != term.lower() and term != term.capitalize() and not term.isupper()
            or term.isupper() and len(term) > 3)


def module_splits(term: str) -> list[tuple[str, str]]:
    """A dotted term read as module path + symbol: ``validators.validates`` is
    ``validates`` in module ``validators``; ``a.b.C.f`` is tried as ``C.f`` in ``a/b``
    and as ``b.C.f`` in ``a`` (and ``f`` in ``a/b/C``)."""
    parts = term.split(".")
    return [("/".join(parts[:k]), ".".join(parts[k:])) for k in range(1, len(parts))]


def _is_symbol(symbol: str, name: str) -> bool:
    """``name`` names ``symbol`` or a member called so, but not a constructor named for
    its class (``TypeAdapter.TypeAdapter``: Java, C#, C++): "TypeAdapter" asks for the
    class, and gson's one-line constructor outranked it."""
    if symbol == name:
        return True
    owner, dot, last = symbol.rpartition(".")
    return bool(dot) and last == name and owner.rpartition(".")[2] != name


def _in_module(path: str, module: str) -> bool:
    """``module`` (``a/b``) is a folder on the path or the file's own stem."""
    slashed = "/" + path
    stem = slashed.rsplit(".", 1)[0] if "." in slashed.rsplit("/", 1)[-1] else slashed
    return f"/{module}/" in slashed or stem.endswith("/" + module)


def symbol_filter(terms: Iterable[str]) -> str | None:
    """SQL matching chunks whose symbol is one of ``terms`` (or ends with ``.term``), or
    is a dotted term's symbol part in a file of its module part (``module_splits``)."""
    parts = []
    for t in terms:
        parts.append(f"symbol = {sql_str(t)} OR symbol LIKE {sql_str('%.' + t)}")
        for module, name in module_splits(t):
            where_module = " OR ".join(f"path LIKE {sql_str(p)}" for p in (
                f"{module}/%", f"%/{module}/%", f"{module}.%", f"%/{module}.%"))
            parts.append(f"((symbol = {sql_str(name)} OR symbol LIKE {sql_str('%.' + name)})"
                         f" AND ({where_module}))")
    return " OR ".join(parts) or None


def names(symbol: str | None, terms: Iterable[str], path: str = "") -> bool:
    """Whether a definition is one the query names: by its symbol, or by a dotted term
    that qualifies the symbol with its module (``validators.validates``)."""
    if not symbol:
        return False
    return any(_is_symbol(symbol, t) or any(
        _is_symbol(symbol, name) and _in_module(path, module)
        for module, name in module_splits(t)) for t in terms)


def secondary(path: str, query: str, symbol: str | None = None) -> bool:
    """A test/example/vendored file, or a test defined beside the code it tests, that
    the query did not ask for."""
    found = is_secondary(path) or symbol and _TEST_SYMBOL.search(symbol)
    return bool(found) and not _ASKS_SECONDARY.search(query)


def imports_only(row: dict) -> bool:
    """A block of nothing but import statements (a file's ``using`` or ``import`` lines):
    no definition and no prose, and its embedded text is mostly its path."""
    if row.get("symbol"):
        return False
    depth, found = 0, False
    for line in (row.get("text") or "")[row.get("body_start") or 0:].split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if depth <= 0 and not _IMPORT.match(stripped):
            return False
        found = found or depth <= 0
        depth = max(0, depth) + sum(stripped.count(c) for c in "({[") \
            - sum(stripped.count(c) for c in ")}]")
    return found


def is_lookup(query: str, terms: list[str]) -> bool:
    """The whole query is one identifier without dots (``authenticate_user!``,
    ``parseConfig``): a lookup of where that name is written
    (docs/decisions.md#identifier-lookups)."""
    return len(terms) == 1 and "." not in terms[0] and _identifier_like(terms[0]) and \
        query.strip().removesuffix("()") == terms[0]


def literal_patterns(terms: Iterable[str]) -> list[re.Pattern[str]]:
    """The query's identifiers without dots, each as written and not inside a longer
    name (``authenticate_user!``, ``parseConfig``); dotted ones are the definition
    rule's (docs/decisions.md#literal-identifiers)."""
    names = list(dict.fromkeys(t for t in terms if "." not in t))[:MAX_LITERALS]
    return [re.compile(rf"(?<![\w$]){re.escape(t)}(?![\w$])") for t in names]


def holds(row: dict, literals: list[re.Pattern[str]]) -> bool:
    """Whether the chunk's own text (below its embedded header) holds one of them."""
    body = (row.get("text") or "")[row.get("body_start") or 0:]
    return any(p.search(body) for p in literals)


def adjust(order: list[str], rows: dict[str, dict], query: str, terms: list[str],
           code_vaults: frozenset[str] = frozenset()) -> list[str]:
    """Apply the rules to the code rows of a fused ranking (see the module doc), and the
    tests rule to prose in ``code_vaults`` too (a Markdown fixture of a test suite is a
    notes chunk of the code vault); the order that comes back follows the scores, ties
    by id."""
    asks_imports = bool(_ASKS_IMPORTS.search(query))
    literals = literal_patterns(terms)
    lookup = bool(literals) and is_lookup(query, terms)
    for doc_id in order:
        row = rows[doc_id]
        code = row.get("kind") == "code"
        if not code and row.get("vault") not in code_vaults:
            continue
        factor, notes = 1.0, {}
        if secondary(row["path"], query, row.get("symbol")):
            factor *= SECONDARY
            notes["secondary"] = SECONDARY
        if code and not asks_imports and imports_only(row):
            factor *= SECONDARY
            notes["imports"] = SECONDARY
        if code and names(row.get("symbol"), terms, row["path"]):
            factor *= DEFINES
            notes["defines"] = DEFINES
        if literals and holds(row, literals):
            factor *= DEFINES
            notes["holds"] = DEFINES
        elif lookup and "defines" not in notes:
            factor *= SECONDARY
            notes["lacks"] = SECONDARY
        row["_score"] *= factor
        if notes:
            row["_signals"]["code"] = notes
    return sorted(order, key=lambda i: (-rows[i]["_score"], i))
